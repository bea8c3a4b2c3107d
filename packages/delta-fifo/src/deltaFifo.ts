import { DeletedFinalStateUnknown, ErrorCodes, KinformerError } from '@kinformer/core';
import { RingBuffer } from '@kinformer/core/internal';
import { FIFOCore } from './fifoCore.js';
import type { Popped } from './fifoCore.js';
import type { FIFOOptions, KeyListerGetter } from './fifoOptions.js';
import { isObjectDelta } from './queue.js';
import type { Deltas, ObjectDelta, ObjectDeltaType, Queue } from './queue.js';

/** Options of {@link DeltaFIFO}. */
export interface DeltaFIFOOptions<T> extends FIFOOptions<T> {
  /**
   * When true, `replace` queues `Replaced` deltas; when false (the default, as in client-go), it
   * queues `Sync` deltas, which consumers cannot tell from a periodic resync.
   */
  emitDeltaTypeReplaced?: boolean;
}

/**
 * client-go's `DeltaFIFO`: a queue of keys, each with the list of changes ({@link Deltas}) that
 * happened to its object since it was queued.
 *
 * - Order: a key keeps the place it got when first queued; later deltas for a queued key join its
 *   list without moving it ("no line jumping"). `pop` hands all deltas of the oldest key at once.
 * - Dedup: only two trailing `Deleted` deltas collapse into one (the one with more information:
 *   a plain delete wins over a `DeletedFinalStateUnknown` tombstone). Nothing else is merged.
 * - `delete` of a key that is neither queued nor in `knownObjects` is ignored.
 * - `replace(list)` queues `Replaced` (or `Sync`) for every item, then a tombstone delete for every
 *   queued or known key missing from the list (tombstone object: the newest queued object, else
 *   the known one), never adding a second delete after a queued one.
 * - `resync()` queues `Sync(knownObject)` for every known key with nothing queued.
 * - `hasSynced()` turns true once the first `replace`'s keys (tombstones included) have all been
 *   popped and processed (a requeued one counts), or at once if `add`/`update`/`delete` came before
 *   any `replace`.
 *
 * Every call is synchronous and atomic with respect to pops; `add`/`update`/`delete` and `pop` are
 * O(1) amortised. One consumer is expected: concurrent pops work but may process two versions of
 * one object at the same time.
 */
export class DeltaFIFO<T> extends FIFOCore<T> implements Queue<T> {
  private readonly items = new Map<string, ObjectDelta<T>[]>();
  private readonly queue = new RingBuffer<string>();
  private readonly knownObjects: KeyListerGetter<T> | undefined;
  private readonly emitDeltaTypeReplaced: boolean;

  constructor(options: DeltaFIFOOptions<T> = {}) {
    super(options, 'DeltaFIFO');
    this.knownObjects = options.knownObjects;
    this.emitDeltaTypeReplaced = options.emitDeltaTypeReplaced ?? false;
  }

  /** Queues an `Added` delta (after the transformer). Throws if the object cannot be keyed. */
  add(obj: T): void {
    const key = this.keyOf(obj);
    const object = this.transform(obj);
    this.populated = true;
    this.queueAction('Added', key, object);
  }

  /** Queues an `Updated` delta (after the transformer). Throws if the object cannot be keyed. */
  update(obj: T): void {
    const key = this.keyOf(obj);
    const object = this.transform(obj);
    this.populated = true;
    this.queueAction('Updated', key, object);
  }

  /**
   * Queues a `Deleted` delta, unless the key is neither queued nor in `knownObjects` (it was
   * presumably deleted by a relist already; a second report is not made). Accepts a tombstone.
   */
  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    const key = this.keyOf(obj);
    this.populated = true;
    if (
      !this.items.has(key) &&
      (this.knownObjects === undefined || this.knownObjects.getByKey(key) === undefined)
    ) {
      return;
    }
    this.queueAction('Deleted', key, this.transform(obj));
  }

  /**
   * Atomically: queues `Replaced` (with `emitDeltaTypeReplaced`) or `Sync` for every item, then a
   * `Deleted(DeletedFinalStateUnknown)` for every queued key not in `items` and for every known key
   * neither in `items` nor queued. The first call fixes the initial population (unique keys of
   * `items` plus those deletions) unless an add/update/delete came first. Keys and transforms are
   * computed before anything is queued, so a throw leaves the queue unchanged.
   */
  replace(items: T[], resourceVersion: string): void {
    const { keys, objects } = this.keyAndTransform(items);
    const n = items.length;
    const action: ObjectDeltaType = this.emitDeltaTypeReplaced ? 'Replaced' : 'Sync';
    const newKeys = new Set(keys);
    for (let i = 0; i < n; i++)
      this.queueAction(action, keys[i] as string, objects[i] as T | DeletedFinalStateUnknown<T>);

    // Deletion detection against the queue: every queued key not in the new list. Queued keys are
    // walked in queue order (the loop adds no new key, so the queue does not change size).
    let queuedDeletions = 0;
    for (let i = 0; i < this.queue.size; i++) {
      const key = this.queue.at(i) as string;
      if (newKeys.has(key)) continue;
      const deltas = this.items.get(key) as ObjectDelta<T>[];
      const newest = (deltas[deltas.length - 1] as ObjectDelta<T>).object;
      const last = newest instanceof DeletedFinalStateUnknown ? newest.obj : newest;
      queuedDeletions++;
      this.queueAction('Deleted', key, new DeletedFinalStateUnknown(key, last));
    }

    // Deletion detection against the consumer's cache: known keys neither listed nor queued.
    if (this.knownObjects !== undefined) {
      for (const key of this.knownObjects.listKeys()) {
        if (newKeys.has(key) || this.items.has(key)) continue;
        const known = this.knownObjects.getByKey(key);
        if (known === undefined) {
          this.log.warn({ key }, 'key listed by knownObjects has no object; no tombstone queued');
          continue;
        }
        queuedDeletions++;
        this.queueAction('Deleted', key, new DeletedFinalStateUnknown(key, known));
      }
    }

    this.markPopulatedByReplace(newKeys.size + queuedDeletions);
    this.log.debug({ items: n, deletions: queuedDeletions, resourceVersion }, 'replace');
  }

  /**
   * Queues `Sync(knownObject)` for every known object whose key has nothing queued (a queued delta
   * is newer than the cache; re-delivering the cached version would go back in time). The object is
   * not transformed again. No-op without `knownObjects`.
   */
  resync(): void {
    const known = this.knownObjects;
    if (known === undefined) return;
    for (const listed of known.listKeys()) {
      const obj = known.getByKey(listed);
      if (obj === undefined) continue;
      const key = this.keyOf(obj);
      if (this.items.has(key)) continue;
      this.queueAction('Sync', key, obj);
    }
  }

  /**
   * Re-queues a `Deltas` (the result of a `pop`) unless its key is queued already, in which case
   * nothing happens (the queued deltas are newer). Appends at the back. Keeps its own copy of the
   * array. Throws `ERR_KEY_FUNC` for an empty `Deltas`.
   */
  addIfNotPresent(deltas: Deltas<T>): void {
    const key = this.keyOf(deltas);
    const objectDeltas = deltas.filter(isObjectDelta);
    if (objectDeltas.length !== deltas.length) {
      throw new KinformerError(ErrorCodes.KEY_FUNC, `${this.name}: only per-object deltas can be queued`);
    }
    this.populated = true;
    if (this.items.has(key)) return;
    this.items.set(key, objectDeltas);
    this.queue.push(key);
    this.waiters.wakeAll();
  }

  /** The newest object of every queued key, in queue order (a snapshot; do not mutate the objects). */
  list(): Array<T | DeletedFinalStateUnknown<T>> {
    const out = new Array<T | DeletedFinalStateUnknown<T>>(this.queue.size);
    for (let i = 0; i < this.queue.size; i++) {
      const deltas = this.items.get(this.queue.at(i) as string) as ObjectDelta<T>[];
      out[i] = (deltas[deltas.length - 1] as ObjectDelta<T>).object;
    }
    return out;
  }

  /** The queued keys, in queue order (a snapshot). */
  listKeys(): string[] {
    return this.queue.toArray();
  }

  /** A copy of the deltas queued under `obj`'s key, or `undefined`. */
  get(obj: T | DeletedFinalStateUnknown<T> | Deltas<T>): Deltas<T> | undefined {
    return this.getByKey(this.keyOf(obj));
  }

  /** A copy of the deltas queued under `key`, or `undefined`. */
  getByKey(key: string): Deltas<T> | undefined {
    return this.items.get(key)?.slice();
  }

  /** Number of queued keys. */
  length(): number {
    return this.queue.size;
  }

  protected shift(): Popped<T> {
    const key = this.queue.shift() as string;
    const deltas = this.items.get(key) as ObjectDelta<T>[];
    this.items.delete(key);
    return { key, deltas };
  }

  private queueAction(type: ObjectDeltaType, key: string, object: T | DeletedFinalStateUnknown<T>): void {
    const delta: ObjectDelta<T> = { type, object };
    const deltas = this.items.get(key);
    if (deltas === undefined) {
      this.items.set(key, [delta]);
      this.queue.push(key);
      this.waiters.wakeAll();
      return;
    }
    deltas.push(delta);
    dedupTrailingDeletes(deltas);
  }

  /** Puts popped deltas back: merged before newer deltas of a re-queued key, else at the back. */
  protected requeue(item: Popped<T>): void {
    const key = item.key;
    const deltas = item.deltas as ObjectDelta<T>[];
    this.populated = true;
    const newer = this.items.get(key);
    if (newer === undefined) {
      this.items.set(key, deltas);
      this.queue.push(key);
      this.waiters.wakeAll();
      return;
    }
    const older = deltas[deltas.length - 1];
    const first = newer[0];
    let merged: ObjectDelta<T>[];
    if (older !== undefined && first !== undefined && older.type === 'Deleted' && first.type === 'Deleted') {
      merged = deltas.slice(0, -1);
      merged.push(keptDeletion(older, first));
      for (let i = 1; i < newer.length; i++) merged.push(newer[i] as ObjectDelta<T>);
    } else {
      merged = deltas.concat(newer);
    }
    this.items.set(key, merged);
  }
}

/** client-go's `dedupDeltas`: collapses the last two deltas when both are deletions. */
function dedupTrailingDeletes<T>(deltas: ObjectDelta<T>[]): void {
  const n = deltas.length;
  if (n < 2) return;
  const newer = deltas[n - 1] as ObjectDelta<T>;
  const older = deltas[n - 2] as ObjectDelta<T>;
  if (older.type !== 'Deleted' || newer.type !== 'Deleted') return;
  deltas[n - 2] = keptDeletion(older, newer);
  deltas.length = n - 1;
}

/** Of two consecutive deletions, the one with more information: the older unless it is a tombstone. */
function keptDeletion<T>(older: ObjectDelta<T>, newer: ObjectDelta<T>): ObjectDelta<T> {
  return older.object instanceof DeletedFinalStateUnknown ? newer : older;
}
