export type { Delta, Deltas, DeltaType, PopProcessFunc, Queue } from './queue.js';
export type { FIFOOptions, TransformFunc } from './fifoOptions.js';
export type { DeltaFIFOOptions } from './deltaFifo.js';
export { DeltaFIFO } from './deltaFifo.js';
export type { RealFIFOOptions } from './realFifo.js';
export { RealFIFO } from './realFifo.js';
export type { AtomicFIFOOptions } from './atomicFifo.js';
export { AtomicFIFO } from './atomicFifo.js';
export { RequeueError } from './requeueError.js';
