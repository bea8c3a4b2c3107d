import { ErrorCodes, isKinformerError, KinformerError } from '@kinformer/core';
import { isTooManyRequestsError } from '@kinformer/core/internal';
import type { WatchOptions } from './listerWatcher.js';

/** How the reflector classifies the errors that end a LIST or a watch. Pure functions, no state. */

export function codeOf(err: unknown): string | undefined {
  return isKinformerError(err) ? err.code : undefined;
}

/** The message of an error (of any realm) or a string; `undefined` for anything else. */
export function messageOf(err: unknown): string | undefined {
  if (typeof err === 'string') return err;
  if (typeof err !== 'object' || err === null) return undefined;
  const message = (err as { message?: unknown }).message;
  return typeof message === 'string' ? message : undefined;
}

/** The longest message an expected fault's log line carries. */
const MAX_FAULT_MESSAGE = 200;

/**
 * The `err` field of a log line about an expected fault the reflector retries (a server status, a
 * broken or malformed stream, a stall): its type, code, message (cut to 200 characters), HTTP status,
 * `Retry-After` and details — one short line, no stack and no Status body. Anything that is not a
 * `KinformerError` (a store or handler that threw: a bug) is logged whole, stack included.
 */
export function faultSummary(err: unknown): unknown {
  if (!isKinformerError(err)) return err;
  const message =
    err.message.length > MAX_FAULT_MESSAGE ? `${err.message.slice(0, MAX_FAULT_MESSAGE)}…` : err.message;
  return {
    type: 'KinformerError',
    code: err.code,
    message,
    ...(err.httpStatus === undefined ? {} : { httpStatus: err.httpStatus }),
    ...(err.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: err.retryAfterSeconds }),
    ...(err.details === undefined ? {} : { details: err.details }),
  };
}

/** The server's `Retry-After` (`retryAfterSeconds` of its Status) in ms; 0 when it named none. */
export function retryAfterMs(err: unknown): number {
  return isKinformerError(err) && err.retryAfterSeconds !== undefined ? err.retryAfterSeconds * 1000 : 0;
}

/**
 * Status reasons client-go's `apierrors` knows (its `knownReasons`) other than `InternalError`: an
 * `ERR_INTERNAL` carrying one of these (in practice `StorageReadError`) is not an internal error.
 */
const KNOWN_NON_INTERNAL_REASONS: ReadonlySet<string> = new Set([
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'AlreadyExists',
  'Conflict',
  'Gone',
  'Invalid',
  'ServerTimeout',
  'StorageReadError',
  'Timeout',
  'TooManyRequests',
  'BadRequest',
  'MethodNotAllowed',
  'NotAcceptable',
  'RequestEntityTooLarge',
  'UnsupportedMediaType',
  'Expired',
  'ServiceUnavailable',
]);

/**
 * client-go's `apierrors.IsInternalError`: reason `InternalError`, or a 500 whose reason is unknown or
 * missing. `ServerTimeout` (`ERR_TIMEOUT`) and `StorageReadError` are not. Decides which watch errors
 * `maxInternalErrorRetryDurationMs` retries at once.
 */
export function isInternalError(err: unknown): boolean {
  if (!isKinformerError(err, ErrorCodes.INTERNAL)) return false;
  const reason = err.status?.reason;
  return reason === undefined || !KNOWN_NON_INTERNAL_REASONS.has(reason);
}

/**
 * A 400 BadRequest or 422 Invalid answer to a LIST at a specific resourceVersion (neither `""` nor
 * `"0"`): the server refused the version itself (e.g. one that is not a number). Handled like an
 * expired version: the list is retried at once with `""`.
 */
export function isRejectedResourceVersionError(err: unknown, resourceVersion: string): boolean {
  return (
    resourceVersion !== '' &&
    resourceVersion !== '0' &&
    (isKinformerError(err, ErrorCodes.BAD_REQUEST) || isKinformerError(err, ErrorCodes.INVALID))
  );
}

/** An answer with a 5xx status (500, 502, 503, 504…): the server failed, not the request or its version. */
export function isServerError(err: unknown): boolean {
  return (
    isKinformerError(err) && err.httpStatus !== undefined && err.httpStatus >= 500 && err.httpStatus < 600
  );
}

/** client-go's `isWatchErrorRetriable`: connection failures and 429 re-watch after a backoff, without relisting. */
export function isWatchErrorRetriable(err: unknown): boolean {
  return isKinformerError(err, ErrorCodes.CONNECTION) || isTooManyRequestsError(err);
}

/** A watch line the reflector could not use: the watch ends and resumes from the last good version. */
export function isMalformedStreamError(err: unknown): boolean {
  return (
    isKinformerError(err, ErrorCodes.MALFORMED_WATCH_EVENT) ||
    isKinformerError(err, ErrorCodes.UNKNOWN_EVENT_TYPE) ||
    isKinformerError(err, ErrorCodes.WATCH_LINE_TOO_LARGE)
  );
}

export function malformedEventError(type: string, obj: unknown): KinformerError {
  return new KinformerError(
    ErrorCodes.MALFORMED_WATCH_EVENT,
    `watch event ${type} carries no object metadata`,
    { details: { type, object: obj === null ? 'null' : typeof obj } },
  );
}

export function unknownEventTypeError(type: string, resourceVersion: string): KinformerError {
  return new KinformerError(
    ErrorCodes.UNKNOWN_EVENT_TYPE,
    `unknown watch event type ${JSON.stringify(type)}`,
    {
      details: { type, resourceVersion },
    },
  );
}

export function stalledError(options: WatchOptions, limitMs: number): KinformerError {
  return new KinformerError(
    ErrorCodes.WATCH_STALLED,
    `the watch request got no answer within ${Math.round(limitMs)} ms (its stall limit)`,
    { details: { resourceVersion: options.resourceVersion, timeoutSeconds: options.timeoutSeconds } },
  );
}

/**
 * True for a `meta.k8s.io` `Table` object or list (server-side printing output), which a reflector can
 * never store: client-go rejects Table lists and skips Table watch events.
 */
export function isUnsupportedTableObject(
  obj: { apiVersion?: string | undefined; kind?: string | undefined } | null | undefined,
): boolean {
  return (
    obj?.kind === 'Table' && (obj.apiVersion === 'meta.k8s.io/v1' || obj.apiVersion === 'meta.k8s.io/v1beta1')
  );
}
