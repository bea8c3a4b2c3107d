/**
 * A tombstone: the object was deleted but the delete event was missed (for example during a watch
 * outage), so `obj` is the last state kinformer knew and may be stale. Handlers' `onDelete` receive
 * either the object or one of these; use {@link isDeletedFinalStateUnknown} to tell them apart.
 */
export class DeletedFinalStateUnknown<T> {
  constructor(
    /** The store key of the deleted object. */
    readonly key: string,
    /** The last known state of the object. */
    readonly obj: T,
  ) {}
}

/** True when `value` is a {@link DeletedFinalStateUnknown} tombstone. */
export function isDeletedFinalStateUnknown(value: unknown): value is DeletedFinalStateUnknown<unknown> {
  return value instanceof DeletedFinalStateUnknown;
}
