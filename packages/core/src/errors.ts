import type { Status } from './types.js';

/**
 * Every stable error code kinformer raises. Codes never change meaning; new codes may be added.
 * See `docs/errors.md` for what each one means and what kinformer does about it.
 */
export const ErrorCodes = {
  /** The DeltaFIFO/RealFIFO was closed while a `pop` waited, or after. */
  FIFO_CLOSED: 'ERR_FIFO_CLOSED',
  /** A key function could not key an object (no metadata, no name). */
  KEY_FUNC: 'ERR_KEY_FUNC',
  /** A store key is not `name` or `namespace/name`. */
  INVALID_KEY: 'ERR_INVALID_KEY',
  /** A label or field selector does not parse. */
  INVALID_SELECTOR: 'ERR_INVALID_SELECTOR',
  /** An index name is unknown, or an indexer with that name already exists. */
  INDEX: 'ERR_INDEX',
  /** An index function threw or returned something other than an array of strings. */
  INDEX_FUNC: 'ERR_INDEX_FUNC',
  /** Some entries of a store transaction were skipped (their key or index function threw). */
  TRANSACTION: 'ERR_TRANSACTION',
  /** An option has an invalid value. */
  INVALID_OPTION: 'ERR_INVALID_OPTION',
  /** 410 Gone / Expired: the requested resourceVersion or continue token is too old. */
  RESOURCE_EXPIRED: 'ERR_RESOURCE_EXPIRED',
  /** 504 with cause ResourceVersionTooLarge: the requested resourceVersion is newer than the server's. */
  RESOURCE_VERSION_TOO_LARGE: 'ERR_RESOURCE_VERSION_TOO_LARGE',
  /** 429 Too Many Requests (with `retryAfterSeconds` when the server said). */
  TOO_MANY_REQUESTS: 'ERR_TOO_MANY_REQUESTS',
  /** 400 Bad Request. */
  BAD_REQUEST: 'ERR_BAD_REQUEST',
  /** 401 Unauthorized. */
  UNAUTHORIZED: 'ERR_UNAUTHORIZED',
  /** 403 Forbidden. */
  FORBIDDEN: 'ERR_FORBIDDEN',
  /** 404 Not Found (the object, or the resource type itself). */
  NOT_FOUND: 'ERR_NOT_FOUND',
  /** 409 Conflict or AlreadyExists. */
  CONFLICT: 'ERR_CONFLICT',
  /** 422 Invalid. */
  INVALID: 'ERR_INVALID',
  /**
   * 500 Internal Server Error: reason `InternalError`, `StorageReadError`, an unknown reason, or none.
   * (client-go's `IsInternalError` is narrower: only `InternalError` and unknown reasons.)
   */
  INTERNAL: 'ERR_INTERNAL',
  /** 503 Service Unavailable. */
  SERVICE_UNAVAILABLE: 'ERR_SERVICE_UNAVAILABLE',
  /**
   * The server could not answer in time: 504 `Timeout` (other than a too-large resourceVersion), or
   * 500 `ServerTimeout` (e.g. etcd did not answer a LIST; usually with `retryAfterSeconds`).
   */
  TIMEOUT: 'ERR_TIMEOUT',
  /** Any other non-2xx answer from the API server. */
  API_STATUS: 'ERR_API_STATUS',
  /** The connection failed, was refused or reset before an answer. */
  CONNECTION: 'ERR_CONNECTION',
  /** A response body is not what the protocol says (HTML error page, non-JSON or non-list body). */
  BAD_RESPONSE: 'ERR_BAD_RESPONSE',
  /** A LIST body ended (the HTTP response was complete) before the end of the list's JSON. */
  LIST_TRUNCATED: 'ERR_LIST_TRUNCATED',
  /** One item of a LIST body is longer than the configured limit, or than a JavaScript string can be. */
  LIST_ITEM_TOO_LARGE: 'ERR_LIST_ITEM_TOO_LARGE',
  /** A watch line is not valid JSON, or its object is missing, null, or has no metadata. */
  MALFORMED_WATCH_EVENT: 'ERR_MALFORMED_WATCH_EVENT',
  /** A watch event has a type other than ADDED, MODIFIED, DELETED, BOOKMARK or ERROR. */
  UNKNOWN_EVENT_TYPE: 'ERR_UNKNOWN_EVENT_TYPE',
  /** A watch line is longer than the configured limit. */
  WATCH_LINE_TOO_LARGE: 'ERR_WATCH_LINE_TOO_LARGE',
  /** A watch delivered nothing (not even a bookmark) for longer than its timeout plus a margin. */
  WATCH_STALLED: 'ERR_WATCH_STALLED',
  /** A watch ended within a second of starting without delivering anything. */
  VERY_SHORT_WATCH: 'ERR_VERY_SHORT_WATCH',
  /** An object's apiVersion/kind is not the informer's expected type. */
  UNEXPECTED_TYPE: 'ERR_UNEXPECTED_TYPE',
  /** An object's resourceVersion is not a decimal number, or goes back in time. */
  BAD_RESOURCE_VERSION: 'ERR_BAD_RESOURCE_VERSION',
  /** A JSON value from the server is nested deeper than `MAX_OBJECT_DEPTH` (10 000, Go's decoder limit). */
  OBJECT_TOO_DEEP: 'ERR_OBJECT_TOO_DEEP',
  /**
   * The server's TLS certificate cannot be trusted: not signed by the configured CA, expired, or not
   * issued for the server's name. Retrying cannot fix it.
   */
  TLS: 'ERR_TLS',
  /**
   * The KubeConfig's credentials cannot be used: an exec credential plugin failed or printed
   * something that is not an ExecCredential, or a token/header value holds characters a header may not.
   */
  CREDENTIALS: 'ERR_CREDENTIALS',
  /** The informer was stopped; the operation is not allowed any more. */
  INFORMER_STOPPED: 'ERR_INFORMER_STOPPED',
  /** `run` was called on something that is already running. */
  ALREADY_STARTED: 'ERR_ALREADY_STARTED',
  /** An event handler threw or rejected. */
  HANDLER_FAILED: 'ERR_HANDLER_FAILED',
  /** `waitForCacheSync` gave up: the signal was aborted or an informer can never sync. */
  CACHE_SYNC_FAILED: 'ERR_CACHE_SYNC_FAILED',
  /** The operation was aborted through its AbortSignal. */
  ABORTED: 'ERR_ABORTED',
  /** Leader election could not acquire, renew or release its lease. */
  LEADER_ELECTION: 'ERR_LEADER_ELECTION',
  /** A reconcile failed in a way retrying cannot fix (`TerminalError`): logged and counted, not retried. */
  TERMINAL: 'ERR_TERMINAL',
  /** A reconcile ran longer than its controller's `reconcileTimeoutMs`. */
  RECONCILE_TIMEOUT: 'ERR_RECONCILE_TIMEOUT',
  /** A read of a kind the Manager neither caches nor has a cache policy for. */
  KIND_NOT_CACHED: 'ERR_KIND_NOT_CACHED',
} as const;

/** One of {@link ErrorCodes}' values. */
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** Options for {@link KinformerError}. */
export interface KinformerErrorOptions {
  cause?: unknown;
  /** The API server's Status, when the error came from the server. */
  status?: Status;
  /** The HTTP status code, when the error came from an HTTP answer. */
  httpStatus?: number;
  /** Seconds the server asked us to wait (`Retry-After` or `details.retryAfterSeconds`). */
  retryAfterSeconds?: number;
  /** Free-form context for logs (resource, key, line number…). Never credentials. */
  details?: Record<string, unknown>;
}

/**
 * The one error class kinformer throws. `code` is stable (see {@link ErrorCodes}); `status` carries
 * the API server's `Status` when there was one; `cause` (ES2022) the underlying error.
 */
export class KinformerError extends Error {
  override readonly name = 'KinformerError';
  readonly code: ErrorCode;
  readonly status: Status | undefined;
  readonly httpStatus: number | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: KinformerErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.httpStatus = options.httpStatus ?? options.status?.code;
    this.retryAfterSeconds =
      options.retryAfterSeconds ?? positive(options.status?.details?.retryAfterSeconds);
    this.details = options.details;
  }

  /**
   * The error for an API server `Status` (an HTTP error body or a watch `ERROR` event's object).
   * The code follows the Status' `code` and `reason` as client-go's `apierrors` does.
   */
  static fromStatus(status: Status, options: Omit<KinformerErrorOptions, 'status'> = {}): KinformerError {
    const httpStatus = options.httpStatus ?? status.code;
    const message = status.message ?? status.reason ?? `the server answered ${httpStatus ?? 'an error'}`;
    return new KinformerError(codeForStatus(status, httpStatus), message, {
      ...options,
      status,
      ...(httpStatus === undefined ? {} : { httpStatus }),
    });
  }
}

function positive(n: number | undefined): number | undefined {
  return n !== undefined && n > 0 ? n : undefined;
}

const TOO_LARGE_MESSAGES = ['Too large resource version', 'too large resource version'];

/** True when a Status says the requested resourceVersion is newer than the server's (any of the 3 formats). */
export function isTooLargeResourceVersionStatus(status: Status): boolean {
  if (status.details?.causes?.some((c) => c.reason === 'ResourceVersionTooLarge')) return true;
  if (status.code !== 504 && status.reason !== 'Timeout') return false;
  // Servers 1.17.0–1.18.5 put the text in a cause's message, older ones only in the Status' message;
  // client-go matches both (reflector.go `isTooLargeResourceVersionError`).
  if (status.details?.causes?.some((c) => c.message === 'Too large resource version')) return true;
  const msg = status.message ?? '';
  return TOO_LARGE_MESSAGES.some((m) => msg.includes(m));
}

/** The code of a Status `reason` (client-go's `apierrors.Is*` by reason). A Map: a reason is server data. */
const CODE_BY_REASON: ReadonlyMap<string, ErrorCode> = new Map([
  ['Expired', ErrorCodes.RESOURCE_EXPIRED],
  ['Gone', ErrorCodes.RESOURCE_EXPIRED],
  ['TooManyRequests', ErrorCodes.TOO_MANY_REQUESTS],
  ['Unauthorized', ErrorCodes.UNAUTHORIZED],
  ['Forbidden', ErrorCodes.FORBIDDEN],
  ['NotFound', ErrorCodes.NOT_FOUND],
  ['Conflict', ErrorCodes.CONFLICT],
  ['AlreadyExists', ErrorCodes.CONFLICT],
  ['Invalid', ErrorCodes.INVALID],
  ['BadRequest', ErrorCodes.BAD_REQUEST],
  ['InternalError', ErrorCodes.INTERNAL],
  ['ServiceUnavailable', ErrorCodes.SERVICE_UNAVAILABLE],
  // ServerTimeout is sent with HTTP 500, but it is not an internal error (client-go's
  // `IsInternalError` is false for it, `IsServerTimeout` true): the server ran out of time.
  ['ServerTimeout', ErrorCodes.TIMEOUT],
  ['Timeout', ErrorCodes.TIMEOUT],
]);

/** The code of an HTTP status, for a Status whose reason is unknown or missing. */
const CODE_BY_HTTP_STATUS: ReadonlyMap<number, ErrorCode> = new Map([
  [400, ErrorCodes.BAD_REQUEST],
  [401, ErrorCodes.UNAUTHORIZED],
  [403, ErrorCodes.FORBIDDEN],
  [404, ErrorCodes.NOT_FOUND],
  [409, ErrorCodes.CONFLICT],
  [410, ErrorCodes.RESOURCE_EXPIRED],
  [422, ErrorCodes.INVALID],
  [429, ErrorCodes.TOO_MANY_REQUESTS],
  [500, ErrorCodes.INTERNAL],
  [503, ErrorCodes.SERVICE_UNAVAILABLE],
  [504, ErrorCodes.TIMEOUT],
]);

function codeForStatus(status: Status, httpStatus: number | undefined): ErrorCode {
  if (isTooLargeResourceVersionStatus(status)) return ErrorCodes.RESOURCE_VERSION_TOO_LARGE;
  const byReason = status.reason === undefined ? undefined : CODE_BY_REASON.get(status.reason);
  if (byReason !== undefined) return byReason;
  return (
    (httpStatus === undefined ? undefined : CODE_BY_HTTP_STATUS.get(httpStatus)) ?? ErrorCodes.API_STATUS
  );
}

/** True when `err` is a {@link KinformerError}, optionally with the given code. */
export function isKinformerError(err: unknown, code?: ErrorCode): err is KinformerError {
  return err instanceof KinformerError && (code === undefined || err.code === code);
}

/** True for 410 Expired/Gone. */
export function isExpiredError(err: unknown): boolean {
  return isKinformerError(err, ErrorCodes.RESOURCE_EXPIRED);
}

/** True for 429 Too Many Requests. */
export function isTooManyRequestsError(err: unknown): boolean {
  return isKinformerError(err, ErrorCodes.TOO_MANY_REQUESTS);
}

/** True for a 504 too-large-resourceVersion error. */
export function isTooLargeResourceVersionError(err: unknown): boolean {
  return isKinformerError(err, ErrorCodes.RESOURCE_VERSION_TOO_LARGE);
}

/** The error an aborted operation rejects with. */
export function abortError(signal?: AbortSignal): KinformerError {
  return new KinformerError(
    ErrorCodes.ABORTED,
    'the operation was aborted',
    signal?.reason === undefined ? {} : { cause: signal.reason },
  );
}
