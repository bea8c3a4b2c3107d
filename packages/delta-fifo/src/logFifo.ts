import { ErrorCodes, KinformerError } from '@kinformer/core';
import type { DeletedFinalStateUnknown } from '@kinformer/core';
import { RingBuffer } from '@kinformer/core/internal';
import { FIFOCore } from './fifoCore.js';
import type { Popped } from './fifoCore.js';
import type { FIFOOptions } from './fifoOptions.js';
import { isObjectDelta } from './queue.js';
import type { Delta, Deltas, ObjectDeltaType } from './queue.js';

/** The key slot of a whole-cache delta (`ReplacedAll`, `SyncAll`, `Bookmark`), which has no key. */
export const NO_KEY = '';

/** client-go's default (and our default) maximum batch size of `popBatch`. */
export const DEFAULT_BATCH_SIZE = 1000;

/** Options of `popBatch`. */
export interface PopBatchOptions {
  /** At most this many entries per batch (an integer ≥ 1). Default: the FIFO's `batchSize`. */
  maxBatch?: number;
  /** Aborting it makes a waiting `popBatch` reject with `ERR_ABORTED`. */
  signal?: AbortSignal;
}

/**
 * Handles one batch of `popBatch`: one single-delta `Deltas` per entry, oldest first, all with
 * different keys, all initial or all not. May be async.
 */
export type PopBatchProcessFunc<T> = (batch: Deltas<T>[], isInInitialList: boolean) => void | Promise<void>;

/**
 * The storage RealFIFO and AtomicFIFO share (internal to this package): an in-order log of every
 * notification with the key of each entry (computed once, at enqueue), popped one entry per
 * `Deltas`; `add`/`update`/`delete` append (a `delete` always, known or not); a requeued entry or
 * batch goes back to the head, so the order of events is kept. The two queues differ in `replace`,
 * `resync` and `bookmark` only.
 */
export abstract class LogFIFO<T> extends FIFOCore<T> {
  protected readonly deltas = new RingBuffer<Delta<T>>();
  /** Keys of {@link deltas}, in lockstep. */
  protected readonly keys = new RingBuffer<string>();
  private readonly batchSize: number;

  protected constructor(options: FIFOOptions<T> & { batchSize?: number }, component: string) {
    super(options, component);
    this.batchSize = checkBatchSize(options.batchSize ?? DEFAULT_BATCH_SIZE, 'batchSize');
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
   * client-go's `PopBatch`: waits for entries and hands up to `maxBatch` of the oldest to `process`
   * at once, as one single-delta `Deltas` per entry. A batch stops before the first key already in
   * it (keys are unique), never mixes initial-population entries with later ones, and a whole-cache
   * delta (`ReplacedAll`, `SyncAll`, `Bookmark`) is handed out alone and ends a batch before it.
   * Resolves with the batch once `process` returned; a `RequeueError` puts the whole batch back at
   * the head. Rejects like `pop`, and with `ERR_INVALID_OPTION` for a bad `maxBatch`.
   */
  async popBatch(process: PopBatchProcessFunc<T>, options: PopBatchOptions = {}): Promise<Deltas<T>[]> {
    const maxBatch =
      options.maxBatch === undefined ? this.batchSize : checkBatchSize(options.maxBatch, 'maxBatch');
    await this.waitForItems(options.signal);
    const isInInitialList = !this.hasSynced();
    let limit = Math.min(maxBatch, this.deltas.size);
    if (this.initialPopulationCount > 0) limit = Math.min(limit, this.initialPopulationCount);
    const unique = new Set<string>();
    while (unique.size < limit) {
      if (!isObjectDelta(this.deltas.at(unique.size) as Delta<T>)) {
        if (unique.size === 0) unique.add(NO_KEY);
        break;
      }
      const key = this.keys.at(unique.size) as string;
      if (unique.has(key)) break;
      unique.add(key);
    }
    const n = unique.size;
    const items = new Array<Popped<T>>(n);
    const batch = new Array<Deltas<T>>(n);
    for (let i = 0; i < n; i++) {
      const item = this.shift();
      items[i] = item;
      batch[i] = item.deltas;
    }
    await this.processPopped(
      items,
      () => process(batch, isInInitialList),
      () => {
        for (let i = n - 1; i >= 0; i--) this.requeue(items[i] as Popped<T>);
      },
    );
    return batch;
  }

  /**
   * The distinct keys of the queued per-object entries, in first-seen order (a snapshot; whole-cache
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

  protected shift(): Popped<T> {
    const delta = this.deltas.shift() as Delta<T>;
    return { key: this.keys.shift() as string, deltas: [delta] };
  }

  /** Back to the head of the log. */
  protected requeue(item: Popped<T>): void {
    this.deltas.pushFront(item.deltas[0] as Delta<T>);
    this.keys.pushFront(item.key);
  }

  protected append(delta: Delta<T>, key: string): void {
    this.deltas.push(delta);
    this.keys.push(key);
    this.waiters.wakeAll();
  }

  private queueAction(type: ObjectDeltaType, obj: T | DeletedFinalStateUnknown<T>): void {
    const key = this.keyOf(obj);
    const object = this.transform(obj);
    this.populated = true;
    this.append({ type, object }, key);
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
