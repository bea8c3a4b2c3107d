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
export type { PopBatchOptions, PopBatchProcessFunc, RealFIFOOptions } from './realFifo.js';
export { DEFAULT_BATCH_SIZE, RealFIFO } from './realFifo.js';
export { RequeueError } from './requeueError.js';
