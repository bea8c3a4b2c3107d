import type { Store } from '@kinformer/cache';
import type { DeletedFinalStateUnknown } from '@kinformer/core';
import type { Delta, Deltas } from '@kinformer/delta-fifo';
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
    const result = applyDelta(handler, store, deltas[i]!, isInInitialList);
    if (result !== undefined) return finishAsync(result, handler, store, [deltas], 0, i + 1, isInInitialList);
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
      const result = applyDelta(handler, store, deltas[i]!, isInInitialList);
      if (result !== undefined) return finishAsync(result, handler, store, batch, b, i + 1, isInInitialList);
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
 * then awaits `pending` and makes the remaining handler calls in order. A store write that throws
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
): Promise<void> {
  const calls: PendingCall<T>[] = [];
  let storeError: { error: unknown } | undefined;
  try {
    for (; b < batch.length; b++, i = 0) {
      const deltas = batch[b]!;
      for (; i < deltas.length; i++) calls.push(writeStore(store, deltas[i]!));
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
  delta: Delta<T>,
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

/** The store half of {@link applyDelta}. */
function writeStore<T>(store: Store<T>, delta: Delta<T>): PendingCall<T> {
  const obj = delta.object as T;
  if (delta.type === 'Deleted') {
    store.delete(obj);
    return { type: 'delete', obj: delta.object };
  }
  const old = store.get(obj);
  if (old !== undefined) {
    store.update(obj);
    return { type: 'update', old, obj };
  }
  store.add(obj);
  return { type: 'add', obj };
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

function isPromiseLike(value: unknown): value is PromiseLike<void> {
  return (
    typeof value === 'object' && value !== null && typeof (value as PromiseLike<void>).then === 'function'
  );
}
