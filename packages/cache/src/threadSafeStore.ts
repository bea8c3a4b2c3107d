import { deepFreeze, ErrorCodes, KinformerError } from '@kinformer/core';
import { hasObjectMeta } from '@kinformer/core/internal';
import type { IndexFunc, Indexers } from './store.js';
import { TransactionError } from './transaction.js';
import type { ThreadSafeStoreTransaction } from './transaction.js';

/** Options of {@link ThreadSafeStore}. */
export interface ThreadSafeStoreOptions {
  /** Deep-freeze every object when it is stored (add/update/replace). Default `false` at this level. */
  freeze?: boolean;
}

/** One index: index value → keys of the objects indexed under it. Never holds an empty set. */
type Index = Map<string, Set<string>>;

/** Above this many values, "is this old value still present?" uses a Set instead of `includes`. */
const LINEAR_SCAN_LIMIT = 16;

const EMPTY_INDEXERS: Readonly<Indexers<unknown>> = Object.freeze(Object.create(null) as Indexers<unknown>);

/**
 * client-go's `threadSafeMap`: objects by explicit key, plus secondary indexes maintained on every
 * write. JavaScript runs one thing at a time, so "thread-safe" here means **atomic**: every write is
 * fully applied or not at all, and no reader (a lister, a handler, an index function) can observe a
 * half-applied write. Each write first computes every index value it needs (which is where it can
 * fail) and only then mutates the items and the indexes (which cannot fail).
 *
 * Contract:
 * - Objects are stored by reference, never copied; readers must not mutate them. With
 *   `freeze: true` they are deep-frozen when stored, so a mutation throws (in strict mode).
 * - Index values map to `Set<key>`; a value whose set becomes empty is removed from its index.
 * - Index functions must be pure (the old object's values are recomputed on update and delete to
 *   find what to unindex, as client-go does). An index function that throws, or returns something
 *   other than an array of strings, makes the write throw `ERR_INDEX_FUNC` (naming the index and the
 *   key) and leaves the store unchanged. Writing to the store from inside an index function throws
 *   `ERR_INDEX_FUNC` as well.
 * - Unknown index names throw `ERR_INDEX` ("Index with name X does not exist"), except in
 *   {@link ThreadSafeStore.listIndexFuncValues}, which returns `[]`.
 * - Every array returned is new and owned by the caller; its elements are the stored objects.
 * - Resource-version tracking (client-go 1.36): `update`/`add` record the object's
 *   `metadata.resourceVersion` (objects without `metadata` are ignored), `deleteWithObject` records
 *   the deleted object's, `replace` and `bookmark` record theirs. It is the last one written, not the
 *   largest.
 */
export class ThreadSafeStore<T> {
  #items = new Map<string, T>();
  // Indexers live in parallel arrays (name, function, index) for cheap iteration on every write.
  readonly #names: string[] = [];
  readonly #funcs: IndexFunc<T>[] = [];
  #indices: Index[] = [];
  readonly #positions = new Map<string, number>();
  #indexers: Readonly<Indexers<T>> = EMPTY_INDEXERS;
  #rv = '';
  readonly #freeze: boolean;
  #writing = false;
  // Scratch space for one write's computed index values (one slot per indexer), reused so that a
  // write allocates nothing beyond what the index functions return. Cleared after every write.
  readonly #oldValues: Array<string[] | undefined> = [];
  readonly #newValues: Array<string[] | undefined> = [];

  constructor(indexers: Indexers<T> = {}, options: ThreadSafeStoreOptions = {}) {
    this.#freeze = options.freeze ?? false;
    this.addIndexers(indexers);
  }

  /** Same as {@link ThreadSafeStore.update}. */
  add(key: string, obj: T): void {
    this.update(key, obj);
  }

  /**
   * Stores `obj` under `key` (an upsert) and moves the key between index values as needed. When an
   * indexer's old and new values are the same (same values in the same order, e.g. one unchanged
   * namespace) its index is not touched at all. Records `obj`'s resourceVersion.
   */
  update(key: string, obj: T): void {
    this.#enter();
    const n = this.#funcs.length;
    try {
      this.#updateLocked(key, obj, n);
      this.#recordResourceVersion(obj);
    } finally {
      this.#leave(n);
    }
  }

  /** Removes `key` and unindexes its object. Unknown keys are ignored. Does not touch the resourceVersion. */
  delete(key: string): void {
    this.#enter();
    const n = this.#funcs.length;
    try {
      this.#deleteLocked(key, n);
    } finally {
      this.#leave(n);
    }
  }

  /** {@link ThreadSafeStore.delete} then records `obj`'s resourceVersion (if it has metadata). */
  deleteWithObject(key: string, obj: unknown): void {
    this.#enter();
    const n = this.#funcs.length;
    try {
      this.#deleteLocked(key, n);
      this.#recordResourceVersion(obj);
    } finally {
      this.#leave(n);
    }
  }

  /**
   * Applies several writes at once, in order (client-go's `ThreadSafeStoreWithTransaction`): `Add`
   * and `Update` store `object` under `key` (an upsert), `Delete` removes `key`. No reader can
   * observe the store between two entries. An entry whose index function throws (or whose `type` is
   * unknown) is skipped, leaving the store as the entries before it left it, and the others are
   * still applied; then a {@link TransactionError} is thrown listing the entries applied. The
   * resourceVersion recorded is that of the last applied entry's object (when it has metadata).
   */
  transaction(txns: readonly ThreadSafeStoreTransaction<T>[]): void {
    const n = this.#funcs.length;
    const errors: unknown[] = [];
    let successful: number[] | undefined;
    let last = -1;
    this.#enter();
    try {
      for (let t = 0; t < txns.length; t++) {
        const txn = txns[t]!;
        try {
          this.#applyLocked(txn, n);
          last = t;
          if (successful !== undefined) successful.push(t);
        } catch (err) {
          if (successful === undefined) successful = range(t);
          errors.push(err);
        } finally {
          this.#clearScratch(n);
        }
      }
      if (last >= 0) this.#recordResourceVersion(txns[last]!.object);
    } finally {
      this.#writing = false;
    }
    if (successful !== undefined) throw new TransactionError(successful, txns.length, errors);
  }

  /** The object stored under `key`, or `undefined`. Allocates nothing. */
  get(key: string): T | undefined {
    return this.#items.get(key);
  }

  /** True when something is stored under `key`. */
  has(key: string): boolean {
    return this.#items.has(key);
  }

  /** A new array of every stored object (a snapshot; order is insertion order of the keys). */
  list(): T[] {
    return Array.from(this.#items.values());
  }

  /** A new array of every key. */
  listKeys(): string[] {
    return Array.from(this.#items.keys());
  }

  /** How many objects are stored. */
  size(): number {
    return this.#items.size;
  }

  /**
   * Replaces the whole contents with `items` and rebuilds every index from scratch, atomically:
   * if an index function fails, nothing changes. **Takes ownership of `items`** (the map becomes the
   * store's; do not use it afterwards). Records `resourceVersion`. Returns the previous contents
   * (a map the store no longer holds nor changes).
   */
  replace(items: Map<string, T>, resourceVersion: string): ReadonlyMap<string, T> {
    this.#enter();
    try {
      const previous = this.#items;
      const n = this.#funcs.length;
      const indices: Index[] = [];
      for (let i = 0; i < n; i++) indices.push(new Map());
      for (const [key, obj] of items) {
        for (let i = 0; i < n; i++) addValues(indices[i]!, this.#compute(i, obj, key), key);
      }
      if (this.#freeze) for (const obj of items.values()) deepFreeze(obj);
      this.#items = items;
      this.#indices = indices;
      this.#rv = resourceVersion;
      return previous;
    } finally {
      this.#writing = false;
    }
  }

  /** No-op (kept for the `Store` contract). */
  resync(): void {
    // Nothing to do: the store holds no pending work.
  }

  /**
   * The stored objects whose values for `indexName` intersect `obj`'s values (each object once).
   * Throws `ERR_INDEX` for an unknown index, `ERR_INDEX_FUNC` when the index function fails on `obj`.
   */
  index(indexName: string, obj: T): T[] {
    const i = this.#position(indexName);
    const values = this.#compute(i, obj, undefined);
    const index = this.#indices[i]!;
    if (values.length === 1) return this.#objects(index.get(values[0]!));
    const keys = new Set<string>();
    for (const value of values) {
      const set = index.get(value);
      if (set !== undefined) for (const key of set) keys.add(key);
    }
    return this.#objects(keys);
  }

  /** The stored objects indexed under `value`. Throws `ERR_INDEX` for an unknown index. */
  byIndex(indexName: string, value: string): T[] {
    return this.#objects(this.#indices[this.#position(indexName)]!.get(value));
  }

  /** The keys indexed under `value`. Throws `ERR_INDEX` for an unknown index. */
  indexKeys(indexName: string, value: string): string[] {
    const set = this.#indices[this.#position(indexName)]!.get(value);
    return set === undefined ? [] : Array.from(set);
  }

  /** The distinct values present in the index (each has at least one key); `[]` for an unknown index. */
  listIndexFuncValues(indexName: string): string[] {
    const i = this.#positions.get(indexName);
    return i === undefined ? [] : Array.from(this.#indices[i]!.keys());
  }

  /** The index functions by name: a frozen, null-prototype record (the same object until `addIndexers`). */
  getIndexers(): Readonly<Indexers<T>> {
    return this.#indexers;
  }

  /**
   * Adds indexers and indexes every stored object under them at once, atomically. Throws `ERR_INDEX`
   * ("indexer conflict: …") when a name is already taken or a value is not a function, and
   * `ERR_INDEX_FUNC` when a new index function fails on a stored object; in both cases nothing changes.
   */
  addIndexers(indexers: Indexers<T>): void {
    const entries = Object.entries(indexers);
    if (entries.length === 0) return;
    const conflicts = entries.filter(([name]) => this.#positions.has(name)).map(([name]) => name);
    if (conflicts.length > 0) {
      throw new KinformerError(ErrorCodes.INDEX, `indexer conflict: ${conflicts.join(', ')}`, {
        details: { indexers: conflicts },
      });
    }
    for (const [name, fn] of entries) {
      if (typeof fn !== 'function') {
        throw new KinformerError(ErrorCodes.INDEX, `indexer ${JSON.stringify(name)} is not a function`, {
          details: { index: name },
        });
      }
    }
    this.#enter();
    try {
      const built: Index[] = [];
      for (const [name, fn] of entries) {
        const index: Index = new Map();
        for (const [key, obj] of this.#items) addValues(index, computeValues(name, fn, obj, key), key);
        built.push(index);
      }
      const record = Object.assign(Object.create(null) as Indexers<T>, this.#indexers);
      entries.forEach(([name, fn], j) => {
        this.#positions.set(name, this.#names.length);
        this.#names.push(name);
        this.#funcs.push(fn);
        this.#indices.push(built[j]!);
        this.#oldValues.push(undefined);
        this.#newValues.push(undefined);
        record[name] = fn;
      });
      this.#indexers = Object.freeze(record);
    } finally {
      this.#writing = false;
    }
  }

  /** The resourceVersion last recorded (see the class contract); `''` before any. */
  lastStoreSyncResourceVersion(): string {
    return this.#rv;
  }

  /** Records a watch bookmark's resourceVersion. */
  bookmark(resourceVersion: string): void {
    this.#rv = resourceVersion;
  }

  /** Computes every index value (where it can throw), then stores and indexes (cannot throw). */
  #updateLocked(key: string, obj: T, n: number): void {
    const old = this.#items.get(key);
    const hadOld = old !== undefined || this.#items.has(key);
    for (let i = 0; i < n; i++) {
      this.#newValues[i] = this.#compute(i, obj, key);
      if (hadOld) this.#oldValues[i] = this.#compute(i, old as T, key);
    }
    // Nothing below can throw.
    if (this.#freeze) deepFreeze(obj);
    this.#items.set(key, obj);
    for (let i = 0; i < n; i++) {
      updateIndex(this.#indices[i]!, this.#oldValues[i], this.#newValues[i]!, key);
    }
  }

  #applyLocked(txn: ThreadSafeStoreTransaction<T>, n: number): void {
    switch (txn.type) {
      case 'Add':
      case 'Update':
        this.#updateLocked(txn.key, txn.object, n);
        return;
      case 'Delete':
        this.#deleteLocked(txn.key, n);
        return;
      default:
        throw new KinformerError(
          ErrorCodes.INVALID_OPTION,
          `unknown transaction type ${JSON.stringify(txn.type)}: expected Add, Update or Delete`,
          { details: { key: txn.key } },
        );
    }
  }

  #deleteLocked(key: string, n: number): void {
    const old = this.#items.get(key);
    if (old === undefined && !this.#items.has(key)) return;
    for (let i = 0; i < n; i++) this.#oldValues[i] = this.#compute(i, old as T, key);
    // Nothing below can throw.
    this.#items.delete(key);
    for (let i = 0; i < n; i++) removeValues(this.#indices[i]!, this.#oldValues[i]!, key);
  }

  #recordResourceVersion(obj: unknown): void {
    if (hasObjectMeta(obj)) this.#rv = obj.metadata.resourceVersion ?? '';
  }

  #compute(i: number, obj: T, key: string | undefined): string[] {
    return computeValues(this.#names[i]!, this.#funcs[i]!, obj, key);
  }

  #position(indexName: string): number {
    const i = this.#positions.get(indexName);
    if (i === undefined) {
      throw new KinformerError(ErrorCodes.INDEX, `Index with name ${indexName} does not exist`, {
        details: { index: indexName },
      });
    }
    return i;
  }

  #objects(keys: Set<string> | undefined): T[] {
    if (keys === undefined) return [];
    const out: T[] = [];
    for (const key of keys) out.push(this.#items.get(key) as T);
    return out;
  }

  #enter(): void {
    if (this.#writing) {
      throw new KinformerError(
        ErrorCodes.INDEX_FUNC,
        'the store was written to from inside an index function',
      );
    }
    this.#writing = true;
  }

  #leave(n: number): void {
    this.#clearScratch(n);
    this.#writing = false;
  }

  #clearScratch(n: number): void {
    for (let i = 0; i < n; i++) {
      this.#oldValues[i] = undefined;
      this.#newValues[i] = undefined;
    }
  }
}

/** `[0, 1, …, n - 1]`. */
function range(n: number): number[] {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}

/** Calls an index function and checks it returned an array of strings. */
function computeValues<T>(name: string, fn: IndexFunc<T>, obj: T, key: string | undefined): string[] {
  let values: unknown;
  try {
    values = fn(obj);
  } catch (err) {
    throw indexFuncError(name, key, err instanceof Error ? err.message : String(err), err);
  }
  if (!Array.isArray(values)) throw indexFuncError(name, key, 'it did not return an array');
  for (let i = 0; i < values.length; i++) {
    if (typeof values[i] !== 'string') throw indexFuncError(name, key, `value ${i} is not a string`);
  }
  return values as string[];
}

function indexFuncError(
  name: string,
  key: string | undefined,
  reason: string,
  cause?: unknown,
): KinformerError {
  const subject = key === undefined ? '' : ` for key ${JSON.stringify(key)}`;
  return new KinformerError(
    ErrorCodes.INDEX_FUNC,
    `index function ${JSON.stringify(name)} failed${subject}: ${reason}`,
    {
      ...(cause === undefined ? {} : { cause }),
      details: key === undefined ? { index: name } : { index: name, key },
    },
  );
}

/** Moves `key` from the `oldValues` sets to the `newValues` sets. */
function updateIndex(index: Index, oldValues: string[] | undefined, newValues: string[], key: string): void {
  if (oldValues === undefined) {
    addValues(index, newValues, key);
    return;
  }
  if (sameValues(oldValues, newValues)) return; // the fast path: nothing moved
  if (oldValues.length > 0) {
    const lookup = newValues.length > LINEAR_SCAN_LIMIT ? new Set(newValues) : undefined;
    for (const value of oldValues) {
      const kept = lookup === undefined ? newValues.includes(value) : lookup.has(value);
      if (!kept) removeValue(index, value, key);
    }
  }
  // Values present before and after already hold the key (Set.add is then a no-op lookup).
  addValues(index, newValues, key);
}

function sameValues(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function addValues(index: Index, values: string[], key: string): void {
  for (const value of values) {
    const set = index.get(value);
    if (set === undefined) {
      const created = new Set<string>();
      created.add(key);
      index.set(value, created);
    } else {
      set.add(key);
    }
  }
}

function removeValues(index: Index, values: string[], key: string): void {
  for (const value of values) removeValue(index, value, key);
}

function removeValue(index: Index, value: string, key: string): void {
  const set = index.get(value);
  if (set === undefined) return;
  set.delete(key);
  if (set.size === 0) index.delete(value);
}
