export type { Indexer, IndexFunc, Indexers, Store, StoreOptions } from './store.js';
export { newIndexer, newStore } from './cache.js';
export type { ThreadSafeStoreOptions } from './threadSafeStore.js';
export { ThreadSafeStore } from './threadSafeStore.js';
export type { ThreadSafeStoreTransaction, Transaction, TransactionType } from './transaction.js';
export { TransactionError } from './transaction.js';
export { indexFuncToKeyFuncAdapter, metaNamespaceIndexFunc, NAMESPACE_INDEX } from './namespaceIndex.js';
export type { LabelSelectorInput, ListerOptions, ListerSource, NamespaceLister } from './lister.js';
export { Lister } from './lister.js';
