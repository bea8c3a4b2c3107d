import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { ErrorCodes, KinformerError, realClock } from '@kinformer/core';
import type { Clock, KubeObject, Logger, ObjectMeta } from '@kinformer/core';
import { componentLogger } from '@kinformer/core/internal';
import type { KubeConfig } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { namespaceLifecycle, SYSTEM_NAMESPACES, type AdmitCreate } from './registry/admission.js';
import { CrdController } from './registry/crd.js';
import { Strategies } from './registry/strategies.js';
import { toWireForm } from './registry/schemas.js';
import { rfc3339 } from './storage/storedForm.js';
import { fakeKubeConfig, type FakeKubeConfigOptions } from './fakeKubeConfig.js';
import { FakeApiServerFaults } from './faults/faults.js';
import { GarbageCollector } from './controllers/garbageCollector.js';
import { serveApply } from './registry/serverSideApply.js';
import { HttpApi } from './endpoints/httpApi.js';
import { jsonClone } from './api/jsonClone.js';
import { ObjectStore } from './storage/objectStore.js';
import { RegistryStore, type DeletePreconditions } from './registry/registryStore.js';
import type { PatchType } from './registry/patch.js';
import type { RecordedRequest } from './endpoints/recordedRequest.js';
import {
  DEFAULT_RESOURCES,
  ResourceRegistry,
  type ResourceDefinition,
  type ResourceRef,
  type ResourceType,
} from './registry/resourceRegistry.js';
import {
  httpsServerOptions,
  resolveTls,
  type ClientAuthMode,
  type FakeApiServerTlsOptions,
  type ResolvedTls,
  type TlsClientError,
} from './tls/serverTls.js';
import { FAKE_API_SERVER_TLS } from './tls/tlsFixtures.js';
import { WatchCacheLag, type WatchCacheLagOptions } from './storage/watchCacheLag.js';
import type { SlowConsumerLimit, Watcher, WatchInjection, WatchTiming } from './endpoints/watchHandler.js';

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
  /**
   * Emulate the `ShardedListAndWatch` feature gate (KEP-5866; default true): LIST, WATCH and
   * watch-list honour `shardSelector` and lists echo `metadata.shardInfo`. False emulates an older
   * server or the gate off (1.36's default): the parameter is ignored. Also settable at run time
   * through {@link FakeApiServer.shardedListAndWatch}.
   */
  shardedListAndWatch?: boolean;
  /** Time source for timestamps, bookmarks, watch deadlines and freshness waits (default the wall clock). */
  clock?: Clock;
  /** Random source in [0, 1) for server-side watch timeouts (default `Math.random`). */
  random?: () => number;
  /**
   * Server-side watch timeouts (off by default): kube-apiserver's `--min-request-timeout` (there
   * 1 800 000 ms). A watch without `timeoutSeconds` ends cleanly after a random duration in
   * [min, 2·min), as `handlers/get.go` does, so clients must rewatch. The bookmark shortly before
   * the deadline is sent as for `timeoutSeconds`.
   */
  minRequestTimeoutMs?: number;
  /**
   * Close slow consumers (off by default: the fake buffers without limit): a watcher with more than
   * `bufferEvents` events queued and unwritten for `budgetMs` (default 100) is ended cleanly, its
   * buffer dropped, as kube-apiserver's cacher does (see {@link SlowConsumerLimit}). A stalled
   * watcher (`faults.stallWatches`) counts as slow.
   */
  slowConsumers?: SlowConsumerLimit;
  /**
   * Graceful pod deletion, as kube-apiserver and a kubelet do it (default false: every pod DELETE
   * has grace 0, as `kubectl delete --now` asks: a MODIFIED with `deletionTimestamp`, then the
   * DELETED, since without a kubelet a grace period would never end). When true, a DELETE of a
   * scheduled pod (`spec.nodeName` set, not `Succeeded`/`Failed`) sets `deletionTimestamp` = now +
   * grace and `deletionGracePeriodSeconds` (the request's `gracePeriodSeconds`, else
   * `spec.terminationGracePeriodSeconds`, else 30): a MODIFIED event; when the grace period has
   * passed on `clock` (or at {@link FakeApiServer.finishGracefulDeletions}) it is deleted with grace
   * 0, as its kubelet would. Every other pod DELETE is, as on a real server, a MODIFIED (with
   * `deletionTimestamp`, grace 0) and then the DELETED.
   */
  gracefulPodDeletion?: boolean;
  /**
   * A watch cache that lags behind storage (off by default), as kube-apiserver's under load:
   * `resourceVersion=0` lists, watch-lists from `0` and legacy watches from `""`/`0` start from the
   * state `lagMs` ago (the newer events follow at once), and bookmarks of a type without writes only
   * advance at `progressNotifyIntervalMs` (etcd's progress notify; default 10 min) or after a
   * consistent LIST. Reads without a resourceVersion stay consistent. See {@link WatchCacheLagOptions}.
   */
  watchCacheLag?: WatchCacheLagOptions;
  logger?: Logger;
  /**
   * The NamespaceLifecycle admission plugin (default true, as kube-apiserver): a create over HTTP
   * into a namespace that does not exist gets 404 `namespaces "x" not found`. The system namespaces
   * (`default`, `kube-system`, `kube-public`, `kube-node-lease`) exist from the start; create others
   * first (`server.create('namespaces', …)` or a POST). False accepts writes into any namespace, as
   * the fake did before. The in-process API does not check, but for {@link FakeApiServer.apply},
   * which is an apply PATCH without the HTTP.
   */
  namespaceLifecycle?: boolean;
  /**
   * Start with the system namespaces stored (default true when `namespaces` is served): as objects
   * that existed before the server started, at the initial resourceVersion and without events.
   */
  systemNamespaces?: boolean;
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
  /**
   * Run a cluster's garbage collector (default true): deleting an owner deletes its dependents
   * (background), deletes them first (`propagationPolicy: Foreground`) or unlinks them (`Orphan`).
   * See `garbageCollector.ts`.
   */
  garbageCollector?: boolean;
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
  /** `DeleteOptions.gracePeriodSeconds` (pods: 0 deletes at once; default the pod's own). */
  gracePeriodSeconds?: number;
  /** What happens to the dependents (default `Background`: the garbage collector deletes them). */
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
}

/** Options of {@link FakeApiServer.apply}. */
export interface InProcessApplyOptions {
  /** The field manager (required, as over HTTP). */
  fieldManager: string;
  /** Take the fields other managers own instead of failing with 409. */
  force?: boolean;
  subresource?: 'status';
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
export class FakeApiServer {
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
  /**
   * The `ShardedListAndWatch` gate (KEP-5866 `shardSelector`), read by every LIST and WATCH as it
   * arrives: set it false to emulate a server that ignores the parameter. Default: the
   * `shardedListAndWatch` option (true).
   */
  shardedListAndWatch: boolean;
  /** @internal */
  readonly store: ObjectStore;
  /** @internal */
  readonly timing: WatchTiming;
  readonly #listener: Server | HttpsServer;
  readonly #http: HttpApi;
  readonly #tlsClientErrors: TlsClientError[] = [];
  readonly #registry: ResourceRegistry;
  readonly #watchers = new Set<Watcher>();
  readonly #requests: RecordedRequest[] = [];
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #cache: WatchCacheLag | undefined;
  readonly #admitCreate: AdmitCreate;
  /** The write verbs over {@link store} (`registry/registryStore.ts`). */
  readonly #writes: RegistryStore;
  #closing: Promise<void> | undefined;
  #bearerTokens: ReadonlySet<string> | undefined;

  private constructor(
    http: Server | HttpsServer,
    url: string,
    tls: ResolvedTls | undefined,
    registry: ResourceRegistry,
    options: FakeApiServerOptions,
  ) {
    this.#listener = http;
    this.url = url;
    this.ca = tls && FAKE_API_SERVER_TLS.ca;
    this.clientCert = tls && FAKE_API_SERVER_TLS.clientCert;
    this.clientKey = tls && FAKE_API_SERVER_TLS.clientKey;
    this.clientAuth = tls?.clientAuth;
    this.#registry = registry;
    this.shardedListAndWatch = options.shardedListAndWatch ?? true;
    this.#clock = options.clock ?? realClock;
    this.#logger = componentLogger(options.logger, { component: 'fake-api-server' });
    const initialRev = Math.max(1, Math.floor(options.initialResourceVersion ?? 1));
    const cache =
      options.watchCacheLag === undefined
        ? undefined
        : new WatchCacheLag(this.#clock, initialRev, options.watchCacheLag);
    this.#cache = cache;
    this.store = new ObjectStore({
      onRevision: cache === undefined ? undefined : (rev) => cache.record(rev),
      historySize: options.historySize ?? 10_000,
      initialResourceVersion: options.initialResourceVersion ?? 1,
      clock: this.#clock,
    });
    this.#writes = new RegistryStore(this.store, {
      clock: this.#clock,
      gracefulPods: options.gracefulPodDeletion ?? false,
    });
    // The collector subscribes to the store's commits; it lives as long as the store.
    if (options.garbageCollector ?? true) GarbageCollector.attach(this.#writes);
    this.timing = {
      clock: this.#clock,
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
      bookmarkBeforeDeadlineMs: options.bookmarkBeforeDeadlineMs ?? 2_000,
      freshnessWaitMs: options.freshnessWaitMs ?? 3_000,
      minRequestTimeoutMs: options.minRequestTimeoutMs ?? 0,
      random: options.random ?? Math.random,
      slowConsumers: options.slowConsumers,
      cache,
    };
    this.faults = new FakeApiServerFaults({
      store: this.store,
      resolve: (ref) => this.#registry.resolve(ref),
      watchers: () => this.#watchers,
      restartConnections: () => this.#closeConnections(false),
      clock: this.#clock,
    });
    this.#admitCreate = namespaceLifecycle(registry, this.store, options.namespaceLifecycle ?? true);
    this.#http = new HttpApi({
      registry,
      store: this.#writes,
      faults: this.faults,
      host: this,
      clock: this.#clock,
      logger: this.#logger,
      watchList: options.watchList ?? true,
      shardedListAndWatch: () => this.shardedListAndWatch,
      clientAuth: this.clientAuth,
      url,
      requests: (options.recordRequests ?? true) ? this.#requests : undefined,
      closing: () => this.#closing !== undefined,
      admitCreate: this.#admitCreate,
      bearerTokens: () => this.#bearerTokens,
    });
    const namespaces = registry.lookup('', 'v1', 'namespaces');
    if (namespaces !== undefined && (options.systemNamespaces ?? true)) {
      const created = rfc3339(this.#clock.now());
      for (const name of SYSTEM_NAMESPACES) {
        this.store.preload(namespaces, '', name, {
          metadata: {
            name,
            uid: randomUUID(),
            resourceVersion: String(this.store.rev),
            creationTimestamp: created,
            labels: { 'kubernetes.io/metadata.name': name },
          },
          spec: { finalizers: ['kubernetes'] },
          status: { phase: 'Active' },
        });
      }
    }
    const crds = registry.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
    if (crds !== undefined) new CrdController(registry, this.#writes, this.#clock, crds);
  }

  /**
   * Starts a server on 127.0.0.1 (an ephemeral port unless `port` is given), over HTTPS with `tls`.
   * @throws KinformerError `ERR_INVALID_OPTION` for an unknown `tls.clientAuth`.
   */
  static async start(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
    const tls = resolveTls(options.tls);
    const registry = new ResourceRegistry(new Strategies());
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
    http.on('request', (req: IncomingMessage, res: ServerResponse) => server.#http.onRequest(req, res));
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

  /**
   * Authenticate bearer tokens (default: off, any token or none works): with a list, a request is
   * answered 401 `Unauthorized` unless it carries `Authorization: Bearer <one of tokens>` or a client
   * certificate that verified, as kube-apiserver's `WithAuthentication` filter answers a request no
   * authenticator accepts (`apiserver/pkg/endpoints/filters/authentication.go`, the token
   * authenticator `apiserver/pkg/authentication/request/bearertoken`). Call again to rotate or
   * revoke tokens; `undefined` turns checking off.
   */
  requireBearerTokens(tokens: readonly string[] | undefined): void {
    this.#bearerTokens = tokens === undefined ? undefined : new Set(tokens);
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

  /** `[type, namespace, name]`: the type of `resource`, and what `nameOrKey` (with `namespace`) names in it. */
  #locate(resource: ResourceRef, nameOrKey: string, namespace?: string): [ResourceType, string, string] {
    const type = this.#registry.resolve(resource);
    if (!type.namespaced) return [type, '', nameOrKey];
    if (namespace !== undefined) return [type, namespace, nameOrKey];
    const slash = nameOrKey.indexOf('/');
    if (slash === -1) return [type, 'default', nameOrKey];
    return [type, nameOrKey.slice(0, slash), nameOrKey.slice(slash + 1)];
  }

  /**
   * Creates an object as a POST would (uid, creationTimestamp, resourceVersion assigned; an ADDED
   * event). Namespaced objects without a namespace go to `default`. Returns a copy of the stored
   * object (with kind/apiVersion) that the caller owns.
   * @throws KinformerError with the server's Status (409 AlreadyExists, 422 Invalid…).
   */
  create<T extends KubeObject>(resource: ResourceRef, object: T): Stored<T> {
    const type = this.#registry.resolve(resource);
    return this.#writes.create(type, undefined, wireForm(type, jsonClone(object))).toObject<Stored<T>>();
  }

  /**
   * Creates many objects at once, as {@link create} does one by one (same events, same errors), but
   * without building a copy of each for the caller: the fast way to seed a benchmark with 50k pods.
   * Returns the resourceVersion after the last write.
   */
  createMany(resource: ResourceRef, objects: Iterable<KubeObject>): string {
    const type = this.#registry.resolve(resource);
    for (const object of objects) this.#writes.create(type, undefined, jsonClone(object));
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
    const [type, ns, name] = this.#locate(resource, nameOrKey, namespace);
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
    return this.#writes
      .update(type, undefined, undefined, wireForm(type, jsonClone(object)), options)
      .toObject<Stored<T>>();
  }

  /** Patches an object (merge patch by default; `json` for RFC 6902). Returns a copy of the result. */
  patch<T extends KubeObject = KubeObject>(
    resource: ResourceRef,
    nameOrKey: string,
    patch: unknown,
    options: InProcessPatchOptions = {},
  ): Stored<T> {
    const [type, ns, name] = this.#locate(resource, nameOrKey, options.namespace);
    return this.#writes
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
    const [type, ns, name] = this.#locate(resource, nameOrKey, options.namespace);
    const behaviour = {
      ...(options.gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds: options.gracePeriodSeconds }),
      ...(options.propagationPolicy === undefined ? {} : { propagationPolicy: options.propagationPolicy }),
    };
    return this.#writes.delete(type, ns, name, options.preconditions, behaviour).entry.toObject<Stored<T>>();
  }

  /**
   * Server-side apply, as a `PATCH` with `application/apply-patch+yaml` would do it (see
   * `serverSideApply.ts`): creates the object when missing, merges `object` into it, records
   * `fieldManager` in `managedFields`. As over HTTP, unknown fields are dropped (`fieldValidation`
   * `Warn`; the warnings are logged at debug level), the result is defaulted, and an apply that
   * creates runs NamespaceLifecycle. Returns a copy of the result.
   * @throws KinformerError 409 Conflict naming the managers and fields it would take (unless `force`),
   *   404 for a namespace that does not exist (with `namespaceLifecycle`).
   */
  apply<T extends KubeObject>(resource: ResourceRef, object: T, options: InProcessApplyOptions): Stored<T> {
    const type = this.#registry.resolve(resource);
    const config = jsonClone(object) as unknown as Record<string, unknown>;
    const meta = (config.metadata ?? {}) as { name?: string; namespace?: string };
    const { entry, warnings } = serveApply(
      this.#writes,
      {
        type,
        namespace: type.namespaced ? (meta.namespace ?? 'default') : '',
        name: meta.name ?? '',
        subresource: options.subresource,
        manager: options.fieldManager,
        force: options.force ?? false,
        dryRun: false,
        now: this.#clock.now(),
        fieldValidation: 'Warn',
      },
      { apiVersion: type.apiVersion, kind: type.kind, ...config },
      this.#admitCreate,
    );
    if (warnings.length > 0) this.#logger.debug({ warnings }, 'apply: unknown fields dropped');
    return entry.toObject<Stored<T>>();
  }

  /**
   * Ends every graceful pod deletion under way now, as if each grace period had passed (the pods
   * go, with a DELETED event, unless finalizers hold them). With a `FakeClock`, advancing it does
   * the same at each pod's `deletionTimestamp`.
   */
  finishGracefulDeletions(): void {
    this.#writes.finishTerminations();
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
      this.#writes.cancelTerminations();
      this.#cache?.stop();
      const closed = new Promise<void>((resolve) => this.#listener.close(() => resolve()));
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
    if (final) this.#listener.closeIdleConnections();
    this.#listener.closeAllConnections();
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

  #onTlsClientError(err: NodeJS.ErrnoException, socket: TLSSocket): void {
    // Set when node refused the client's certificate (the error itself is then a bare ECONNRESET).
    // node's typings say Error; at run time it is the verify code, a string.
    const raw: unknown = socket.authorizationError;
    const authorizationError = typeof raw === 'string' ? raw : raw instanceof Error ? raw.message : undefined;
    this.#tlsClientErrors.push({ code: err.code, message: err.message, authorizationError });
    this.#logger.debug({ code: err.code, authorizationError, reason: err.message }, 'TLS handshake failed');
  }
}

/**
 * A CRD built with client-node's models (`loadYaml`) names schema fields as the models do
 * (`_default`, `xKubernetesPreserveUnknownFields`): stored in their JSON names, as over HTTP.
 */
function wireForm<T>(type: ResourceType, object: T): T {
  if (type.group !== 'apiextensions.k8s.io' || type.resource !== 'customresourcedefinitions') return object;
  return toWireForm(object, 'V1CustomResourceDefinition') as T;
}
