/**
 * `@kinformer/controller/internal`: what `@kinformer/informer` builds its informers from. Not public
 * API: no compatibility promise, not re-exported by `kinformer`.
 */
export { type InformerQueueOptions, newInformerQueue } from './newInformer.js';
export { processDeltasBatch } from './processDeltas.js';
