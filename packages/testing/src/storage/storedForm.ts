import { badRequestError } from '../api/statusErrors.js';
import type { JsonObject } from '../api/json.js';
import type { StoredObject } from './storedEntry.js';

/**
 * The stored form of an object, as kube-apiserver's storage serialises it: `metadata` in the Go
 * struct's key order with empty fields omitted, no `kind`/`apiVersion`, second-precision
 * timestamps, and the small readers the store uses on plain JSON.
 */

const META_ORDER = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
] as const;
const META_KEYS: ReadonlySet<string> = new Set(META_ORDER);
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

export function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/** `metadata` in the Go struct's key order, `forced` fields overriding `source`, empty fields omitted. */
export function buildMeta(source: JsonObject, forced: JsonObject): JsonObject {
  const merged: JsonObject = { ...source, ...forced };
  const out: JsonObject = {};
  for (const key of META_ORDER) {
    const value = merged[key];
    if (value === undefined || value === '' || (key !== 'generation' && isEmpty(value))) continue;
    out[key] = value;
  }
  for (const key of Object.keys(merged))
    if (!META_KEYS.has(key) && merged[key] !== undefined) out[key] = merged[key];
  return out;
}

let lastSecond = Number.NaN;
let lastTimestamp = '';

/** RFC 3339 with second precision, as `metav1.Time` serialises. */
export function rfc3339(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastTimestamp = new Date(second * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  return lastTimestamp;
}

/**
 * The stored form: no `kind`/`apiVersion`, `metadata` first; `kindFields` is the kind's own
 * normalisation (`ResourceStrategy.normalize`: a Lease's `MicroTime`s).
 */
export function normalize(
  obj: JsonObject,
  meta: JsonObject,
  kindFields?: (obj: JsonObject) => void,
): StoredObject {
  const { kind: _kind, apiVersion: _apiVersion, metadata: _metadata, ...rest } = obj;
  const out: StoredObject = { metadata: meta, ...rest };
  kindFields?.(out);
  return out;
}

export function asBody(body: unknown): JsonObject {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequestError('the body of the request was not a JSON object');
  }
  return body as JsonObject;
}

/** The 5-character suffix of a `generateName` (apiserver's `names.SimpleNameGenerator` alphabet). */
export function randomSuffix(): string {
  let out = '';
  for (let i = 0; i < 5; i++) out += NAME_ALPHABET[Math.floor(Math.random() * NAME_ALPHABET.length)];
  return out;
}
