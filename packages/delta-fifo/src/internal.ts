/**
 * `@kinformer/delta-fifo/internal`: the queue payload types and constants the other `@kinformer/*`
 * packages share. Not public API: no compatibility promise, not re-exported by `kinformer`.
 */
export { DEFAULT_BATCH_SIZE } from './logFifo.js';
export type { BookmarkInfo, ObjectDelta, ObjectDeltaType, ReplacedAllInfo, SyncAllInfo } from './queue.js';
export { isObjectDelta } from './queue.js';
export type { KeyListerGetter } from './fifoOptions.js';
export type { PopBatchOptions, PopBatchProcessFunc } from './logFifo.js';
