/**
 * `@kinformer/delta-fifo/internal`: the queue payload types and constants the other `@kinformer/*`
 * packages share. Not public API: no compatibility promise, not re-exported by `kinformer`.
 */
export { DEFAULT_BATCH_SIZE, type PopBatchOptions, type PopBatchProcessFunc } from './logFifo.js';
export {
  type BookmarkInfo,
  isObjectDelta,
  type ObjectDelta,
  type ObjectDeltaType,
  type ReplacedAllInfo,
  type SyncAllInfo,
} from './queue.js';
export type { KeyListerGetter } from './fifoOptions.js';
