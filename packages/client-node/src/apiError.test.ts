import { ErrorCodes, KinformerError } from '@kinformer/core';
import { ApiException, RequiredError } from '@kubernetes/client-node';
import { apiError, statusFromBody } from './apiError.js';
import { requestOptions } from './requestOptions.js';

/** A Status as the API server sends it (apiVersion and metadata left out: they do not matter here). */
const statusBody = (code: number, reason: string, message: string): string =>
  JSON.stringify({ kind: 'Status', status: 'Failure', message, reason, code });

describe('apiError: client-node ApiException → KinformerError', () => {
  test('404 with a Status → ERR_NOT_FOUND keeping the Status and its message', () => {
    const err = apiError(
      new ApiException(
        404,
        'Unknown API Status Code!',
        statusBody(404, 'NotFound', 'leases "le" not found'),
        {},
      ),
      { what: 'lease default/le' },
    );
    expect(err).toMatchObject({
      code: ErrorCodes.NOT_FOUND,
      httpStatus: 404,
      message: 'leases "le" not found',
    });
    expect(err.status?.reason).toBe('NotFound');
    expect(err.details).toEqual({ object: 'lease default/le' });
    expect(err.cause).toBeInstanceOf(ApiException);
  });

  test('409 → ERR_CONFLICT for a stale write (Conflict) and an existing object (AlreadyExists)', () => {
    const stale = apiError(new ApiException(409, 'x', statusBody(409, 'Conflict', 'modified'), {}));
    const exists = apiError(new ApiException(409, 'x', statusBody(409, 'AlreadyExists', 'exists'), {}));
    expect([stale.code, exists.code]).toEqual([ErrorCodes.CONFLICT, ErrorCodes.CONFLICT]);
    expect([stale.status?.reason, exists.status?.reason]).toEqual(['Conflict', 'AlreadyExists']);
  });

  test('other Status answers go through KinformerError.fromStatus; an already parsed body counts too', () => {
    expect(
      apiError(new ApiException(500, 'x', statusBody(500, 'InternalError', 'etcd is sad'), {})),
    ).toMatchObject({
      code: ErrorCodes.INTERNAL,
      httpStatus: 500,
      message: 'etcd is sad',
    });
    const parsed = JSON.parse(statusBody(403, 'Forbidden', 'no')) as unknown;
    expect(apiError(new ApiException(403, 'x', parsed, {})).code).toBe(ErrorCodes.FORBIDDEN);
  });

  test('answers without a Status body get the code of their HTTP status', () => {
    expect(apiError(new ApiException(401, 'Unauthorized', undefined, {})).code).toBe(ErrorCodes.UNAUTHORIZED);
    expect(apiError(new ApiException(404, 'x', '404 page not found', {}), { what: 'x' })).toMatchObject({
      code: ErrorCodes.NOT_FOUND,
      message: 'the server answered 404 for x',
    });
    expect(apiError(new ApiException(418, 'x', '{"not":"a status"}', {})).code).toBe(ErrorCodes.API_STATUS);
  });

  test('Retry-After becomes retryAfterSeconds, whatever the header case', () => {
    const tooMany = apiError(
      new ApiException(429, 'x', 'Too many requests, please try again later.\n', { 'Retry-After': '3' }),
    );
    expect(tooMany).toMatchObject({
      code: ErrorCodes.TOO_MANY_REQUESTS,
      httpStatus: 429,
      retryAfterSeconds: 3,
    });
  });

  test('aborted → ERR_ABORTED; RequiredError → ERR_INVALID_OPTION; others → ERR_CONNECTION; a KinformerError passes through', () => {
    const controller = new AbortController();
    controller.abort(new Error('leadership lost'));
    const aborted = apiError(new TypeError('terminated'), { what: 'x', signal: controller.signal });
    expect(aborted).toMatchObject({ code: ErrorCodes.ABORTED, message: 'the request for x was aborted' });
    expect((aborted.cause as Error).message).toBe('leadership lost');
    const abortErr = Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
    expect(apiError(abortErr).code).toBe(ErrorCodes.ABORTED);
    expect(apiError(new RequiredError('api', 'readNamespacedLease', 'name')).code).toBe(
      ErrorCodes.INVALID_OPTION,
    );
    expect(apiError(new TypeError('fetch failed'), { what: 'configmap a/b' })).toMatchObject({
      code: ErrorCodes.CONNECTION,
      message: 'request for configmap a/b failed: fetch failed',
    });
    const own = new KinformerError(ErrorCodes.TIMEOUT, 'slow');
    expect(apiError(own)).toBe(own);
  });
});

describe('statusFromBody: one "is this a Status?" test for every client-node answer', () => {
  test('a Status object or its JSON text is a Status; a Failure with a code or reason is one too', () => {
    expect(statusFromBody(statusBody(404, 'NotFound', 'x'))).toMatchObject({ reason: 'NotFound' });
    expect(statusFromBody({ status: 'Failure', code: 500 })).toEqual({ status: 'Failure', code: 500 });
  });

  test('anything else is not', () => {
    for (const body of [
      undefined,
      null,
      '',
      '404 page not found',
      '{bad json',
      '[1]',
      '{"kind":"Pod"}',
      42,
      [],
    ]) {
      expect(statusFromBody(body)).toBeUndefined();
    }
  });
});

describe('requestOptions', () => {
  test('appends one middleware that hands the signal to the request; undefined gives undefined', async () => {
    const signal = new AbortController().signal;
    const options = requestOptions(signal);
    expect(options.middlewareMergeStrategy).toBe('append');
    const seen: AbortSignal[] = [];
    const context = { setSignal: (s: AbortSignal) => void seen.push(s) };
    await options.middleware![0]!.pre(context as never).toPromise();
    expect(seen).toEqual([signal]);
    expect(requestOptions(undefined)).toBeUndefined();
  });
});
