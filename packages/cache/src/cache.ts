import { deletionHandlingMetaNamespaceKeyFunc } from '@kinformer/core';
import { defaultFreezeObjects } from '@kinformer/core/internal';
import type { KeyFunc } from '@kinformer/core';
import type { Indexer, Indexers, Store, StoreOptions } from './store.js';
import { ThreadSafeStore } from './threadSafeStore.js';
import { TransactionError } from './transaction.js';
import type { ThreadSafeStoreTransaction, Transaction } from './transaction.js';

/** What {@link replaceWithDiff} returns: the key → object maps before and after the replace. */
export interface StoreReplacement<T> {
  /** The contents before, in the store's key order. */
  readonly previous: ReadonlyMap<string, T>;
  /** The contents after, in list order (a key listed twice: its first place, its last object). */
  readonly next: ReadonlyMap<string, T>;
  /** The key of every listed item, in list order. */
  readonly keys: readonly string[];
}

/**
 * `store.replace(items, resourceVersion)` keying every item once, and returning what the store held
 * before and holds after, when `store` was made by {@link newStore} or {@link newIndexer} (and its
 * `replace` is not wrapped); `undefined` (and nothing done) for any other `Store`. Throws what `replace` throws, with the store
 * unchanged.
 */
export function replaceWithDiff<T>(
  store: Store<T>,
  items: readonly T[],
  resourceVersion: string,
): StoreReplacement<T> | undefined {
  // A wrapped store (a proxy or a patched `replace`) keeps its own replace: take the general path.
  if (!(store instanceof Cache) || store.replace !== Cache.prototype.replace) return undefined;
  return (store as Cache<T>).replaceKeyed(items, resourceVersion);
}

/**
 * client-go's `cache`: a {@link ThreadSafeStore} keyed by a key function. Every method keys its
 * argument once and delegates; a key function that throws (`ERR_KEY_FUNC`) leaves the store unchanged.
 */
class Cache<T> implements Indexer<T> {
  readonly #keyFunc: KeyFunc<T>;
  readonly #store: ThreadSafeStore<T>;

  constructor(keyFunc: KeyFunc<T>, indexers: Indexers<T>, freeze: boolean) {
    this.#keyFunc = keyFunc;
    this.#store = new ThreadSafeStore<T>(indexers, { freeze });
  }

  add(obj: T): void {
    this.#store.update(this.#keyFunc(obj), obj);
  }

  update(obj: T): void {
    this.#store.update(this.#keyFunc(obj), obj);
  }

  delete(obj: T): void {
    this.#store.deleteWithObject(this.#keyFunc(obj), obj);
  }

  list(): T[] {
    return this.#store.list();
  }

  listKeys(): string[] {
    return this.#store.listKeys();
  }

  get(obj: T): T | undefined {
    return this.#store.get(this.#keyFunc(obj));
  }

  getByKey(key: string): T | undefined {
    return this.#store.get(key);
  }

  replace(items: T[], resourceVersion: string): void {
    this.replaceKeyed(items, resourceVersion);
  }

  /**
   * {@link Cache.replace} that also returns the contents before and after (keyed once, while
   * replacing), for a consumer that must tell the handlers what changed (see {@link replaceWithDiff}).
   */
  replaceKeyed(items: readonly T[], resourceVersion: string): StoreReplacement<T> {
    const next = new Map<string, T>();
    const keys = new Array<string>(items.length);
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as T;
      const key = this.#keyFunc(item);
      keys[i] = key;
      next.set(key, item);
    }
    const previous = this.#store.replace(next, resourceVersion);
    return { previous, next, keys };
  }

  resync(): void {
    this.#store.resync();
  }

  size(): number {
    return this.#store.size();
  }

  lastStoreSyncResourceVersion(): string {
    return this.#store.lastStoreSyncResourceVersion();
  }

  bookmark(resourceVersion: string): void {
    this.#store.bookmark(resourceVersion);
  }

  transaction(txns: readonly Transaction<T>[]): void {
    const keyed: ThreadSafeStoreTransaction<T>[] = [];
    const positions: number[] = []; // positions in `txns` of the keyed entries
    const failures: Array<{ at: number; error: unknown }> = [];
    for (let i = 0; i < txns.length; i++) {
      const txn = txns[i]!;
      let key: string;
      try {
        key = this.#keyFunc(txn.object);
      } catch (error) {
        failures.push({ at: i, error });
        continue;
      }
      positions.push(i);
      keyed.push({ type: txn.type, object: txn.object, key });
    }
    let applied = positions;
    try {
      this.#store.transaction(keyed);
    } catch (err) {
      if (!(err instanceof TransactionError)) throw err;
      applied = err.successfulIndices.map((j) => positions[j]!);
      const ok = new Set(err.successfulIndices);
      let k = 0;
      for (let j = 0; j < keyed.length; j++) {
        if (!ok.has(j)) failures.push({ at: positions[j]!, error: err.errors[k++] });
      }
      failures.sort((a, b) => a.at - b.at);
    }
    if (failures.length > 0) {
      throw new TransactionError(
        applied,
        txns.length,
        failures.map((f) => f.error),
      );
    }
  }

  index(indexName: string, obj: T): T[] {
    return this.#store.index(indexName, obj);
  }

  indexKeys(indexName: string, value: string): string[] {
    return this.#store.indexKeys(indexName, value);
  }

  listIndexFuncValues(indexName: string): string[] {
    return this.#store.listIndexFuncValues(indexName);
  }

  byIndex(indexName: string, value: string): T[] {
    return this.#store.byIndex(indexName, value);
  }

  getIndexers(): Readonly<Indexers<T>> {
    return this.#store.getIndexers();
  }

  addIndexers(indexers: Indexers<T>): void {
    this.#store.addIndexers(indexers);
  }
}

function resolveKeyFunc<T>(keyFunc: KeyFunc<T> | undefined, options: StoreOptions<T>): KeyFunc<T> {
  return keyFunc ?? options.keyFunc ?? (deletionHandlingMetaNamespaceKeyFunc as KeyFunc<T>);
}

/**
 * A {@link Store} (client-go's `NewStore`).
 *
 * - `keyFunc` (or `options.keyFunc`; the positional one wins) defaults to core's
 *   `deletionHandlingMetaNamespaceKeyFunc`: `namespace/name` or `name`, and a
 *   `DeletedFinalStateUnknown` tombstone yields its `key`, so `store.delete(tombstone)` works.
 * - `options.freeze` (default `defaultFreezeObjects()`: on unless `NODE_ENV=production`, overridden
 *   by `KINFORMER_FREEZE`) deep-freezes objects as they are stored by add/update/replace, so code
 *   that mutates a cached object throws instead of corrupting the cache. Freezing applies to the
 *   caller's object itself: objects are stored once and never copied.
 * - Writes are atomic: a key function or index function that throws leaves the store unchanged.
 * - `list()`/`listKeys()` return a new array on every call (a snapshot of the keys/objects).
 */
export function newStore<T>(keyFunc?: KeyFunc<T>, options: StoreOptions<T> = {}): Store<T> {
  return new Cache<T>(resolveKeyFunc(keyFunc, options), {}, options.freeze ?? defaultFreezeObjects());
}

/**
 * An {@link Indexer} (client-go's `NewIndexer`): a {@link newStore} store with the given secondary
 * indexes, maintained on every write. More can be added later with `addIndexers`, which indexes the
 * objects already stored. Throws `ERR_INDEX` if an indexer is not a function.
 */
export function newIndexer<T>(
  keyFunc?: KeyFunc<T>,
  indexers: Indexers<T> = {},
  options: StoreOptions<T> = {},
): Indexer<T> {
  return new Cache<T>(resolveKeyFunc(keyFunc, options), indexers, options.freeze ?? defaultFreezeObjects());
}
