/**
 * `@kinformer/cache/internal`: what `@kinformer/controller` applies a relist with. Not public API: no
 * compatibility promise, not re-exported by `kinformer`.
 */
export type { StoreReplacement } from './cache.js';
export { replaceWithDiff } from './cache.js';
