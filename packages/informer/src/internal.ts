/**
 * `@kinformer/informer/internal`: building blocks the other `@kinformer/*` packages share (constants, decoders,
 * helpers). Not public API: no compatibility promise, not re-exported by `kinformer`.
 */
export { MINIMUM_RESYNC_PERIOD_MS } from './sharedIndexInformer.js';
export type { InformerEventMap } from './sharedIndexInformer.js';
export type { ListerWatcherRequest } from './informerFactory.js';
export type { SelectorOptions, TweakListOptions } from './informerFactory.js';
