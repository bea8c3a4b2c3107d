import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import {
  componentLogger,
  ErrorCodes,
  isKinformerError,
  KinformerError,
  realClock,
  type Clock,
  type KubeObject,
  type Logger,
  type ObjectMeta,
  type Status,
} from '@kinformer/core';
import type { KubeConfig } from '@kubernetes/client-node';
import { parseApiPath, verbOf, type ApiPath } from './apiPath.js';
import { jsonClone } from './jsonClone.js';
import { coreVersions, group, groupList, resourceList, versionInfo } from './discovery.js';
import { fakeKubeConfig, type FakeKubeConfigOptions } from './fakeKubeConfig.js';
import { FakeApiServerFaults, type FailureResponse, type RequestVerb } from './faults.js';
import { serveList } from './listHandler.js';
import {
  decodeListOptions,
  invalidResourceVersionMessage,
  parseQueryBool,
  parseResourceVersion,
  selectorFilter,
} from './listOptions.js';
import { negotiate, type Representation, type ResponseTarget } from './negotiation.js';
import { ObjectStore, type DeletePreconditions } from './objectStore.js';
import { patchTypeOf, type PatchType } from './patch.js';
import { RequestRecord, type RecordedRequest } from './recordedRequest.js';
import {
  DEFAULT_RESOURCES,
  ResourceRegistry,
  type ResourceDefinition,
  type ResourceRef,
  type ResourceType,
} from './resourceRegistry.js';
import {
  clientIdentity,
  httpsServerOptions,
  resolveTls,
  type ClientAuthMode,
  type ClientIdentity,
  type FakeApiServerTlsOptions,
  type ResolvedTls,
  type TlsClientError,
} from './serverTls.js';
import {
  badRequestError,
  makeStatus,
  methodNotAllowedError,
  unauthorizedError,
  unsupportedMediaTypeError,
} from './statusErrors.js';
import type { StoredEntry } from './storedEntry.js';
import { FAKE_API_SERVER_TLS } from './tlsFixtures.js';
import { Watcher, type WatchHost, type WatchInjection, type WatchTiming } from './watchHandler.js';

/**
 * What the in-process API returns: a copy of the stored object, typed as what was passed in plus
 * the fields the server always sets.
 */
export type Stored<T> = T & { apiVersion: string; kind: string; metadata: ObjectMeta };

/** Options of {@link FakeApiServer.start}. */
export interface FakeApiServerOptions {
  /** Port on 127.0.0.1 (default 0: an ephemeral port). */
  port?: number;
  /** Register the common built-in types ({@link DEFAULT_RESOURCES}); default true. */
  registerDefaults?: boolean;
  /** More types to serve (CRDs, other versions). */
  resources?: readonly ResourceDefinition[];
  /** Events kept for watch resumption, exact lists and continue tokens, across all types (default 10 000). */
  historySize?: number;
  /** Period of progress bookmarks on watches with `allowWatchBookmarks` (default 60 000 ms, as the real server). */
  bookmarkIntervalMs?: number;
  /** How long before a `timeoutSeconds` deadline the last bookmark is sent (default 2 000 ms). */
  bookmarkBeforeDeadlineMs?: number;
  /** How long a request for a future resourceVersion waits before 504 (default 3 000 ms, as the watch cache). */
  freshnessWaitMs?: number;
  /** The revision the server starts at (default 1; the first write gets 2). */
  initialResourceVersion?: number;
  /**
   * Emulate the `WatchList` feature gate (default true, as 1.34+): `sendInitialEvents` is accepted
   * and a watch from `""`/`"0"` is defaulted to a watch-list (initial events, then the
   * `initial-events-end` bookmark when bookmarks are allowed). False emulates 1.33 and older.
   */
  watchList?: boolean;
  /** Time source for timestamps, bookmarks, watch deadlines and freshness waits (default the wall clock). */
  clock?: Clock;
  logger?: Logger;
  /** Keep {@link FakeApiServer.requests} (default true). */
  recordRequests?: boolean;
  /**
   * Serve HTTPS instead of HTTP (default false): `url` becomes `https://127.0.0.1:<port>`, the
   * server presents a certificate for `127.0.0.1`/`::1`/`localhost` signed by a test CA
   * ({@link FAKE_API_SERVER_TLS}, committed fixtures: nothing is generated or downloaded), and
   * {@link FakeApiServer.kubeConfig} carries that CA. `{ clientAuth }` also asks for client
   * certificates (see {@link ClientAuthMode}).
   */
  tls?: boolean | FakeApiServerTlsOptions;
}

/** Options of the waiting helpers. */
export interface WaitOptions {
  /** Give up after this many real milliseconds (default 5 000). */
  timeoutMs?: number;
  /** Poll period in real milliseconds (default 5). */
  intervalMs?: number;
}

/** Options of {@link FakeApiServer.patch}. */
export interface InProcessPatchOptions {
  /** Default `merge`. */
  type?: PatchType;
  namespace?: string;
  subresource?: 'status';
}

/** Options of {@link FakeApiServer.delete}. */
export interface InProcessDeleteOptions {
  namespace?: string;
  preconditions?: DeletePreconditions;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const CHUNKING_THRESHOLD = 2048;

function isPrettyAgent(userAgent: string | undefined): boolean {
  return userAgent !== undefined && /^(curl|Wget|Mozilla\/5\.0)/.test(userAgent);
}

/**
 * An in-memory Kubernetes API server over real HTTP (or HTTPS, with the `tls` option) on 127.0.0.1,
 * for tests, demos and benchmarks. It speaks the LIST/WATCH wire protocol of kube-apiserver 1.34+ faithfully (see
 * `apiserver-protocol.md`): one global resourceVersion, consistent/any/exact/not-older-than lists
 * with pagination and continue tokens, watches with history replay, bookmarks, watch-lists and
 * selector transitions, the real Status errors — plus CRUD, minimal discovery, metadata-only
 * responses, request recording and fault injection (`server.faults`).
 *
 * Every server must be closed (`await server.close()`); a closed server holds no handles.
 */
export class FakeApiServer implements WatchHost {
  /** `http://127.0.0.1:<port>`, or `https://127.0.0.1:<port>` with the `tls` option. */
  readonly url: string;
  /** With `tls`: the PEM of the CA that signed the server (and client) certificate; else undefined. */
  readonly ca: string | undefined;
  /** With `tls`: a PEM client certificate signed by {@link ca} (CN `kinformer-fake-admin`, O `system:masters`). */
  readonly clientCert: string | undefined;
  /** With `tls`: the PEM (PKCS#8) private key of {@link clientCert}. Test-only. */
  readonly clientKey: string | undefined;
  /** With `tls`: whether client certificates are asked for; undefined for plain HTTP. */
  readonly clientAuth: ClientAuthMode | undefined;
  /** Fault injection. */
  readonly faults: FakeApiServerFaults;
  /** @internal */
  readonly store: ObjectStore;
  /** @internal */
  readonly timing: WatchTiming;
  readonly #http: Server | HttpsServer;
  readonly #identities = new WeakMap<TLSSocket, ClientIdentity>();
  readonly #tlsClientErrors: TlsClientError[] = [];
  readonly #registry: ResourceRegistry;
  readonly #watchers = new Set<Watcher>();
  readonly #requests: RequestRecord[] = [];
  readonly #record: boolean;
  readonly #watchList: boolean;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #closing: Promise<void> | undefined;

  private constructor(
    http: Server | HttpsServer,
    url: string,
    tls: ResolvedTls | undefined,
    registry: ResourceRegistry,
    options: FakeApiServerOptions,
  ) {
    this.#http = http;
    this.url = url;
    this.ca = tls && FAKE_API_SERVER_TLS.ca;
    this.clientCert = tls && FAKE_API_SERVER_TLS.clientCert;
    this.clientKey = tls && FAKE_API_SERVER_TLS.clientKey;
    this.clientAuth = tls?.clientAuth;
    this.#registry = registry;
    this.#clock = options.clock ?? realClock;
    this.#record = options.recordRequests ?? true;
    this.#watchList = options.watchList ?? true;
    this.#logger = componentLogger(options.logger, { component: 'fake-api-server' });
    this.store = new ObjectStore({
      historySize: options.historySize ?? 10_000,
      initialResourceVersion: options.initialResourceVersion ?? 1,
      clock: this.#clock,
    });
    this.timing = {
      clock: this.#clock,
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
      bookmarkBeforeDeadlineMs: options.bookmarkBeforeDeadlineMs ?? 2_000,
      freshnessWaitMs: options.freshnessWaitMs ?? 3_000,
    };
    this.faults = new FakeApiServerFaults({
      store: this.store,
      resolve: (ref) => this.#registry.resolve(ref),
      watchers: () => this.#watchers,
      restartConnections: () => this.#closeConnections(false),
    });
  }

  /**
   * Starts a server on 127.0.0.1 (an ephemeral port unless `port` is given), over HTTPS with `tls`.
   * @throws KinformerError `ERR_INVALID_OPTION` for an unknown `tls.clientAuth`.
   */
  static async start(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
    const tls = resolveTls(options.tls);
    const registry = new ResourceRegistry();
    if (options.registerDefaults ?? true) for (const d of DEFAULT_RESOURCES) registry.register(d);
    for (const d of options.resources ?? []) registry.register(d);
    const http = tls ? createHttpsServer(httpsServerOptions(tls)) : createServer({ keepAliveTimeout: 5_000 });
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(options.port ?? 0, '127.0.0.1', () => {
        http.off('error', reject);
        resolve();
      });
    });
    const { port } = http.address() as AddressInfo;
    const server = new FakeApiServer(
      http,
      `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
      tls,
      registry,
      options,
    );
    http.on('request', (req: IncomingMessage, res: ServerResponse) => server.#onRequest(req, res));
    if (tls)
      http.on('tlsClientError', (err: NodeJS.ErrnoException, socket: TLSSocket) =>
        server.#onTlsClientError(err, socket),
      );
    return server;
  }

  // ---------------------------------------------------------------- configuration and state

  /** Serves another resource type (a CRD, another version). Replaces a type with the same group/version/resource. */
  registerResource(definition: ResourceDefinition): ResourceType {
    return this.#registry.register(definition);
  }

  /** Every served type. */
  resources(): readonly ResourceType[] {
    return this.#registry.all();
  }

  /** The current global resourceVersion. */
  get resourceVersion(): string {
    return String(this.store.rev);
  }

  /**
   * Advances the global resourceVersion by `n` without an event of any served type (writes to other
   * types, an etcd progress notify), so that bookmarks can move past the last event. Returns the new RV.
   */
  bumpResourceVersion(n = 1): string {
    return String(this.store.bump(n));
  }

  /**
   * A fresh `KubeConfig` for this server: cluster, user and context `kinformer-fake`, context
   * namespace `default`, bearer token `kinformer-fake-token` (any token works). Over HTTPS the
   * cluster carries the server's CA (`certificate-authority-data`) and TLS verification is on;
   * options give one with the client certificate instead of the token (`clientCert: true`), without
   * the CA or with another one (`caData: false` / a PEM: verification must fail), with
   * `skipTLSVerify` or a `tlsServerName`. Plain-HTTP servers get `insecure-skip-tls-verify: true`,
   * which client-node requires for `http:` URLs.
   */
  kubeConfig(options: FakeKubeConfigOptions = {}): KubeConfig {
    return fakeKubeConfig(this.url, options);
  }

  // ---------------------------------------------------------------- observability

  /** The requests received so far, oldest first (a live view; see {@link clearRequests}). */
  get requests(): readonly RecordedRequest[] {
    return this.#requests;
  }

  /** Forgets the recorded requests. */
  clearRequests(): void {
    this.#requests.length = 0;
  }

  /**
   * With `tls`: the handshakes that failed, oldest first (a live view): a client that did not
   * trust the server's certificate, or (with `clientAuth: 'require'`) presented no valid client
   * certificate. Such clients never reach HTTP, so they are not in {@link requests}.
   */
  get tlsClientErrors(): readonly TlsClientError[] {
    return this.#tlsClientErrors;
  }

  /** How many watch streams are open (optionally of one resource type). */
  openWatchCount(resource?: ResourceRef): number {
    if (resource === undefined) return this.#watchers.size;
    const type = this.#registry.resolve(resource);
    let n = 0;
    for (const w of this.#watchers) if (w.table.type === type) n++;
    return n;
  }

  /**
   * Resolves once `condition` holds, polling every `intervalMs` real ms; rejects with
   * `ERR_TIMEOUT` after `timeoutMs` (default 5 000).
   */
  async waitFor(condition: () => boolean | Promise<boolean>, options: WaitOptions = {}): Promise<void> {
    const timeoutMs = options.timeoutMs ?? 5_000;
    const intervalMs = options.intervalMs ?? 5;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await condition()) return;
      if (Date.now() >= deadline) {
        throw new KinformerError(ErrorCodes.TIMEOUT, `condition not met within ${timeoutMs}ms`, {
          details: { timeoutMs },
        });
      }
      await new Promise<void>((resolve) => setTimeout(resolve, intervalMs));
    }
  }

  /** Resolves once at least `n` watches (of `resource`, if given) are open. */
  async waitForWatchers(n: number, options: WaitOptions & { resource?: ResourceRef } = {}): Promise<void> {
    await this.waitFor(() => this.openWatchCount(options.resource) >= n, options);
  }

  /**
   * Resolves with the first recorded request (at index `from` or later) that matches `predicate`,
   * waiting for it if needed.
   */
  async waitForRequest(
    predicate: (request: RecordedRequest) => boolean,
    options: WaitOptions & { from?: number } = {},
  ): Promise<RecordedRequest> {
    let found: RecordedRequest | undefined;
    await this.waitFor(() => {
      found = this.#requests.slice(options.from ?? 0).find(predicate);
      return found !== undefined;
    }, options);
    return found!;
  }

  // ---------------------------------------------------------------- in-process API

  #split(type: ResourceType, nameOrKey: string, namespace: string | undefined): [string, string] {
    if (!type.namespaced) return ['', nameOrKey];
    if (namespace !== undefined) return [namespace, nameOrKey];
    const slash = nameOrKey.indexOf('/');
    return slash === -1 ? ['default', nameOrKey] : [nameOrKey.slice(0, slash), nameOrKey.slice(slash + 1)];
  }

  /**
   * Creates an object as a POST would (uid, creationTimestamp, resourceVersion assigned; an ADDED
   * event). Namespaced objects without a namespace go to `default`. Returns a copy of the stored
   * object (with kind/apiVersion) that the caller owns.
   * @throws KinformerError with the server's Status (409 AlreadyExists, 422 Invalid…).
   */
  create<T extends KubeObject>(resource: ResourceRef, object: T): Stored<T> {
    const type = this.#registry.resolve(resource);
    return this.store.create(type, undefined, jsonClone(object)).toObject<Stored<T>>();
  }

  /**
   * Creates many objects at once, as {@link create} does one by one (same events, same errors), but
   * without building a copy of each for the caller: the fast way to seed a benchmark with 50k pods.
   * Returns the resourceVersion after the last write.
   */
  createMany(resource: ResourceRef, objects: Iterable<KubeObject>): string {
    const type = this.#registry.resolve(resource);
    for (const object of objects) this.store.create(type, undefined, jsonClone(object));
    return this.resourceVersion;
  }

  /**
   * The stored object named `nameOrKey` (`name`, or `namespace/name`; namespaced defaults to
   * `default` unless `namespace` is given), as a copy. @throws KinformerError 404.
   */
  get<T extends KubeObject = KubeObject>(
    resource: ResourceRef,
    nameOrKey: string,
    namespace?: string,
  ): Stored<T> {
    const type = this.#registry.resolve(resource);
    const [ns, name] = this.#split(type, nameOrKey, namespace);
    return this.store.get(type, ns, name).toObject<Stored<T>>();
  }

  /**
   * Replaces an object as a PUT would: a set `metadata.resourceVersion` must be current (else 409
   * Conflict). `subresource: 'status'` replaces only the status. Returns a copy of the stored object.
   */
  update<T extends KubeObject>(
    resource: ResourceRef,
    object: T,
    options: { subresource?: 'status' } = {},
  ): Stored<T> {
    const type = this.#registry.resolve(resource);
    return this.store.update(type, undefined, undefined, jsonClone(object), options).toObject<Stored<T>>();
  }

  /** Patches an object (merge patch by default; `json` for RFC 6902). Returns a copy of the result. */
  patch<T extends KubeObject = KubeObject>(
    resource: ResourceRef,
    nameOrKey: string,
    patch: unknown,
    options: InProcessPatchOptions = {},
  ): Stored<T> {
    const type = this.#registry.resolve(resource);
    const [ns, name] = this.#split(type, nameOrKey, options.namespace);
    return this.store
      .patch(type, ns, name, options.type ?? 'merge', jsonClone(patch), options.subresource)
      .toObject<Stored<T>>();
  }

  /**
   * Deletes an object as a DELETE would (objects with finalizers only get a deletionTimestamp).
   * Returns a copy of its last state.
   */
  delete<T extends KubeObject = KubeObject>(
    resource: ResourceRef,
    nameOrKey: string,
    options: InProcessDeleteOptions = {},
  ): Stored<T> {
    const type = this.#registry.resolve(resource);
    const [ns, name] = this.#split(type, nameOrKey, options.namespace);
    return this.store.delete(type, ns, name, options.preconditions).entry.toObject<Stored<T>>();
  }

  /** Copies of the stored objects of a type (in one namespace, if given), in key order. */
  list<T extends KubeObject = KubeObject>(resource: ResourceRef, namespace?: string): Array<Stored<T>> {
    const type = this.#registry.resolve(resource);
    const table = this.store.table(type);
    const out: Array<Stored<T>> = [];
    for (const key of table.sortedKeys()) {
      const entry = table.entries.get(key)!;
      if (namespace === undefined || entry.namespace === namespace) out.push(entry.toObject<Stored<T>>());
    }
    return out;
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Ends every watch, closes every connection and the listening socket. Resolves when fully closed.
   * Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.faults.reset();
      const closed = new Promise<void>((resolve) => this.#http.close(() => resolve()));
      await this.#closeConnections(true);
      await closed;
    })();
    return this.#closing;
  }

  async #closeConnections(final: boolean): Promise<void> {
    for (const w of [...this.#watchers]) w.terminate();
    this.store.cancelWaits();
    // Let the terminating chunks reach the sockets before they are closed.
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (final) this.#http.closeIdleConnections();
    this.#http.closeAllConnections();
  }

  // ---------------------------------------------------------------- WatchHost

  /** @internal */
  opened(watcher: Watcher): void {
    this.#watchers.add(watcher);
  }

  /** @internal */
  closed(watcher: Watcher): void {
    this.#watchers.delete(watcher);
  }

  /** @internal */
  takeNextInjections(watcher: Watcher): WatchInjection[] {
    return this.faults.takeNextInjections(watcher);
  }

  /** @internal */
  stallsNewWatches(watcher: Watcher): boolean {
    return this.faults.stallsNewWatches(watcher);
  }

  // ---------------------------------------------------------------- HTTP

  #onRequest(req: IncomingMessage, res: ServerResponse): void {
    this.#handle(req, res).catch((err: unknown) => this.#sendError(req, res, err));
  }

  #onTlsClientError(err: NodeJS.ErrnoException, socket: TLSSocket): void {
    // Set when node refused the client's certificate (the error itself is then a bare ECONNRESET).
    // node's typings say Error; at run time it is the verify code, a string.
    const raw: unknown = socket.authorizationError;
    const authorizationError = typeof raw === 'string' ? raw : raw instanceof Error ? raw.message : undefined;
    this.#tlsClientErrors.push({ code: err.code, message: err.message, authorizationError });
    this.#logger.debug({ code: err.code, authorizationError, reason: err.message }, 'TLS handshake failed');
  }

  /** The identity of the client certificate on this request's connection (computed once per connection). */
  #identify(req: IncomingMessage): ClientIdentity | undefined {
    if (this.clientAuth === undefined || this.clientAuth === 'none') return undefined;
    const socket = req.socket as TLSSocket;
    let identity = this.#identities.get(socket);
    if (identity === undefined) {
      identity = clientIdentity(socket);
      this.#identities.set(socket, identity);
    }
    return identity;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const params = url.searchParams;
    const method = req.method ?? 'GET';
    const path = parseApiPath(url.pathname, this.#registry);
    const watchParam = parseQueryBool(params.get('watch')) === true;
    let verb: RequestVerb | undefined;
    if (path.kind === 'discovery') verb = method === 'GET' ? 'discovery' : undefined;
    else if (path.kind === 'resource') verb = verbOf(method, path, watchParam);
    const identity = this.#identify(req);
    if (this.#record) {
      const resourcePath = path.kind === 'resource' ? path : undefined;
      this.#requests.push(
        new RequestRecord(
          {
            method,
            path: url.pathname,
            query: Object.fromEntries(params),
            verb,
            resource: resourcePath?.type.resource,
            group: resourcePath?.type.group,
            version: resourcePath?.type.version,
            namespace: resourcePath?.namespace,
            name: resourcePath?.name,
            subresource: resourcePath?.subresource,
            accept: req.headers.accept,
            contentType: req.headers['content-type'],
            receivedAt: this.#clock.now(),
            user: identity?.user,
          },
          res,
        ),
      );
    }
    this.#logger.debug({ method, path: url.pathname, verb }, 'request');
    // kube-apiserver's x509 authenticator rejects a certificate that does not verify; the request
    // is still authenticated by any other authenticator (here: any bearer token), else 401.
    if (identity?.invalidCertificate === true && req.headers.authorization === undefined)
      throw unauthorizedError();
    if (path.kind === 'unknown') {
      this.#sendPlain(res, 404, '404 page not found\n');
      return;
    }
    if (verb === undefined) throw methodNotAllowedError();
    const failure = this.faults.takeFailure({
      verb,
      type: path.kind === 'resource' ? path.type : undefined,
      namespace: path.kind === 'resource' ? path.namespace : undefined,
      name: path.kind === 'resource' ? path.name : undefined,
      resourceVersion: params.get('resourceVersion') ?? '',
    });
    if (failure) {
      this.#sendFailure(res, failure);
      return;
    }
    if (path.kind === 'discovery') {
      this.#serveDiscovery(req, res, path);
      return;
    }
    const pretty = parseQueryBool(params.get('pretty')) === true || isPrettyAgent(req.headers['user-agent']);
    switch (verb) {
      case 'list':
      case 'watch':
        await this.#serveCollection(req, res, path, params, verb === 'watch', pretty);
        return;
      case 'get': {
        const representation = this.#negotiate(req, 'object');
        const entry = this.store.get(path.type, path.namespace ?? '', path.name!);
        this.#sendJson(
          res,
          200,
          representation === 'partial' ? entry.partialJson() : entry.typedJson(),
          pretty,
        );
        return;
      }
      case 'create': {
        if (path.type.namespaced && path.namespace === undefined) throw methodNotAllowedError();
        const body = await readJson(req);
        const entry = this.store.create(path.type, path.namespace, body);
        this.#sendJson(res, 201, entry.typedJson(), pretty);
        return;
      }
      case 'update': {
        const body = await readJson(req);
        const entry = this.store.update(
          path.type,
          path.namespace,
          path.name,
          body,
          subresourceOption(path.subresource),
        );
        this.#sendJson(res, 200, entry.typedJson(), pretty);
        return;
      }
      case 'patch': {
        const patchType = patchTypeOf(req.headers['content-type']);
        if (patchType === undefined) {
          await readBody(req);
          throw unsupportedMediaTypeError(
            'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json',
          );
        }
        const body = await readJson(req);
        const entry = this.store.patch(
          path.type,
          path.namespace ?? '',
          path.name!,
          patchType,
          body,
          path.subresource,
        );
        this.#sendJson(res, 200, entry.typedJson(), pretty);
        return;
      }
      case 'delete': {
        const raw = await readBody(req);
        const preconditions = deletePreconditions(raw);
        const { entry, deleted } = this.store.delete(
          path.type,
          path.namespace ?? '',
          path.name!,
          preconditions,
        );
        if (deleted && !path.type.returnDeletedObject) {
          const status = makeStatus({
            status: 'Success',
            details: {
              name: entry.name,
              group: path.type.group,
              kind: path.type.resource,
              uid: typeof entry.obj.metadata.uid === 'string' ? entry.obj.metadata.uid : '',
            },
          });
          this.#sendJson(res, 200, JSON.stringify(status), pretty);
        } else {
          this.#sendJson(res, 200, entry.typedJson(), pretty);
        }
        return;
      }
      case 'deletecollection': {
        await readBody(req);
        this.#deleteCollection(res, path, params, pretty);
        return;
      }
      case 'discovery':
        return;
    }
  }

  #negotiate(req: IncomingMessage, target: ResponseTarget): Representation {
    const representation = negotiate(req.headers.accept, target);
    if (representation instanceof KinformerError) throw representation;
    return representation;
  }

  async #serveCollection(
    req: IncomingMessage,
    res: ServerResponse,
    path: Extract<ApiPath, { kind: 'resource' }>,
    params: URLSearchParams,
    watch: boolean,
    pretty: boolean,
  ): Promise<void> {
    const representation = this.#negotiate(req, watch ? 'watch' : 'list');
    if (path.name !== undefined) {
      // A watch on a named path (or /watch/…/{name}) is a watch of the collection for that one name.
      const existing = params.get('fieldSelector');
      const byName = `metadata.name=${path.name}`;
      params.set('fieldSelector', existing ? `${existing},${byName}` : byName);
    }
    const query = decodeListOptions(params, path.type, { forceWatch: watch, watchList: this.#watchList });
    const table = this.store.table(path.type);
    if (!watch) {
      const body = await serveList({
        store: this.store,
        table,
        namespace: path.namespace,
        query,
        representation,
        freshnessWaitMs: this.timing.freshnessWaitMs,
      });
      if (!res.destroyed) this.#sendJson(res, 200, body, pretty);
      return;
    }
    if (query.resourceVersion !== '' && parseResourceVersion(query.resourceVersion) === undefined) {
      // The storage error is not mapped for watches: a 500 without a reason (§4.6).
      throw new KinformerError(ErrorCodes.INTERNAL, 'unparseable resourceVersion', {
        status: makeStatus({ code: 500, message: invalidResourceVersionMessage(query.resourceVersion) }),
      });
    }
    if (this.#closing) {
      res.destroy();
      return;
    }
    const watcher = new Watcher(this, table, res, query, path.namespace, representation);
    await watcher.start();
  }

  #deleteCollection(
    res: ServerResponse,
    path: Extract<ApiPath, { kind: 'resource' }>,
    params: URLSearchParams,
    pretty: boolean,
  ): void {
    const query = decodeListOptions(params, path.type, { forceWatch: false, watchList: this.#watchList });
    const filter = selectorFilter(query);
    const table = this.store.table(path.type);
    const deleted: StoredEntry[] = [];
    for (const key of [...table.sortedKeys()]) {
      const entry = table.entries.get(key);
      if (!entry || (path.namespace !== undefined && entry.namespace !== path.namespace)) continue;
      if (filter && !filter(entry)) continue;
      deleted.push(this.store.delete(path.type, entry.namespace, entry.name).entry);
    }
    const type = path.type;
    const body = `{"kind":${JSON.stringify(type.listKind)},"apiVersion":${JSON.stringify(type.apiVersion)},"metadata":{"resourceVersion":"${this.store.rev}"},"items":[${deleted.map((e) => e.itemJson()).join(',')}]}`;
    this.#sendJson(res, 200, body, pretty);
  }

  #serveDiscovery(
    req: IncomingMessage,
    res: ServerResponse,
    path: Extract<ApiPath, { kind: 'discovery' }>,
  ): void {
    let doc: unknown;
    switch (path.document) {
      case 'health':
        this.#sendPlain(res, 200, 'ok');
        return;
      case 'version':
        doc = versionInfo();
        break;
      case 'api':
        doc = coreVersions(
          req.socket.localAddress ? `${req.socket.localAddress}:${req.socket.localPort}` : this.url,
        );
        break;
      case 'apiVersion':
      case 'groupVersion':
        doc = resourceList(this.#registry, path.group, path.version);
        break;
      case 'apis':
        doc = groupList(this.#registry);
        break;
      case 'group':
        doc = group(this.#registry, path.group);
        break;
    }
    if (doc === undefined) this.#sendPlain(res, 404, '404 page not found\n');
    else this.#sendJson(res, 200, JSON.stringify(doc), false);
  }

  /**
   * Headers of every API response. Like Go's net/http, a body that fits the 2 KiB pre-chunking
   * buffer gets a `Content-Length`; a larger one is sent chunked.
   */
  #commonHeaders(contentType: string, body: string): Record<string, string | number> {
    const headers: Record<string, string | number> = {
      'Content-Type': contentType,
      'Cache-Control': 'no-cache, private',
      'Audit-Id': randomUUID(),
    };
    if (body.length < CHUNKING_THRESHOLD) headers['Content-Length'] = Buffer.byteLength(body);
    return headers;
  }

  #sendJson(res: ServerResponse, code: number, json: string, pretty: boolean): void {
    if (res.headersSent || res.destroyed) return;
    let body = json.endsWith('\n') ? json : `${json}\n`;
    if (pretty) body = JSON.stringify(JSON.parse(body), null, 2);
    res.writeHead(code, this.#commonHeaders('application/json', body));
    res.end(body);
  }

  #sendPlain(res: ServerResponse, code: number, text: string, extra: Record<string, string> = {}): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(code, {
      'Content-Type': 'text/plain; charset=utf-8',
      'X-Content-Type-Options': 'nosniff',
      'Content-Length': Buffer.byteLength(text),
      ...extra,
    });
    res.end(text);
  }

  #sendFailure(res: ServerResponse, failure: FailureResponse): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(failure.httpStatus, {
      'Cache-Control': 'no-cache, private',
      'Audit-Id': randomUUID(),
      ...failure.headers,
      'Content-Length': Buffer.byteLength(failure.body),
    });
    res.end(failure.body);
  }

  #sendError(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    let status: Status;
    let code: number;
    if (isKinformerError(err) && err.status !== undefined) {
      status = err.status;
      code = err.httpStatus ?? status.code ?? 500;
    } else {
      this.#logger.warn({ err, method: req.method, url: req.url }, 'fake API server failed a request');
      status = makeStatus({ code: 500, message: err instanceof Error ? err.message : String(err) });
      code = 500;
    }
    if (res.headersSent || res.destroyed) return;
    const body = `${JSON.stringify(status)}\n`;
    const headers: Record<string, string | number> = this.#commonHeaders('application/json', body);
    const after = status.details?.retryAfterSeconds;
    if (after !== undefined && after > 0) headers['Retry-After'] = String(after);
    res.writeHead(code, headers);
    res.end(body);
  }
}

function subresourceOption(subresource: string | undefined): { subresource?: string } {
  return subresource === undefined ? {} : { subresource };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(
          new KinformerError(ErrorCodes.API_STATUS, 'request entity too large', {
            status: makeStatus({
              code: 413,
              reason: 'RequestEntityTooLarge',
              message: `Request entity too large: limit is ${MAX_BODY_BYTES}`,
            }),
          }),
        );
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await readBody(req);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw badRequestError(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
  }
}

function deletePreconditions(raw: string): DeletePreconditions {
  if (raw.trim() === '') return {};
  let options: unknown;
  try {
    options = JSON.parse(raw);
  } catch (err) {
    throw badRequestError(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
  }
  const pre = (options as { preconditions?: { uid?: unknown; resourceVersion?: unknown } } | null)
    ?.preconditions;
  const out: DeletePreconditions = {};
  if (typeof pre?.uid === 'string') out.uid = pre.uid;
  if (typeof pre?.resourceVersion === 'string') out.resourceVersion = pre.resourceVersion;
  return out;
}
