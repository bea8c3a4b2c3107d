/**
 * `@kinformer/reflector/internal`: building blocks the other `@kinformer/*` packages share (constants, decoders,
 * helpers). Not public API: no compatibility promise, not re-exported by `kinformer`.
 */
export { DEFAULT_STALL_MARGIN_MS } from './reflector.js';
export { REFLECTOR_BACKOFF } from './recovery.js';
export { INITIAL_EVENTS_END_ANNOTATION } from './watchStream.js';
export type { ListPagerOptions, PagedList } from './pager.js';
export { DEFAULT_PAGE_SIZE, listAllPages } from './pager.js';
export type { ExpectedType } from './reflectorOptions.js';
export type { ListFunc } from './pager.js';
