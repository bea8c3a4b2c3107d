export { type BuiltInKindModels, defineKind, type DefineKindOptions, type Kind, kinds } from './kinds.js';
export { Manager, type ManagerLeaderElectionOptions, type ManagerOptions } from './manager.js';
export type { ManagerControllerRingOptions } from './controllerRing.js';
export type { CacheOptions, KindCachePolicy } from './cachePolicy.js';
export { project, type Projected, type Projection } from './projection.js';
export { ControllerBuilder, type SourceOptions } from './controllerBuilder.js';
export { type ControllerStats, ManagedController } from './managedController.js';
export type { ReconcileContext, Reconciler, ReconcileResult } from './reconcileContext.js';
export {
  PRIORITY_LOW,
  PRIORITY_NORMAL,
  ReconcileQueue,
  type ReconcileQueueOptions,
} from './reconcileQueue.js';
export { type Predicate, predicates } from './predicates.js';
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
  WriteVerbs,
} from './runtimeClient.js';
export { setupSignalHandler } from './signals.js';
export { type FinalizerHandlers, withFinalizer } from './finalizer.js';
export {
  HASH_RANGE_LABEL,
  hashRangeOf,
  type HashShardStatus,
  type ManagerHashShardingOptions,
  objectClientLeaseStore,
  type RangeEvent,
} from './hashSharding.js';
export { HASH_RING_LABEL, HASH_RING_ROLE_LABEL, type RangeLeaseStore } from './rangeCoordinator.js';
export { planRanges, type RangePlan, type RangePlanInput } from './hashRanges.js';
