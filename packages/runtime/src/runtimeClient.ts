import { ErrorCodes, isKinformerError } from '@kinformer/core';
import type { KubeObject, Status } from '@kinformer/core';
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
  /** Aborts the request. */
  signal?: AbortSignal;
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

/** Options of a read or write call: its abort signal. */
interface Signal {
  signal?: AbortSignal;
}

/**
 * The writes {@link RuntimeClient} and {@link ObjectWriter} share, over the key type `K` that names
 * an existing object. Every failure is a `KinformerError` carrying the server's `Status`.
 */
export interface WriteVerbs<K> {
  create<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T>;
  /** A full replace, conditional on `obj.metadata.resourceVersion` when set (409 when stale). */
  update<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T>;
  /** Server-side apply of `obj` (a partial object: the fields this manager owns). */
  apply<T extends KubeObject>(kind: Kind<T>, obj: T, options?: ApplyOptions): Promise<T>;
  /** Replaces the `status` subresource. */
  updateStatus<T extends KubeObject>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T>;
  patch<T extends KubeObject>(kind: Kind<T>, ref: K, patch: unknown, options?: PatchOptions): Promise<T>;
  /** Patches the `status` subresource. */
  patchStatus<T extends KubeObject>(
    kind: Kind<T>,
    ref: K,
    patch: unknown,
    options?: PatchOptions,
  ): Promise<T>;
}

/**
 * The client a reconcile writes with (`ctx.client`): typed by {@link Kind}, every failure a
 * `KinformerError` carrying the server's `Status`. Every successful write is recorded in the
 * Manager's read-your-writes overlay, so the next reconcile's `ctx.object` (and
 * `mgr.lister(kind)`) see it even before the informer does.
 */
export interface RuntimeClient extends WriteVerbs<ObjectRef> {
  /** Reads from the API server (not the cache); `undefined` on 404. */
  get<T extends KubeObject>(kind: Kind<T>, ref: ObjectRef, options?: Signal): Promise<T | undefined>;
  /** Deletes; resolves `false` when it was already gone (404). */
  delete(kind: Kind, ref: ObjectRef, options?: DeleteOptions): Promise<boolean>;
}

/**
 * The transport a {@link RuntimeClient} writes through: `@kinformer/client-node`'s `ObjectClient`
 * has this shape (tests may pass a fake).
 */
export interface ObjectWriter extends WriteVerbs<KeyOf> {
  get<T extends KubeObject>(kind: Kind<T>, key: KeyOf, options?: Signal): Promise<T>;
  delete<T extends KubeObject>(kind: Kind<T>, key: KeyOf, options?: DeleteOptions): Promise<T | Status>;
}

/** `{ namespace?, name }` with no `undefined` namespace (what `ObjectClient` takes). */
type KeyOf = { namespace?: string; name: string };

/** Where a {@link RuntimeClient} records its writes (the Manager's read-your-writes overlay). */
export interface WriteRecorder {
  wrote(kind: Kind, obj: KubeObject): void;
  deleted(kind: Kind, ref: ObjectRef, uid: string | undefined): void;
}

function keyOf(ref: ObjectRef): KeyOf {
  return ref.namespace ? { namespace: ref.namespace, name: ref.name } : { name: ref.name };
}

/** A {@link RuntimeClient} over `writer` that records every successful, non-dry-run write in `recorder`. */
export function runtimeClientOver(writer: ObjectWriter, recorder?: WriteRecorder): RuntimeClient {
  const wrote = <T extends KubeObject>(kind: Kind<T>, dryRun: boolean | undefined, obj: T): T => {
    if (dryRun !== true) recorder?.wrote(kind, obj);
    return obj;
  };
  return {
    get: async (kind, ref, options = {}) => {
      try {
        return await writer.get(kind, keyOf(ref), options);
      } catch (err) {
        if (isKinformerError(err, ErrorCodes.NOT_FOUND)) return undefined;
        throw err;
      }
    },
    create: async (kind, obj, options = {}) =>
      wrote(kind, options.dryRun, await writer.create(kind, obj, options)),
    update: async (kind, obj, options = {}) =>
      wrote(kind, options.dryRun, await writer.update(kind, obj, options)),
    apply: async (kind, obj, options = {}) =>
      wrote(kind, options.dryRun, await writer.apply(kind, obj, options)),
    patch: async (kind, ref, patch, options = {}) =>
      wrote(kind, options.dryRun, await writer.patch(kind, keyOf(ref), patch, options)),
    updateStatus: async (kind, obj, options = {}) =>
      wrote(kind, options.dryRun, await writer.updateStatus(kind, obj, options)),
    patchStatus: async (kind, ref, patch, options = {}) =>
      wrote(kind, options.dryRun, await writer.patchStatus(kind, keyOf(ref), patch, options)),
    delete: async (kind, ref, options = {}) => {
      let answer: KubeObject | Status;
      try {
        answer = await writer.delete(kind, keyOf(ref), options);
      } catch (err) {
        if (isKinformerError(err, ErrorCodes.NOT_FOUND)) return false;
        throw err;
      }
      if (options.dryRun === true) return true;
      if (isStatusAnswer(answer)) {
        recorder?.deleted(kind, ref, answer.details?.uid);
        return true;
      }
      // An object that finalizers (or a foreground deletion) keep is still there, terminating.
      if (answer.metadata?.deletionTimestamp !== undefined) recorder?.wrote(kind, answer);
      else recorder?.deleted(kind, ref, answer.metadata?.uid);
      return true;
    },
  };
}

/** A DELETE answered with a `Status` (the object is gone) rather than the object. */
function isStatusAnswer(answer: KubeObject | Status): answer is Status {
  return answer.kind === 'Status';
}
