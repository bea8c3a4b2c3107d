export {
  type ChaosOptions,
  type ChaosProgress,
  type ChaosReport,
  defaultMaxLagP99Ms,
  formatReport,
  type InformerReport,
  runChaos,
} from './chaos.js';
export { type LagSummary, LagTracker } from './lagTracker.js';
export {
  APPS,
  CHURN_OPS,
  CHURN_RESOURCES,
  ChurnGenerator,
  type ChurnOp,
  type ChurnOptions,
  type ChurnResource,
  type ChurnResourceName,
  HOLD_FINALIZER,
  NAMESPACES,
  SELECTED_LABEL_SELECTOR,
  WIDGETS_DEFINITION,
} from './churn.js';
export { CountingListerWatcher, type ListWatchCounters, type TraceEntry } from './countingListerWatcher.js';
export {
  ContinueTrap,
  DEFAULT_FAULT_WEIGHTS,
  FAULT_KINDS,
  type FaultCount,
  type FaultKind,
  FaultScheduler,
  MAX_PENDING_FAILURES,
} from './faultScheduler.js';
export {
  HandlerRecorder,
  type HandlerRecorderOptions,
  type InformerScope,
  inScope,
  labelsOf,
  rvOf,
  type StreamViolationKind,
  type Violation,
} from './handlerRecorder.js';
export {
  type InformerGroup,
  InformerSet,
  type InformerSetOptions,
  type InformerUnderTest,
} from './informerSet.js';
export { findGc, formatBytes, heapAfterGc, HeapSampler } from './memory.js';
export { Prng } from './prng.js';
export { parseDuration } from './parseDuration.js';
