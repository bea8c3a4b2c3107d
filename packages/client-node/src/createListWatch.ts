import type { IncomingMessage } from 'node:http';
import {
  ErrorCodes,
  KinformerError,
  type FieldSelector,
  type KubeList,
  type KubeObject,
  type LabelSelector,
  type Logger,
} from '@kinformer/core';
import { componentLogger, gvrString } from '@kinformer/core/internal';
import type {
  ListerWatcher,
  ListOptions,
  RequestContext,
  WatchEvent,
  WatchOptions,
} from '@kinformer/reflector';
import type { KubeConfig } from '@kubernetes/client-node';
import { openRequest, readBody } from './httpRequest.js';
import { DEFAULT_MAX_LIST_ITEM_BYTES, readList } from './listDecoder.js';
import { checkKubeConfig } from './requestAuth.js';
import {
  collectionPath,
  listQuery,
  validateApiResource,
  watchQuery,
  type ApiResource,
  type WireSelectors,
} from './resourcePath.js';
import { errorFromResponse } from './responseError.js';
import { validateListResourceVersions } from './validateList.js';
import {
  DEFAULT_MAX_WATCH_LINE_BYTES,
  WatchEventStream,
  type WatchStreamSummary,
} from './watchEventStream.js';

/** Options for {@link createListWatch}. */
export interface ListWatchOptions {
  /** Label selector sent with every list and watch (a string in the Kubernetes grammar, or a parsed selector). */
  labelSelector?: string | LabelSelector;
  /** Field selector sent with every list and watch. */
  fieldSelector?: string | FieldSelector;
  /**
   * Ask for `PartialObjectMetadata` instead of full objects (client-go's metadata informers): lists
   * send `Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json`,
   * watches `…;as=PartialObjectMetadata;…`. Objects then have `kind: PartialObjectMetadata`,
   * `apiVersion: meta.k8s.io/v1` and only `metadata`. Default `false`.
   */
  metadataOnly?: boolean;
  /** Longest watch line (one event) accepted, in bytes. Default `DEFAULT_MAX_WATCH_LINE_BYTES` (16 MiB). */
  maxLineBytes?: number;
  /**
   * Longest single item of a LIST response accepted, in bytes (a longer one rejects the list with
   * `ERR_LIST_ITEM_TOO_LARGE`). Default `DEFAULT_MAX_LIST_ITEM_BYTES` (16 MiB); at most what one
   * JavaScript string can hold.
   */
  maxListItemBytes?: number;
  /**
   * Called with each list item once it is decoded (when the page ends, for a page parsed whole); the
   * list keeps what it returns. Return the
   * item itself, or an equal object you already hold — typically the cached object when its
   * `metadata.resourceVersion` is the item's — so that a relist does not hold unchanged objects twice
   * (the parsed copy becomes garbage at once). Do not return an object that differs from the item.
   */
  reuseListItem?(this: void, item: KubeObject): KubeObject;
  /** pino logger; the ListerWatcher logs at debug level under `{ component: 'client-node', resource }`. */
  logger?: Logger;
}

const ACCEPT_JSON = 'application/json';
const ACCEPT_METADATA_LIST =
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const ACCEPT_METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
/** Error bodies are Status objects of a few hundred bytes; more than this is not worth reading. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * A {@link ListerWatcher} for one resource of the KubeConfig's current cluster: any
 * group/version/resource, built-in or CRD, in one namespace or all of them, with fixed selectors.
 *
 * - Requests go to `/api/v1[/namespaces/{ns}]/{resource}` (core group) or
 *   `/apis/{group}/{version}[/namespaces/{ns}]/{resource}`, with `ListOptions`/`WatchOptions` as
 *   query parameters (`limit`, `continue`, `resourceVersion`, `resourceVersionMatch`, `watch=true`,
 *   `allowWatchBookmarks`, `sendInitialEvents`, `timeoutSeconds`) plus the selectors.
 * - Authentication, TLS, exec plugins, proxies and in-cluster config come from `kubeConfig`
 *   (`applyToHTTPSOptions`, evaluated per request). Requests use node's `http`/`https` with the agent
 *   client-node builds for the cluster.
 * - `list` resolves with the list, decoded as the body streams in (see `ListDecoder`): a page (up to
 *   16 MiB) with one `JSON.parse`, a longer body item by item, so a list of any size decodes and no
 *   body over 16 MiB is held whole;
 *   `items: null` becomes `[]`. A non-2xx answer rejects with `KinformerError.fromStatus` when the body is a Status, else
 *   with the HTTP status' code (plain-text 429 → `ERR_TOO_MANY_REQUESTS`, Go's plain 404 →
 *   `ERR_NOT_FOUND`) or `ERR_BAD_RESPONSE` for an HTML page; `Retry-After` becomes
 *   `retryAfterSeconds`. A body that is not JSON or not a list rejects with `ERR_BAD_RESPONSE`, one
 *   that ends before the list does with `ERR_LIST_TRUNCATED`, an item longer than `maxListItemBytes`
 *   with `ERR_LIST_ITEM_TOO_LARGE`. Items are never handed over before the whole list has arrived.
 * - `watch` resolves once the server answered 2xx, with a single-use async iterable of events (see
 *   `WatchEventStream` for how lines are decoded and which errors it throws). It completes when
 *   the server closes cleanly or `signal` aborts; `break` closes the request.
 * - Both reject with `ERR_ABORTED` when `signal` aborts before the answer (the request is
 *   destroyed), and with `ERR_CONNECTION` when the connection fails or breaks.
 * - Error `details` carry `resource`, `verb`, and for bad bodies or lines a short excerpt; never
 *   headers or credentials.
 * - `watchListSupported` is left undefined: the API server decides (`sendInitialEvents`).
 *
 * Throws `ERR_INVALID_OPTION` for an invalid resource, `maxLineBytes` or `maxListItemBytes`,
 * `ERR_TLS` for a cluster with both insecure-skip-tls-verify and a CA, `ERR_CREDENTIALS` for a
 * token holding CR/LF or another character a header may not (both checked again on every request).
 */
export function createListWatch<T extends KubeObject = KubeObject>(
  kubeConfig: KubeConfig,
  resource: ApiResource,
  options: ListWatchOptions = {},
): ListerWatcher<T> {
  return new ClientNodeListWatch<T>(kubeConfig, resource, options);
}

class ClientNodeListWatch<T extends KubeObject> implements ListerWatcher<T> {
  private readonly kubeConfig: KubeConfig;
  private readonly name: string;
  private readonly path: string;
  private readonly selectors: WireSelectors;
  private readonly listAccept: string;
  private readonly watchAccept: string;
  private readonly maxLineBytes: number;
  private readonly maxListItemBytes: number;
  private readonly reuseListItem: ((item: T) => T) | undefined;
  private readonly logger: Logger;

  constructor(kubeConfig: KubeConfig, resource: ApiResource, options: ListWatchOptions) {
    validateApiResource(resource);
    checkKubeConfig(kubeConfig, { resource: gvrString(resource) });
    const maxLineBytes = positiveOption('maxLineBytes', options.maxLineBytes, DEFAULT_MAX_WATCH_LINE_BYTES);
    this.reuseListItem = options.reuseListItem as ((item: T) => T) | undefined;
    this.maxListItemBytes = positiveOption(
      'maxListItemBytes',
      options.maxListItemBytes,
      DEFAULT_MAX_LIST_ITEM_BYTES,
    );
    this.kubeConfig = kubeConfig;
    this.name = gvrString(resource);
    this.path = collectionPath(resource);
    this.selectors = {
      labelSelector: options.labelSelector === undefined ? '' : options.labelSelector.toString(),
      fieldSelector: options.fieldSelector === undefined ? '' : options.fieldSelector.toString(),
    };
    this.listAccept = options.metadataOnly === true ? ACCEPT_METADATA_LIST : ACCEPT_JSON;
    this.watchAccept = options.metadataOnly === true ? ACCEPT_METADATA : ACCEPT_JSON;
    this.maxLineBytes = maxLineBytes;
    this.logger = componentLogger(options.logger, {
      component: 'client-node',
      resource: this.name,
      ...(resource.namespace ? { namespace: resource.namespace } : {}),
    });
  }

  async list(options: ListOptions, context: RequestContext): Promise<KubeList<T>> {
    const { signal } = context;
    const details = { resource: this.name, verb: 'list' };
    const path = this.path + listQuery(options, this.selectors);
    this.logger.debug({ path }, 'list');
    const { res } = await openRequest(
      this.kubeConfig,
      { path, accept: this.listAccept, details, keepAlive: true },
      signal,
    );
    const httpStatus = res.statusCode ?? 0;
    if (httpStatus < 200 || httpStatus >= 300) throw await this.failure(res, signal, details);
    const { list, bytes } = await readList<T>(res, signal, {
      maxItemBytes: this.maxListItemBytes,
      ...(this.reuseListItem ? { reuseItem: this.reuseListItem } : {}),
      ...(context.onListMeta ? { onMetadata: context.onListMeta } : {}),
      details,
      httpStatus,
      what: this.name,
    });
    validateListResourceVersions(list, details);
    this.logger.debug({ items: list.items.length, bytes }, 'listed');
    return list;
  }

  async watch(options: WatchOptions, context: RequestContext): Promise<AsyncIterable<WatchEvent<T>>> {
    const { signal } = context;
    const details = { resource: this.name, verb: 'watch' };
    const path = this.path + watchQuery(options, this.selectors);
    this.logger.debug({ path }, 'watch');
    const { res } = await openRequest(this.kubeConfig, { path, accept: this.watchAccept, details }, signal);
    const httpStatus = res.statusCode ?? 0;
    if (httpStatus < 200 || httpStatus >= 300) throw await this.failure(res, signal, details);
    return new WatchEventStream<T>(res, {
      maxLineBytes: this.maxLineBytes,
      details,
      signal,
      onDone: this.onWatchDone,
    });
  }

  private readonly onWatchDone = (summary: WatchStreamSummary): void => {
    const { error, ...counts } = summary;
    if (error === undefined) this.logger.debug(counts, 'watch ended');
    else this.logger.debug({ ...counts, code: error.code, err: error }, 'watch failed');
  };

  /** The error for a non-2xx answer, from its (bounded) body. */
  private async failure(
    res: IncomingMessage,
    signal: AbortSignal,
    details: Record<string, unknown>,
  ): Promise<KinformerError> {
    const httpStatus = res.statusCode ?? 0;
    let text = '';
    try {
      const { body } = await readBody(res, signal, details, MAX_ERROR_BODY_BYTES);
      text = body.toString('utf8');
    } catch (err) {
      // An abort wins; a connection that broke while sending the error body still gives its status.
      if (signal.aborted) throw err;
    }
    const error = errorFromResponse(httpStatus, res.headers, text, details);
    this.logger.debug({ httpStatus, code: error.code }, `${String(details.verb)} failed`);
    return error;
  }
}

function positiveOption(name: string, value: number | undefined, dflt: number): number {
  const n = value ?? dflt;
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new KinformerError(
      ErrorCodes.INVALID_OPTION,
      `createListWatch: ${name} must be a positive integer, not ${String(n)}`,
    );
  }
  return n;
}
