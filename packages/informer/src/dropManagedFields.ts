import type { KubeObject } from '@kinformer/core';

/**
 * A transform (for `informer.setTransform` or the factory's `transform`) that removes
 * `metadata.managedFields`: server-side-apply bookkeeping that is often a large part of an object's
 * size and that controllers rarely read.
 *
 * Mutates and returns its argument when it can (a transform sees each object before anyone else):
 * the field is set to `undefined` rather than `delete`d, because `delete` turns the object into a
 * slow dictionary-mode object that costs more time and memory than the field itself (measured: ten
 * times slower, less than half the memory saved). `JSON.stringify` leaves it out either way. A frozen
 * object is shallow-copied instead (object and metadata only). Idempotent.
 */
export function dropManagedFields<T extends KubeObject>(obj: T): T {
  const metadata = obj.metadata;
  if (metadata?.managedFields === undefined) return obj;
  if (!Object.isFrozen(obj) && !Object.isFrozen(metadata)) {
    (metadata as Record<string, unknown>).managedFields = undefined;
    return obj;
  }
  const { managedFields: _dropped, ...rest } = metadata;
  return { ...obj, metadata: rest };
}
