import { ErrorCodes, KinformerError } from '@kinformer/core';
import type { Status } from '@kinformer/core';
import { ApiException } from '@kubernetes/client-node';
import { isStatus, retryAfterHeader } from './responseError.js';

/** Options of {@link apiError}. */
export interface ApiErrorOptions {
  /** Names the object in messages, e.g. `configmap kube-system/x` (default `the object`). */
  what?: string;
  /** The request's signal: when it aborted, a failure is `ERR_ABORTED` rather than `ERR_CONNECTION`. */
  signal?: AbortSignal | undefined;
  /** The error's `details` (default `{ object: what }` when `what` is given). Never credentials. */
  details?: Record<string, unknown>;
}

/**
 * The `Status` in a client-node error body, or `undefined`. client-node 2.x hands error bodies over as
 * text (sometimes already parsed): a string is parsed when it is a JSON object; the value counts as a
 * Status by the same test as kinformer's own requests ({@link isStatus}).
 */
export function statusFromBody(body: unknown): Status | undefined {
  let value = body;
  if (typeof value === 'string') {
    if (!value.trimStart().startsWith('{')) return undefined;
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  return isStatus(value) ? value : undefined;
}

/**
 * The `KinformerError` for a failed `@kubernetes/client-node` API call (its `ApiException`), so that
 * callers branch on stable codes:
 *
 * - an answer with a `Status` body → `KinformerError.fromStatus`, keeping the Status (404 → `ERR_NOT_FOUND`,
 *   409 Conflict or AlreadyExists → `ERR_CONFLICT`, 403 → `ERR_FORBIDDEN`, …);
 * - an answer without one (Go's plain-text `404 page not found`, priority-and-fairness' text 429) →
 *   the code of its HTTP status;
 * - `Retry-After` (delta seconds) → `retryAfterSeconds`, for both;
 * - a request that failed after `signal` aborted (or with an `AbortError`) → `ERR_ABORTED`;
 * - client-node's `RequiredError` (a missing required parameter: the request was never sent) →
 *   `ERR_INVALID_OPTION`;
 * - anything else (refused, reset, DNS, TLS) → `ERR_CONNECTION`.
 *
 * A `KinformerError` passes through unchanged. The original error is the `cause`.
 */
export function apiError(err: unknown, options: ApiErrorOptions = {}): KinformerError {
  if (err instanceof KinformerError) return err;
  const what = options.what ?? 'the object';
  const details = options.details ?? (options.what === undefined ? undefined : { object: options.what });
  const withDetails = details === undefined ? {} : { details };
  const signal = options.signal;
  if (err instanceof ApiException) {
    const httpStatus = err.code;
    const retryAfterSeconds = retryAfterHeader(lowerCaseKeys(err.headers));
    const retry = retryAfterSeconds === undefined ? {} : { retryAfterSeconds };
    const status = statusFromBody(err.body);
    if (status !== undefined) {
      return KinformerError.fromStatus(status, { cause: err, httpStatus, ...retry, ...withDetails });
    }
    const code = KinformerError.fromStatus({ code: httpStatus }).code;
    return new KinformerError(code, `the server answered ${httpStatus} for ${what}`, {
      cause: err,
      httpStatus,
      ...retry,
      ...withDetails,
    });
  }
  if (signal?.aborted || (err instanceof Error && err.name === 'AbortError')) {
    return new KinformerError(ErrorCodes.ABORTED, `the request for ${what} was aborted`, {
      cause: signal?.reason ?? err,
      ...withDetails,
    });
  }
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof Error && err.name === 'RequiredError') {
    return new KinformerError(ErrorCodes.INVALID_OPTION, `request for ${what} not sent: ${message}`, {
      cause: err,
      ...withDetails,
    });
  }
  return new KinformerError(ErrorCodes.CONNECTION, `request for ${what} failed: ${message}`, {
    cause: err,
    ...withDetails,
  });
}

function lowerCaseKeys(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers ?? {})) out[key.toLowerCase()] = value;
  return out;
}
