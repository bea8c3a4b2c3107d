/**
 * `@kinformer/runtime/internal`: building blocks the other `@kinformer/*` packages share (constants, decoders,
 * helpers). Not public API: no compatibility promise, not re-exported by `kinformer`.
 */
export { kindString } from './kinds.js';
export { type StringInterner, stringInterner, type StringInternerOptions } from './stringInterner.js';
export type { ProjectionIdentity, ProjectionPath } from './projection.js';
export type { MapToKeys } from './controllerBuilder.js';
export type { ReconcileHook } from './reconcileContext.js';
export type { QueueAddOptions, QueueItem } from './reconcileQueue.js';
export type { ReconcileResultLabel, RuntimeMetrics } from './metrics.js';
export { runtimeClientOver, type WriteRecorder } from './runtimeClient.js';
export type { IndexRef } from './manager.js';
export { CONTROLLER_RING_LABEL, drainLabel, shardLabel } from './controllerRing.js';
