import { Lister, metaNamespaceIndexFunc, NAMESPACE_INDEX } from '@kinformer/cache';
import type { QueueKind } from '@kinformer/controller';
import { ErrorCodes, KinformerError, realClock } from '@kinformer/core';
import { componentLogger, definedProps, gvrString } from '@kinformer/core/internal';
import type { Clock, GroupVersionResource, KubeObject, Logger, ObjectMeta } from '@kinformer/core';
import type { ListerWatcher } from '@kinformer/reflector';
import type { ExpectedType } from '@kinformer/reflector/internal';
import { SharedIndexInformer, type SharedIndexInformerOptions } from './sharedIndexInformer.js';
import { awaitSync } from './waitForCacheSync.js';

/** Label and field selectors, in the Kubernetes text grammar (`app=web,tier!=db`, `spec.nodeName=n1`). */
export interface SelectorOptions {
  labelSelector?: string;
  fieldSelector?: string;
}

/**
 * Selectors every informer of a factory uses (client-go's `WithTweakListOptions`). The object form is
 * ANDed with the selectors a call passes; the function form receives them and returns the ones to use.
 */
export type TweakListOptions = SelectorOptions | ((options: SelectorOptions) => SelectorOptions);

/** What a {@link ListerWatcherFactory} is asked to build. */
export interface ListerWatcherRequest extends SelectorOptions {
  /** `''` = all namespaces. */
  namespace: string;
  /** Serve `PartialObjectMetadata` objects instead of full ones. */
  metadataOnly: boolean;
  /**
   * The object the informer caches under `key` (`namespace/name`), while it caches objects as the
   * server sends them (no transform); otherwise `undefined`. A ListerWatcher may hand such an object
   * back in place of an equal list item (same resourceVersion), so that a relist does not hold every
   * unchanged object twice (`createListWatch`'s `reuseListItem`).
   */
  cached?: (key: string) => KubeObject | undefined;
}

/**
 * Builds the ListerWatcher of one informer. `kinformer`'s `SharedInformerFactory` builds
 * `createListWatch(kubeConfig, …)` from `@kinformer/client-node` by default; tests pass one that
 * returns `FakeListerWatcher`s.
 */
export type ListerWatcherFactory = (
  gvr: GroupVersionResource,
  request: ListerWatcherRequest,
) => ListerWatcher<KubeObject>;

/** Options of {@link InformerFactory} (and of `kinformer`'s `SharedInformerFactory`). */
export interface InformerFactoryOptions {
  /** The namespace every informer watches, unless a call says otherwise. Default `''`: all namespaces. */
  namespace?: string;
  /** Default resync period of every informer, ms. Default 0: no resync. */
  defaultResyncMs?: number;
  /** Selectors for every informer (see `TweakListOptions`). */
  tweakListOptions?: TweakListOptions;
  /**
   * Transform applied to every object of every informer before it is cached (e.g.
   * `dropManagedFields`). Generic because it serves every resource type; see `TransformFunc`.
   */
  transform?: <T extends KubeObject>(obj: T) => T;
  /** Queue kind of every informer (default `'RealFIFO'`). */
  queue?: QueueKind;
  /** Atomic relists and resyncs in every informer (default true; see the informer's `atomicEvents`). */
  atomicEvents?: boolean;
  /** Deep-freeze cached objects (default: development mode). */
  freeze?: boolean;
  /**
   * Reflector options per informer (page size, backoff, watch timeouts, watch-list), given the
   * informer's key (`pods.v1`) and resource. A function, so that stateful parts such as a `backoff`
   * are made once per informer and never shared.
   */
  reflectorOptions?: (
    key: string,
    gvr: GroupVersionResource,
  ) => NonNullable<SharedIndexInformerOptions<KubeObject>['reflectorOptions']>;
  clock?: Clock;
  logger?: Logger;
}

/** Per-call options of {@link InformerFactory.forResource} and the typed accessors. */
export interface ForResourceOptions extends SelectorOptions {
  /** Watch this namespace instead of the factory's (`''` = all). */
  namespace?: string;
  /** Cache `PartialObjectMetadata` (metadata only) instead of full objects. */
  metadataOnly?: boolean;
  /**
   * This informer's transform, in place of the factory's `transform` (a projection, or
   * `dropManagedFields` for one kind). Part of the informer's key: each distinct function is its own
   * informer (`pods.v1?transform=1`), so keep the function object and pass the same one to share.
   */
  transform?: <T extends KubeObject>(obj: T) => T;
}

/** Per-call options of the typed accessors (`factory.core.v1.pods({ namespace })`). */
export type ScopeOptions = Omit<ForResourceOptions, 'metadataOnly'>;

/** A shared informer and a lister over its cache. */
export interface InformerAndLister<T extends KubeObject> {
  readonly informer: SharedIndexInformer<T>;
  readonly lister: Lister<T>;
}

/** What a metadata-only informer caches: `kind: PartialObjectMetadata`, `apiVersion: meta.k8s.io/v1`. */
export interface PartialObjectMetadata extends KubeObject {
  metadata: ObjectMeta;
}

interface Entry {
  readonly key: string;
  readonly pair: InformerAndLister<KubeObject>;
  started: boolean;
  /** Resource, namespace and selectors: two informers of one scope cache the same objects. */
  readonly scope: string;
  /** `full`, `metadata-only` or `full, transformed`, for the cached-twice warning. */
  readonly form: string;
}

/**
 * The transport-free core of client-go's `SharedInformerFactory`: hands out one shared informer per
 * resource (per namespace, selectors and metadata-only flag) to every caller, starts them together
 * and waits for them. It builds each informer's ListerWatcher with the `listerWatcherFactory` it is
 * given, so it knows nothing of HTTP or `@kubernetes/client-node`.
 *
 * Most programs use `SharedInformerFactory` from `kinformer` instead: this class plus a
 * KubeConfig-backed ListerWatcher factory and typed accessors (`factory.core.v1.pods()`).
 *
 * ```ts
 * const factory = new InformerFactory((gvr, request) => myListerWatcher(gvr, request));
 * const { informer, lister } = factory.forResource<Widget>({ group: 'example.com', version: 'v1', resource: 'widgets' });
 * factory.start(signal);
 * await factory.waitForCacheSync(signal);
 * ```
 *
 * Every informer has the `namespace` index (as client-go's generated informers), so
 * `lister.namespace(ns).list()` never scans the whole cache.
 */
export class InformerFactory {
  readonly #options: InformerFactoryOptions;
  readonly #listerWatcherFactory: ListerWatcherFactory;
  readonly #namespace: string;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #entries = new Map<string, Entry>();
  readonly #transformIds = new Map<(obj: never) => unknown, number>();
  readonly #running = new Set<Promise<void>>();
  readonly #shutdown = new AbortController();
  #shuttingDown = false;

  /** Throws `ERR_INVALID_OPTION` for a negative `defaultResyncMs`. */
  constructor(listerWatcherFactory: ListerWatcherFactory, options: InformerFactoryOptions = {}) {
    this.#options = options;
    this.#namespace = options.namespace ?? '';
    this.#clock = options.clock ?? realClock;
    this.#logger = componentLogger(options.logger, { component: 'informer-factory' });
    const resync = options.defaultResyncMs ?? 0;
    if (!Number.isFinite(resync) || resync < 0) {
      throw new KinformerError(
        ErrorCodes.INVALID_OPTION,
        `defaultResyncMs must be a finite number of ms ≥ 0, got ${resync}`,
      );
    }
    this.#listerWatcherFactory = listerWatcherFactory;
  }

  /**
   * The shared informer (and a lister) of any resource, built-in or custom: the first call creates
   * it, later calls with the same resource, namespace, selectors and `metadataOnly` return the same
   * objects. With `{ metadataOnly: true }` the informer caches `PartialObjectMetadata` only.
   * An informer created after `start` runs from the next `start` call.
   */
  forResource(
    gvr: GroupVersionResource,
    options: ForResourceOptions & { metadataOnly: true },
  ): InformerAndLister<PartialObjectMetadata>;
  forResource<T extends KubeObject = KubeObject>(
    gvr: GroupVersionResource,
    options?: ForResourceOptions,
  ): InformerAndLister<T>;
  forResource<T extends KubeObject>(
    gvr: GroupVersionResource,
    options: ForResourceOptions = {},
  ): InformerAndLister<T> {
    return this.#get<T>(gvr, options, undefined);
  }

  /**
   * Starts every informer not started yet (each runs until `signal` aborts or {@link shutdown}).
   * Non-blocking and safe to call again: call it after asking for more informers. Does nothing once
   * `shutdown` was called.
   */
  start(signal: AbortSignal): void {
    if (this.#shuttingDown) return;
    const toStart: Entry[] = [];
    for (const entry of this.#entries.values()) if (!entry.started) toStart.push(entry);
    if (toStart.length === 0) return;
    const stop = new AbortController();
    const onAbort = (): void => stop.abort(signal.reason);
    const onShutdown = (): void => stop.abort(this.#shutdown.signal.reason);
    if (signal.aborted) stop.abort(signal.reason);
    else signal.addEventListener('abort', onAbort, { once: true });
    this.#shutdown.signal.addEventListener('abort', onShutdown, { once: true });
    const runs = toStart.map((entry) => {
      entry.started = true;
      return entry.pair.informer.run(stop.signal).catch((err: unknown) => {
        this.#logger.error({ err, informer: entry.key }, 'informer failed');
      });
    });
    const all: Promise<void> = Promise.all(runs).then(() => {
      signal.removeEventListener('abort', onAbort);
      this.#shutdown.signal.removeEventListener('abort', onShutdown);
      this.#running.delete(all);
    });
    this.#running.add(all);
  }

  /**
   * Waits until every started informer has synced, and resolves with each one's `hasSynced()` by key
   * (`pods.v1`, `deployments.v1.apps`, with `?namespace=…&labelSelector=…` when a call chose its own).
   * When `signal` aborts first (or an informer stopped unsynced) it resolves with `false` for those
   * that have not synced. Rejects with `ERR_CACHE_SYNC_FAILED` (`cause`: the `ERR_FORBIDDEN`,
   * `ERR_UNAUTHORIZED`, `ERR_NOT_FOUND` or `ERR_BAD_REQUEST` error) when the server refuses an
   * informer's list, instead of waiting forever.
   */
  async waitForCacheSync(signal: AbortSignal): Promise<Map<string, boolean>> {
    const started: Entry[] = [];
    for (const entry of this.#entries.values()) if (entry.started) started.push(entry);
    await awaitSync(
      started.map((e) => e.pair.informer.hasSynced),
      { signal, clock: this.#clock },
    );
    const result = new Map<string, boolean>();
    for (const entry of started) result.set(entry.key, entry.pair.informer.hasSynced());
    return result;
  }

  /**
   * Stops every informer and resolves once all of them have stopped (their `run` returned). Later
   * `start` calls do nothing. Safe to call more than once.
   */
  async shutdown(): Promise<void> {
    this.#shuttingDown = true;
    this.#shutdown.abort();
    while (this.#running.size > 0) await Promise.all([...this.#running]);
  }

  /**
   * {@link forResource} for an informer whose objects must have `expectedType` (the reflector drops
   * others). The typed accessors of `kinformer`'s `SharedInformerFactory` go through it.
   */
  protected typedInformer<T extends KubeObject>(
    gvr: GroupVersionResource,
    expectedType: ExpectedType,
    options: ScopeOptions = {},
  ): InformerAndLister<T> {
    return this.#get<T>(gvr, options, expectedType);
  }

  #get<T extends KubeObject>(
    gvr: GroupVersionResource,
    options: ForResourceOptions,
    expectedType: ExpectedType | undefined,
  ): InformerAndLister<T> {
    if (
      typeof gvr.version !== 'string' ||
      gvr.version === '' ||
      typeof gvr.resource !== 'string' ||
      gvr.resource === ''
    ) {
      throw new KinformerError(ErrorCodes.INVALID_OPTION, 'forResource needs a version and a resource', {
        details: { ...gvr },
      });
    }
    const key = informerKey(gvr, options, this.#namespace, this.#transformIds);
    const existing = this.#entries.get(key);
    if (existing !== undefined) return existing.pair as unknown as InformerAndLister<T>;

    const namespace = options.namespace ?? this.#namespace;
    const selectors = this.#selectors(options);
    const metadataOnly = options.metadataOnly === true;
    const built: { informer?: SharedIndexInformer<T> } = {};
    const listerWatcher = this.#listerWatcherFactory(gvr, {
      namespace,
      metadataOnly,
      ...selectors,
      cached: (cacheKey) =>
        built.informer === undefined || built.informer.hasTransform()
          ? undefined
          : built.informer.getStore().getByKey(cacheKey),
    }) as ListerWatcher<T>;
    const o = this.#options;
    const transform = options.transform ?? o.transform;
    const informer = new SharedIndexInformer<T>(listerWatcher, {
      name: key,
      indexers: { [NAMESPACE_INDEX]: metaNamespaceIndexFunc },
      resyncPeriodMs: o.defaultResyncMs ?? 0,
      clock: this.#clock,
      ...definedProps({
        transform,
        queue: o.queue,
        atomicEvents: o.atomicEvents,
        freeze: o.freeze,
        logger: o.logger,
        objectType: metadataOnly ? undefined : expectedType,
        reflectorOptions: o.reflectorOptions?.(key, gvr),
      }),
    });
    built.informer = informer;
    // The informer's cache is only read through the lister.
    const lister = new Lister<T>(informer.getIndexer(), o.logger === undefined ? {} : { logger: o.logger });
    const pair: InformerAndLister<T> = { informer, lister };
    const scope = `${gvrString(gvr)} namespace=${namespace || '(all)'} labelSelector=${selectors.labelSelector ?? ''} fieldSelector=${selectors.fieldSelector ?? ''}`;
    const form = metadataOnly ? 'metadata-only' : transform === undefined ? 'full' : 'full, transformed';
    this.#warnIfCachedTwice(scope, form, key);
    this.#entries.set(key, {
      key,
      pair: pair as unknown as InformerAndLister<KubeObject>,
      started: false,
      scope,
      form,
    });
    return pair;
  }

  readonly #warnedTwice = new Set<string>();

  /** One warning per scope when a second informer caches the objects of one resource and scope again. */
  #warnIfCachedTwice(scope: string, form: string, key: string): void {
    if (this.#warnedTwice.has(scope)) return;
    const twin = [...this.#entries.values()].find((e) => e.scope === scope);
    if (twin === undefined) return;
    this.#warnedTwice.add(scope);
    this.#logger.warn(
      { informers: [twin.key, key] },
      `${scope.split(' ')[0] ?? key} is cached twice in one scope (${twin.form} and ${form}): one full informer holds the metadata too; share one (the Manager: cache.byKind metadataOnly or one transform for the kind)`,
    );
  }

  #selectors(options: SelectorOptions): SelectorOptions {
    const own: SelectorOptions = {
      ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
      ...(options.fieldSelector ? { fieldSelector: options.fieldSelector } : {}),
    };
    const tweak = this.#options.tweakListOptions;
    if (tweak === undefined) return own;
    if (typeof tweak === 'function') return tweak(own);
    const labelSelector = and(own.labelSelector, tweak.labelSelector);
    const fieldSelector = and(own.fieldSelector, tweak.fieldSelector);
    return {
      ...(labelSelector === undefined ? {} : { labelSelector }),
      ...(fieldSelector === undefined ? {} : { fieldSelector }),
    };
  }
}

/** Both selectors must match: the Kubernetes grammar ANDs comma-separated requirements. */
function and(a: string | undefined, b: string | undefined): string | undefined {
  if (!a) return b || undefined;
  if (!b) return a;
  return `${a},${b}`;
}

/**
 * The key of an informer in a factory: `gvrString` (`pods.v1`), plus what the call chose itself as
 * a query string: `pods.v1?namespace=kube-system&labelSelector=app%3Dweb&metadataOnly=true`.
 */
function informerKey(
  gvr: GroupVersionResource,
  options: ForResourceOptions,
  factoryNamespace: string,
  transformIds: Map<(obj: never) => unknown, number>,
): string {
  const query = new URLSearchParams();
  if (options.namespace !== undefined && options.namespace !== factoryNamespace)
    query.set('namespace', options.namespace);
  if (options.labelSelector) query.set('labelSelector', options.labelSelector);
  if (options.fieldSelector) query.set('fieldSelector', options.fieldSelector);
  if (options.metadataOnly === true) query.set('metadataOnly', 'true');
  if (options.transform !== undefined) {
    let id = transformIds.get(options.transform);
    if (id === undefined) transformIds.set(options.transform, (id = transformIds.size + 1));
    query.set('transform', String(id));
  }
  const base = gvrString(gvr);
  const q = query.toString();
  return q === '' ? base : `${base}?${q}`;
}
