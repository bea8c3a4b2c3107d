export type { Indexer, Indexers, IndexFunc, Store, StoreOptions } from './store.js';
export { newIndexer, newStore } from './cache.js';
export { ThreadSafeStore } from './threadSafeStore.js';
export { type Transaction, TransactionError } from './transaction.js';
export { metaNamespaceIndexFunc, NAMESPACE_INDEX } from './namespaceIndex.js';
export { type LabelSelectorInput, Lister, type ListerOptions, type NamespaceLister } from './lister.js';
