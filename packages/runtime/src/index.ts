export type { DefineKindOptions, Kind } from './kinds.js';
export { defineKind, kinds } from './kinds.js';
export type { ManagerLeaderElectionOptions, ManagerOptions } from './manager.js';
export { Manager } from './manager.js';
export type { ManagerControllerRingOptions } from './controllerRing.js';
export type { CacheOptions, KindCachePolicy } from './cachePolicy.js';
export type { Projected, Projection } from './projection.js';
export { project } from './projection.js';
export type { SourceOptions } from './controllerBuilder.js';
export { ControllerBuilder } from './controllerBuilder.js';
export type { ControllerStats } from './managedController.js';
export { ManagedController } from './managedController.js';
export type { ReconcileContext, ReconcileResult, Reconciler } from './reconcileContext.js';
export type { ReconcileQueueOptions } from './reconcileQueue.js';
export { PRIORITY_LOW, PRIORITY_NORMAL, ReconcileQueue } from './reconcileQueue.js';
export type { Predicate } from './predicates.js';
export { predicates } from './predicates.js';
export { isTerminalError, TerminalError } from './terminalError.js';
export { controllerOf, setControllerReference } from './ownerReferences.js';
export type {
  ApplyOptions,
  DeleteOptions,
  ObjectRef,
  ObjectWriter,
  PatchOptions,
  RuntimeClient,
  WriteOptions,
} from './runtimeClient.js';
export { setupSignalHandler } from './signals.js';
export type { FinalizerHandlers } from './finalizer.js';
export { withFinalizer } from './finalizer.js';
export type { HashShardStatus, ManagerHashShardingOptions, RangeEvent } from './hashSharding.js';
export { objectClientLeaseStore } from './hashSharding.js';
export type { RangeLeaseStore } from './rangeCoordinator.js';
export { HASH_RING_LABEL, HASH_RING_ROLE_LABEL } from './rangeCoordinator.js';
export type { RangePlan, RangePlanInput } from './hashRanges.js';
export { planRanges } from './hashRanges.js';
