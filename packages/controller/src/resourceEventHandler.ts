import type { DeletedFinalStateUnknown } from '@kinformer/core';

/**
 * Receives notifications about one resource (client-go's `ResourceEventHandler`). Every method is
 * optional; a missing one ignores that kind of event.
 *
 * - `onAdd(obj, isInInitialList)`: an object appeared. `isInInitialList` is true for objects that
 *   were already there when the handler started to watch (the informer's initial list, or the
 *   synthetic adds a handler registered late receives).
 * - `onUpdate(oldObj, newObj)`: an object changed. Also called on relists and periodic resyncs even
 *   when nothing changed (then `oldObj.metadata.resourceVersion === newObj.metadata.resourceVersion`).
 * - `onDelete(obj)`: an object went away. `obj` is its last known state, or a
 *   {@link DeletedFinalStateUnknown} tombstone when the delete itself was missed (e.g. during a watch
 *   outage) and only noticed by a relist.
 *
 * A method may return a promise: whoever calls the handler awaits it before the next notification
 * for that handler, so the handler's events stay in order. Objects are the cached ones (frozen in
 * development mode): never mutate them.
 */
export interface ResourceEventHandler<T> {
  onAdd?(obj: T, isInInitialList: boolean): void | Promise<void>;
  onUpdate?(oldObj: T, newObj: T): void | Promise<void>;
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void | Promise<void>;
}

/**
 * client-go's `FilteringResourceEventHandler`: forwards to `handler` only what passes `filter`.
 *
 * - add / delete: forwarded when the object passes (a tombstone is passed to `filter` as is);
 * - update: old and new pass → `onUpdate`; only the new one → `onAdd(new, false)`; only the old
 *   one → `onDelete(old)`; neither → nothing.
 */
export function filteringResourceEventHandler<T>(
  filter: (obj: T | DeletedFinalStateUnknown<T>) => boolean,
  handler: ResourceEventHandler<T>,
): ResourceEventHandler<T> {
  return {
    onAdd(obj, isInInitialList) {
      if (filter(obj)) return handler.onAdd?.(obj, isInInitialList);
      return undefined;
    },
    onUpdate(oldObj, newObj) {
      const oldPasses = filter(oldObj);
      const newPasses = filter(newObj);
      if (oldPasses && newPasses) return handler.onUpdate?.(oldObj, newObj);
      if (newPasses) return handler.onAdd?.(newObj, false);
      if (oldPasses) return handler.onDelete?.(oldObj);
      return undefined;
    },
    onDelete(obj) {
      if (filter(obj)) return handler.onDelete?.(obj);
      return undefined;
    },
  };
}
