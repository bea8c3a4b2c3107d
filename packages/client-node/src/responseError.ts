import type { IncomingHttpHeaders } from 'node:http';
import { STATUS_CODES } from 'node:http';
import { ErrorCodes, KinformerError, type Status } from '@kinformer/core';

/** How many characters of a bad body or line an error's `details.excerpt` keeps. */
export const EXCERPT_CHARS = 200;

/** The first {@link EXCERPT_CHARS} characters of `text`, marked when cut. */
export function excerpt(text: string): string {
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
}

/**
 * `Retry-After` as a number of seconds (> 0), or `undefined`. Only the delta-seconds form is read:
 * it is the only one the API server and its priority-and-fairness filter send.
 */
export function retryAfterHeader(headers: IncomingHttpHeaders): number | undefined {
  const value = headers['retry-after'];
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  const seconds = Number.parseInt(value, 10);
  return seconds > 0 ? seconds : undefined;
}

/** True when `value` looks like a `metav1.Status` (what the API server sends for every failure it maps). */
export function isStatus(value: unknown): value is Status {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return (
    v.kind === 'Status' ||
    (v.status === 'Failure' && (typeof v.code === 'number' || typeof v.reason === 'string'))
  );
}

function codeForHttpStatus(httpStatus: number): KinformerError['code'] {
  // Reuse core's mapping (HTTP code → error code) without attaching a made-up Status.
  return KinformerError.fromStatus({ code: httpStatus }).code;
}

/**
 * The error for a non-2xx answer. A `Status` body gives `KinformerError.fromStatus` (the code
 * follows its reason and code); an HTML page (a proxy or load balancer answered, not the API server)
 * gives `ERR_BAD_RESPONSE`; any other body (the plain-text 429 of priority-and-fairness, Go's
 * `404 page not found`) gives the code of the HTTP status. `Retry-After` becomes
 * `retryAfterSeconds`. `details` gets `bodyExcerpt` for non-Status bodies; never headers.
 */
export function errorFromResponse(
  httpStatus: number,
  headers: IncomingHttpHeaders,
  body: string,
  details: Record<string, unknown>,
): KinformerError {
  const retryAfterSeconds = retryAfterHeader(headers);
  const retry = retryAfterSeconds === undefined ? {} : { retryAfterSeconds };
  const contentType = headers['content-type'] ?? '';
  const trimmed = body.trimStart();
  if (trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    if (isStatus(parsed)) {
      return KinformerError.fromStatus(parsed, { httpStatus, ...retry, details });
    }
  }
  const reason = STATUS_CODES[httpStatus] ?? 'Unknown';
  const withBody = { ...details, bodyExcerpt: excerpt(body) };
  if (contentType.includes('text/html') || /^<(!doctype|html|head|body)\b/i.test(trimmed)) {
    return new KinformerError(
      ErrorCodes.BAD_RESPONSE,
      `the server answered ${httpStatus} ${reason} with an HTML page, not a Kubernetes Status`,
      { httpStatus, ...retry, details: withBody },
    );
  }
  const text = trimmed.split('\n', 1)[0]?.trim();
  return new KinformerError(
    codeForHttpStatus(httpStatus),
    `the server answered ${httpStatus} ${reason}${text ? `: ${excerpt(text)}` : ''}`,
    {
      httpStatus,
      ...retry,
      details: withBody,
    },
  );
}
