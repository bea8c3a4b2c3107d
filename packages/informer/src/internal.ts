/**
 * `@kinformer/informer/internal`: building blocks the other `@kinformer/*` packages share (constants, decoders,
 * helpers). Not public API: no compatibility promise, not re-exported by `kinformer`.
 */
export { type InformerEventMap, MINIMUM_RESYNC_PERIOD_MS } from './sharedIndexInformer.js';
export type { ListerWatcherRequest, SelectorOptions, TweakListOptions } from './informerFactory.js';
