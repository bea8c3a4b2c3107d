import { ErrorCodes, KinformerError } from '@kinformer/core';
import type { KubeObject } from '@kinformer/core';
import { dropManagedFields } from '@kinformer/informer';
import { kindString } from './kinds.js';
import { stringInterner } from './stringInterner.js';
import type { StringInterner } from './stringInterner.js';
import type { Kind } from './kinds.js';

/**
 * How the Manager caches one kind (controller-runtime's `cache.Options.ByObject`, plus `uncached`).
 * Every informer of the kind — a controller's `for`/`owns`/`watches`, `mgr.informer`, `mgr.index` —
 * follows it.
 */
export interface KindCachePolicy<T extends KubeObject = KubeObject> {
  readonly kind: Kind<T>;
  /**
   * Cache only these namespaces: one informer per namespace (each a namespaced LIST/WATCH, so the
   * operator needs no cluster-wide RBAC), read through one view: `mgr.get(kind, 'ns/name')` routes by
   * namespace and fails with `ERR_KIND_NOT_CACHED` for a namespace outside the list. A source or
   * `mgr.informer` call that names one of them gets that one; a controller source that names none
   * watches all of them.
   */
  readonly namespaces?: readonly string[];
  /** Server-side label selector of every informer of the kind (ANDed with a source's own). */
  readonly labelSelector?: string;
  /** Server-side field selector of every informer of the kind (ANDed with a source's own). */
  readonly fieldSelector?: string;
  /** Cache `PartialObjectMetadata` only (reads return metadata, typed as `T`). */
  readonly metadataOnly?: boolean;
  /**
   * Runs on each object before it is cached (after `managedFields` are dropped), e.g. a
   * {@link project}ion. Method syntax on purpose: a policy of `Kind<V1Pod>` sits in a list of
   * policies of other kinds.
   */
  transform?(obj: T): KubeObject;
  /** Keep `metadata.managedFields` for this kind (default: the Manager's `stripManagedFields`, true). */
  readonly stripManagedFields?: boolean;
  /**
   * Cache nothing of the kind's objects: `mgr.read` (and a controller's `ctx.object` when it is the
   * primary kind) read from the API server through the Manager's client. A controller whose sources
   * include the kind still needs its events: it gets a metadata-only informer. `mgr.get` (synchronous,
   * cache-only) throws `ERR_KIND_NOT_CACHED` pointing at `mgr.read`. Excludes every other option.
   */
  readonly uncached?: boolean;
}

/** The `cache` option of a Manager. */
export interface CacheOptions {
  /** One policy per kind (a kind twice is `ERR_INVALID_OPTION`). */
  readonly byKind?: readonly KindCachePolicy[];
  /**
   * Make equal short strings of cached objects one string (namespaces, labels, owner UIDs, images):
   * `stringInterner`. Default true (`pnpm bench:memory`: about a fifth less heap on realistic pods).
   */
  readonly internStrings?: boolean;
}

/** The resolved policies of a Manager, by kind. @internal */
export class CachePolicies {
  readonly #byKind = new Map<string, KindCachePolicy>();
  readonly #strip: boolean;
  readonly #intern: StringInterner | undefined;
  readonly #transforms = new Map<string, ((obj: KubeObject) => KubeObject) | undefined>();

  constructor(options: CacheOptions | undefined, stripManagedFields: boolean) {
    this.#strip = stripManagedFields;
    this.#intern = options?.internStrings === false ? undefined : stringInterner();
    for (const policy of options?.byKind ?? []) {
      const key = kindString(policy.kind);
      if (this.#byKind.has(key))
        throw invalid(`cache.byKind lists ${key} twice: give each kind one policy`, key);
      if (policy.uncached === true) {
        const others = (
          ['namespaces', 'labelSelector', 'fieldSelector', 'metadataOnly', 'transform'] as const
        ).filter((o) => policy[o] !== undefined);
        if (others.length > 0)
          throw invalid(`cache.byKind ${key}: uncached excludes ${others.join(', ')}`, key);
      }
      if (policy.namespaces !== undefined) {
        if (!policy.kind.namespaced)
          throw invalid(`cache.byKind ${key}: a cluster-scoped kind has no namespaces`, key);
        if (policy.namespaces.length === 0 || policy.namespaces.some((ns) => ns === ''))
          throw invalid(
            `cache.byKind ${key}: namespaces must name at least one namespace (omit it for all)`,
            key,
          );
      }
      this.#byKind.set(key, policy);
    }
  }

  /** The policy of `kind`, if one was given. */
  of(kind: Kind): KindCachePolicy | undefined {
    return this.#byKind.get(kindString(kind));
  }

  /** Whether `managedFields` are dropped from `kind`'s cached objects. */
  strips(kind: Kind): boolean {
    return this.of(kind)?.stripManagedFields ?? this.#strip;
  }

  /**
   * The one transform of `kind`'s informers (drop managedFields, then the policy's transform), the
   * same function object on every call so that informers can be keyed by it. `undefined`: none.
   */
  transformOf(kind: Kind): ((obj: KubeObject) => KubeObject) | undefined {
    const key = kindString(kind);
    if (this.#transforms.has(key)) return this.#transforms.get(key);
    const own = this.of(kind)?.transform?.bind(undefined);
    const fn = own === undefined ? this.#compose(kind, undefined) : this.withStrip(kind, own);
    this.#transforms.set(key, fn);
    return fn;
  }

  /**
   * `transform` between dropping managedFields (when the kind drops them) and interning strings,
   * one function per `transform` (so informers keyed by it are shared).
   */
  withStrip(kind: Kind, transform: (obj: KubeObject) => KubeObject): (obj: KubeObject) => KubeObject {
    const byStrip = this.strips(kind) ? this.#stripped : this.#kept;
    let fn = byStrip.get(transform);
    if (fn === undefined) {
      fn = this.#compose(kind, transform)!;
      byStrip.set(transform, fn);
    }
    return fn;
  }

  /** Empties the string interner's table (see {@link StringInterner.clear}). */
  forgetInterned(): void {
    this.#intern?.clear();
  }

  #compose(
    kind: Kind,
    own: ((obj: KubeObject) => KubeObject) | undefined,
  ): ((obj: KubeObject) => KubeObject) | undefined {
    const steps = [this.strips(kind) ? dropManagedFields : undefined, own, this.#intern].filter(
      (f): f is (obj: KubeObject) => KubeObject => f !== undefined,
    );
    if (steps.length <= 1) return steps[0];
    return (obj) => {
      let out = obj;
      for (const step of steps) out = step(out);
      return out;
    };
  }

  readonly #kept = new WeakMap<(obj: KubeObject) => KubeObject, (obj: KubeObject) => KubeObject>();
  readonly #stripped = new WeakMap<(obj: KubeObject) => KubeObject, (obj: KubeObject) => KubeObject>();
}

/** Where one informer of the Manager looks, after its kind's policy applied. @internal */
export interface InformerScope {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  metadataOnly: boolean;
}

/**
 * The scope of an informer that a call asks for within `policy`: the policy's selectors ANDed with
 * the call's, its namespace (the only one, or the one the call names, which must be listed), and
 * metadata-only for a metadata-only or uncached kind. @internal
 */
export function informerScope(
  kind: Kind,
  policy: KindCachePolicy | undefined,
  options: { namespace?: string; labelSelector?: string; fieldSelector?: string; metadataOnly?: boolean },
  managerNamespace: string,
): InformerScope {
  const key = kindString(kind);
  let namespace = options.namespace;
  const allowed = policy?.namespaces;
  if (allowed !== undefined) {
    if (namespace === undefined) {
      if (allowed.length > 1)
        throw invalid(
          `${key} is cached in namespaces ${allowed.join(', ')}: pass { namespace } to mgr.informer to pick one`,
          key,
        );
      namespace = allowed[0];
    } else if (!allowed.includes(namespace))
      throw invalid(
        `${key} is cached only in namespaces ${allowed.join(', ')} (cache.byKind), not ${namespace}`,
        key,
      );
  }
  if (namespace === managerNamespace) namespace = undefined;
  const labelSelector = andSelectors(policy?.labelSelector, options.labelSelector);
  const fieldSelector = andSelectors(policy?.fieldSelector, options.fieldSelector);
  return {
    ...(namespace === undefined ? {} : { namespace }),
    ...(labelSelector === undefined ? {} : { labelSelector }),
    ...(fieldSelector === undefined ? {} : { fieldSelector }),
    metadataOnly: options.metadataOnly === true || policy?.metadataOnly === true || policy?.uncached === true,
  };
}

/** Two label (or field) selectors ANDed; either may be absent or empty. */
export function andSelectors(a: string | undefined, b: string): string;
export function andSelectors(a: string | undefined, b: string | undefined): string | undefined;
export function andSelectors(a: string | undefined, b: string | undefined): string | undefined {
  if (!a) return b || undefined;
  if (!b) return a;
  return a === b ? a : `${a},${b}`;
}

/** The error of a read of a kind that nothing caches, naming the kind and the option to set. */
export function kindNotCachedError(
  kind: Kind,
  reason: 'none' | 'uncached' | { namespace: string },
): KinformerError {
  const key = kindString(kind);
  const message =
    reason === 'none'
      ? `no informer caches ${key}: add it to a controller (for/owns/watches), call mgr.informer(kinds.${kind.resource}) before start, or set cache.byKind [{ kind: ${key}, uncached: true }] to read it from the API server with mgr.read`
      : reason === 'uncached'
        ? `${key} is uncached (cache.byKind uncached: true): read it with await mgr.read(kind, key), which asks the API server`
        : `${key} is cached only in the namespaces of cache.byKind; add ${JSON.stringify(reason.namespace)} to its namespaces to read it`;
  return new KinformerError(ErrorCodes.KIND_NOT_CACHED, message, {
    details: { kind: key, ...(typeof reason === 'object' ? { namespace: reason.namespace } : {}) },
  });
}

function invalid(message: string, kind: string): KinformerError {
  return new KinformerError(ErrorCodes.INVALID_OPTION, message, { details: { kind } });
}
