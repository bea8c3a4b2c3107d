import type { ServerResponse } from 'node:http';
import type { RequestVerb } from '../faults/faults.js';

/**
 * One request the server received, for tests to assert the exact requests a client made. Headers
 * other than `Accept` and `Content-Type` are not kept (never credentials).
 */
export interface RecordedRequest {
  readonly method: string;
  /** The URL path, without the query. */
  readonly path: string;
  /** Query parameters (the last value wins for a repeated one). */
  readonly query: Readonly<Record<string, string>>;
  /** The verb (`list`, `watch`, `get`, …), or undefined for a path the server does not serve. */
  readonly verb: RequestVerb | undefined;
  /** Plural resource name (`pods`), when the path names a resource. */
  readonly resource: string | undefined;
  /** API group (`''` for core), when the path names a resource. */
  readonly group: string | undefined;
  readonly version: string | undefined;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
  readonly accept: string | undefined;
  readonly contentType: string | undefined;
  /** When it arrived, on the server's clock (ms). */
  readonly receivedAt: number;
  /**
   * The CN of the client certificate that authenticated the request (HTTPS servers with
   * `tls.clientAuth` `'request'` or `'require'`, a certificate signed by the server's CA); else
   * undefined (plain HTTP, bearer token, no or unverified certificate).
   */
  readonly user: string | undefined;
  /** The response status once the headers were sent (200 for a watch stream as soon as it opens). */
  readonly status: number | undefined;
}

/**
 * @internal A {@link RecordedRequest} whose `status` is read from the live response (an enumerable
 * getter, so spreading or serialising the record includes the status of the moment).
 */
export function recordRequest(fields: Omit<RecordedRequest, 'status'>, res: ServerResponse): RecordedRequest {
  return {
    ...fields,
    get status(): number | undefined {
      return res.headersSent ? res.statusCode : undefined;
    },
  };
}
