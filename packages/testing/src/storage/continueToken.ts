import { badRequestError } from '../api/statusErrors.js';
import type { KinformerError } from '@kinformer/core';

/**
 * Continue tokens as the real server makes them (`storage/continue.go`): base64url without padding
 * of `{"v":"meta.k8s.io/v1","rv":<int64>,"start":"<key after the list prefix>\u0000"}`.
 */

/** A decoded continue token. `rv` is -1 for "continue at the latest revision". */
export interface ContinueToken {
  rv: number;
  /** The start key relative to the list prefix (`pod-b\u0000`, `default/pod-b\u0000`); `''` = from the start. */
  start: string;
}

/** Encodes a token that continues after `lastKey` (relative to the list prefix). */
export function encodeContinueToken(rv: number, lastKey: string): string {
  return encodeRaw(rv, `${lastKey}\u0000`);
}

/** Encodes a token with an explicit start key (used to re-issue an expired token with `rv: -1`). */
export function encodeRaw(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start }), 'utf8').toString('base64url');
}

const INVALID = 'continue key is not valid';

/**
 * Decodes a token, failing with the real server's 400 messages (`invalid continue token: continue
 * key is not valid: …`).
 */
export function decodeContinueToken(token: string): ContinueToken | KinformerError {
  const fail = (detail: string): KinformerError => badRequestError(`invalid continue token: ${detail}`);
  if (!/^[A-Za-z0-9_-]*$/.test(token) || token.length % 4 === 1) {
    const at = token.search(/[^A-Za-z0-9_-]/);
    return fail(`${INVALID}: illegal base64 data at input byte ${at === -1 ? token.length - 1 : at}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch (err) {
    return fail(`${INVALID}: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return fail(
      `${INVALID}: json: cannot unmarshal ${Array.isArray(parsed) ? 'array' : typeof parsed} into Go value of type storage.continueToken`,
    );
  }
  const { v, rv, start } = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (v !== 'meta.k8s.io/v1') {
    return fail(
      `${INVALID}: server does not recognize this encoded version ${typeof v === 'string' ? v : ''}`,
    );
  }
  const revision = typeof rv === 'number' && Number.isInteger(rv) ? rv : 0;
  if (revision === 0)
    return fail(`${INVALID}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)`);
  const key = typeof start === 'string' ? start : '';
  if (key === '') return fail(`${INVALID}: encoded start key empty (version meta.k8s.io/v1)`);
  const rooted = key.startsWith('/') ? key : `/${key}`;
  if (cleanPath(rooted) !== rooted) return fail(`${INVALID}: ${key}`);
  return { rv: revision, start: rooted.slice(1) };
}

/** Go's `path.Clean` for rooted paths. */
function cleanPath(path: string): string {
  const out: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return `/${out.join('/')}`;
}
