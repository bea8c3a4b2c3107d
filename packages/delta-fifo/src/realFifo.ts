import {
  abortError,
  componentLogger,
  DeletedFinalStateUnknown,
  ErrorCodes,
  KinformerError,
  metaNamespaceKeyFunc,
  realClock,
  RingBuffer,
} from '@kinformer/core';
import type { Clock, KeyFunc, Logger } from '@kinformer/core';
import type { FIFOOptions, KeyListerGetter, TransformFunc } from './fifoOptions.js';
import { closedError, isPromiseLike, keyOf, SLOW_DEPTH, SLOW_MS } from './internal.js';
import type { Delta, Deltas, DeltaType, PopProcessFunc, Queue } from './queue.js';
import { RequeueError } from './requeueError.js';
import { Waiters } from './waiters.js';

/** client-go's default (and our default) maximum batch size of {@link RealFIFO.popBatch}. */
export const DEFAULT_BATCH_SIZE = 1000;

/** Options of {@link RealFIFO}. */
export interface RealFIFOOptions<T> extends FIFOOptions<T> {
  /** Default `maxBatch` of {@link RealFIFO.popBatch}. Default: 1000 (client-go's). */
  batchSize?: number;
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
 * client-go's `RealFIFO` (the queue of the 1.36 informers, non-atomic mode): an in-order log of
 * every notification. Each entry is popped as a one-element {@link Deltas}; nothing is merged or
 * deduplicated, so events of different keys are delivered in the order they happened.
 *
 * - `delete` is always queued (no `knownObjects` filtering, unlike DeltaFIFO).
 * - `replace(list)` appends, in one synchronous step, first the synthetic deletions — a tombstone for
 *   every queued key not in the list whose last entry is not a delete (tombstone object: that last
 *   object), in first-seen order, then one for every known key neither listed nor queued — and then
 *   `Replaced` for every item in list order. The first `replace` (before any add/update/delete)
 *   makes everything queued at that moment the initial population.
 * - `resync()` appends `Sync(knownObject)` for every known key that has no entry queued.
 * - `hasSynced()` turns true once the initial population has been popped and processed.
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
  private readonly log: Logger;
  private readonly clock: Clock;
  private populated = false;
  private initialPopulationCount = 0;
  private closed = false;

  constructor(options: RealFIFOOptions<T> = {}) {
    this.name = options.name ?? 'RealFIFO';
    this.keyFunc = options.keyFunction ?? (metaNamespaceKeyFunc as KeyFunc<T>);
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

  /**
   * Appends the synthetic deletions, then `Replaced` for every item (see the class comment), in one
   * synchronous step: no pop sees a partial replace. Keys and transforms are computed first, so a
   * throw leaves the queue unchanged.
   */
  replace(items: T[], resourceVersion: string): void {
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
      if (newKeys.has(key) || last.type === 'Deleted') continue;
      const obj = last.object instanceof DeletedFinalStateUnknown ? last.object.obj : last.object;
      this.append('Deleted', key, new DeletedFinalStateUnknown(key, obj));
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
        this.append('Deleted', key, new DeletedFinalStateUnknown(key, known));
        deletions++;
      }
    }
    for (let i = 0; i < n; i++) {
      this.append('Replaced', keys[i] as string, objects[i] as T | DeletedFinalStateUnknown<T>);
    }

    if (!this.populated) {
      this.populated = true;
      this.initialPopulationCount = this.deltas.size;
    }
    this.log.debug({ items: n, deletions, resourceVersion }, 'replace');
  }

  /**
   * Appends `Sync(knownObject)` (not transformed again) for every known key with no entry queued.
   * No-op without `knownObjects`.
   */
  resync(): void {
    const known = this.knownObjects;
    if (known === undefined) return;
    const queued = new Set<string>();
    for (let i = 0; i < this.keys.size; i++) queued.add(this.keys.at(i) as string);
    for (const key of known.listKeys()) {
      if (queued.has(key)) continue;
      const obj = known.getByKey(key);
      if (obj === undefined) continue;
      this.append('Sync', key, obj);
    }
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

  /** The distinct keys of the queued entries, in first-seen order (a snapshot). */
  listKeys(): string[] {
    const seen = new Set<string>();
    for (let i = 0; i < this.keys.size; i++) seen.add(this.keys.at(i) as string);
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

  private queueAction(type: DeltaType, obj: T | DeletedFinalStateUnknown<T>): void {
    const key = this.keyOf(obj);
    const object = this.transform(obj);
    this.populated = true;
    this.append(type, key, object);
  }

  private append(type: DeltaType, key: string, object: T | DeletedFinalStateUnknown<T>): void {
    this.deltas.push({ type, object });
    this.keys.push(key);
    this.waiters.wakeAll();
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
