import { TransactionError } from '@kinformer/cache';
import type { Store } from '@kinformer/cache';
import { DeletedFinalStateUnknown, ErrorCodes, isKinformerError } from '@kinformer/core';
import { isObjectDelta } from '@kinformer/delta-fifo';
import type { Delta, Deltas, ObjectDelta, ReplacedAllInfo } from '@kinformer/delta-fifo';
import type { ResourceEventHandler } from './resourceEventHandler.js';

/**
 * Applies popped deltas to `store` and tells `handler` (client-go's `processDeltas`), oldest first.
 *
 * - `Added`, `Updated`, `Sync`, `Replaced`: if the store already holds the key, the object replaces
 *   it and `handler.onUpdate(old, obj)` is called with the previously stored object; otherwise it is
 *   added and `handler.onAdd(obj, isInInitialList)` is called. The delta type itself does not matter.
 * - `Deleted`: the key is removed (the object may be a `DeletedFinalStateUnknown` tombstone: the
 *   store's key function must accept those, as the default `deletionHandlingMetaNamespaceKeyFunc`
 *   does), then `handler.onDelete(obj)` is called, even if the key was not stored.
 * - `ReplacedAll` (a relist, from a `RealFIFO` in atomic mode; client-go's `processReplacedAllInfo`):
 *   the store is replaced by the list first, in one step (its resourceVersion becomes the list's),
 *   so no reader ever sees a half-applied relist; then `onDelete(DeletedFinalStateUnknown(key,
 *   storedObject))` for every previously stored key the list lacks (in the store's key order), then
 *   `onUpdate(old, obj)` or `onAdd(obj, isInInitialList)` for every listed object in list order — the
 *   same notifications, in the same order, as the non-atomic relist (deletes, then `Replaced` items).
 *   A listed object the store cannot key or index is left out (and its key, if stored, counts as
 *   deleted); after the other notifications a `TransactionError` (`ERR_TRANSACTION`) naming the
 *   positions of the objects applied is thrown.
 * - `SyncAll` (a resync, atomic mode): `onUpdate(obj, obj)` for every stored object.
 * - `Bookmark` (atomic mode): records the bookmark's resourceVersion in the store
 *   (`lastStoreSyncResourceVersion()`); no notification.
 *
 * The store is always written before the handler is called. With synchronous handlers everything
 * happens synchronously (store write, handler, next delta…) and `undefined` is returned. When a
 * handler returns a promise, the store writes of all the remaining deltas are applied at once,
 * synchronously, and their handler calls then follow one by one, each awaited (the result is a
 * promise that settles after the last one). So the store never lags behind the queue while a handler
 * is awaited: a relist or a resync, which consult the store as the queue's `knownObjects`, never see
 * a half-applied item (client-go holds the FIFO lock while processing for the same reason).
 *
 * An error thrown by the store or a handler (or a rejection) stops processing and propagates to the
 * caller: handlers of deltas applied before a failing store write are still called first.
 */
export function processDeltas<T>(
  handler: ResourceEventHandler<T>,
  store: Store<T>,
  deltas: Deltas<T>,
  isInInitialList: boolean,
): void | Promise<void> {
  for (let i = 0; i < deltas.length; i++) {
    const delta = deltas[i]!;
    const result = isObjectDelta(delta)
      ? applyDelta(handler, store, delta, isInInitialList)
      : applyWholeStoreDelta(handler, store, delta, isInInitialList);
    if (result === undefined) continue;
    const [pending, calls, storeError] = result instanceof Promise ? [result, [], undefined] : result;
    return finishAsync(pending, handler, store, [deltas], 0, i + 1, isInInitialList, calls, storeError);
  }
  return undefined;
}

/**
 * {@link processDeltas} for a batch of popped items (client-go's `processDeltasInBatch` without the
 * transaction API): the items are applied in order exactly as one `processDeltas` call each would,
 * except that once a handler returns a promise, the store writes of the rest of the batch are applied
 * at once and only the handler calls wait. Internal to the controller and informer packages.
 */
export function processDeltasBatch<T>(
  handler: ResourceEventHandler<T>,
  store: Store<T>,
  batch: Deltas<T>[],
  isInInitialList: boolean,
): void | Promise<void> {
  for (let b = 0; b < batch.length; b++) {
    const deltas = batch[b]!;
    for (let i = 0; i < deltas.length; i++) {
      const delta = deltas[i]!;
      const result = isObjectDelta(delta)
        ? applyDelta(handler, store, delta, isInInitialList)
        : applyWholeStoreDelta(handler, store, delta, isInInitialList);
      if (result === undefined) continue;
      const [pending, calls, storeError] = result instanceof Promise ? [result, [], undefined] : result;
      return finishAsync(pending, handler, store, batch, b, i + 1, isInInitialList, calls, storeError);
    }
  }
  return undefined;
}

/** A handler call whose store write is done (only built once a handler went async). */
type PendingCall<T> =
  | { readonly type: 'add'; readonly obj: T }
  | { readonly type: 'update'; readonly old: T; readonly obj: T }
  | { readonly type: 'delete'; readonly obj: T | DeletedFinalStateUnknown<T> };

/**
 * A handler returned `pending`: applies the store writes of everything after `batch[b][i - 1]` now,
 * then awaits `pending` and makes the remaining handler calls in order (`calls`, the rest of the
 * delta being handled, first). A store write that throws (or `storeError`, the current delta's)
 * ends the writes; the calls of the writes before it are still made, then the error is thrown.
 */
async function finishAsync<T>(
  pending: Promise<void>,
  handler: ResourceEventHandler<T>,
  store: Store<T>,
  batch: Deltas<T>[],
  b: number,
  i: number,
  isInInitialList: boolean,
  calls: PendingCall<T>[],
  storeError: { error: unknown } | undefined,
): Promise<void> {
  try {
    for (; storeError === undefined && b < batch.length; b++, i = 0) {
      const deltas = batch[b]!;
      for (; i < deltas.length; i++) writeStore(store, deltas[i]!, calls);
    }
  } catch (error) {
    storeError = { error };
  }
  await pending;
  for (const call of calls) {
    const result = callHandler(handler, call, isInInitialList);
    if (isPromiseLike(result)) await result;
  }
  if (storeError !== undefined) throw storeError.error;
}

/**
 * Applies one delta to the store and calls the handler; returns the handler's promise when it returned
 * one. This is {@link writeStore} then {@link callHandler} fused, on purpose: the synchronous path is
 * every event's path, and fusing them spares a `PendingCall` object per event.
 */
function applyDelta<T>(
  handler: ResourceEventHandler<T>,
  store: Store<T>,
  delta: ObjectDelta<T>,
  isInInitialList: boolean,
): Promise<void> | undefined {
  // A tombstone only ever travels in a Deleted delta; the store's key function handles it.
  const obj = delta.object as T;
  let result: void | Promise<void>;
  if (delta.type === 'Deleted') {
    store.delete(obj);
    result = handler.onDelete?.(delta.object);
  } else {
    const old = store.get(obj);
    if (old !== undefined) {
      store.update(obj);
      result = handler.onUpdate?.(old, obj);
    } else {
      store.add(obj);
      result = handler.onAdd?.(obj, isInInitialList);
    }
  }
  return isPromiseLike(result) ? Promise.resolve(result) : undefined;
}

/**
 * A `ReplacedAll`, `SyncAll` or `Bookmark` delta: writes the store, then makes its handler calls
 * while they return nothing. Returns `undefined` when all were made (or throws the store's error
 * after them); when one returned a promise, returns it with the calls still to make and the store
 * error to throw after them.
 */
function applyWholeStoreDelta<T>(
  handler: ResourceEventHandler<T>,
  store: Store<T>,
  delta: Delta<T>,
  isInInitialList: boolean,
): [Promise<void>, PendingCall<T>[], { error: unknown } | undefined] | undefined {
  const calls: PendingCall<T>[] = [];
  let storeError: { error: unknown } | undefined;
  try {
    writeStore(store, delta, calls);
  } catch (error) {
    storeError = { error };
  }
  for (let c = 0; c < calls.length; c++) {
    const result = callHandler(handler, calls[c]!, isInInitialList);
    if (isPromiseLike(result)) return [Promise.resolve(result), calls.slice(c + 1), storeError];
  }
  if (storeError !== undefined) throw storeError.error;
  return undefined;
}

/** The store half of {@link applyDelta} (and of the whole-store deltas): appends the handler calls due. */
function writeStore<T>(store: Store<T>, delta: Delta<T>, calls: PendingCall<T>[]): void {
  switch (delta.type) {
    case 'ReplacedAll':
      replaceAll(store, delta.object, calls);
      return;
    case 'SyncAll':
      for (const obj of store.list()) calls.push({ type: 'update', old: obj, obj });
      return;
    case 'Bookmark':
      store.bookmark(delta.object.resourceVersion);
      return;
    case 'Deleted':
      store.delete(delta.object as T);
      calls.push({ type: 'delete', obj: delta.object });
      return;
    default: {
      const obj = delta.object as T;
      const old = store.get(obj);
      if (old !== undefined) {
        store.update(obj);
        calls.push({ type: 'update', old, obj });
      } else {
        store.add(obj);
        calls.push({ type: 'add', obj });
      }
    }
  }
}

/**
 * client-go's `processReplacedAllInfo`, store half: replaces the store's contents by `info.objects`
 * in one step (resourceVersion: the list's), then appends a tombstone delete for every stored key
 * the list lacks and an add or update per listed object, in list order. Objects the store cannot key
 * (or index) are left out; a `TransactionError` is thrown for them once the store is written.
 */
function replaceAll<T>(store: Store<T>, info: ReplacedAllInfo<T>, calls: PendingCall<T>[]): void {
  const { objects, resourceVersion } = info;
  const oldKeys = store.listKeys();
  const oldObjects = new Array<T | undefined>(oldKeys.length);
  for (let k = 0; k < oldKeys.length; k++) oldObjects[k] = store.getByKey(oldKeys[k]!);

  let replacements: PendingCall<T>[] = [];
  let kept: T[] = objects as T[];
  let positions: number[] | undefined; // positions in `objects` of `kept`, once one is left out
  const errors: unknown[] = [];
  for (let j = 0; j < objects.length; j++) {
    const obj = objects[j]!;
    let old: T | undefined;
    try {
      old = store.get(obj);
    } catch (error) {
      if (positions === undefined) {
        positions = range(j);
        kept = objects.slice(0, j);
      }
      errors.push(error);
      continue;
    }
    if (positions !== undefined) {
      positions.push(j);
      kept.push(obj);
    }
    replacements.push(old === undefined ? { type: 'add', obj } : { type: 'update', old, obj });
  }

  try {
    store.replace(kept, resourceVersion);
  } catch (err) {
    // Only an index function refusing an object is mended here (the replace left the store as it
    // was); anything else propagates before the store is touched, and the reflector relists.
    if (!isKinformerError(err, ErrorCodes.INDEX_FUNC)) throw err;
    // Apply the list entry by entry (still with no reader in between), leaving out what is refused.
    store.replace([], resourceVersion);
    try {
      store.transaction(kept.map((object) => ({ type: 'Add', object })));
    } catch (err) {
      if (!(err instanceof TransactionError)) throw err;
      positions ??= range(kept.length);
      const applied = new Set(err.successfulIndices);
      positions = positions.filter((_, j) => applied.has(j));
      replacements = replacements.filter((_, j) => applied.has(j));
      errors.push(...err.errors);
    }
    store.bookmark(resourceVersion);
  }

  for (let k = 0; k < oldKeys.length; k++) {
    const key = oldKeys[k]!;
    if (store.getByKey(key) === undefined) {
      calls.push({ type: 'delete', obj: new DeletedFinalStateUnknown(key, oldObjects[k] as T) });
    }
  }
  for (const call of replacements) calls.push(call);
  if (errors.length > 0)
    throw new TransactionError(positions ?? range(objects.length), objects.length, errors);
}

/** The handler half of {@link applyDelta}. */
function callHandler<T>(
  handler: ResourceEventHandler<T>,
  call: PendingCall<T>,
  isInInitialList: boolean,
): void | Promise<void> {
  switch (call.type) {
    case 'add':
      return handler.onAdd?.(call.obj, isInInitialList);
    case 'update':
      return handler.onUpdate?.(call.old, call.obj);
    case 'delete':
      return handler.onDelete?.(call.obj);
  }
}

/** `[0, 1, …, n - 1]`. */
function range(n: number): number[] {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}

function isPromiseLike(value: unknown): value is PromiseLike<void> {
  return (
    typeof value === 'object' && value !== null && typeof (value as PromiseLike<void>).then === 'function'
  );
}
