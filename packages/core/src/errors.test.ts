import {
  abortError,
  ErrorCodes,
  isExpiredError,
  isKinformerError,
  isTooLargeResourceVersionError,
  isTooLargeResourceVersionStatus,
  isTooManyRequestsError,
  KinformerError,
  type ErrorCode,
} from './errors.js';
import type { Status } from './types.js';

/** Parses a Status body exactly as the API server sends it. */
function status(json: string): Status {
  return JSON.parse(json) as Status;
}

/** apierrors.NewTimeoutError(message, retryAfterSeconds), as client-go builds it. */
function timeoutError(message: string, retryAfterSeconds: number): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `Timeout: ${message}`,
    reason: 'Timeout',
    details: { retryAfterSeconds },
    code: 504,
  };
}

describe('KinformerError', () => {
  it('is an Error with a stable code, name, cause and details', () => {
    const cause = new Error('socket hang up');
    const err = new KinformerError(ErrorCodes.CONNECTION, 'connection failed', {
      cause,
      details: { url: 'https://k8s' },
    });
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('KinformerError');
    expect(err.code).toBe('ERR_CONNECTION');
    expect(err.message).toBe('connection failed');
    expect(err.cause).toBe(cause);
    expect(err.details).toEqual({ url: 'https://k8s' });
    expect(err.status).toBeUndefined();
    expect(err.httpStatus).toBeUndefined();
    expect(err.retryAfterSeconds).toBeUndefined();
    expect('cause' in new KinformerError(ErrorCodes.ABORTED, 'x')).toBe(false);
  });

  it('takes httpStatus and retryAfterSeconds from the Status unless given explicitly', () => {
    const s: Status = { code: 503, reason: 'ServiceUnavailable', details: { retryAfterSeconds: 5 } };
    expect(new KinformerError(ErrorCodes.SERVICE_UNAVAILABLE, 'x', { status: s })).toMatchObject({
      httpStatus: 503,
      retryAfterSeconds: 5,
    });
    expect(
      new KinformerError(ErrorCodes.SERVICE_UNAVAILABLE, 'x', {
        status: s,
        httpStatus: 502,
        retryAfterSeconds: 9,
      }),
    ).toMatchObject({
      httpStatus: 502,
      retryAfterSeconds: 9,
    });
    // retryAfterSeconds 0 means "not set" on the wire (omitempty).
    expect(
      new KinformerError(ErrorCodes.TIMEOUT, 'x', {
        status: { code: 504, details: { retryAfterSeconds: 0 } },
      }).retryAfterSeconds,
    ).toBeUndefined();
  });
});

describe('KinformerError.fromStatus: every Status example in apiserver-protocol.md §5', () => {
  it.each<[string, string, ErrorCode, number, number | undefined]>([
    [
      '5.1 400 BadRequest',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"specifying resource version is not allowed when using continue","reason":"BadRequest","code":400}',
      ErrorCodes.BAD_REQUEST,
      400,
      undefined,
    ],
    [
      '5.2 401 Unauthorized',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}',
      ErrorCodes.UNAUTHORIZED,
      401,
      undefined,
    ],
    [
      '5.3 403 Forbidden (namespace)',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods is forbidden: User \\"system:anonymous\\" cannot list resource \\"pods\\" in API group \\"\\" in the namespace \\"default\\"","reason":"Forbidden","details":{"kind":"pods"},"code":403}',
      ErrorCodes.FORBIDDEN,
      403,
      undefined,
    ],
    [
      '5.3 403 Forbidden (cluster scope)',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods is forbidden: User \\"system:anonymous\\" cannot watch resource \\"pods\\" in API group \\"\\" at the cluster scope","reason":"Forbidden","details":{"kind":"pods"},"code":403}',
      ErrorCodes.FORBIDDEN,
      403,
      undefined,
    ],
    [
      '5.4 404 NotFound',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \\"foo\\" not found","reason":"NotFound","details":{"name":"foo","kind":"pods"},"code":404}',
      ErrorCodes.NOT_FOUND,
      404,
      undefined,
    ],
    [
      '5.5 410 Expired (list)',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"The resourceVersion for the provided list is too old.","reason":"Expired","code":410}',
      ErrorCodes.RESOURCE_EXPIRED,
      410,
      undefined,
    ],
    [
      '5.5 410 Expired (cache snapshot miss)',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 9000","reason":"Expired","code":410}',
      ErrorCodes.RESOURCE_EXPIRED,
      410,
      undefined,
    ],
    [
      '§4.6 410 Expired in a watch ERROR event',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 12000 (12345)","reason":"Expired","code":410}',
      ErrorCodes.RESOURCE_EXPIRED,
      410,
      undefined,
    ],
    [
      '§4.6 410 Gone from servers up to 1.17',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"The resourceVersion for the provided watch is too old.","reason":"Gone","code":410}',
      ErrorCodes.RESOURCE_EXPIRED,
      410,
      undefined,
    ],
    [
      '§3.4 410 Expired continue token',
      '{"kind":"Status","apiVersion":"v1","metadata":{"continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiZGVmYXVsdC9wb2QtNTAwXHUwMDAwIn0"},"status":"Failure","message":"The provided continue parameter is too old to display a consistent list result.","reason":"Expired","code":410}',
      ErrorCodes.RESOURCE_EXPIRED,
      410,
      undefined,
    ],
    [
      '5.6 / §3.3 422 Invalid',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ListOptions.meta.k8s.io \\"\\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"ListOptions","causes":[{"reason":"FieldValueForbidden","message":"Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided","field":"resourceVersionMatch"}]},"code":422}',
      ErrorCodes.INVALID,
      422,
      undefined,
    ],
    [
      '5.7 429 TooManyRequests from the cacher',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"storage is (re)initializing","reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429}',
      ErrorCodes.TOO_MANY_REQUESTS,
      429,
      1,
    ],
    [
      '5.8 500 InternalError',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: etcd down","reason":"InternalError","details":{"causes":[{"message":"etcd down"}]},"code":500}',
      ErrorCodes.INTERNAL,
      500,
      undefined,
    ],
    [
      '5.8 500 ServerTimeout',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"The list operation against pods could not be completed at this time, please try again.","reason":"ServerTimeout","details":{"name":"list","kind":"pods","retryAfterSeconds":2},"code":500}',
      ErrorCodes.TIMEOUT, // not INTERNAL: client-go's IsInternalError is false for ServerTimeout
      500,
      2,
    ],
    [
      '§4.6 500 InternalError in a watch ERROR event',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"a watch stream was requested by the client but the required storage feature RequestWatchProgress is disabled","reason":"InternalError","code":500}',
      ErrorCodes.INTERNAL,
      500,
      undefined,
    ],
    [
      '§4.6 500 without a reason (unparseable resourceVersion)',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"resourceVersion: Invalid value: \\"abc\\": strconv.ParseUint: parsing \\"abc\\": invalid syntax","code":500}',
      ErrorCodes.INTERNAL,
      500,
      undefined,
    ],
    [
      '5.9 504 too-large resourceVersion',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: Too large resource version: 20000, current: 12345","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}',
      ErrorCodes.RESOURCE_VERSION_TOO_LARGE,
      504,
      1,
    ],
    [
      '5.9 504 request timeout',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}',
      ErrorCodes.TIMEOUT,
      504,
      undefined,
    ],
    [
      '5.10 503 ServiceUnavailable',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the request has been made before all known HTTP paths have been installed, please try again","reason":"ServiceUnavailable","details":{"retryAfterSeconds":5},"code":503}',
      ErrorCodes.SERVICE_UNAVAILABLE,
      503,
      5,
    ],
    [
      '405 MethodNotAllowed',
      '{"kind":"Status","status":"Failure","message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","code":405}',
      ErrorCodes.API_STATUS,
      405,
      undefined,
    ],
    [
      '406 NotAcceptable',
      '{"kind":"Status","status":"Failure","message":"only the following media types are accepted: application/json","reason":"NotAcceptable","code":406}',
      ErrorCodes.API_STATUS,
      406,
      undefined,
    ],
    [
      '409 Conflict',
      '{"kind":"Status","status":"Failure","message":"Operation cannot be fulfilled","reason":"Conflict","code":409}',
      ErrorCodes.CONFLICT,
      409,
      undefined,
    ],
    [
      '409 AlreadyExists',
      '{"kind":"Status","status":"Failure","message":"pods \\"a\\" already exists","reason":"AlreadyExists","code":409}',
      ErrorCodes.CONFLICT,
      409,
      undefined,
    ],
    [
      '413 RequestEntityTooLarge',
      '{"kind":"Status","status":"Failure","message":"Request entity too large","reason":"RequestEntityTooLarge","code":413}',
      ErrorCodes.API_STATUS,
      413,
      undefined,
    ],
    [
      '415 UnsupportedMediaType',
      '{"kind":"Status","status":"Failure","message":"unsupported","reason":"UnsupportedMediaType","code":415}',
      ErrorCodes.API_STATUS,
      415,
      undefined,
    ],
    [
      '500 StorageReadError',
      '{"kind":"Status","status":"Failure","message":"corrupt object","reason":"StorageReadError","code":500}',
      ErrorCodes.INTERNAL,
      500,
      undefined,
    ],
  ])('%s', (_name, body, code, httpStatus, retryAfterSeconds) => {
    const s = status(body);
    const err = KinformerError.fromStatus(s);
    expect(err).toBeInstanceOf(KinformerError);
    expect(err.code).toBe(code);
    expect(err.httpStatus).toBe(httpStatus);
    expect(err.retryAfterSeconds).toBe(retryAfterSeconds);
    expect(err.status).toBe(s);
    expect(err.message).toBe(s.message);
  });

  it('maps a plain-text 429 (APF, shutdown) by its HTTP status and keeps the Retry-After header', () => {
    const err = KinformerError.fromStatus(
      { message: 'Too many requests, please try again later.\n' },
      { httpStatus: 429, retryAfterSeconds: 5 },
    );
    expect(err.code).toBe(ErrorCodes.TOO_MANY_REQUESTS);
    expect(err.httpStatus).toBe(429);
    expect(err.retryAfterSeconds).toBe(5);
    expect(isTooManyRequestsError(err)).toBe(true);
  });

  // The code strings users match on (docs/errors.md), not the constants: a changed value fails here.
  it.each<[number, string]>([
    [400, 'ERR_BAD_REQUEST'],
    [401, 'ERR_UNAUTHORIZED'],
    [403, 'ERR_FORBIDDEN'],
    [404, 'ERR_NOT_FOUND'],
    [409, 'ERR_CONFLICT'],
    [410, 'ERR_RESOURCE_EXPIRED'],
    [422, 'ERR_INVALID'],
    [429, 'ERR_TOO_MANY_REQUESTS'],
    [500, 'ERR_INTERNAL'],
    [503, 'ERR_SERVICE_UNAVAILABLE'],
    [504, 'ERR_TIMEOUT'],
    [418, 'ERR_API_STATUS'],
    [502, 'ERR_API_STATUS'],
  ])('maps a Status with only code %d to %s', (code, expected) => {
    expect(KinformerError.fromStatus({ code }).code).toBe(expected);
    expect(KinformerError.fromStatus({}, { httpStatus: code }).code).toBe(expected);
  });

  it('lets the reason win over the HTTP code, as apierrors does', () => {
    expect(KinformerError.fromStatus({ code: 500, reason: 'Expired' }).code).toBe(
      ErrorCodes.RESOURCE_EXPIRED,
    );
    expect(KinformerError.fromStatus({ code: 200, reason: 'NotFound' }).code).toBe(ErrorCodes.NOT_FOUND);
  });

  it('maps a reason that names an Object.prototype member like an unknown one (the reason is server data)', () => {
    for (const reason of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(KinformerError.fromStatus({ code: 404, reason }).code).toBe(ErrorCodes.NOT_FOUND);
      expect(KinformerError.fromStatus({ reason }).code).toBe(ErrorCodes.API_STATUS);
    }
  });

  it('words a message when the Status has none', () => {
    expect(KinformerError.fromStatus({ reason: 'Forbidden', code: 403 }).message).toBe('Forbidden');
    expect(KinformerError.fromStatus({ code: 418 }).message).toBe('the server answered 418');
    expect(KinformerError.fromStatus({}).message).toBe('the server answered an error');
    expect(KinformerError.fromStatus({}).httpStatus).toBeUndefined();
  });

  it('keeps the cause and details it is given', () => {
    const cause = new Error('wire');
    const err = KinformerError.fromStatus(
      { code: 404, reason: 'NotFound' },
      { cause, details: { resource: 'pods.v1' } },
    );
    expect(err.cause).toBe(cause);
    expect(err.details).toEqual({ resource: 'pods.v1' });
  });
});

describe('too-large resourceVersion: the 3 formats of client-go TestReflectorFullListIfTooLarge', () => {
  // reflector_test.go builds these with apierrors.NewTimeoutError(…, 1).
  const withCause = timeoutError('too large resource version', 1);
  withCause.details!.causes = [{ reason: 'ResourceVersionTooLarge' }];
  const server117to1185 = timeoutError('too large resource version', 1);
  server117to1185.details!.causes = [{ message: 'Too large resource version' }];
  const serverBefore117 = timeoutError('Too large resource version', 1);

  it.each<[string, Status]>([
    ['with the ResourceVersionTooLarge cause', withCause],
    ['from servers 1.17.0-1.18.5 (cause message only)', server117to1185],
    ['from servers before 1.17.0 (Status message only)', serverBefore117],
  ])('recognises the error %s', (_name, s) => {
    expect(isTooLargeResourceVersionStatus(s)).toBe(true);
    const err = KinformerError.fromStatus(s);
    expect(err.code).toBe(ErrorCodes.RESOURCE_VERSION_TOO_LARGE);
    expect(err.httpStatus).toBe(504);
    expect(err.retryAfterSeconds).toBe(1);
    expect(isTooLargeResourceVersionError(err)).toBe(true);
  });

  it('recognises the cause message even when the Status message says something else', () => {
    const s = timeoutError('the server was slow', 1);
    s.details!.causes = [{ message: 'Too large resource version' }];
    expect(isTooLargeResourceVersionStatus(s)).toBe(true);
  });

  it('does not mistake other timeouts, or the text on a non-timeout, for a too-large resourceVersion', () => {
    expect(
      isTooLargeResourceVersionStatus(
        timeoutError('request did not complete within the allotted timeout', 0),
      ),
    ).toBe(false);
    expect(
      isTooLargeResourceVersionStatus({
        code: 500,
        reason: 'InternalError',
        message: 'Too large resource version',
      }),
    ).toBe(false);
    expect(
      isTooLargeResourceVersionStatus({
        code: 500,
        reason: 'InternalError',
        details: { causes: [{ message: 'Too large resource version' }] },
      }),
    ).toBe(false);
    expect(KinformerError.fromStatus(timeoutError('request did not complete', 0)).code).toBe(
      ErrorCodes.TIMEOUT,
    );
  });
});

describe('error predicates', () => {
  it('tell kinformer errors and their codes apart', () => {
    const expired = KinformerError.fromStatus({ code: 410, reason: 'Expired' });
    const throttled = KinformerError.fromStatus({ code: 429, reason: 'TooManyRequests' });
    const plain = new Error('x');
    expect(isKinformerError(expired)).toBe(true);
    expect(isKinformerError(expired, ErrorCodes.RESOURCE_EXPIRED)).toBe(true);
    expect(isKinformerError(expired, ErrorCodes.NOT_FOUND)).toBe(false);
    expect(isKinformerError(plain)).toBe(false);
    expect(isKinformerError({ code: 'ERR_RESOURCE_EXPIRED' })).toBe(false);
    expect(isExpiredError(expired)).toBe(true);
    expect(isExpiredError(throttled)).toBe(false);
    expect(isExpiredError(plain)).toBe(false);
    expect(isTooManyRequestsError(throttled)).toBe(true);
    expect(isTooManyRequestsError(expired)).toBe(false);
    expect(isTooLargeResourceVersionError(expired)).toBe(false);
    expect(isTooLargeResourceVersionError(undefined)).toBe(false);
  });

  it('abortError carries ERR_ABORTED and the signal reason as its cause', () => {
    const controller = new AbortController();
    const reason = new Error('shutting down');
    controller.abort(reason);
    const err = abortError(controller.signal);
    expect(err.code).toBe(ErrorCodes.ABORTED);
    expect(err.cause).toBe(reason);
    expect(abortError().cause).toBeUndefined();
  });
});

describe('ErrorCodes', () => {
  it('has unique ERR_-prefixed values', () => {
    const values = Object.values(ErrorCodes);
    expect(new Set(values).size).toBe(values.length);
    for (const [name, value] of Object.entries(ErrorCodes)) expect(value).toBe(`ERR_${name}`);
  });
});
