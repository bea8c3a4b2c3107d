import type { ListMeta } from '@kinformer/core';
import { parseJson } from './exactJson.js';
import {
  CLOSE_BRACE,
  CLOSE_BRACKET,
  closingQuote,
  COLON,
  COMMA,
  isSpace,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from './jsonBytes.js';

/** Longest body prefix searched for the list's `metadata` (kube-apiserver writes it before `items`). */
export const LIST_META_PEEK_BYTES = 4096;

function skipSpace(b: Buffer, i: number): number {
  while (i < b.length && isSpace(b[i])) i++;
  return i;
}

/** From just after an opening quote: the index of the closing quote, or -1 past the prefix's end. */
function stringEnd(b: Buffer, i: number): number {
  const q = closingQuote(b, i, b.length);
  return q < b.length ? q : -1;
}

/** The index just after the JSON value starting at `i`, or -1 when it goes on past the prefix. */
function valueEnd(b: Buffer, i: number): number {
  const c = b[i] as number;
  if (c === QUOTE) {
    const q = stringEnd(b, i + 1);
    return q < 0 ? -1 : q + 1;
  }
  if (c !== OPEN_BRACE && c !== OPEN_BRACKET) {
    while (i < b.length) {
      const d = b[i] as number;
      if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isSpace(d)) return i;
      i++;
    }
    return -1;
  }
  let depth = 0;
  while (i < b.length) {
    const d = b[i++] as number;
    if (d === QUOTE) {
      const q = stringEnd(b, i);
      if (q < 0) return -1;
      i = q + 1;
    } else if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
    else if ((d === CLOSE_BRACE || d === CLOSE_BRACKET) && --depth === 0) return i;
  }
  return -1;
}

/**
 * The list's `metadata` from the first bytes of a LIST body, before its items have arrived:
 * kube-apiserver writes `kind`, `apiVersion` and `metadata` before `items`. Returns the metadata
 * object, `undefined` when the prefix ends before it (more bytes may tell), or `null` when it cannot
 * be found this way (`items` or the body's end come first, or the prefix is not a JSON object's
 * start). A hint only: the list decoder still checks the whole body, and the caller compares the
 * final list's metadata with what this gave.
 */
export function peekListMeta(b: Buffer): ListMeta | null | undefined {
  let i = skipSpace(b, 0);
  if (i >= b.length) return undefined;
  if (b[i] !== OPEN_BRACE) return null;
  i++;
  for (;;) {
    i = skipSpace(b, i);
    if (i >= b.length) return undefined;
    if (b[i] !== QUOTE) return null;
    const q = stringEnd(b, i + 1);
    if (q < 0) return undefined;
    // An escaped key is never compared as `metadata` here: the hint is simply not given.
    const key = b.toString('latin1', i + 1, q);
    i = skipSpace(b, q + 1);
    if (i >= b.length) return undefined;
    if (b[i] !== COLON) return null;
    i = skipSpace(b, i + 1);
    if (i >= b.length) return undefined;
    if (key === 'items') return null;
    const end = valueEnd(b, i);
    if (end < 0) return undefined;
    if (key === 'metadata') {
      let value: unknown;
      try {
        value = parseJson(b.toString('utf8', i, end));
      } catch {
        return null;
      }
      return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : null;
    }
    i = skipSpace(b, end);
    if (i >= b.length) return undefined;
    if (b[i] !== COMMA) return null;
    i++;
  }
}
