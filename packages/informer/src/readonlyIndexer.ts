import type { Indexer, Store } from '@kinformer/cache';

/**
 * The reading half of a {@link Store}: what handlers, listers and users get from an informer
 * (`informer.getStore()`). Objects are the cached ones, shared and frozen in development mode:
 * never mutate them. Arrays returned are new and owned by the caller.
 */
export type ReadonlyStore<T> = Pick<
  Store<T>,
  'list' | 'listKeys' | 'get' | 'getByKey' | 'size' | 'lastStoreSyncResourceVersion'
>;

/**
 * The reading half of an {@link Indexer} (`informer.getIndexer()`): {@link ReadonlyStore} plus the
 * index queries. Only the informer writes its cache; add indexes with `informer.addIndexers`.
 */
export type ReadonlyIndexer<T> = ReadonlyStore<T> &
  Pick<Indexer<T>, 'index' | 'indexKeys' | 'listIndexFuncValues' | 'byIndex' | 'getIndexers'>;
