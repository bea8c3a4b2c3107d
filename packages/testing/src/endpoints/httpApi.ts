import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { ErrorCodes, KinformerError, parseFieldSelector, type Clock, type Logger } from '@kinformer/core';
import { parseApiPath, verbOf, type ApiPath } from './apiPath.js';
import { decodeWrite, fieldValidationOf, type AdmitCreate } from '../registry/admission.js';
import {
  aggregatedDiscovery,
  aggregatedDiscoveryVersion,
  coreVersions,
  group,
  groupList,
  resourceList,
  versionInfo,
} from './discovery.js';
import type { JsonObject } from '../api/json.js';
import { openApiV2Document, openApiV3Document, openApiV3Index } from './openapi.js';
import { decodeKubeProtobuf, isProtobuf, ProtobufError } from './protobuf.js';
import { isReview, review } from '../registry/reviews.js';
import { includeObjectOf, objectTable, toTable } from './table.js';
import type { FakeApiServerFaults, RequestVerb } from '../faults/faults.js';
import type { DeleteBehaviour } from '../registry/gracefulDeletion.js';
import { readList, serveList, type ListRequest } from './listHandler.js';
import {
  decodeListOptions,
  invalidResourceVersionMessage,
  parseQueryBool,
  parseResourceVersion,
  selectorFilter,
} from './listOptions.js';
import { negotiate, type Representation, type ResponseTarget } from './negotiation.js';
import type { DeletePreconditions, RegistryStore } from '../registry/registryStore.js';
import { patchTypeOf, type PatchType } from '../registry/patch.js';
import { recordRequest, type RecordedRequest } from './recordedRequest.js';
import type { ResourceRegistry } from '../registry/resourceRegistry.js';
import {
  isPrettyAgent,
  parseJsonBody,
  readBody,
  readBodyBytes,
  readJson,
  sendError,
  sendFailure,
  sendJson,
  sendPlain,
} from './responses.js';
import { clientIdentity, type ClientAuthMode, type ClientIdentity } from '../tls/serverTls.js';
import {
  badRequestError,
  genericNotFoundError,
  makeStatus,
  statusError,
  methodNotAllowedError,
  unauthorizedError,
  unsupportedPatchTypeError,
} from '../api/statusErrors.js';
import type { StoredEntry } from '../storage/storedEntry.js';
import { Watcher, type WatchHost } from './watchHandler.js';
import { scaleOf, updateScale } from '../registry/scale.js';
import { isApplyPatch, parseAppliedConfiguration, serveApply } from '../registry/serverSideApply.js';
import {
  defaultFieldManager,
  parseDryRun,
  parsePatchOptions,
  parsePropagationPolicy,
  type WriteOptions,
} from './writeOptions.js';
import { applyJsonPatch, applyMergePatch, PatchError } from '../registry/patch.js';

/** What the HTTP layer needs from its server. */
export interface HttpApiContext {
  readonly registry: ResourceRegistry;
  /** The registry store (write verbs) and, through it, the storage. */
  readonly store: RegistryStore;
  readonly faults: FakeApiServerFaults;
  /** The server, as the host of the watch streams it opens. */
  readonly host: WatchHost;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Emulate the WatchList feature gate. */
  readonly watchList: boolean;
  /** Emulate the ShardedListAndWatch feature gate (KEP-5866 `shardSelector`); read per request. */
  shardedListAndWatch(): boolean;
  readonly clientAuth: ClientAuthMode | undefined;
  /** The server's URL (discovery's `serverAddressByClientCIDRs` fallback). */
  readonly url: string;
  /** Where requests are recorded, or undefined when they are not. */
  readonly requests: RecordedRequest[] | undefined;
  /** True once the server is closing (new watches are refused). */
  closing(): boolean;
  /** The create admission (NamespaceLifecycle: creates into a namespace that does not exist get 404). */
  readonly admitCreate: AdmitCreate;
  /** The bearer tokens that authenticate a request, or undefined when any request is authenticated. */
  bearerTokens(): ReadonlySet<string> | undefined;
}

/** The media types a create or update body may have here (JSON only; kube also reads YAML, protobuf and CBOR). */
function isJsonBody(contentType: string | undefined): boolean {
  if (contentType === undefined || contentType.trim() === '') return true;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || type === '*/*';
}

/**
 * 415 for a body in a media type the server cannot decode (`handlers/rest.go`
 * `negotiation.NegotiateInputSerializer` → `NewUnsupportedMediaTypeError`). client-go (1.32) then
 * retries the request in JSON.
 */
function unsupportedMediaType(contentType: string | undefined): KinformerError {
  return new KinformerError(ErrorCodes.API_STATUS, `unsupported media type ${String(contentType)}`, {
    status: makeStatus({
      code: 415,
      reason: 'UnsupportedMediaType',
      message:
        'the body of the request was in an unknown format - accepted media types include: application/json, application/vnd.kubernetes.protobuf',
    }),
  });
}

/** Sets the `Warning` headers of a response (`warning.AddWarning`: `299 - "<text>"`). */
function addWarnings(res: ServerResponse, warnings: readonly string[]): void {
  if (warnings.length === 0 || res.headersSent) return;
  res.setHeader(
    'Warning',
    warnings.map((w) => `299 - ${JSON.stringify(w)}`),
  );
}

type ResourcePath = Extract<ApiPath, { kind: 'resource' }>;

/**
 * The HTTP face of the fake: routes a request (discovery, resource verbs, unknown paths), records
 * it, applies injected failures, and answers as kube-apiserver's handlers do (`endpoints/handlers`).
 */
export class HttpApi {
  readonly #ctx: HttpApiContext;
  readonly #identities = new WeakMap<TLSSocket, ClientIdentity>();

  constructor(context: HttpApiContext) {
    this.#ctx = context;
  }

  /** Serves one request; never rejects (errors become Status responses). */
  onRequest(req: IncomingMessage, res: ServerResponse): void {
    this.#handle(req, res).catch((err: unknown) => sendError(req, res, err, this.#ctx.logger));
  }

  /** The identity of the client certificate on this request's connection (computed once per connection). */
  #identify(req: IncomingMessage): ClientIdentity | undefined {
    const { clientAuth } = this.#ctx;
    if (clientAuth === undefined || clientAuth === 'none') return undefined;
    const socket = req.socket as TLSSocket;
    let identity = this.#identities.get(socket);
    if (identity === undefined) {
      identity = clientIdentity(socket);
      this.#identities.set(socket, identity);
    }
    return identity;
  }

  /** With `requireBearerTokens`: a verified client certificate or a listed bearer token (`bearertoken.go`). */
  #authenticated(req: IncomingMessage, identity: ClientIdentity | undefined): boolean {
    const tokens = this.#ctx.bearerTokens();
    if (tokens === undefined || identity?.user !== undefined) return true;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    return m !== null && tokens.has(m[1] as string);
  }

  #record(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    path: ApiPath,
    verb: RequestVerb | undefined,
    identity: ClientIdentity | undefined,
  ): void {
    const requests = this.#ctx.requests;
    if (requests === undefined) return;
    const resourcePath = path.kind === 'resource' ? path : undefined;
    requests.push(
      recordRequest(
        {
          method: req.method ?? 'GET',
          path: url.pathname,
          query: Object.fromEntries(url.searchParams),
          verb,
          resource: resourcePath?.type.resource,
          group: resourcePath?.type.group,
          version: resourcePath?.type.version,
          namespace: resourcePath?.namespace,
          name: resourcePath?.name,
          subresource: resourcePath?.subresource,
          accept: req.headers.accept,
          contentType: req.headers['content-type'],
          receivedAt: this.#ctx.clock.now(),
          user: identity?.user,
        },
        res,
      ),
    );
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const ctx = this.#ctx;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const params = url.searchParams;
    const method = req.method ?? 'GET';
    const path = parseApiPath(url.pathname, ctx.registry);
    const watchParam = parseQueryBool(params.get('watch')) === true;
    let verb: RequestVerb | undefined;
    if (path.kind === 'discovery') verb = method === 'GET' ? 'discovery' : undefined;
    else if (path.kind === 'resource') verb = verbOf(method, path, watchParam);
    const identity = this.#identify(req);
    this.#record(req, res, url, path, verb, identity);
    ctx.logger.debug({ method, path: url.pathname, verb }, 'request');
    // kube-apiserver's x509 authenticator rejects a certificate that does not verify; the request
    // is still authenticated by any other authenticator (here: any bearer token), else 401.
    if (identity?.invalidCertificate === true && req.headers.authorization === undefined)
      throw unauthorizedError();
    // WithAuthentication wraps every handler, /openapi/* included (apiserver/pkg/server/config.go
    // DefaultBuildHandlerChain): an unauthenticated request is 401 before any route.
    if (!this.#authenticated(req, identity)) throw unauthorizedError();
    if (path.kind === 'unknown' && method === 'GET' && url.pathname.startsWith('/openapi/')) {
      this.#serveOpenApi(req, res, url.pathname);
      return;
    }
    if (path.kind === 'unknown') {
      sendPlain(res, 404, '404 page not found\n');
      return;
    }
    if (path.kind === 'notFound') throw genericNotFoundError();
    if (verb === undefined) throw methodNotAllowedError();
    // A verb the type does not serve has no route (the reviews are create-only): 405.
    if (path.kind === 'resource' && !path.type.verbs.includes(verb)) throw methodNotAllowedError();
    const failure = ctx.faults.takeFailure({
      verb,
      type: path.kind === 'resource' ? path.type : undefined,
      namespace: path.kind === 'resource' ? path.namespace : undefined,
      name: path.kind === 'resource' ? path.name : undefined,
      resourceVersion: params.get('resourceVersion') ?? '',
    });
    if (failure) {
      sendFailure(res, failure);
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
        const entry = ctx.store.get(path.type, path.namespace ?? '', path.name!);
        if (path.subresource === 'scale') {
          sendJson(res, 200, JSON.stringify(scaleOf(path.type, entry)), pretty);
          return;
        }
        if (representation === 'table') {
          const table = toTable(path.type, [entry.typed()], {}, includeObjectOf(params), ctx.clock.now());
          sendJson(res, 200, JSON.stringify(table), pretty);
          return;
        }
        sendJson(res, 200, representation === 'partial' ? entry.partialJson() : entry.typedJson(), pretty);
        return;
      }
      case 'create': {
        if (path.type.namespaced && path.namespace === undefined) throw methodNotAllowedError();
        const options = this.#writeOptions(req, params, 'CreateOptions', undefined);
        const body = await this.#readObject(req);
        if (isReview(path.type)) {
          sendJson(res, 201, JSON.stringify(review(path.type, body, identity?.user)), pretty);
          return;
        }
        const warnings = decodeWrite(path.type, body, {
          creating: true,
          fieldValidation: fieldValidationOf(params),
        });
        ctx.admitCreate(path.type, path.namespace);
        const entry = ctx.store.create(path.type, path.namespace, body, options);
        addWarnings(res, warnings);
        sendJson(res, 201, entry.typedJson(), pretty);
        return;
      }
      case 'update': {
        const options = this.#writeOptions(req, params, 'UpdateOptions', path.subresource);
        const body = await this.#readObject(req);
        if (path.subresource === 'scale') {
          const entry = updateScale(ctx.store, path.type, path.namespace ?? '', path.name!, body, options);
          sendJson(res, 200, JSON.stringify(scaleOf(path.type, entry)), pretty);
          return;
        }
        const warnings = decodeWrite(path.type, body, {
          creating: false,
          fieldValidation: fieldValidationOf(params),
        });
        addWarnings(res, warnings);
        const entry = ctx.store.update(path.type, path.namespace, path.name, body, options);
        sendJson(res, 200, entry.typedJson(), pretty);
        return;
      }
      case 'patch': {
        if (isApplyPatch(req.headers['content-type']) && path.subresource !== 'scale') {
          const apply = parsePatchOptions(params, true)!;
          const dryRun = parseDryRun('PatchOptions', params.getAll('dryRun'));
          const config = parseAppliedConfiguration(await readBody(req));
          const { entry, created, warnings } = serveApply(
            ctx.store,
            {
              type: path.type,
              namespace: path.namespace ?? '',
              name: path.name!,
              subresource: path.subresource,
              manager: apply.fieldManager,
              force: apply.force,
              dryRun,
              now: ctx.clock.now(),
              fieldValidation: fieldValidationOf(params),
            },
            config,
            ctx.admitCreate,
          );
          addWarnings(res, warnings);
          sendJson(res, created ? 201 : 200, entry.typedJson(), pretty);
          return;
        }
        const patchType = patchTypeOf(req.headers['content-type']);
        if (patchType === undefined || (patchType === 'strategic' && path.type.customResource)) {
          await readBody(req);
          throw unsupportedPatchTypeError(path.type);
        }
        parsePatchOptions(params, false);
        const options = this.#writeOptions(req, params, 'PatchOptions', path.subresource);
        const body = await readJson(req);
        const fieldValidation = fieldValidationOf(params);
        if (path.subresource === 'scale') {
          const entry = this.#patchScale(path, patchType, body, options);
          sendJson(res, 200, JSON.stringify(scaleOf(path.type, entry)), pretty);
          return;
        }
        const entry = ctx.store.patch(
          path.type,
          path.namespace ?? '',
          path.name!,
          patchType,
          body,
          path.subresource,
          options,
          (patched) =>
            addWarnings(res, decodeWrite(path.type, patched, { creating: false, fieldValidation })),
        );
        sendJson(res, 200, entry.typedJson(), pretty);
        return;
      }
      case 'delete': {
        const { preconditions, behaviour } = deleteOptions(await readBody(req), params);
        const { entry, deleted } = ctx.store.delete(
          path.type,
          path.namespace ?? '',
          path.name!,
          preconditions,
          behaviour,
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
          sendJson(res, 200, JSON.stringify(status), pretty);
        } else {
          sendJson(res, 200, entry.typedJson(), pretty);
        }
        return;
      }
      case 'deletecollection': {
        const { behaviour } = deleteOptions(await readBody(req), params);
        this.#deleteCollection(res, path, params, pretty, behaviour);
        return;
      }
      case 'discovery':
        return;
    }
  }

  /** Reads a create/update body: JSON only (415 otherwise), a JSON object (400 otherwise). */
  async #readObject(req: IncomingMessage): Promise<JsonObject> {
    const contentType = req.headers['content-type'];
    if (isProtobuf(contentType)) {
      let decoded: JsonObject | undefined;
      try {
        decoded = decodeKubeProtobuf(await readBodyBytes(req));
      } catch (err) {
        if (err instanceof ProtobufError)
          throw badRequestError(`unable to decode the protobuf body: ${err.message}`);
        throw err;
      }
      if (decoded === undefined) throw unsupportedMediaType(contentType);
      return decoded;
    }
    if (!isJsonBody(contentType)) {
      await readBody(req);
      throw unsupportedMediaType(contentType);
    }
    const body = await readJson(req);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw badRequestError('the body of the request was not a JSON object');
    return body as JsonObject;
  }

  /** `/openapi/v2`, `/openapi/v3`, `/openapi/v3/<api/v1 | apis/g/v>` (`openapi.ts`). */
  #serveOpenApi(req: IncomingMessage, res: ServerResponse, pathname: string): void {
    const registry = this.#ctx.registry;
    let doc: unknown;
    if (pathname === '/openapi/v2') {
      const accept = req.headers.accept ?? '';
      if (accept !== '' && !/application\/json|\*\/\*/.test(accept)) throw notAcceptableOpenApi();
      doc = openApiV2Document(registry);
    } else if (pathname === '/openapi/v3' || pathname === '/openapi/v3/') {
      doc = openApiV3Index(registry);
    } else if (pathname.startsWith('/openapi/v3/')) {
      doc = openApiV3Document(registry, pathname.slice('/openapi/v3/'.length).replace(/\/$/, ''));
    }
    if (doc === undefined) sendPlain(res, 404, '404 page not found\n');
    else sendJson(res, 200, JSON.stringify(doc), false);
  }

  #negotiate(req: IncomingMessage, target: ResponseTarget): Representation {
    const representation = negotiate(req.headers.accept, target);
    if (representation instanceof KinformerError) throw representation;
    return representation;
  }

  async #serveCollection(
    req: IncomingMessage,
    res: ServerResponse,
    path: ResourcePath,
    params: URLSearchParams,
    watch: boolean,
    pretty: boolean,
  ): Promise<void> {
    const ctx = this.#ctx;
    const representation = this.#negotiate(req, watch ? 'watch' : 'list');
    const query = decodeListOptions(params, path.type, {
      forceWatch: watch,
      watchList: ctx.watchList,
      shardedListAndWatch: ctx.shardedListAndWatch(),
    });
    if (path.name !== undefined) {
      // A watch on a named path (or /watch/…/{name}) is a watch of the collection for that one name;
      // a selector of its own must select exactly that name (handlers/get.go listOpts).
      if (query.fieldSelector === undefined) {
        query.fieldSelector = parseFieldSelector(`metadata.name=${path.name.replace(/[\\,=]/g, '\\$&')}`);
      } else {
        const selected = query.fieldSelector.requirements.find(
          (r) => r.field === 'metadata.name' && r.operator === '=',
        );
        if (selected?.value !== path.name)
          throw badRequestError("fieldSelector metadata.name doesn't match requested name");
      }
    }
    const table = ctx.store.storage.table(path.type);
    if (!watch) {
      const request: ListRequest = {
        store: ctx.store.storage,
        table,
        namespace: path.namespace,
        query,
        representation: representation === 'table' ? 'full' : representation,
        freshnessWaitMs: ctx.host.timing.freshnessWaitMs,
        cache: ctx.host.timing.cache,
      };
      if (representation !== 'table') {
        const body = await serveList(request);
        if (!res.destroyed) sendJson(res, 200, body, pretty);
        return;
      }
      // The Table is built from the page's stored objects (`rest.TableConvertor` gets the list
      // object), not from the list's JSON.
      const page = await readList(request);
      if (res.destroyed) return;
      const type = path.type;
      const out = toTable(
        type,
        page.items.map((e) => e.typed()),
        { ...page.metadata },
        includeObjectOf(params),
        ctx.clock.now(),
      );
      sendJson(res, 200, JSON.stringify(out), pretty);
      return;
    }
    if (query.resourceVersion !== '' && parseResourceVersion(query.resourceVersion) === undefined) {
      // The storage error is not mapped for watches: a 500 without a reason (§4.6).
      throw new KinformerError(ErrorCodes.INTERNAL, 'unparseable resourceVersion', {
        status: makeStatus({ code: 500, message: invalidResourceVersionMessage(query.resourceVersion) }),
      });
    }
    if (ctx.closing()) {
      res.destroy();
      return;
    }
    const includeObject = includeObjectOf(params);
    const type = path.type;
    const watcher = new Watcher(
      ctx.host,
      table,
      res,
      query,
      path.namespace,
      representation === 'table' ? 'full' : representation,
      representation === 'table'
        ? tableEventLine(objectTable(type, includeObject), () => ctx.clock.now())
        : undefined,
    );
    await watcher.start();
  }

  /** The options of a create/update/patch request: dry run, field manager, the strategy. */
  #writeOptions(
    req: IncomingMessage,
    params: URLSearchParams,
    kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions',
    subresource: string | undefined,
  ): WriteOptions {
    const options: WriteOptions = {
      strategy: true,
      dryRun: parseDryRun(kind, params.getAll('dryRun')),
      fieldManager: defaultFieldManager(params.get('fieldManager'), req.headers['user-agent']),
    };
    if (subresource !== undefined) options.subresource = subresource;
    return options;
  }

  /** A patch of `/scale`: the patch applies to the Scale, which is then written as a PUT would. */
  #patchScale(path: ResourcePath, patchType: PatchType, body: unknown, options: WriteOptions): StoredEntry {
    const { store } = this.#ctx;
    const scale = scaleOf(path.type, store.get(path.type, path.namespace ?? '', path.name!));
    let patched: unknown;
    try {
      patched = patchType === 'json' ? applyJsonPatch(scale, body) : applyMergePatch(scale, body);
    } catch (err) {
      if (!(err instanceof PatchError)) throw err;
      throw err.httpStatus === 400
        ? badRequestError(err.message)
        : statusError(makeStatus({ code: 422, reason: 'Invalid', message: err.message }));
    }
    return updateScale(store, path.type, path.namespace ?? '', path.name!, patched, options);
  }

  #deleteCollection(
    res: ServerResponse,
    path: ResourcePath,
    params: URLSearchParams,
    pretty: boolean,
    behaviour: DeleteBehaviour,
  ): void {
    const { store, watchList } = this.#ctx;
    const query = decodeListOptions(params, path.type, {
      forceWatch: false,
      watchList,
      shardedListAndWatch: this.#ctx.shardedListAndWatch(),
    });
    const filter = selectorFilter(query);
    const table = store.storage.table(path.type);
    const deleted: StoredEntry[] = [];
    for (const key of [...table.sortedKeys()]) {
      const entry = table.entries.get(key);
      if (!entry || (path.namespace !== undefined && entry.namespace !== path.namespace)) continue;
      if (filter && !filter(entry)) continue;
      deleted.push(store.delete(path.type, entry.namespace, entry.name, {}, behaviour).entry);
    }
    const type = path.type;
    const body = `{"kind":${JSON.stringify(type.listKind)},"apiVersion":${JSON.stringify(type.apiVersion)},"metadata":{"resourceVersion":"${store.storage.rev}"},"items":[${deleted.map((e) => e.itemJson()).join(',')}]}`;
    sendJson(res, 200, body, pretty);
  }

  #serveDiscovery(
    req: IncomingMessage,
    res: ServerResponse,
    path: Extract<ApiPath, { kind: 'discovery' }>,
  ): void {
    const registry = this.#ctx.registry;
    const aggregated = aggregatedDiscoveryVersion(req.headers.accept);
    if (aggregated !== undefined && (path.document === 'api' || path.document === 'apis')) {
      sendJson(
        res,
        200,
        JSON.stringify(aggregatedDiscovery(registry, path.document === 'api', aggregated)),
        false,
        `application/json;g=apidiscovery.k8s.io;v=${aggregated};as=APIGroupDiscoveryList`,
      );
      return;
    }
    let doc: unknown;
    switch (path.document) {
      case 'health':
        sendPlain(res, 200, 'ok');
        return;
      case 'version':
        doc = versionInfo();
        break;
      case 'api':
        doc = coreVersions(
          req.socket.localAddress ? `${req.socket.localAddress}:${req.socket.localPort}` : this.#ctx.url,
        );
        break;
      case 'apiVersion':
      case 'groupVersion':
        doc = resourceList(registry, path.group, path.version);
        break;
      case 'apis':
        doc = groupList(registry);
        break;
      case 'group':
        doc = group(registry, path.group);
        break;
    }
    if (doc === undefined) sendPlain(res, 404, '404 page not found\n');
    else sendJson(res, 200, JSON.stringify(doc), false);
  }
}

/**
 * `DeleteOptions` from the body, or (without a body) from the query, as handlers/delete.go reads
 * them: the preconditions and `gracePeriodSeconds`.
 */
function deleteOptions(
  raw: string,
  params: URLSearchParams,
): { preconditions: DeletePreconditions; behaviour: DeleteBehaviour } {
  const preconditions: DeletePreconditions = {};
  const behaviour: DeleteBehaviour = {};
  if (raw.trim() === '') {
    const grace = params.get('gracePeriodSeconds');
    if (grace !== null && /^[+-]?\d+$/.test(grace)) behaviour.gracePeriodSeconds = Number(grace);
    const policy = parsePropagationPolicy(params.get('propagationPolicy') ?? undefined);
    if (policy !== undefined) behaviour.propagationPolicy = policy;
    else if (parseQueryBool(params.get('orphanDependents')) === true) behaviour.propagationPolicy = 'Orphan';
    if (parseDryRun('DeleteOptions', params.getAll('dryRun'))) behaviour.dryRun = true;
    return { preconditions, behaviour };
  }
  const options = parseJsonBody(raw) as {
    preconditions?: { uid?: unknown; resourceVersion?: unknown };
    gracePeriodSeconds?: unknown;
    propagationPolicy?: unknown;
    orphanDependents?: unknown;
    dryRun?: unknown;
  } | null;
  const pre = options?.preconditions;
  if (typeof pre?.uid === 'string') preconditions.uid = pre.uid;
  if (typeof pre?.resourceVersion === 'string') preconditions.resourceVersion = pre.resourceVersion;
  if (typeof options?.gracePeriodSeconds === 'number')
    behaviour.gracePeriodSeconds = options.gracePeriodSeconds;
  const policy = parsePropagationPolicy(options?.propagationPolicy);
  if (policy !== undefined) behaviour.propagationPolicy = policy;
  else if (options?.orphanDependents === true) behaviour.propagationPolicy = 'Orphan';
  const dryRun = Array.isArray(options?.dryRun)
    ? (options.dryRun as unknown[]).map(String)
    : params.getAll('dryRun');
  if (parseDryRun('DeleteOptions', dryRun)) behaviour.dryRun = true;
  return { preconditions, behaviour };
}

/**
 * The transform of a Table watch's object event lines (`handlers/watch.go` transforms each event's
 * object): the object becomes a one-row Table. The watcher applies it to ADDED/MODIFIED/DELETED
 * lines only, never to bookmarks, errors or injected lines.
 */
function tableEventLine(
  table: (obj: JsonObject, now: number) => JsonObject,
  now: () => number,
): (line: string) => string {
  return (line) => {
    const event = JSON.parse(line) as { type: string; object: JsonObject };
    return `${JSON.stringify({ type: event.type, object: table(event.object, now()) })}\n`;
  };
}

/** 406 for `/openapi/v2` in protobuf (the fake serves it in JSON only). */
function notAcceptableOpenApi(): KinformerError {
  return new KinformerError(ErrorCodes.API_STATUS, 'openapi v2 is served in JSON only', {
    status: makeStatus({
      code: 406,
      reason: 'NotAcceptable',
      message: 'only the following media types are accepted: application/json',
    }),
  });
}
