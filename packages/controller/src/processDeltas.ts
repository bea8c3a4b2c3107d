import { TransactionError } from '@kinformer/cache';
import type { Store, Transaction } from '@kinformer/cache';
import { replaceWithDiff } from '@kinformer/cache/internal';
import type { StoreReplacement } from '@kinformer/cache/internal';
import { DeletedFinalStateUnknown, ErrorCodes, isKinformerError } from '@kinformer/core';
import { isObjectDelta } from '@kinformer/delta-fifo/internal';
import type { Delta, Deltas } from '@kinformer/delta-fifo';
import type { ObjectDelta, ReplacedAllInfo } from '@kinformer/delta-fifo/internal';
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
 * `onUpdate`'s old object is whatever the store held: the same object as the new one when nothing
 * replaced it (a `SyncAll`/`Sync` resync, or a relist whose list reuses the stored objects), as in
 * client-go. Handlers compare resourceVersions, never identity.
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
  return processEach(handler, store, [deltas], isInInitialList);
}

/**
 * client-go's `processDeltasInBatch`: applies a batch of popped items (as `popBatch` hands them out:
 * one delta each, all keys different) to `store` in ONE `store.transaction`, then calls the handlers
 * in order. `Added`/`Updated`/`Sync`/`Replaced` become an `Update` entry when the store holds the key
 * (`onUpdate(old, obj)`), else an `Add` (`onAdd`); `Deleted` a `Delete` (`onDelete`). When the
 * transaction skips entries (a key or index function threw: `TransactionError`), only the handlers of
 * the applied entries are called, then the `TransactionError` is thrown (client-go returns it
 * wrapped). A handler that returns a promise is awaited before the next one is called.
 *
 * A batch of one item, or one holding a whole-cache delta (`ReplacedAll`, `SyncAll`, `Bookmark`) or
 * an item of several deltas, goes through {@link processDeltas} item by item (client-go hands a
 * batch of one to its single-item function too).
 */
export function processDeltasBatch<T>(
  handler: ResourceEventHandler<T>,
  store: Store<T>,
  batch: Deltas<T>[],
  isInInitialList: boolean,
): void | Promise<void> {
  if (batch.length === 1 || !isTransactionBatch(batch))
    return processEach(handler, store, batch, isInInitialList);
  const n = batch.length;
  const txns = new Array<Transaction<T>>(n);
  const olds = new Array<T | undefined>(n);
  for (let i = 0; i < n; i++) {
    const delta = batch[i]![0] as ObjectDelta<T>;
    // A tombstone only ever travels in a Deleted delta; the store's key function handles it.
    const obj = delta.object as T;
    if (delta.type === 'Deleted') {
      txns[i] = { type: 'Delete', object: obj };
      continue;
    }
    let old: T | undefined;
    try {
      old = store.get(obj);
    } catch {
      // client-go: a Get error makes it an Add, whose transaction entry then fails on the same key.
      old = undefined;
    }
    olds[i] = old;
    txns[i] = { type: old === undefined ? 'Add' : 'Update', object: obj };
  }
  let failure: TransactionError | undefined;
  let applied: readonly number[] | undefined; // undefined: all
  try {
    store.transaction(txns);
  } catch (err) {
    if (!(err instanceof TransactionError)) throw err;
    failure = err;
    applied = err.successfulIndices;
  }
  const count = applied === undefined ? n : applied.length;
  for (let c = 0; c < count; c++) {
    const i = applied === undefined ? c : applied[c]!;
    const result = callTransactionHandler(handler, txns[i]!, olds[i], isInInitialList);
    if (isPromiseLike(result))
      return finishTransaction(result, handler, txns, olds, applied, c + 1, isInInitialList, failure);
  }
  if (failure !== undefined) throw failure;
  return undefined;
}

/** True when every item of `batch` is one per-object delta (what a transaction can apply). */
function isTransactionBatch<T>(batch: Deltas<T>[]): boolean {
  for (let i = 0; i < batch.length; i++) {
    const deltas = batch[i]!;
    if (deltas.length !== 1 || !isObjectDelta(deltas[0]!)) return false;
  }
  return true;
}

function callTransactionHandler<T>(
  handler: ResourceEventHandler<T>,
  txn: Transaction<T>,
  old: T | undefined,
  isInInitialList: boolean,
): void | Promise<void> {
  if (txn.type === 'Delete') return handler.onDelete?.(txn.object);
  if (txn.type === 'Update') return handler.onUpdate?.(old as T, txn.object);
  return handler.onAdd?.(txn.object, isInInitialList);
}

/** A handler of a batch went async: awaits it, then makes the remaining calls one by one. */
async function finishTransaction<T>(
  pending: PromiseLike<void>,
  handler: ResourceEventHandler<T>,
  txns: Transaction<T>[],
  olds: Array<T | undefined>,
  applied: readonly number[] | undefined,
  from: number,
  isInInitialList: boolean,
  failure: TransactionError | undefined,
): Promise<void> {
  await pending;
  const count = applied === undefined ? txns.length : applied.length;
  for (let c = from; c < count; c++) {
    const i = applied === undefined ? c : applied[c]!;
    const result = callTransactionHandler(handler, txns[i]!, olds[i], isInInitialList);
    if (isPromiseLike(result)) await result;
  }
  if (failure !== undefined) throw failure;
}

/**
 * The batch item by item, exactly as one `processDeltas` call each would, except that once a
 * handler returns a promise, the store writes of the rest of the batch are applied at once and only
 * the handler calls wait.
 */
function processEach<T>(
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
 * the list lacks (in the store's key order) and an add or update per listed object, in list order.
 * A key listed twice gives an add (or update) for its first object and `update(first, second)` for
 * the second, as the non-atomic queues do (client-go's `processReplacedAllInfo` looks every object
 * up before the replace and would report two adds; its `TestReplaceEvents` requires the atomic and
 * non-atomic handler histories to be the same). Objects the store cannot key (or index) are left
 * out; a `TransactionError` is thrown for them once the store is written.
 *
 * With a store from `newStore`/`newIndexer`, every object is keyed once, by the replace itself
 * ({@link replaceWithDiff}); another `Store` (or a refused object) takes the entry-by-entry path.
 */
function replaceAll<T>(store: Store<T>, info: ReplacedAllInfo<T>, calls: PendingCall<T>[]): void {
  let diff: StoreReplacement<T> | undefined;
  try {
    diff = replaceWithDiff(store, info.objects, info.resourceVersion);
  } catch {
    diff = undefined; // nothing was written: the path below finds and reports the refused objects
  }
  if (diff === undefined) replaceAllEntryByEntry(store, info, calls);
  else diffCalls(diff, info.objects, calls);
}

/** The handler calls of a replace whose before and after {@link replaceWithDiff} returned. */
function diffCalls<T>(diff: StoreReplacement<T>, objects: readonly T[], calls: PendingCall<T>[]): void {
  const { previous, next, keys } = diff;
  for (const [key, old] of previous) {
    if (!next.has(key)) calls.push({ type: 'delete', obj: new DeletedFinalStateUnknown(key, old) });
  }
  // A key listed twice: its later objects are updates of the one listed before.
  const listed = next.size < objects.length ? new Map<string, T>() : undefined;
  for (let i = 0; i < objects.length; i++) {
    const obj = objects[i]!;
    const key = keys[i]!;
    const old = listed?.get(key) ?? previous.get(key);
    calls.push(old === undefined ? { type: 'add', obj } : { type: 'update', old, obj });
    listed?.set(key, obj);
  }
}

/** {@link replaceAll} for any `Store`: looks every object up, replaces, then reports. */
function replaceAllEntryByEntry<T>(store: Store<T>, info: ReplacedAllInfo<T>, calls: PendingCall<T>[]): void {
  const { objects, resourceVersion } = info;
  const oldKeys = store.listKeys();
  const oldObjects = new Array<T | undefined>(oldKeys.length);
  for (let k = 0; k < oldKeys.length; k++) oldObjects[k] = store.getByKey(oldKeys[k]!);

  let olds: Array<T | undefined> = [];
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
    olds.push(old);
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
      kept = kept.filter((_, j) => applied.has(j));
      olds = olds.filter((_, j) => applied.has(j));
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
  // A key listed twice (fewer stored than kept): the stored object stands for its key.
  const listed = store.size() < kept.length ? new Map<T, T>() : undefined;
  for (let j = 0; j < kept.length; j++) {
    const obj = kept[j]!;
    const stored = listed === undefined ? undefined : store.get(obj);
    const old = (stored === undefined ? undefined : listed?.get(stored)) ?? olds[j];
    calls.push(old === undefined ? { type: 'add', obj } : { type: 'update', old, obj });
    if (stored !== undefined) listed?.set(stored, obj);
  }
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
