import type { Store } from '@kinformer/cache';
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
 * The store is always written before the handler is called. When the handler returns a promise the
 * next delta waits for it, and the result is a promise that settles after the last one; with
 * synchronous handlers everything happens synchronously and `undefined` is returned. An error thrown
 * by the store or the handler (or a rejection) stops processing and propagates to the caller.
 */
export function processDeltas<T>(
  handler: ResourceEventHandler<T>,
  store: Store<T>,
  deltas: Deltas<T>,
  isInInitialList: boolean,
): void | Promise<void> {
  for (let i = 0; i < deltas.length; i++) {
    const result = applyDelta(handler, store, deltas[i]!, isInInitialList);
    if (result !== undefined) return continueAfter(result, handler, store, deltas, i + 1, isInInitialList);
  }
  return undefined;
}

async function continueAfter<T>(
  pending: Promise<void>,
  handler: ResourceEventHandler<T>,
  store: Store<T>,
  deltas: Deltas<T>,
  from: number,
  isInInitialList: boolean,
): Promise<void> {
  await pending;
  for (let i = from; i < deltas.length; i++) {
    const result = applyDelta(handler, store, deltas[i]!, isInInitialList);
    if (result !== undefined) await result;
  }
}

/** Applies one delta; returns the handler's promise when it returned one. */
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

function isPromiseLike(value: unknown): value is PromiseLike<void> {
  return typeof value === 'object' && value !== null && typeof (value as PromiseLike<void>).then === 'function';
}
