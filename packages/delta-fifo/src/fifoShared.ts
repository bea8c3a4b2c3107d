// Shared by the FIFOs: the key of a queued item, the closed error, the slow-pop thresholds.
import { DeletedFinalStateUnknown, ErrorCodes, KinformerError } from '@kinformer/core';
import type { KeyFunc } from '@kinformer/core';
import { isObjectDelta } from './queue.js';
import type { Deltas } from './queue.js';

/** Queue depth above which a slow process function is logged (client-go's trace threshold). */
export const SLOW_DEPTH = 10;
/** Processing time (ms) above which a pop is logged when the queue is deeper than {@link SLOW_DEPTH}. */
export const SLOW_MS = 100;

/**
 * client-go's `KeyOf`: the key of a `Deltas` (its newest object's), of a tombstone (its `key`), or
 * of an object (`keyFunc`). A `Deltas` is recognised as an array. Throws `ERR_KEY_FUNC` for an empty
 * `Deltas`; `keyFunc`'s own errors propagate.
 */
export function keyOf<T>(keyFunc: KeyFunc<T>, obj: T | DeletedFinalStateUnknown<T> | Deltas<T>): string {
  let target: T | DeletedFinalStateUnknown<T>;
  if (isDeltas(obj)) {
    const newest = obj[obj.length - 1];
    if (newest === undefined) {
      throw new KinformerError(ErrorCodes.KEY_FUNC, "0 length Deltas object; can't get key");
    }
    if (!isObjectDelta(newest)) {
      throw new KinformerError(ErrorCodes.KEY_FUNC, `a ${newest.type} delta has no key`);
    }
    target = newest.object;
  } else {
    target = obj;
  }
  if (target instanceof DeletedFinalStateUnknown) return target.key;
  return keyFunc(target);
}

function isDeltas<T>(obj: T | DeletedFinalStateUnknown<T> | Deltas<T>): obj is Deltas<T> {
  return Array.isArray(obj);
}

/** The error a pop on a closed, empty queue rejects with. */
export function closedError(name: string): KinformerError {
  return new KinformerError(ErrorCodes.FIFO_CLOSED, `${name}: manipulating with closed queue`);
}

/** True for a promise (or any thenable) returned by a process function. */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
