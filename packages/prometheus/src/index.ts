export {
  type AddInformerOptions,
  KinformerMetrics,
  type KinformerMetricsOptions,
  type MetricsRegistration,
} from './kinformerMetrics.js';
export {
  type ControllerRuntimeMetrics,
  controllerRuntimeMetrics,
  type ControllerRuntimeMetricsOptions,
  type ControllerRuntimeResult,
} from './controllerRuntimeMetrics.js';
