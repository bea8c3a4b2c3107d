export type {
  BookmarkInfo,
  Delta,
  Deltas,
  DeltaType,
  ObjectDelta,
  ObjectDeltaType,
  PopProcessFunc,
  Queue,
  ReplacedAllInfo,
  SyncAllInfo,
} from './queue.js';
export { isObjectDelta } from './queue.js';
export type { FIFOOptions, KeyListerGetter, TransformFunc } from './fifoOptions.js';
export type { DeltaFIFOOptions } from './deltaFifo.js';
export { DeltaFIFO } from './deltaFifo.js';
export type { PopBatchOptions, PopBatchProcessFunc } from './logFifo.js';
export { DEFAULT_BATCH_SIZE } from './logFifo.js';
export type { RealFIFOOptions } from './realFifo.js';
export { RealFIFO } from './realFifo.js';
export type { AtomicFIFOOptions } from './atomicFifo.js';
export { AtomicFIFO } from './atomicFifo.js';
export { RequeueError } from './requeueError.js';
