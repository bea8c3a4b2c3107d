export type { DefineKindOptions, Kind } from './kinds.js';
export { defineKind, kinds, kindString } from './kinds.js';
export type { IndexRef, ManagerLeaderElectionOptions, ManagerOptions } from './manager.js';
export { Manager } from './manager.js';
export type { ManagerControllerRingOptions } from './controllerRing.js';
export { CONTROLLER_RING_LABEL, drainLabel, shardLabel } from './controllerRing.js';
export type { CacheOptions, KindCachePolicy } from './cachePolicy.js';
export type { Projected, Projection, ProjectionIdentity, ProjectionPath } from './projection.js';
export { project } from './projection.js';
export type { StringInterner, StringInternerOptions } from './stringInterner.js';
export { stringInterner } from './stringInterner.js';
export type { MapToKeys, SourceOptions } from './controllerBuilder.js';
export { ControllerBuilder } from './controllerBuilder.js';
export type { ControllerStats } from './managedController.js';
export { ManagedController } from './managedController.js';
export type { ReconcileContext, ReconcileHook, ReconcileResult, Reconciler } from './reconcileContext.js';
export type { QueueAddOptions, QueueItem, ReconcileQueueOptions } from './reconcileQueue.js';
export { PRIORITY_LOW, PRIORITY_NORMAL, ReconcileQueue } from './reconcileQueue.js';
export type { Predicate } from './predicates.js';
export { predicates } from './predicates.js';
export { isTerminalError, TerminalError } from './terminalError.js';
export { controllerOf, setControllerReference } from './ownerReferences.js';
export type { ReconcileResultLabel, RuntimeMetrics } from './metrics.js';
export type {
  ApplyOptions,
  DeleteOptions,
  ObjectRef,
  ObjectWriter,
  PatchOptions,
  RuntimeClient,
  WriteOptions,
  WriteRecorder,
} from './runtimeClient.js';
export { runtimeClientOver } from './runtimeClient.js';
export { setupSignalHandler } from './signals.js';
export type { FinalizerHandlers } from './finalizer.js';
export { withFinalizer } from './finalizer.js';
