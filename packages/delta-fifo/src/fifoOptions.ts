import type { Clock, KeyFunc, Logger } from '@kinformer/core';

/**
 * What a FIFO needs to know about the consumer's cache (client-go's `KeyListerGetter`): the keys it
 * holds and the object under a key. It decides which objects a `replace` must delete and what a
 * `resync` re-delivers. Structural: an `Indexer` or `Store` from `@kinformer/cache` satisfies it.
 * `listKeys()` and `getByKey()` must agree with each other and use the FIFO's key function.
 */
export interface KeyListerGetter<T> {
  listKeys(): string[];
  getByKey(key: string): T | undefined;
}

/**
 * Called with every object before it is queued (client-go's `TransformFunc`), typically to drop
 * fields the consumer never reads (`managedFields`) and save memory. It runs exactly once per
 * object handed to `add`/`update`/`delete`/`replace`; never on tombstones nor on the cached
 * objects a `resync` re-queues. It may mutate and return its argument, must not change the
 * object's key, and should be idempotent (objects already in the cache may be passed to `replace`).
 * A throw propagates to the caller of `add`/`update`/`delete`/`replace` and nothing is queued.
 */
export type TransformFunc<T> = (obj: T) => T;

/** Options both {@link DeltaFIFO} and {@link RealFIFO} accept. */
export interface FIFOOptions<T> {
  /** Computes an object's key. Default: `metaNamespaceKeyFunc` (`namespace/name` or `name`). */
  keyFunction?: KeyFunc<T>;
  /**
   * The consumer's cache (usually the informer's indexer). Without it, `replace` only detects
   * deletions among queued keys and `resync` does nothing.
   */
  knownObjects?: KeyListerGetter<T>;
  /** See {@link TransformFunc}. */
  transformer?: TransformFunc<T>;
  /** pino logger; the FIFO logs through `logger.child({ component, name })`. */
  logger?: Logger;
  /** A name for logs. Default: `'DeltaFIFO'` / `'RealFIFO'`. */
  name?: string;
  /** Time source for the slow-processing log line (depth > 10, processing > 100 ms). Default: the real clock. */
  clock?: Clock;
}
