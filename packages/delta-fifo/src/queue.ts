import type { DeletedFinalStateUnknown } from '@kinformer/core';

/** What happened to an object. */
export type DeltaType = 'Added' | 'Updated' | 'Deleted' | 'Replaced' | 'Sync';

/** One change: the type and the object after it (a tombstone for a delete the queue inferred). */
export interface Delta<T> {
  readonly type: DeltaType;
  readonly object: T | DeletedFinalStateUnknown<T>;
}

/** The changes of one key, oldest first. */
export type Deltas<T> = Delta<T>[];

/**
 * Handles one popped item. `isInInitialList` is true while the items of the first `replace` are
 * being popped. May be async: the queue waits for it before the next pop.
 */
export type PopProcessFunc<T> = (deltas: Deltas<T>, isInInitialList: boolean) => void | Promise<void>;

/**
 * The queue between a reflector and its controller (client-go's `Queue`): `DeltaFIFO` and
 * `RealFIFO` both implement it, so a controller can use either.
 */
export interface Queue<T> {
  add(obj: T): void;
  update(obj: T): void;
  delete(obj: T): void;
  replace(items: T[], resourceVersion: string): void;
  resync(): void;
  /**
   * Waits for an item, removes it, and calls `process` with its deltas. Resolves with the deltas once
   * `process` settled. If `process` throws a `RequeueError`, the deltas are put back first. Rejects with
   * `ERR_FIFO_CLOSED` when the queue is (or gets) closed and empty of waiting work, and with
   * `ERR_ABORTED` when `signal` aborts while waiting.
   */
  pop(process: PopProcessFunc<T>, options?: { signal?: AbortSignal }): Promise<Deltas<T>>;
  /** True once the items of the first `replace` (or an `add` before any replace) have all been popped. */
  hasSynced(): boolean;
  /** Wakes every waiting `pop` with `ERR_FIFO_CLOSED`. */
  close(): void;
  isClosed(): boolean;
  listKeys(): string[];
  /** Number of items (keys for DeltaFIFO, entries for RealFIFO) waiting. */
  length(): number;
  /** Called with every watch event's resourceVersion (see ReflectorStore). */
  updateResourceVersion?(resourceVersion: string): void;
  bookmark?(resourceVersion: string): void;
}
