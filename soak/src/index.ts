export type { ChaosOptions, ChaosProgress, ChaosReport, InformerReport } from './chaos.js';
export { defaultMaxLagP99Ms, formatReport, runChaos } from './chaos.js';
export type { LagSummary } from './lagTracker.js';
export { LagTracker } from './lagTracker.js';
export type { ChurnOp, ChurnOptions, ChurnResource, ChurnResourceName } from './churn.js';
export {
  APPS,
  CHURN_OPS,
  CHURN_RESOURCES,
  ChurnGenerator,
  HOLD_FINALIZER,
  NAMESPACES,
  SELECTED_LABEL_SELECTOR,
  WIDGETS_DEFINITION,
} from './churn.js';
export type { ListWatchCounters, TraceEntry } from './countingListerWatcher.js';
export { CountingListerWatcher } from './countingListerWatcher.js';
export type { FaultCount, FaultKind } from './faultScheduler.js';
export {
  ContinueTrap,
  DEFAULT_FAULT_WEIGHTS,
  FAULT_KINDS,
  FaultScheduler,
  MAX_PENDING_FAILURES,
} from './faultScheduler.js';
export type {
  HandlerRecorderOptions,
  InformerScope,
  StreamViolationKind,
  Violation,
} from './handlerRecorder.js';
export { HandlerRecorder, inScope, labelsOf, rvOf } from './handlerRecorder.js';
export type { InformerGroup, InformerSetOptions, InformerUnderTest } from './informerSet.js';
export { InformerSet } from './informerSet.js';
export { findGc, formatBytes, heapAfterGc, HeapSampler } from './memory.js';
export { Prng } from './prng.js';
export { parseDuration } from './parseDuration.js';
