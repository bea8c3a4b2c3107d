import type { KeyFunc } from '@kinformer/core';
import type { Transaction } from './transaction.js';

/**
 * client-go's `Store`: a keyed, thread-safe (atomic with respect to the event loop) object cache.
 * Objects are stored once and returned by reference: callers must never mutate what they get.
 * `list()` returns a fresh array (a snapshot) whose elements are the stored objects.
 */
export interface Store<T> {
  /** Inserts or replaces the object under its key. */
  add(obj: T): void;
  /** Same as {@link Store.add} (an upsert). */
  update(obj: T): void;
  /** Removes the object's key. Unknown keys are ignored. */
  delete(obj: T): void;
  /** Every stored object, in a new array (a snapshot; the elements are the stored objects). */
  list(): T[];
  /** Every key, in a new array. */
  listKeys(): string[];
  /** The stored object with the same key as `obj`, or `undefined`. */
  get(obj: T): T | undefined;
  /** The object stored under `key`, or `undefined`. Never throws, allocates nothing. */
  getByKey(key: string): T | undefined;
  /** Replaces the whole contents atomically (indices are rebuilt) and records `resourceVersion`. */
  replace(items: T[], resourceVersion: string): void;
  /** No-op for a plain store (kept for the ReflectorStore contract). */
  resync(): void;
  /** How many objects are stored. */
  size(): number;
  /** The resourceVersion of the last written object, replace or bookmark ("last written", not max). */
  lastStoreSyncResourceVersion(): string;
  /** Records a bookmark's resourceVersion. */
  bookmark(resourceVersion: string): void;
  /**
   * Applies several writes at once, in order (client-go's `TransactionStore.Transaction`): `Add` and
   * `Update` upsert `object`, `Delete` removes its key. No reader observes the store between two
   * entries. An entry whose key function or index function throws is skipped and the others are
   * applied; then a `TransactionError` (`ERR_TRANSACTION`) is thrown with `successfulIndices`,
   * `totalTransactions` and the entries' errors. The resourceVersion recorded is the last applied
   * entry's object's.
   */
  transaction(txns: readonly Transaction<T>[]): void;
}

/** Computes the index values of an object (several values allowed; an empty array means none). */
export type IndexFunc<T> = (obj: T) => string[];

/** Index functions by index name. */
export type Indexers<T> = Record<string, IndexFunc<T>>;

/**
 * client-go's `Indexer`: a {@link Store} with secondary indexes, maintained on every write.
 * Every array returned is new and owned by the caller (its elements are the stored objects).
 */
export interface Indexer<T> extends Store<T> {
  /** Objects whose values for `indexName` intersect `obj`'s. Throws `ERR_INDEX` for an unknown index. */
  index(indexName: string, obj: T): T[];
  /** Keys of objects indexed under `value`. Throws `ERR_INDEX` for an unknown index. */
  indexKeys(indexName: string, value: string): string[];
  /** The distinct values currently present in the index (empty for an unknown index). */
  listIndexFuncValues(indexName: string): string[];
  /** Objects indexed under `value`. Throws `ERR_INDEX` for an unknown index. */
  byIndex(indexName: string, value: string): T[];
  /** The index functions by name (read-only). */
  getIndexers(): Readonly<Indexers<T>>;
  /** Adds indexers and indexes existing items at once. Throws `ERR_INDEX` on a name conflict. */
  addIndexers(indexers: Indexers<T>): void;
}

/** Options of `newStore` / `newIndexer`. */
export interface StoreOptions<T> {
  /** The key function, when not passed positionally (default `deletionHandlingMetaNamespaceKeyFunc`). */
  keyFunc?: KeyFunc<T>;
  /** Deep-freeze stored objects (default: development mode, see `defaultFreezeObjects`). */
  freeze?: boolean;
}
