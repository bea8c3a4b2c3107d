import { DeletedFinalStateUnknown } from '@kinformer/core';
import { LogFIFO } from './logFifo.js';
import type { FIFOOptions, KeyListerGetter } from './fifoOptions.js';
import { isObjectDelta } from './queue.js';
import type { Delta, Queue } from './queue.js';

/** Options of {@link RealFIFO} (and, but `knownObjects`, of {@link AtomicFIFO}). */
export interface RealFIFOOptions<T> extends FIFOOptions<T> {
  /** Default `maxBatch` of `popBatch`. Default: 1000 (client-go's). */
  batchSize?: number;
}

/**
 * client-go's `RealFIFO` without atomic events: an in-order log of every notification. Each entry is
 * popped as a one-element `Deltas`; nothing is merged or deduplicated, so events of different keys
 * are delivered in the order they happened. (The informers' queue is {@link AtomicFIFO}, the same log
 * with whole-list relists; client-go 1.36 `RealFIFO` with `AtomicEvents`.)
 *
 * - `delete` is always queued (no `knownObjects` filtering, unlike DeltaFIFO).
 * - `replace(list)` appends, in one synchronous step, first the synthetic deletions — a tombstone for
 *   every queued key not in the list whose last entry is not a delete (tombstone object: that last
 *   object), in first-seen order, then one for every known key neither listed nor queued — and then
 *   `Replaced` for every item in list order. The first `replace` (before any add/update/delete) makes
 *   everything queued at that moment the initial population.
 * - `resync()` appends `Sync(knownObject)` for every known key that has no entry queued.
 * - A requeued entry (or batch) goes back to the head of the log.
 *
 * `add`/`update`/`delete`, `pop` and `popBatch` are O(1) amortised per entry. One consumer is expected.
 */
export class RealFIFO<T> extends LogFIFO<T> implements Queue<T> {
  private readonly knownObjects: KeyListerGetter<T> | undefined;

  constructor(options: RealFIFOOptions<T> = {}) {
    super(options, 'RealFIFO');
    this.knownObjects = options.knownObjects;
  }

  /**
   * Appends the synthetic deletions, then `Replaced` for every item (see the class comment), in one
   * synchronous step: no pop sees a partial replace. Keys and transforms are computed first, so a
   * throw leaves the queue unchanged.
   */
  replace(items: T[], resourceVersion: string): void {
    const { keys, objects } = this.keyAndTransform(items);
    const n = items.length;
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

    this.markPopulatedByReplace(this.deltas.size);
    this.log.debug({ items: n, deletions, resourceVersion }, 'replace');
  }

  /**
   * Appends `Sync(knownObject)` (not transformed again) for every known key with no entry queued;
   * no-op without `knownObjects`.
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
      this.append({ type: 'Sync', object: obj }, key);
    }
  }
}
