/** Plain JSON as the fake stores and patches it: the object type and its readers, defined once. */

/** A JSON object (plain data). */
export type JsonObject = Record<string, unknown>;

/** True for a JSON object (not null, not an array). */
export function isMap(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` when it is a JSON object, else a fresh `{}`. */
export function rec(value: unknown): JsonObject {
  return isMap(value) ? value : {};
}
