import { ErrorCodes, KinformerError } from './errors.js';

/**
 * The deepest nesting of JSON objects and arrays kinformer accepts from the API server: 10 000
 * levels, the limit of Go's `encoding/json` decoder (`maxNestingDepth`), so anything an API server
 * can encode is accepted and anything deeper fails with `ERR_OBJECT_TOO_DEEP` instead of blowing the
 * stack somewhere later (freezing, cloning, handlers). A value nested exactly this deep is accepted.
 * Decoders that track bracket depth themselves (the streaming LIST decoder) use this constant.
 */
export const MAX_OBJECT_DEPTH = 10_000;

const OPEN_BRACE = 0x7b; // {
const OPEN_BRACKET = 0x5b; // [
const CLOSE_BRACE = 0x7d; // }
const CLOSE_BRACKET = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * The position (UTF-16 index) in JSON text `text` where object/array nesting first exceeds
 * `maxDepth`, or -1 when it never does. Brackets inside strings do not count. Text with at most
 * `maxDepth` opening brackets cannot exceed it and is not scanned (cheap for real objects: the
 * count uses `indexOf`). The text need not be valid JSON.
 */
export function jsonNestingExceeds(text: string, maxDepth: number = MAX_OBJECT_DEPTH): number {
  if (text.length <= maxDepth) return -1;
  // Nesting deeper than maxDepth needs more than maxDepth opening brackets. Counting them with
  // indexOf (native, skips everything else) is several times faster than the scan below, and
  // settles almost every real object: a 20 KB Pod has a few hundred.
  if (countOpeners(text, maxDepth) <= maxDepth) return -1;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return i;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return -1;
}

/** `{` and `[` in `text` (inside strings too), counted up to `limit + 1`. */
function countOpeners(text: string, limit: number): number {
  let n = 0;
  for (let i = text.indexOf('{'); i !== -1 && n <= limit; i = text.indexOf('{', i + 1)) n++;
  for (let i = text.indexOf('['); i !== -1 && n <= limit; i = text.indexOf('[', i + 1)) n++;
  return n;
}

/**
 * The nesting depth of a parsed value: 0 for a primitive, 1 for `{}` or `[1]`, 2 for `{ a: {} }`,
 * and so on. Iterative (no recursion, whatever the depth); stops counting once `limit` is exceeded
 * and returns `limit + 1`. Shared sub-objects are visited once per path.
 */
export function objectDepth(value: unknown, limit: number = MAX_OBJECT_DEPTH): number {
  if (typeof value !== 'object' || value === null) return 0;
  let max = 0;
  const stack: { v: object; d: number }[] = [{ v: value, d: 1 }];
  while (stack.length > 0) {
    const { v, d } = stack.pop() as { v: object; d: number };
    if (d > max) {
      max = d;
      if (max > limit) return limit + 1;
    }
    const children: unknown[] = Array.isArray(v) ? (v as unknown[]) : Object.values(v);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push({ v: child, d: d + 1 });
    }
  }
  return max;
}

/**
 * The error for a value nested deeper than {@link MAX_OBJECT_DEPTH}: code `ERR_OBJECT_TOO_DEEP`,
 * `details` with `maxDepth` plus whatever context is given (`where`, `key`, `position`, …).
 */
export function objectTooDeepError(
  where: string,
  details: Record<string, unknown> = {},
  maxDepth: number = MAX_OBJECT_DEPTH,
): KinformerError {
  return new KinformerError(
    ErrorCodes.OBJECT_TOO_DEEP,
    `${where}: nested more than ${maxDepth} levels deep (the limit of Go's JSON decoder)`,
    { details: { ...details, maxDepth } },
  );
}

/**
 * Checks a resourceVersion read from the wire (an object's `metadata.resourceVersion`, a list's
 * `metadata.resourceVersion`, a bookmark's): returns it when it is a string or absent (`undefined`,
 * as Go's decoder leaves an absent field empty), and throws `ERR_BAD_RESOURCE_VERSION` for anything
 * else (a number, `null`, an object, …), so a non-string is never stored, handed to handlers or sent
 * back as `resourceVersion=Infinity`. `where` names what was read (`'watch event'`, `'list metadata'`)
 * for the message; `details` go on the error. The value itself is not echoed, only its type.
 */
export function validateResourceVersion(
  value: unknown,
  where: string,
  details: Record<string, unknown> = {},
): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  throw new KinformerError(
    ErrorCodes.BAD_RESOURCE_VERSION,
    `${where}: resourceVersion must be a string, got ${type}`,
    { details: { ...details, resourceVersionType: type } },
  );
}
