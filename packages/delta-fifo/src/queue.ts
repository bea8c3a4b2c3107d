import type { DeletedFinalStateUnknown } from '@kinformer/core';

/** What happened to one object (the delta types that carry an object or a tombstone). */
export type ObjectDeltaType = 'Added' | 'Updated' | 'Deleted' | 'Replaced' | 'Sync';

/**
 * What happened. Besides the per-object types, a `RealFIFO` in atomic mode (client-go 1.36's
 * `AtomicFIFO`) queues `ReplacedAll` (one per relist), `SyncAll` (one per resync) and `Bookmark`
 * (one per watch bookmark, with `emitDeltaTypeBookmark`).
 */
export type DeltaType = ObjectDeltaType | 'ReplacedAll' | 'SyncAll' | 'Bookmark';

/**
 * The object of a `ReplacedAll` delta (client-go's `ReplacedAllInfo`): the whole list a relist
 * returned, already transformed, in list order, and the list's resourceVersion.
 */
export interface ReplacedAllInfo<T> {
  readonly resourceVersion: string;
  readonly objects: readonly T[];
}

/** The object of a `SyncAll` delta (client-go's `SyncAllInfo`): nothing, a resync of the whole cache. */
export type SyncAllInfo = Record<string, never>;

/** The object of a `Bookmark` delta (client-go's `BookmarkInfo`): the bookmark's resourceVersion. */
export interface BookmarkInfo {
  readonly resourceVersion: string;
}

/** A change of one object: the type and the object after it (a tombstone for a delete the queue inferred). */
export interface ObjectDelta<T> {
  readonly type: ObjectDeltaType;
  readonly object: T | DeletedFinalStateUnknown<T>;
}

/**
 * One change, discriminated by `type`: a per-object `ObjectDelta`, or one of the atomic-mode
 * deltas, which concern the whole cache and have no key.
 */
export type Delta<T> =
  | ObjectDelta<T>
  | { readonly type: 'ReplacedAll'; readonly object: ReplacedAllInfo<T> }
  | { readonly type: 'SyncAll'; readonly object: SyncAllInfo }
  | { readonly type: 'Bookmark'; readonly object: BookmarkInfo };

/** The changes of one key, oldest first (an atomic-mode delta always travels alone). */
export type Deltas<T> = Delta<T>[];

/** True for a delta that concerns one object (not `ReplacedAll`, `SyncAll` or `Bookmark`). */
export function isObjectDelta<T>(delta: Delta<T>): delta is ObjectDelta<T> {
  return delta.type !== 'ReplacedAll' && delta.type !== 'SyncAll' && delta.type !== 'Bookmark';
}

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
  /** Called with every watch bookmark's resourceVersion (client-go's `ReflectorBookmarkStore`). */
  bookmark?(resourceVersion: string): void;
}
