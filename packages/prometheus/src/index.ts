export type { AddInformerOptions, KinformerMetricsOptions, MetricsRegistration } from './kinformerMetrics.js';
export { KinformerMetrics } from './kinformerMetrics.js';
export type {
  ControllerRuntimeMetrics,
  ControllerRuntimeMetricsOptions,
  ControllerRuntimeResult,
} from './controllerRuntimeMetrics.js';
export { controllerRuntimeMetrics } from './controllerRuntimeMetrics.js';
