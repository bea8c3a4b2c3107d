import {
  ErrorCodes,
  KinformerError,
  type GroupVersionResource,
  type KubeObject,
  type Logger,
  type Status,
} from '@kinformer/core';
import { componentLogger, gvrString } from '@kinformer/core/internal';
import type { KubeConfig, V1Scale } from '@kubernetes/client-node';
import { openRequest, readBody } from './httpRequest.js';
import { collectionPath } from './resourcePath.js';
import { errorFromResponse } from './responseError.js';

/**
 * A client for the writes (and single reads) a controller makes, on the same transport as the
 * informers (`httpRequest.ts`: the KubeConfig's auth, TLS, proxy and keep-alive connections).
 * Every failure is a `KinformerError` carrying the server's `Status`.
 */

/** A resource type, optionally tagged with the type of its objects (see {@link typedResource}). */
export type ResourceOf<T extends KubeObject = KubeObject> = GroupVersionResource & {
  /** Type-level only: the object type of this resource. Never set. */
  readonly __object?: T;
};

/** Tags a group/version/resource with its object type: `typedResource<V1Pod>({ version: 'v1', resource: 'pods' })`. */
export function typedResource<T extends KubeObject>(gvr: GroupVersionResource): ResourceOf<T> {
  return Object.freeze({ ...gvr });
}

/** Names one object: `name`, and `namespace` for namespaced resources. */
export interface ObjectKey {
  namespace?: string;
  name: string;
}

/** What every call takes. */
export interface CallOptions {
  /** Aborts the request (`ERR_ABORTED`). Pass a controller's run signal. */
  signal?: AbortSignal;
}

/** What every write takes. */
export interface WriteCallOptions extends CallOptions {
  /** `dryRun=All`: the server validates and answers as for the real write, and stores nothing. */
  dryRun?: boolean;
  /** The field manager recorded in `managedFields` (default: the client's `fieldManager`). */
  fieldManager?: string;
}

/** Options of {@link ObjectClient.patch}. */
export interface PatchCallOptions extends WriteCallOptions {
  /** `merge` (RFC 7386, the default), `json` (RFC 6902) or `strategic` (built-in types only). */
  type?: 'merge' | 'json' | 'strategic';
}

/** Options of {@link ObjectClient.apply}. */
export interface ApplyCallOptions extends WriteCallOptions {
  /** Take fields other managers own instead of failing with 409 Conflict. */
  force?: boolean;
}

/** Options of {@link ObjectClient.delete}. */
export interface DeleteCallOptions extends CallOptions {
  dryRun?: boolean;
  /** Delete only if the object still has this uid / resourceVersion (else 409 Conflict). */
  preconditions?: { uid?: string; resourceVersion?: string };
  /** What happens to dependents: `Background` (the server's default), `Foreground`, `Orphan`. */
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  gracePeriodSeconds?: number;
}

/** Options of {@link ObjectClient.list}: one page. */
export interface ListCallOptions extends CallOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
}

/** One page of a list. */
export interface ListPage<T> {
  items: T[];
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
}

/** Options of {@link ObjectClient}. */
export interface ObjectClientOptions {
  /** The default field manager of every write (required by `apply` unless given per call). */
  fieldManager?: string;
  logger?: Logger;
  /**
   * Called after every successful write that was not a dry run, with what the server returned
   * (the object; for a delete the object or the `Status`). A throw is logged and ignored.
   */
  onWrite?: (gvr: GroupVersionResource, result: KubeObject | Status) => void;
}

const JSON_TYPE = 'application/json';
const PATCH_TYPES = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
} as const;
const APPLY_TYPE = 'application/apply-patch+yaml';

interface Request {
  verb: string;
  method: string;
  gvr: GroupVersionResource;
  namespace: string | undefined;
  name: string | undefined;
  subresource?: 'status' | 'scale';
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
  write: boolean;
  dryRun?: boolean;
  signal: AbortSignal | undefined;
}

const NEVER = new AbortController().signal;

/** The HTTP method of each write verb. */
const WRITE_METHODS = { create: 'POST', update: 'PUT', patch: 'PATCH', apply: 'PATCH' } as const;

/** Where a write goes: a collection (no `name`) or an object, and optionally its subresource. */
interface WriteTarget {
  namespace?: string | undefined;
  name?: string | undefined;
  subresource?: 'status' | 'scale' | undefined;
}

function keyOf(obj: KubeObject, verb: string): ObjectKey {
  const meta = obj.metadata;
  if (typeof meta?.name !== 'string' || meta.name === '') {
    throw new KinformerError(ErrorCodes.INVALID_OPTION, `${verb}: the object has no metadata.name`);
  }
  return meta.namespace === undefined ? { name: meta.name } : { namespace: meta.namespace, name: meta.name };
}

/**
 * Reads and writes objects of any resource type over a `KubeConfig`:
 *
 * ```ts
 * const client = new ObjectClient(kubeConfig, { fieldManager: 'my-controller' });
 * const pods = typedResource<V1Pod>({ version: 'v1', resource: 'pods' });
 * const pod = await client.get(pods, { namespace: 'default', name: 'web' });
 * await client.apply(pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default' }, spec }, { force: true });
 * ```
 *
 * Every method rejects with a `KinformerError`: with the server's `Status` for an answer (`ERR_NOT_FOUND`,
 * `ERR_CONFLICT` — {@link isConflict} and {@link isAlreadyExists} tell the two 409s apart —,
 * `ERR_INVALID`, `ERR_FORBIDDEN`, …), `ERR_CONNECTION`/`ERR_TLS`/`ERR_CREDENTIALS` before one,
 * `ERR_ABORTED` when the call's signal aborts.
 */
export class ObjectClient {
  readonly #kubeConfig: KubeConfig;
  readonly #fieldManager: string | undefined;
  readonly #logger: Logger;
  readonly #onWrite: ObjectClientOptions['onWrite'];

  constructor(kubeConfig: KubeConfig, options: ObjectClientOptions = {}) {
    this.#kubeConfig = kubeConfig;
    this.#fieldManager = options.fieldManager;
    this.#logger = componentLogger(options.logger, { component: 'object-client' });
    this.#onWrite = options.onWrite;
  }

  /** GETs one object. */
  get<T extends KubeObject = KubeObject>(
    gvr: ResourceOf<T>,
    key: ObjectKey,
    options: CallOptions = {},
  ): Promise<T> {
    return this.#send<T>({
      verb: 'get',
      method: 'GET',
      gvr,
      namespace: key.namespace,
      name: key.name,
      write: false,
      signal: options.signal,
    });
  }

  /** LISTs one page (all of it unless `limit`), in a namespace or across all. */
  list<T extends KubeObject = KubeObject>(
    gvr: ResourceOf<T>,
    options: ListCallOptions = {},
  ): Promise<ListPage<T>> {
    return this.#send<ListPage<T>>({
      verb: 'list',
      method: 'GET',
      gvr,
      namespace: options.namespace,
      name: undefined,
      query: {
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
        limit: options.limit === undefined ? undefined : String(Math.trunc(options.limit)),
        continue: options.continue,
        resourceVersion: options.resourceVersion,
        resourceVersionMatch: options.resourceVersionMatch,
      },
      write: false,
      signal: options.signal,
    });
  }

  /** POSTs a new object (into `metadata.namespace` for namespaced types). */
  create<T extends KubeObject = KubeObject>(
    gvr: ResourceOf<T>,
    obj: T,
    options: WriteCallOptions = {},
  ): Promise<T> {
    return this.#write<T>('create', gvr, { namespace: obj.metadata?.namespace }, obj, JSON_TYPE, options);
  }

  /** PUTs an object; a set `metadata.resourceVersion` must be current (else 409 Conflict). */
  update<T extends KubeObject = KubeObject>(
    gvr: ResourceOf<T>,
    obj: T,
    options: WriteCallOptions = {},
  ): Promise<T> {
    return this.#write<T>('update', gvr, keyOf(obj, 'update'), obj, JSON_TYPE, options);
  }

  /** PUTs an object's `status` (only the status changes). */
  updateStatus<T extends KubeObject = KubeObject>(
    gvr: ResourceOf<T>,
    obj: T,
    options: WriteCallOptions = {},
  ): Promise<T> {
    const at = { ...keyOf(obj, 'updateStatus'), subresource: 'status' } as const;
    return this.#write<T>('update', gvr, at, obj, JSON_TYPE, options);
  }

  /** PATCHes an object (merge patch unless `type` says otherwise). */
  patch<T extends KubeObject = KubeObject>(
    gvr: ResourceOf<T>,
    key: ObjectKey,
    patch: unknown,
    options: PatchCallOptions = {},
  ): Promise<T> {
    return this.#patch<T>(gvr, key, patch, options);
  }

  #patch<T extends KubeObject>(
    gvr: ResourceOf<T>,
    at: WriteTarget,
    patch: unknown,
    options: PatchCallOptions = {},
  ): Promise<T> {
    return this.#write<T>('patch', gvr, at, patch, PATCH_TYPES[options.type ?? 'merge'], options);
  }

  /** PATCHes an object's `status` subresource (merge patch unless `type` says otherwise). */
  patchStatus<T extends KubeObject = KubeObject>(
    gvr: ResourceOf<T>,
    key: ObjectKey,
    patch: unknown,
    options?: PatchCallOptions,
  ): Promise<T> {
    return this.#patch<T>(gvr, { ...key, subresource: 'status' }, patch, options);
  }

  /**
   * Server-side apply: `obj` is the configuration this field manager owns (with `apiVersion`,
   * `kind` and `metadata.name`); fields it applied before and leaves out are removed. Creates the
   * object when missing. Rejects with 409 Conflict when another manager owns a field it changes,
   * unless `force`. Needs a field manager (the option or the client's).
   */
  apply<T extends KubeObject = KubeObject>(
    gvr: ResourceOf<T>,
    obj: T,
    options: ApplyCallOptions = {},
  ): Promise<T> {
    return this.#apply<T>(gvr, obj, undefined, options);
  }

  /** Server-side apply of `status` (a configuration with the status fields this manager owns). */
  applyStatus<T extends KubeObject = KubeObject>(
    gvr: ResourceOf<T>,
    obj: T,
    options: ApplyCallOptions = {},
  ): Promise<T> {
    return this.#apply<T>(gvr, obj, 'status', options);
  }

  /** The `autoscaling/v1` Scale of an object whose type has the `scale` subresource. */
  getScale(gvr: GroupVersionResource, key: ObjectKey, options: CallOptions = {}): Promise<V1Scale> {
    return this.#send<V1Scale>({
      verb: 'get',
      method: 'GET',
      gvr,
      namespace: key.namespace,
      name: key.name,
      subresource: 'scale',
      write: false,
      signal: options.signal,
    });
  }

  /**
   * Sets the replicas through `scale`: a number patches `spec.replicas`; a `Scale` is PUT (with a
   * `metadata.resourceVersion` it must be current). Resolves with the new Scale.
   */
  updateScale(
    gvr: GroupVersionResource,
    key: ObjectKey,
    scale: number | V1Scale,
    options: WriteCallOptions = {},
  ): Promise<V1Scale> {
    const at = { ...key, subresource: 'scale' } as const;
    if (typeof scale === 'number')
      return this.#write<V1Scale>(
        'patch',
        gvr,
        at,
        { spec: { replicas: scale } },
        PATCH_TYPES.merge,
        options,
      );
    return this.#write<V1Scale>('update', gvr, at, scale, JSON_TYPE, options);
  }

  /**
   * DELETEs an object. Resolves with what the server answered: the object (types such as pods, or
   * any object that finalizers or a foreground/orphan propagation keep for now) or a `Status`.
   */
  delete<T extends KubeObject = KubeObject>(
    gvr: ResourceOf<T>,
    key: ObjectKey,
    options: DeleteCallOptions = {},
  ): Promise<T | Status> {
    const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1' };
    if (options.preconditions !== undefined) body.preconditions = options.preconditions;
    if (options.propagationPolicy !== undefined) body.propagationPolicy = options.propagationPolicy;
    if (options.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds;
    if (options.dryRun === true) body.dryRun = ['All'];
    return this.#send<T | Status>({
      verb: 'delete',
      method: 'DELETE',
      gvr,
      namespace: key.namespace,
      name: key.name,
      body,
      contentType: JSON_TYPE,
      write: true,
      dryRun: options.dryRun === true,
      signal: options.signal,
    });
  }

  #apply<T>(
    gvr: GroupVersionResource,
    obj: KubeObject,
    subresource: 'status' | undefined,
    options: ApplyCallOptions,
  ): Promise<T> {
    const fieldManager = options.fieldManager ?? this.#fieldManager;
    if (fieldManager === undefined || fieldManager === '') {
      return Promise.reject(
        new KinformerError(
          ErrorCodes.INVALID_OPTION,
          'apply needs a field manager (the fieldManager option of the call or of the ObjectClient)',
          {
            details: { resource: gvrString(gvr) },
          },
        ),
      );
    }
    const at = { ...keyOf(obj, 'apply'), subresource };
    return this.#write<T>('apply', gvr, at, obj, APPLY_TYPE, {
      ...options,
      fieldManager,
      ...(options.force === true ? { force: true } : {}),
    });
  }

  /** A write of `body` to the object (or, with no `name`, the collection) at `at`. */
  #write<T>(
    verb: keyof typeof WRITE_METHODS,
    gvr: GroupVersionResource,
    at: WriteTarget,
    body: unknown,
    contentType: string,
    options: WriteCallOptions & { force?: boolean },
  ): Promise<T> {
    const fieldManager = options.fieldManager ?? this.#fieldManager;
    const { namespace, name, subresource } = at;
    return this.#send<T>({
      verb,
      method: WRITE_METHODS[verb],
      gvr,
      namespace,
      name,
      ...(subresource === undefined ? {} : { subresource }),
      query: {
        dryRun: options.dryRun === true ? 'All' : undefined,
        fieldManager,
        force: options.force === true ? 'true' : undefined,
      },
      body,
      contentType,
      write: true,
      dryRun: options.dryRun === true,
      signal: options.signal,
    });
  }

  async #send<T>(request: Request): Promise<T> {
    const { gvr, namespace, name, subresource } = request;
    if (name !== undefined && (name === '' || name === '.' || name === '..' || name.includes('/'))) {
      throw new KinformerError(
        ErrorCodes.INVALID_OPTION,
        `${request.verb}: ${JSON.stringify(name)} is not an object name`,
      );
    }
    let path = collectionPath({
      ...gvr,
      ...(namespace === undefined || namespace === '' ? {} : { namespace }),
    });
    if (name !== undefined) path += `/${encodeURIComponent(name)}`;
    if (subresource !== undefined) path += `/${subresource}`;
    const query = Object.entries(request.query ?? {})
      .filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '')
      .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
      .join('&');
    if (query !== '') path += `?${query}`;
    const details: Record<string, unknown> = { verb: request.verb, resource: gvrString(gvr) };
    if (namespace !== undefined) details.namespace = namespace;
    if (name !== undefined) details.name = name;
    if (subresource !== undefined) details.subresource = subresource;
    const signal = request.signal ?? NEVER;
    const target = {
      path,
      method: request.method,
      accept: JSON_TYPE,
      details,
      keepAlive: true,
      ...(request.body === undefined
        ? {}
        : { body: JSON.stringify(request.body), contentType: request.contentType ?? JSON_TYPE }),
    };
    const { res } = await openRequest(this.#kubeConfig, target, signal);
    const { body } = await readBody(res, signal, details);
    const text = body.toString('utf8');
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      const err = errorFromResponse(status, res.headers, text, details);
      this.#logger.debug({ ...details, httpStatus: status, reason: err.status?.reason }, 'request failed');
      throw err;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (cause) {
      throw new KinformerError(
        ErrorCodes.BAD_RESPONSE,
        `the server answered ${request.verb} with a body that is not JSON`,
        {
          cause,
          httpStatus: status,
          details,
        },
      );
    }
    this.#logger.debug({ ...details, httpStatus: status, dryRun: request.dryRun === true }, request.verb);
    if (request.write && request.dryRun !== true && this.#onWrite !== undefined) {
      try {
        this.#onWrite(gvr, parsed as KubeObject | Status);
      } catch (err) {
        this.#logger.warn({ ...details, err }, 'onWrite threw; ignored');
      }
    }
    return parsed as T;
  }
}

/** True for the 409 of a write on a stale resourceVersion or of an apply conflict (reason `Conflict`). */
export function isConflict(err: unknown): err is KinformerError {
  return (
    err instanceof KinformerError && err.code === ErrorCodes.CONFLICT && err.status?.reason === 'Conflict'
  );
}

/** True for the 409 of a create whose object already exists (reason `AlreadyExists`). */
export function isAlreadyExists(err: unknown): err is KinformerError {
  return (
    err instanceof KinformerError &&
    err.code === ErrorCodes.CONFLICT &&
    err.status?.reason === 'AlreadyExists'
  );
}

/** True for a 404 (the object, or the resource type). */
export function isNotFound(err: unknown): err is KinformerError {
  return err instanceof KinformerError && err.code === ErrorCodes.NOT_FOUND;
}
