export type { Indexer, IndexFunc, Indexers, Store, StoreOptions } from './store.js';
export { newIndexer, newStore } from './cache.js';
export { ThreadSafeStore } from './threadSafeStore.js';
export type { Transaction } from './transaction.js';
export { TransactionError } from './transaction.js';
export { metaNamespaceIndexFunc, NAMESPACE_INDEX } from './namespaceIndex.js';
export type { LabelSelectorInput, ListerOptions, NamespaceLister } from './lister.js';
export { Lister } from './lister.js';
