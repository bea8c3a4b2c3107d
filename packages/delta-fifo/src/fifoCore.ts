import { DeletedFinalStateUnknown, metaNamespaceKeyFunc, realClock } from '@kinformer/core';
import { abortError } from '@kinformer/core/internal';
import { componentLogger } from '@kinformer/core/internal';
import type { Clock, KeyFunc, Logger } from '@kinformer/core';
import type { FIFOOptions, TransformFunc } from './fifoOptions.js';
import { closedError, isPromiseLike, keyOf, SLOW_DEPTH, SLOW_MS } from './fifoShared.js';
import type { Deltas, PopProcessFunc } from './queue.js';
import { RequeueError } from './requeueError.js';
import { Waiters } from './waiters.js';

/** One popped item: its deltas and the key they were queued under. */
export interface Popped<T> {
  readonly key: string;
  readonly deltas: Deltas<T>;
}

/**
 * What {@link DeltaFIFO}, {@link RealFIFO} and {@link AtomicFIFO} share (internal to this package):
 * keying and transforming, the initial-population count behind `hasSynced`, the pop loop with its
 * requeue, the waiters and `close`. A queue supplies its storage and merge rules: how many items wait
 * (`length`), how the oldest is taken (`shift`) and how a requeued
 * item goes back ({@link FIFOCore.requeue}).
 *
 * Initial population: the first `replace`, unless an `add`/`update`/`delete` came first, fixes how
 * many items are initial (the queue decides how it counts them). Every pop lowers the count by the
 * number of items it handed to `process`, AFTER `process` settled, whatever it returned or threw —
 * a requeued item included. That is client-go 1.36: `the_real_fifo.go` `Pop`/`PopBatch` lower
 * `initialPopulationCount` in a deferred function after `process` returns (an error too), and
 * `delta_fifo.go` `Pop` lowers it before calling `process`; the last client-go with `ErrRequeue`
 * (1.32, `delta_fifo.go` `Pop`) lowered it before `process` and did not raise it again when
 * `addIfNotPresent` put the item back. So `hasSynced()` means "every initial item was handed to the
 * process function once", and a requeued initial item is popped again as a later one.
 */
export abstract class FIFOCore<T> {
  /** The name used in logs and errors. */
  readonly name: string;

  protected readonly waiters = new Waiters();
  protected readonly keyFunc: KeyFunc<T>;
  protected readonly transformer: TransformFunc<T> | undefined;
  protected readonly log: Logger;
  protected readonly clock: Clock;
  /** True once anything but a resync or a bookmark was queued (client-go's `populated`). */
  protected populated = false;
  /** Initial items not yet handed to `process` (client-go's `initialPopulationCount`). */
  protected initialPopulationCount = 0;
  private closed = false;

  protected constructor(options: FIFOOptions<T>, component: string) {
    this.name = options.name ?? component;
    this.keyFunc = options.keyFunction ?? (metaNamespaceKeyFunc as KeyFunc<T>);
    this.transformer = options.transformer;
    this.clock = options.clock ?? realClock;
    this.log = componentLogger(options.logger, { component, name: this.name });
  }

  /**
   * client-go's `KeyOf`: the key of an object (the key function), of a tombstone (its `key`), or of
   * a `Deltas` (its newest object's). Throws `ERR_KEY_FUNC` for an empty `Deltas`.
   */
  keyOf(obj: T | DeletedFinalStateUnknown<T> | Deltas<T>): string {
    return keyOf(this.keyFunc, obj);
  }

  /** Number of items waiting (keys for a `DeltaFIFO`, entries for the other queues). */
  abstract length(): number;

  /** The keys of the waiting items (see each queue). */
  abstract listKeys(): string[];

  /**
   * Waits for an item, removes the oldest and calls `process(deltas, isInInitialList)`. Resolves with
   * the deltas once `process` (sync or async) returned (the array now belongs to the caller). A
   * `process` that throws a {@link RequeueError} gets the item put back (the queue's rule; see
   * there); any other throw rejects `pop` and the item is dropped. The initial-population count
   * drops only after `process` settled, so `hasSynced()` never turns true while the last initial
   * item is still being processed.
   *
   * A closed queue is still drained; `pop` rejects with `ERR_FIFO_CLOSED` only when the queue is
   * closed and empty. With `signal`, a waiting `pop` rejects with `ERR_ABORTED` when it aborts (at
   * once if it already has) and removes its listener.
   */
  async pop(process: PopProcessFunc<T>, options: { signal?: AbortSignal } = {}): Promise<Deltas<T>> {
    await this.waitForItems(options.signal);
    const isInInitialList = !this.hasSynced();
    const item = this.shift();
    await this.processPopped(
      [item],
      () => process(item.deltas, isInInitialList),
      () => this.requeue(item),
    );
    return item.deltas;
  }

  /** True once the initial population has been popped and processed (see the class comment). */
  hasSynced(): boolean {
    return this.populated && this.initialPopulationCount === 0;
  }

  /** Closes the queue: waiting pops reject with `ERR_FIFO_CLOSED`; queued items can still be popped. */
  close(): void {
    this.closed = true;
    this.waiters.wakeAll();
  }

  /** True once `close` was called. */
  isClosed(): boolean {
    return this.closed;
  }

  /** Removes and returns the oldest item (called only when `length` > 0). */
  protected abstract shift(): Popped<T>;

  /** Puts back an item whose processing threw a {@link RequeueError} (the queue's merge rule). */
  protected abstract requeue(item: Popped<T>): void;

  /** Resolves once an item waits; rejects when the queue is closed and empty, or `signal` aborts. */
  protected async waitForItems(signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) throw abortError(signal);
    while (this.length() === 0) {
      if (this.closed) throw closedError(this.name);
      await this.waiters.wait(signal);
    }
  }

  /**
   * Runs `process` for the popped `items`: on a {@link RequeueError} calls `putBack` and wakes the
   * waiters (then resolves, or rejects with the error when it has a cause); any other error
   * propagates. Afterwards, whatever happened, the initial-population count drops by the number of
   * items, and a slow `process` on a deep queue is logged (client-go's trace: depth > 10 and more
   * than 100 ms per item, at most 1 s).
   */
  protected async processPopped(
    items: readonly Popped<T>[],
    process: () => void | Promise<void>,
    putBack: () => void,
  ): Promise<void> {
    const depth = this.length();
    const started = depth > SLOW_DEPTH ? this.clock.now() : 0;
    try {
      const result = process();
      if (isPromiseLike(result)) await result;
    } catch (err) {
      if (!(err instanceof RequeueError)) throw err;
      putBack();
      this.waiters.wakeAll();
      if (err.cause !== undefined) throw err;
    } finally {
      if (this.initialPopulationCount > 0)
        this.initialPopulationCount = Math.max(0, this.initialPopulationCount - items.length);
      if (depth > SLOW_DEPTH) this.logIfSlow(started, depth, items);
    }
  }

  /** Applies the transformer, except to a tombstone. */
  protected transform(obj: T | DeletedFinalStateUnknown<T>): T | DeletedFinalStateUnknown<T> {
    if (this.transformer === undefined || obj instanceof DeletedFinalStateUnknown) return obj;
    return this.transformer(obj);
  }

  /**
   * The keys and transformed objects of a `replace`'s items, computed before anything is queued so
   * that a throw (key function or transformer) leaves the queue unchanged.
   */
  protected keyAndTransform(items: T[]): { keys: string[]; objects: Array<T | DeletedFinalStateUnknown<T>> } {
    const n = items.length;
    const keys = new Array<string>(n);
    const objects = new Array<T | DeletedFinalStateUnknown<T>>(n);
    for (let i = 0; i < n; i++) {
      const item = items[i] as T;
      keys[i] = this.keyOf(item);
      objects[i] = this.transform(item);
    }
    return { keys, objects };
  }

  /** The first `replace` (before any add/update/delete) fixes the initial population at `count`. */
  protected markPopulatedByReplace(count: number): void {
    if (this.populated) return;
    this.populated = true;
    this.initialPopulationCount = count;
  }

  private logIfSlow(started: number, depth: number, items: readonly Popped<T>[]): void {
    const ms = this.clock.now() - started;
    const batchSize = items.length;
    if (ms <= Math.min(SLOW_MS * batchSize, 1000)) return;
    const key = items[0]?.key;
    this.log.info(
      batchSize === 1 ? { key, depth, ms } : { key, depth, batchSize, ms },
      'slow event handlers blocking the queue',
    );
  }
}
