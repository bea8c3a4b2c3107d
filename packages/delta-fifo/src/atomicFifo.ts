import { LogFIFO, NO_KEY } from './logFifo.js';
import type { Queue } from './queue.js';
import type { RealFIFOOptions } from './realFifo.js';

/** Options of {@link AtomicFIFO}: no `knownObjects` (the consumer reconciles a relist with its cache). */
export interface AtomicFIFOOptions<T> extends Omit<RealFIFOOptions<T>, 'knownObjects'> {
  /**
   * `bookmark(rv)` queues a `Bookmark` delta, so the consumer's cache learns the bookmark's
   * resourceVersion in order with the events (client-go's `EmitDeltaTypeBookmark`). Without it
   * `bookmark` does nothing. Default: false.
   */
  emitDeltaTypeBookmark?: boolean;
}

/**
 * client-go 1.36's atomic FIFO (`RealFIFO` with `AtomicEvents`, the `AtomicFIFO` feature gate, what
 * the 1.36 informers use and kinformer's informers use by default): the in-order log of
 * {@link RealFIFO} whose relists and resyncs are single entries the consumer applies at once.
 *
 * - `replace(list, rv)` appends ONE `ReplacedAll` delta whose object is `{ resourceVersion: rv,
 *   objects }`: `objects` IS `list` (the queue takes ownership of the array: the transformer, if any,
 *   replaces its elements in place; nothing is copied or keyed). The consumer finds the deletions by
 *   comparing it with its cache (see `processDeltas`).
 * - `resync()` appends ONE `SyncAll` delta (object `{}`).
 * - `bookmark(rv)` appends a `Bookmark` delta (object `{ resourceVersion }`) with
 *   `emitDeltaTypeBookmark`, and does nothing otherwise; it does not count as a first event for
 *   `hasSynced`.
 * - `add`/`update`/`delete` append one entry each, as in `RealFIFO`; whole-cache deltas are never
 *   batched by `popBatch`.
 * - The first `replace` (before any add/update/delete) makes everything queued at that moment the
 *   initial population (a bookmark or resync queued earlier included).
 */
export class AtomicFIFO<T> extends LogFIFO<T> implements Queue<T> {
  private readonly emitBookmarks: boolean;

  constructor(options: AtomicFIFOOptions<T> = {}) {
    super(options, 'AtomicFIFO');
    this.emitBookmarks = options.emitDeltaTypeBookmark ?? false;
  }

  /**
   * Appends one `ReplacedAll` delta holding `items` itself (transformed in place first; a throwing
   * transformer queues nothing). The caller hands the array over and must not change it afterwards.
   */
  replace(items: T[], resourceVersion: string): void {
    if (this.transformer !== undefined) {
      for (let i = 0; i < items.length; i++) items[i] = this.transformer(items[i] as T);
    }
    this.append({ type: 'ReplacedAll', object: { resourceVersion, objects: items } }, NO_KEY);
    this.markPopulatedByReplace(this.deltas.size);
    this.log.debug({ items: items.length, resourceVersion }, 'replace (atomic)');
  }

  /** Appends one `SyncAll` delta. */
  resync(): void {
    this.append({ type: 'SyncAll', object: {} }, NO_KEY);
  }

  /**
   * client-go's `Bookmark`: with `emitDeltaTypeBookmark`, appends a `Bookmark` delta carrying
   * `resourceVersion`. Otherwise does nothing. Never affects `hasSynced`.
   */
  bookmark(resourceVersion: string): void {
    if (!this.emitBookmarks) return;
    this.append({ type: 'Bookmark', object: { resourceVersion } }, NO_KEY);
  }
}
