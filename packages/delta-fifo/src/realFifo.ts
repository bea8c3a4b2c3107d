import {
  abortError,
  componentLogger,
  DeletedFinalStateUnknown,
  ErrorCodes,
  KinformerError,
  metaNamespaceKeyFunc,
  realClock,
} from '@kinformer/core';
import { RingBuffer } from '@kinformer/core/internal';
import type { Clock, KeyFunc, Logger } from '@kinformer/core';
import type { FIFOOptions, KeyListerGetter, TransformFunc } from './fifoOptions.js';
import { closedError, isPromiseLike, keyOf, SLOW_DEPTH, SLOW_MS } from './internal.js';
import { isObjectDelta } from './queue.js';
import type { Delta, Deltas, ObjectDeltaType, PopProcessFunc, Queue } from './queue.js';
import { RequeueError } from './requeueError.js';
import { Waiters } from './waiters.js';

/** The key slot of an atomic-mode delta (which concerns no single object). */
const NO_KEY = '';

/** client-go's default (and our default) maximum batch size of {@link RealFIFO.popBatch}. */
export const DEFAULT_BATCH_SIZE = 1000;

/** Options of {@link RealFIFO}. */
export interface RealFIFOOptions<T> extends FIFOOptions<T> {
  /** Default `maxBatch` of {@link RealFIFO.popBatch}. Default: 1000 (client-go's). */
  batchSize?: number;
  /**
   * Atomic mode (client-go 1.36's `AtomicEvents`, what informers use by default): `replace` queues
   * one `ReplacedAll` delta holding the whole (transformed) list and its resourceVersion, `resync`
   * one `SyncAll` delta; the consumer applies each to its cache at once. `knownObjects` must then
   * be unset (the consumer's cache is reconciled when the delta is processed, not when it is
   * queued). Default: false.
   */
  atomicEvents?: boolean;
  /**
   * With `atomicEvents`: `bookmark(rv)` queues a `Bookmark` delta, so the consumer's cache learns
   * the bookmark's resourceVersion in order with the events (client-go's `EmitDeltaTypeBookmark`).
   * Without it `bookmark` does nothing. Default: false.
   */
  emitDeltaTypeBookmark?: boolean;
}

/** Options of {@link RealFIFO.popBatch}. */
export interface PopBatchOptions {
  /** At most this many entries per batch (an integer ≥ 1). Default: the FIFO's `batchSize`. */
  maxBatch?: number;
  /** Aborting it makes a waiting `popBatch` reject with `ERR_ABORTED`. */
  signal?: AbortSignal;
}

/**
 * Handles one batch of {@link RealFIFO.popBatch}: one single-delta `Deltas` per entry, oldest first,
 * all with different keys, all initial or all not. May be async.
 */
export type PopBatchProcessFunc<T> = (batch: Deltas<T>[], isInInitialList: boolean) => void | Promise<void>;

/**
 * client-go's `RealFIFO` (the queue of the 1.36 informers): an in-order log of every notification.
 * Each entry is popped as a one-element {@link Deltas}; nothing is merged or deduplicated, so events
 * of different keys are delivered in the order they happened.
 *
 * In atomic mode (`atomicEvents: true`, client-go's `AtomicFIFO`):
 * - `replace(list, rv)` appends ONE `ReplacedAll` delta whose object is `{ resourceVersion: rv,
 *   objects }` (`objects`: the list, transformed, in list order); the consumer finds the deletions
 *   by comparing it with its cache (see `processDeltas`).
 * - `resync()` appends ONE `SyncAll` delta (object `{}`).
 * - `bookmark(rv)` appends a `Bookmark` delta (object `{ resourceVersion }`) when
 *   `emitDeltaTypeBookmark` is set, and does nothing otherwise; it does not count as a first event
 *   for `hasSynced`.
 * - `knownObjects` is refused (`ERR_INVALID_OPTION`).
 *
 * In both modes `delete` is always queued (no `knownObjects` filtering, unlike DeltaFIFO), and the
 * first `replace` (before any add/update/delete) makes everything queued at that moment the initial
 * population; `hasSynced()` turns true once it has been popped and processed.
 *
 * In non-atomic mode:
 * - `replace(list)` appends, in one synchronous step, first the synthetic deletions — a tombstone for
 *   every queued key not in the list whose last entry is not a delete (tombstone object: that last
 *   object), in first-seen order, then one for every known key neither listed nor queued — and then
 *   `Replaced` for every item in list order.
 * - `resync()` appends `Sync(knownObject)` for every known key that has no entry queued.
 *
 * `add`/`update`/`delete`, `pop` and `popBatch` are O(1) amortised per entry. One consumer is expected.
 */
export class RealFIFO<T> implements Queue<T> {
  /** The name used in logs and errors. */
  readonly name: string;

  private readonly deltas = new RingBuffer<Delta<T>>();
  /** Keys of {@link deltas}, in lockstep (computed once, at enqueue). */
  private readonly keys = new RingBuffer<string>();
  private readonly waiters = new Waiters();
  private readonly keyFunc: KeyFunc<T>;
  private readonly knownObjects: KeyListerGetter<T> | undefined;
  private readonly transformer: TransformFunc<T> | undefined;
  private readonly batchSize: number;
  private readonly atomic: boolean;
  private readonly emitBookmarks: boolean;
  private readonly log: Logger;
  private readonly clock: Clock;
  private populated = false;
  private initialPopulationCount = 0;
  private closed = false;

  constructor(options: RealFIFOOptions<T> = {}) {
    this.name = options.name ?? 'RealFIFO';
    this.keyFunc = options.keyFunction ?? (metaNamespaceKeyFunc as KeyFunc<T>);
    this.atomic = options.atomicEvents ?? false;
    this.emitBookmarks = options.emitDeltaTypeBookmark ?? false;
    if (this.atomic && options.knownObjects !== undefined) {
      throw new KinformerError(
        ErrorCodes.INVALID_OPTION,
        `${this.name}: knownObjects must not be set when atomicEvents is true`,
        { details: { option: 'knownObjects' } },
      );
    }
    if (!this.atomic && this.emitBookmarks) {
      throw new KinformerError(
        ErrorCodes.INVALID_OPTION,
        `${this.name}: emitDeltaTypeBookmark requires atomicEvents`,
        { details: { option: 'emitDeltaTypeBookmark' } },
      );
    }
    this.knownObjects = options.knownObjects;
    this.transformer = options.transformer;
    this.batchSize = checkBatchSize(options.batchSize ?? DEFAULT_BATCH_SIZE, 'batchSize');
    this.clock = options.clock ?? realClock;
    this.log = componentLogger(options.logger, { component: 'RealFIFO', name: this.name });
  }

  /** The key of an object, a tombstone (its `key`) or a `Deltas` (its newest object's). */
  keyOf(obj: T | DeletedFinalStateUnknown<T> | Deltas<T>): string {
    return keyOf(this.keyFunc, obj);
  }

  /** Appends `Added` (after the transformer). Throws if the object cannot be keyed. */
  add(obj: T): void {
    this.queueAction('Added', obj);
  }

  /** Appends `Updated` (after the transformer). Throws if the object cannot be keyed. */
  update(obj: T): void {
    this.queueAction('Updated', obj);
  }

  /** Appends `Deleted` (after the transformer, unless `obj` is a tombstone), whether or not the key is known. */
  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    this.queueAction('Deleted', obj);
  }

  /** True in atomic mode (`atomicEvents`). */
  isAtomic(): boolean {
    return this.atomic;
  }

  /**
   * Atomic mode: appends one `ReplacedAll` delta (objects transformed first, so a throwing
   * transformer leaves the queue unchanged; objects are not keyed here). Otherwise appends the
   * synthetic deletions, then `Replaced` for every item (see the class comment), in one synchronous
   * step: no pop sees a partial replace. Keys and transforms are computed first, so a throw leaves
   * the queue unchanged.
   */
  replace(items: T[], resourceVersion: string): void {
    if (this.atomic) {
      const objects =
        this.transformer === undefined ? items.slice() : items.map((item) => this.transform(item) as T);
      this.append({ type: 'ReplacedAll', object: { resourceVersion, objects } }, NO_KEY);
      this.markPopulatedByReplace();
      this.log.debug({ items: objects.length, resourceVersion }, 'replace (atomic)');
      return;
    }
    const n = items.length;
    const keys = new Array<string>(n);
    const objects = new Array<T | DeletedFinalStateUnknown<T>>(n);
    for (let i = 0; i < n; i++) {
      const item = items[i] as T;
      keys[i] = this.keyOf(item);
      objects[i] = this.transform(item);
    }
    const newKeys = new Set(keys);

    // The last queued entry of every queued key, in first-seen order (Map keeps insertion order).
    const lastQueued = new Map<string, Delta<T>>();
    for (let i = 0; i < this.keys.size; i++)
      lastQueued.set(this.keys.at(i) as string, this.deltas.at(i) as Delta<T>);

    let deletions = 0;
    for (const [key, last] of lastQueued) {
      if (newKeys.has(key) || !isObjectDelta(last) || last.type === 'Deleted') continue;
      const obj = last.object instanceof DeletedFinalStateUnknown ? last.object.obj : last.object;
      this.append({ type: 'Deleted', object: new DeletedFinalStateUnknown(key, obj) }, key);
      deletions++;
    }
    if (this.knownObjects !== undefined) {
      for (const key of this.knownObjects.listKeys()) {
        if (newKeys.has(key) || lastQueued.has(key)) continue;
        const known = this.knownObjects.getByKey(key);
        if (known === undefined) {
          this.log.warn({ key }, 'key listed by knownObjects has no object; no tombstone queued');
          continue;
        }
        this.append({ type: 'Deleted', object: new DeletedFinalStateUnknown(key, known) }, key);
        deletions++;
      }
    }
    for (let i = 0; i < n; i++) {
      this.append(
        { type: 'Replaced', object: objects[i] as T | DeletedFinalStateUnknown<T> },
        keys[i] as string,
      );
    }

    this.markPopulatedByReplace();
    this.log.debug({ items: n, deletions, resourceVersion }, 'replace');
  }

  /**
   * Atomic mode: appends one `SyncAll` delta. Otherwise appends `Sync(knownObject)` (not
   * transformed again) for every known key with no entry queued; no-op without `knownObjects`.
   */
  resync(): void {
    if (this.atomic) {
      this.append({ type: 'SyncAll', object: {} }, NO_KEY);
      return;
    }
    const known = this.knownObjects;
    if (known === undefined) return;
    const queued = new Set<string>();
    for (let i = 0; i < this.keys.size; i++) queued.add(this.keys.at(i) as string);
    for (const key of known.listKeys()) {
      if (queued.has(key)) continue;
      const obj = known.getByKey(key);
      if (obj === undefined) continue;
      this.append({ type: 'Sync', object: obj }, key);
    }
  }

  /**
   * client-go's `Bookmark`: with `emitDeltaTypeBookmark` (atomic mode), appends a `Bookmark` delta
   * carrying `resourceVersion`, so the consumer's cache records it in order with the events.
   * Otherwise does nothing. Never affects `hasSynced`.
   */
  bookmark(resourceVersion: string): void {
    if (!this.emitBookmarks) return;
    this.append({ type: 'Bookmark', object: { resourceVersion } }, NO_KEY);
  }

  /**
   * Waits for an entry, removes the oldest and calls `process([delta], isInInitialList)`. Resolves
   * with that one-element `Deltas` once `process` (sync or async) returned. A `process` that throws
   * a {@link RequeueError} gets the entry put back at the head (see there); any other throw rejects
   * `pop`. The initial-population count drops only after processing, so `hasSynced()` never turns
   * true before the last initial item is processed.
   *
   * A closed queue is still drained; `pop` rejects with `ERR_FIFO_CLOSED` only when closed and
   * empty, and with `ERR_ABORTED` when `signal` aborts while waiting (its listener is removed).
   */
  async pop(process: PopProcessFunc<T>, options: { signal?: AbortSignal } = {}): Promise<Deltas<T>> {
    await this.waitForEntries(options.signal);
    const delta = this.deltas.shift() as Delta<T>;
    const key = this.keys.shift() as string;
    const item: Deltas<T> = [delta];
    const isInInitialList = !this.hasSynced();
    const depth = this.deltas.size;
    const started = depth > SLOW_DEPTH ? this.clock.now() : 0;
    let requeued = false;
    try {
      const result = process(item, isInInitialList);
      if (isPromiseLike(result)) await result;
    } catch (err) {
      if (!(err instanceof RequeueError)) throw err;
      this.deltas.pushFront(delta);
      this.keys.pushFront(key);
      requeued = true;
      this.waiters.wakeAll();
      if (err.cause !== undefined) throw err;
    } finally {
      if (!requeued && this.initialPopulationCount > 0) this.initialPopulationCount--;
      this.logIfSlow(started, depth, key, 1);
    }
    return item;
  }

  /**
   * client-go's `PopBatch`: waits for entries and hands up to `maxBatch` of the oldest to `process`
   * at once, as one single-delta `Deltas` per entry. A batch stops before the first key already in
   * it (keys are unique) and never mixes initial-population entries with later ones. Resolves with
   * the batch once `process` returned; a {@link RequeueError} puts the whole batch back at the head.
   * Rejects like {@link RealFIFO.pop}, and with `ERR_INVALID_OPTION` for a bad `maxBatch`.
   */
  async popBatch(process: PopBatchProcessFunc<T>, options: PopBatchOptions = {}): Promise<Deltas<T>[]> {
    const maxBatch =
      options.maxBatch === undefined ? this.batchSize : checkBatchSize(options.maxBatch, 'maxBatch');
    await this.waitForEntries(options.signal);
    const isInInitialList = !this.hasSynced();
    let limit = Math.min(maxBatch, this.deltas.size);
    if (this.initialPopulationCount > 0) limit = Math.min(limit, this.initialPopulationCount);
    const unique = new Set<string>();
    while (unique.size < limit) {
      if (!isObjectDelta(this.deltas.at(unique.size) as Delta<T>)) {
        // ReplacedAll / SyncAll / Bookmark are never batched: alone when first, else the batch ends.
        if (unique.size === 0) unique.add(NO_KEY);
        break;
      }
      const key = this.keys.at(unique.size) as string;
      if (unique.has(key)) break;
      unique.add(key);
    }
    const n = unique.size;
    const batch = new Array<Deltas<T>>(n);
    const batchKeys = new Array<string>(n);
    for (let i = 0; i < n; i++) {
      batch[i] = [this.deltas.shift() as Delta<T>];
      batchKeys[i] = this.keys.shift() as string;
    }
    const depth = this.deltas.size;
    const started = depth > SLOW_DEPTH ? this.clock.now() : 0;
    let requeued = false;
    try {
      const result = process(batch, isInInitialList);
      if (isPromiseLike(result)) await result;
    } catch (err) {
      if (!(err instanceof RequeueError)) throw err;
      for (let i = n - 1; i >= 0; i--) {
        this.deltas.pushFront((batch[i] as Deltas<T>)[0] as Delta<T>);
        this.keys.pushFront(batchKeys[i] as string);
      }
      requeued = true;
      this.waiters.wakeAll();
      if (err.cause !== undefined) throw err;
    } finally {
      if (!requeued && this.initialPopulationCount > 0) {
        this.initialPopulationCount = Math.max(0, this.initialPopulationCount - n);
      }
      this.logIfSlow(started, depth, batchKeys[0] as string, n);
    }
    return batch;
  }

  /** True once the initial population has been popped and processed (see the class comment). */
  hasSynced(): boolean {
    return this.populated && this.initialPopulationCount === 0;
  }

  /** Closes the queue: waiting pops reject with `ERR_FIFO_CLOSED`; queued entries can still be popped. */
  close(): void {
    this.closed = true;
    this.waiters.wakeAll();
  }

  /** True once {@link RealFIFO.close} was called. */
  isClosed(): boolean {
    return this.closed;
  }

  /**
   * The distinct keys of the queued per-object entries, in first-seen order (a snapshot; atomic-mode
   * deltas have no key).
   */
  listKeys(): string[] {
    const seen = new Set<string>();
    for (let i = 0; i < this.keys.size; i++) {
      if (isObjectDelta(this.deltas.at(i) as Delta<T>)) seen.add(this.keys.at(i) as string);
    }
    return [...seen];
  }

  /** The queued entries, oldest first (a snapshot; do not mutate the objects). */
  listDeltas(): Delta<T>[] {
    return this.deltas.toArray();
  }

  /** Number of queued entries. */
  length(): number {
    return this.deltas.size;
  }

  private async waitForEntries(signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) throw abortError(signal);
    while (this.deltas.size === 0) {
      if (this.closed) throw closedError(this.name);
      await this.waiters.wait(signal);
    }
  }

  private transform(obj: T | DeletedFinalStateUnknown<T>): T | DeletedFinalStateUnknown<T> {
    if (this.transformer === undefined || obj instanceof DeletedFinalStateUnknown) return obj;
    return this.transformer(obj);
  }

  private queueAction(type: ObjectDeltaType, obj: T | DeletedFinalStateUnknown<T>): void {
    const key = this.keyOf(obj);
    const object = this.transform(obj);
    this.populated = true;
    this.append({ type, object }, key);
  }

  private append(delta: Delta<T>, key: string): void {
    this.deltas.push(delta);
    this.keys.push(key);
    this.waiters.wakeAll();
  }

  /** The first replace (before any add/update/delete) makes everything queued the initial population. */
  private markPopulatedByReplace(): void {
    if (this.populated) return;
    this.populated = true;
    this.initialPopulationCount = this.deltas.size;
  }

  private logIfSlow(started: number, depth: number, key: string, batchSize: number): void {
    if (depth <= SLOW_DEPTH) return;
    const ms = this.clock.now() - started;
    if (ms > Math.min(SLOW_MS * batchSize, 1000)) {
      this.log.info({ key, depth, batchSize, ms }, 'slow event handlers blocking the queue');
    }
  }
}

function checkBatchSize(value: number, option: string): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new KinformerError(ErrorCodes.INVALID_OPTION, `${option} must be an integer >= 1, got ${value}`, {
      details: { option, value },
    });
  }
  return value;
}
