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

/** @internal A {@link RecordedRequest} whose status is read from the live response. */
export class RequestRecord implements RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly verb: RequestVerb | undefined;
  readonly resource: string | undefined;
  readonly group: string | undefined;
  readonly version: string | undefined;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
  readonly accept: string | undefined;
  readonly contentType: string | undefined;
  readonly receivedAt: number;
  readonly user: string | undefined;
  readonly #res: ServerResponse;

  constructor(fields: Omit<RecordedRequest, 'status'>, res: ServerResponse) {
    this.method = fields.method;
    this.path = fields.path;
    this.query = fields.query;
    this.verb = fields.verb;
    this.resource = fields.resource;
    this.group = fields.group;
    this.version = fields.version;
    this.namespace = fields.namespace;
    this.name = fields.name;
    this.subresource = fields.subresource;
    this.accept = fields.accept;
    this.contentType = fields.contentType;
    this.receivedAt = fields.receivedAt;
    this.user = fields.user;
    this.#res = res;
  }

  get status(): number | undefined {
    return this.#res.headersSent ? this.#res.statusCode : undefined;
  }

  toJSON(): RecordedRequest {
    return { ...this, status: this.status };
  }
}
