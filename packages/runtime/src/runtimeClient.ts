import { ErrorCodes, isKinformerError } from '@kinformer/core';
import type { KubeObject } from '@kinformer/core';
import type { Kind } from './kinds.js';

/** Which object: `{ namespace, name }` (namespace absent for cluster-scoped kinds). */
export interface ObjectRef {
  namespace?: string | undefined;
  name: string;
}

/** Options every write takes. */
export interface WriteOptions {
  /** `dryRun=All`: validated and answered as for real, nothing stored. */
  dryRun?: boolean;
  /** Default: the Manager's name. */
  fieldManager?: string;
}

/** Options of {@link RuntimeClient.patch}. */
export interface PatchOptions extends WriteOptions {
  /** `merge` (RFC 7386, the default), `json` (RFC 6902) or `strategic` (built-in kinds only). */
  type?: 'merge' | 'json' | 'strategic';
}

/** Options of {@link RuntimeClient.apply}. */
export interface ApplyOptions extends WriteOptions {
  /** Take ownership of fields another manager owns instead of failing with a conflict. */
  force?: boolean;
}

/** Options of {@link RuntimeClient.delete}. */
export interface DeleteOptions extends WriteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  gracePeriodSeconds?: number;
}

/**
 * The client a reconcile writes with (`ctx.client`): typed by {@link Kind}, every failure a
 * `KinformerError` carrying the server's `Status`. Every successful write is recorded in the
 * Manager's read-your-writes overlay, so the next reconcile's `ctx.object` (and
 * `mgr.lister(kind)`) see it even before the informer does.
 */
export interface RuntimeClient {
  /** Reads from the API server (not the cache); `undefined` on 404. */
  get<T extends KubeObject>(
    kind: Kind<T>,
    ref: ObjectRef,
    options?: { signal?: AbortSignal },
  ): Promise<T | undefined>;
  create<T extends KubeObject>(
    kind: Kind<T>,
    obj: T,
    options?: WriteOptions & { signal?: AbortSignal },
  ): Promise<T>;
  /** A full replace, conditional on `obj.metadata.resourceVersion` when set (409 when stale). */
  update<T extends KubeObject>(
    kind: Kind<T>,
    obj: T,
    options?: WriteOptions & { signal?: AbortSignal },
  ): Promise<T>;
  patch<T extends KubeObject>(
    kind: Kind<T>,
    ref: ObjectRef,
    patch: unknown,
    options?: PatchOptions & { signal?: AbortSignal },
  ): Promise<T>;
  /** Server-side apply of `obj` (a partial object: the fields this manager owns). */
  apply<T extends KubeObject>(
    kind: Kind<T>,
    obj: T,
    options?: ApplyOptions & { signal?: AbortSignal },
  ): Promise<T>;
  /** Replaces the `status` subresource. */
  updateStatus<T extends KubeObject>(
    kind: Kind<T>,
    obj: T,
    options?: WriteOptions & { signal?: AbortSignal },
  ): Promise<T>;
  /** Patches the `status` subresource. */
  patchStatus<T extends KubeObject>(
    kind: Kind<T>,
    ref: ObjectRef,
    patch: unknown,
    options?: PatchOptions & { signal?: AbortSignal },
  ): Promise<T>;
  /** Deletes; resolves `false` when it was already gone (404). */
  delete(kind: Kind, ref: ObjectRef, options?: DeleteOptions & { signal?: AbortSignal }): Promise<boolean>;
}

/**
 * The transport a {@link RuntimeClient} writes through (`@kinformer/client-node`'s `ObjectClient`
 * has this shape): GVR-addressed, every failure a `KinformerError` with the server's Status.
 */
export interface ObjectWriter {
  write(request: WriteRequest): Promise<KubeObject | undefined>;
}

/** One request of an {@link ObjectWriter}. */
export type WriteRequest =
  | { verb: 'get'; kind: Kind; ref: ObjectRef; signal?: AbortSignal | undefined }
  | {
      verb: 'create' | 'update' | 'apply';
      kind: Kind;
      obj: KubeObject;
      subresource?: 'status' | undefined;
      options: ApplyOptions;
      signal?: AbortSignal | undefined;
    }
  | {
      verb: 'patch';
      kind: Kind;
      ref: ObjectRef;
      patch: unknown;
      subresource?: 'status' | undefined;
      options: PatchOptions;
      signal?: AbortSignal | undefined;
    }
  | { verb: 'delete'; kind: Kind; ref: ObjectRef; options: DeleteOptions; signal?: AbortSignal | undefined };

/** Where a {@link RuntimeClient} records its writes (the Manager's read-your-writes overlay). */
export interface WriteRecorder {
  wrote(kind: Kind, obj: KubeObject): void;
  deleted(kind: Kind, ref: ObjectRef, uid: string | undefined): void;
}

/** A {@link RuntimeClient} over `writer` that records every successful, non-dry-run write in `recorder`. */
export function runtimeClientOver(writer: ObjectWriter, recorder?: WriteRecorder): RuntimeClient {
  const wrote = <T extends KubeObject>(
    kind: Kind<T>,
    dryRun: boolean | undefined,
    obj: KubeObject | undefined,
  ): T => {
    if (obj !== undefined && dryRun !== true) recorder?.wrote(kind, obj);
    return obj as T;
  };
  return {
    get: async (kind, ref, options = {}) => {
      try {
        return (await writer.write({ verb: 'get', kind, ref, signal: options.signal })) as never;
      } catch (err) {
        if (isKinformerError(err, ErrorCodes.NOT_FOUND)) return undefined;
        throw err;
      }
    },
    create: async (kind, obj, options = {}) =>
      wrote(
        kind,
        options.dryRun,
        await writer.write({ verb: 'create', kind, obj, options, signal: options.signal }),
      ),
    update: async (kind, obj, options = {}) =>
      wrote(
        kind,
        options.dryRun,
        await writer.write({ verb: 'update', kind, obj, options, signal: options.signal }),
      ),
    apply: async (kind, obj, options = {}) =>
      wrote(
        kind,
        options.dryRun,
        await writer.write({ verb: 'apply', kind, obj, options, signal: options.signal }),
      ),
    patch: async (kind, ref, patch, options = {}) =>
      wrote(
        kind,
        options.dryRun,
        await writer.write({ verb: 'patch', kind, ref, patch, options, signal: options.signal }),
      ),
    updateStatus: async (kind, obj, options = {}) =>
      wrote(
        kind,
        options.dryRun,
        await writer.write({
          verb: 'update',
          kind,
          obj,
          subresource: 'status',
          options,
          signal: options.signal,
        }),
      ),
    patchStatus: async (kind, ref, patch, options = {}) =>
      wrote(
        kind,
        options.dryRun,
        await writer.write({
          verb: 'patch',
          kind,
          ref,
          patch,
          subresource: 'status',
          options,
          signal: options.signal,
        }),
      ),
    delete: async (kind, ref, options = {}) => {
      let answer: KubeObject | undefined;
      try {
        answer = await writer.write({ verb: 'delete', kind, ref, options, signal: options.signal });
      } catch (err) {
        if (isKinformerError(err, ErrorCodes.NOT_FOUND)) return false;
        throw err;
      }
      // An object with finalizers stays (terminating): the answer is its new state.
      if (answer?.metadata?.deletionTimestamp !== undefined) wrote(kind, options.dryRun, answer);
      else if (options.dryRun !== true) recorder?.deleted(kind, ref, answer?.metadata?.uid);
      return true;
    },
  };
}
