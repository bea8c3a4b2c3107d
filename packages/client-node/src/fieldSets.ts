/** The one empty object every empty field set of a decoded object's `managedFields` becomes. */
const EMPTY_FIELD_SET: Readonly<Record<string, never>> = Object.freeze({});

/** Deeper field sets are left as they are (real ones are ~20 levels deep); it bounds the recursion. */
const MAX_FIELD_SET_DEPTH = 200;

/**
 * Makes every empty object inside `metadata.managedFields[].fieldsV1` of a freshly decoded object one
 * shared, frozen `{}`, in place. Server-side apply's field sets (`{"f:metadata":{"f:labels":{"f:app":{}}}}`)
 * end in hundreds of empty objects per object: parsed one by one they are about half the heap of a
 * cached pod that keeps its `managedFields` (`pnpm bench:memory`: a full cache of realistic pods
 * 2.2× their JSON bytes before, 1.2× after). The object stays equal to what the server sent (a
 * shared `{}` is `{}` for JSON, `toEqual` and any reader); only writing into an empty field set
 * throws, and cached objects are read-only anyway. Other values are not touched.
 */
export function shareEmptyFieldSets(obj: unknown): void {
  const managed = (obj as { metadata?: { managedFields?: unknown } } | null)?.metadata?.managedFields;
  if (!Array.isArray(managed)) return;
  for (const entry of managed as unknown[]) {
    if (typeof entry !== 'object' || entry === null) continue;
    const fields = (entry as { fieldsV1?: unknown }).fieldsV1;
    if (isPlainObject(fields)) (entry as { fieldsV1?: unknown }).fieldsV1 = share(fields, 0);
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !Object.isFrozen(v);
}

function share(o: Record<string, unknown>, depth: number): Record<string, unknown> {
  let empty = true;
  for (const k in o) {
    empty = false;
    const v = o[k];
    // `__proto__` would set the prototype rather than the own property JSON.parse made.
    if (depth < MAX_FIELD_SET_DEPTH && k !== '__proto__' && isPlainObject(v)) o[k] = share(v, depth + 1);
  }
  return empty ? EMPTY_FIELD_SET : o;
}
