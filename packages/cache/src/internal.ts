/**
 * `@kinformer/cache/internal`: what `@kinformer/controller` applies a relist with. Not public API: no
 * compatibility promise, not re-exported by `kinformer`.
 */
export { replaceWithDiff, type StoreReplacement } from './cache.js';
export type { ThreadSafeStoreOptions } from './threadSafeStore.js';
export type { ThreadSafeStoreTransaction, TransactionType } from './transaction.js';
export type { ListerSource } from './lister.js';
export { indexFuncToKeyFuncAdapter } from './namespaceIndex.js';
