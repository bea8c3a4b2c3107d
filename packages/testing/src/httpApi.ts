import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { ErrorCodes, KinformerError, parseFieldSelector, type Clock, type Logger } from '@kinformer/core';
import { parseApiPath, verbOf, type ApiPath } from './apiPath.js';
import { coreVersions, group, groupList, resourceList, versionInfo } from './discovery.js';
import type { FakeApiServerFaults, RequestVerb } from './faults.js';
import type { DeleteBehaviour } from './gracefulDeletion.js';
import { serveList } from './listHandler.js';
import {
  decodeListOptions,
  invalidResourceVersionMessage,
  parseQueryBool,
  parseResourceVersion,
  selectorFilter,
} from './listOptions.js';
import { negotiate, type Representation, type ResponseTarget } from './negotiation.js';
import type { DeletePreconditions, ObjectStore } from './objectStore.js';
import { patchTypeOf, type PatchType } from './patch.js';
import { RequestRecord } from './recordedRequest.js';
import type { ResourceRegistry } from './resourceRegistry.js';
import {
  isPrettyAgent,
  parseJsonBody,
  readBody,
  readJson,
  sendError,
  sendFailure,
  sendJson,
  sendPlain,
} from './responses.js';
import { clientIdentity, type ClientAuthMode, type ClientIdentity } from './serverTls.js';
import {
  badRequestError,
  genericNotFoundError,
  makeStatus,
  statusError,
  methodNotAllowedError,
  unauthorizedError,
  unsupportedPatchTypeError,
} from './statusErrors.js';
import type { StoredEntry } from './storedEntry.js';
import { Watcher, type WatchHost } from './watchHandler.js';
import { scaleOf, updateScale } from './scale.js';
import { isApplyPatch, parseAppliedConfiguration, serveApply } from './serverSideApply.js';
import {
  defaultFieldManager,
  parseDryRun,
  parsePatchOptions,
  parsePropagationPolicy,
  type WriteOptions,
} from './writeOptions.js';
import { applyJsonPatch, applyMergePatch, PatchError } from './patch.js';

/** What the HTTP layer needs from its server. */
export interface HttpApiContext {
  readonly registry: ResourceRegistry;
  readonly store: ObjectStore;
  readonly faults: FakeApiServerFaults;
  /** The server, as the host of the watch streams it opens. */
  readonly host: WatchHost;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Emulate the WatchList feature gate. */
  readonly watchList: boolean;
  readonly clientAuth: ClientAuthMode | undefined;
  /** The server's URL (discovery's `serverAddressByClientCIDRs` fallback). */
  readonly url: string;
  /** Where requests are recorded, or undefined when they are not. */
  readonly requests: RequestRecord[] | undefined;
  /** True once the server is closing (new watches are refused). */
  closing(): boolean;
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
      new RequestRecord(
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
    if (path.kind === 'unknown') {
      sendPlain(res, 404, '404 page not found\n');
      return;
    }
    if (path.kind === 'notFound') throw genericNotFoundError();
    if (verb === undefined) throw methodNotAllowedError();
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
        sendJson(res, 200, representation === 'partial' ? entry.partialJson() : entry.typedJson(), pretty);
        return;
      }
      case 'create': {
        if (path.type.namespaced && path.namespace === undefined) throw methodNotAllowedError();
        const options = this.#writeOptions(req, params, 'CreateOptions', undefined);
        const body = await readJson(req);
        const entry = ctx.store.create(path.type, path.namespace, body, options);
        sendJson(res, 201, entry.typedJson(), pretty);
        return;
      }
      case 'update': {
        const options = this.#writeOptions(req, params, 'UpdateOptions', path.subresource);
        const body = await readJson(req);
        if (path.subresource === 'scale') {
          const entry = updateScale(ctx.store, path.type, path.namespace ?? '', path.name!, body, options);
          sendJson(res, 200, JSON.stringify(scaleOf(path.type, entry)), pretty);
          return;
        }
        const entry = ctx.store.update(path.type, path.namespace, path.name, body, options);
        sendJson(res, 200, entry.typedJson(), pretty);
        return;
      }
      case 'patch': {
        if (isApplyPatch(req.headers['content-type']) && path.subresource !== 'scale') {
          const apply = parsePatchOptions(params, true)!;
          const dryRun = parseDryRun('PatchOptions', params.getAll('dryRun'));
          const config = parseAppliedConfiguration(await readBody(req));
          const { entry, created } = serveApply(
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
            },
            config,
          );
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
    const query = decodeListOptions(params, path.type, { forceWatch: watch, watchList: ctx.watchList });
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
    const table = ctx.store.table(path.type);
    if (!watch) {
      const body = await serveList({
        store: ctx.store,
        table,
        namespace: path.namespace,
        query,
        representation,
        freshnessWaitMs: ctx.host.timing.freshnessWaitMs,
        cache: ctx.host.timing.cache,
      });
      if (!res.destroyed) sendJson(res, 200, body, pretty);
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
    const watcher = new Watcher(ctx.host, table, res, query, path.namespace, representation);
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
    const query = decodeListOptions(params, path.type, { forceWatch: false, watchList });
    const filter = selectorFilter(query);
    const table = store.table(path.type);
    const deleted: StoredEntry[] = [];
    for (const key of [...table.sortedKeys()]) {
      const entry = table.entries.get(key);
      if (!entry || (path.namespace !== undefined && entry.namespace !== path.namespace)) continue;
      if (filter && !filter(entry)) continue;
      deleted.push(store.delete(path.type, entry.namespace, entry.name, {}, behaviour).entry);
    }
    const type = path.type;
    const body = `{"kind":${JSON.stringify(type.listKind)},"apiVersion":${JSON.stringify(type.apiVersion)},"metadata":{"resourceVersion":"${store.rev}"},"items":[${deleted.map((e) => e.itemJson()).join(',')}]}`;
    sendJson(res, 200, body, pretty);
  }

  #serveDiscovery(
    req: IncomingMessage,
    res: ServerResponse,
    path: Extract<ApiPath, { kind: 'discovery' }>,
  ): void {
    const registry = this.#ctx.registry;
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
