export type { Delta, Deltas, DeltaType, PopProcessFunc, Queue } from './queue.js';
export type { FIFOOptions, TransformFunc } from './fifoOptions.js';
export { DeltaFIFO, type DeltaFIFOOptions } from './deltaFifo.js';
export { RealFIFO, type RealFIFOOptions } from './realFifo.js';
export { AtomicFIFO, type AtomicFIFOOptions } from './atomicFifo.js';
export { RequeueError } from './requeueError.js';
