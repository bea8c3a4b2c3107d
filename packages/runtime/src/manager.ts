import type { Server } from 'node:http';
import { kubeConfigListerWatchers } from '@kinformer/client-node';
import {
  ErrorCodes,
  isDeletedFinalStateUnknown,
  isKinformerError,
  KinformerError,
  realClock,
  splitMetaNamespaceKey,
} from '@kinformer/core';
import { componentLogger, definedProps } from '@kinformer/core/internal';
import type { Clock, KubeObject, Logger } from '@kinformer/core';
import { ApiEventRecorder } from '@kinformer/events';
import type { EventRecorder } from '@kinformer/events';
import { InformerFactory, waitForCacheSync } from '@kinformer/informer';
import type { InformerAndLister, ListerWatcherFactory, SharedIndexInformer } from '@kinformer/informer';
import type { LeaderElector } from '@kinformer/leader-election';
import { pingCheck } from '@kinformer/prometheus/health';
import type { HealthCheck } from '@kinformer/prometheus/health';
import { defaultControllerRateLimiter } from '@kinformer/workqueue';
import type { KubeConfig } from '@kubernetes/client-node';
import { andSelectors, CachePolicies, informerScope, kindNotCachedError } from './cachePolicy.js';
import { ControllerBuilder } from './controllerBuilder.js';
import type { ControllerRing } from './controllerRing.js';
import { HASH_RANGE_LABEL } from './hashSharding.js';
import { rangeLabellingWriter } from './rangeLabelling.js';
import type { HashSharding, HashShardStatus, OwnedScope } from './hashSharding.js';
import { managerHashSharding } from './managerSharding.js';
import type { ControllerSpec, SourceOptions, SourceSpec } from './controllerBuilder.js';
import { kindString } from './kinds.js';
import type { Kind } from './kinds.js';
import { ManagedController, objectKey, sourceLabel } from './managedController.js';
import type { KeySource } from './managedController.js';
import type { Predicate } from './predicates.js';
import { controllerOfKind } from './ownerReferences.js';
import { runtimeClientOver } from './runtimeClient.js';
import type { ObjectRef, ObjectWriter, RuntimeClient, WriteRecorder } from './runtimeClient.js';
import { kubeObjectWriter } from './kubeObjectWriter.js';
import { WriteOverlay } from './writeOverlay.js';
import { InformerRegistry } from './informerRegistry.js';
import { managerElection, safely } from './managerElection.js';
import { closeProbeServer, startProbeServer } from './probeServer.js';
import type { IndexRef, ManagerOptions } from './managerOptions.js';

export type { IndexRef, ManagerLeaderElectionOptions, ManagerOptions } from './managerOptions.js';

/**
 * The runtime's root (controller-runtime's `Manager`): one shared informer cache, the controllers
 * built on it, leader election, probes, metrics and graceful shutdown.
 *
 * ```ts
 * const mgr = new Manager(kubeConfig, { name: 'widget-operator', leaderElection: { namespace: 'ops', name: 'widget-operator' } });
 * mgr.controller('widgets').for(widgets).owns(kinds.configMaps).reconcile(async (ctx) => { … });
 * await mgr.start(setupSignalHandler());
 * ```
 */
export class Manager {
  readonly name: string;
  readonly factory: InformerFactory;
  readonly client: RuntimeClient;
  readonly recorder: EventRecorder;
  readonly #options: ManagerOptions;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #overlay: WriteOverlay;
  readonly #controllers: Array<{ controller: ManagedController<KubeObject>; leader: boolean }> = [];
  readonly #informers: InformerRegistry;
  readonly #cache: CachePolicies;
  readonly #ownRecorder: ApiEventRecorder | undefined;
  readonly #elector: LeaderElector | undefined;
  readonly #ring: ControllerRing | undefined;
  readonly #hash: HashSharding | undefined;
  readonly #listerWatchers: ListerWatcherFactory;
  #drainsAcknowledged = 0;
  #leading = false;
  #started = false;
  #server: Server | undefined;
  #stopReason: unknown;

  constructor(kubeConfig: KubeConfig | undefined, options: ManagerOptions = {}) {
    this.name = options.name ?? 'kinformer-manager';
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#logger = componentLogger(options.logger, { component: 'manager', manager: this.name });
    this.#cache = new CachePolicies(options.cache, options.stripManagedFields ?? true);
    this.#informers = new InformerRegistry(options.namespace ?? '');
    this.#listerWatchers =
      options.listerWatcherFactory ?? kubeConfigListerWatchers(kubeConfig, options.logger);
    this.factory = new InformerFactory(this.#listerWatchers, {
      ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
      clock: this.#clock,
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
    this.#overlay = new WriteOverlay();
    const recorder: WriteRecorder | undefined =
      options.readYourWrites === false
        ? undefined
        : {
            wrote: (kind, obj) => this.#recordWrite(kind, obj),
            deleted: (kind, ref, uid) => this.#recordDelete(kind, ref, uid),
          };
    let writer: ObjectWriter;
    if (options.writer !== undefined) writer = options.writer;
    else if (kubeConfig !== undefined)
      writer = kubeObjectWriter(kubeConfig, { fieldManager: this.name, logger: options.logger });
    else throw new KinformerError(ErrorCodes.INVALID_OPTION, 'Manager needs a KubeConfig or a writer');
    // Hash sharding: owned objects written through the client carry their owner's range label.
    if (options.hashSharding !== undefined)
      writer = rangeLabellingWriter(writer, (obj) => this.#hash?.stamp(obj) ?? obj);
    this.client = runtimeClientOver(writer, recorder);
    if (options.recorder !== undefined) this.recorder = options.recorder;
    else if (kubeConfig !== undefined) {
      this.#ownRecorder = new ApiEventRecorder(kubeConfig, {
        reportingController: this.name,
        clock: this.#clock,
        ...(options.logger === undefined ? {} : { logger: options.logger }),
      });
      this.recorder = this.#ownRecorder;
    } else throw new KinformerError(ErrorCodes.INVALID_OPTION, 'Manager needs a KubeConfig or a recorder');
    this.#hash = managerHashSharding(kubeConfig, {
      name: this.name,
      options,
      clock: this.#clock,
      cache: this.#cache,
      listerWatchers: this.#listerWatchers,
      observeWrites: (kind, informer) => this.#observeWrites(kind, informer),
    });
    const election = managerElection(kubeConfig, options, this.#clock, {
      onStartedLeading: (signal, le) => this.#lead(signal, le.onLeadershipChange),
      onStoppedLeading: (le) => {
        if (!this.#leading) return;
        this.#leading = false;
        safely(() => le.onLeadershipChange?.(false), this.#logger);
      },
    });
    this.#elector = election.elector;
    this.#ring = election.ring;
  }

  /** Starts building a controller named `name` (unique within the Manager). */
  controller(name: string): ControllerBuilder {
    if (this.#controllers.some((c) => c.controller.name === name))
      throw new KinformerError(ErrorCodes.INVALID_OPTION, `a controller named ${name} exists already`);
    return new ControllerBuilder(name, (spec) => this.#add(spec));
  }

  /**
   * The shared informer and lister of a kind (started with the Manager), within the kind's cache
   * policy (`cache.byKind`: its namespaces, selectors, metadata-only and transform apply). Controllers
   * use the same ones; ask with the same options to share. A `transform` (e.g. a `project`ion) gives
   * an informer of its own, typed by what it returns; a metadata-only request is served by a full
   * informer of the same scope when one exists.
   */
  informer<T extends KubeObject, U extends KubeObject = T>(
    kind: Kind<T>,
    options: Omit<SourceOptions<T>, 'predicates'> & {
      metadataOnly?: boolean;
      transform?: (obj: T) => U;
    } = {},
  ): InformerAndLister<U> {
    const policy = this.#cache.of(kind);
    const scope = informerScope(kind, policy, options, this.#options.namespace ?? '');
    // Shard mode: a ring kind is cached only as far as it is assigned to this shard.
    if (this.#ring?.has(kind) === true) scope.labelSelector = this.#ring.scopeSelector(scope.labelSelector);
    const transform =
      options.transform === undefined
        ? this.#cache.transformOf(kind)
        : this.#cache.withStrip(kind, options.transform as unknown as (obj: KubeObject) => KubeObject);
    const found = this.#informers.find(kind, scope, transform);
    if (found !== undefined) return found.pair as unknown as InformerAndLister<U>;
    const pair = this.factory.forResource<T>(kind, {
      ...(scope.namespace === undefined ? {} : { namespace: scope.namespace }),
      ...(scope.labelSelector === undefined ? {} : { labelSelector: scope.labelSelector }),
      ...(scope.fieldSelector === undefined ? {} : { fieldSelector: scope.fieldSelector }),
      ...(scope.metadataOnly ? { metadataOnly: true } : {}),
      ...(transform === undefined ? {} : { transform: transform as <X extends KubeObject>(obj: X) => X }),
    });
    this.#informers.add(kind, scope, {
      transform,
      projected: options.transform !== undefined,
      pair: pair as unknown as InformerAndLister<KubeObject>,
    });
    if (!scope.metadataOnly && options.transform === undefined)
      this.#observeWrites(kind, pair.informer as unknown as SharedIndexInformer<KubeObject>);
    if (this.#started) this.factory.start(this.#stopSignal ?? new AbortController().signal);
    return pair as unknown as InformerAndLister<U>;
  }

  /** Read-your-writes: what the informer delivers retires the overlay's entries for it. */
  #observeWrites(kind: Kind, informer: SharedIndexInformer<KubeObject>): void {
    const kindKey = kindString(kind);
    const overlay = this.#overlay;
    informer.addEventHandler(
      {
        onAdd: (obj) => overlay.observe(kindKey, objectKey(obj), obj, false),
        onUpdate: (_old, obj) => overlay.observe(kindKey, objectKey(obj), obj, false),
        onDelete: (obj) => {
          const last = isDeletedFinalStateUnknown(obj) ? obj.obj : obj;
          overlay.observe(kindKey, objectKey(last), last, true);
        },
      },
      { name: `${this.name}:overlay` },
    );
  }

  /**
   * Reads `key` of `kind` like {@link get}, and from the API server (through {@link client}) when
   * the kind's policy is `uncached`. What a reconcile's `ctx.object` is read with.
   */
  async read<T extends KubeObject>(
    kind: Kind<T>,
    key: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<T | undefined> {
    if (this.#cache.of(kind)?.uncached !== true) return this.get(kind, key);
    return await this.client.get(kind, splitMetaNamespaceKey(key), options);
  }

  /**
   * Reads `key` of `kind` as a reconcile sees it: the controller's own writes first (the
   * read-your-writes overlay), then the shared cache. Needs an informer for the kind (a controller's
   * source or {@link informer}); throws `ERR_KIND_NOT_CACHED` otherwise rather than starting a
   * cluster-wide informer behind your back.
   */
  get<T extends KubeObject>(kind: Kind<T>, key: string): T | undefined {
    const policy = this.#cache.of(kind);
    if (policy?.uncached === true) throw kindNotCachedError(kind, 'uncached');
    const slash = key.indexOf('/');
    const namespace = slash < 0 ? '' : key.slice(0, slash);
    if (this.#hash?.shards(kind) === true)
      return this.#overlay.read(kindString(kind), key, this.#hash.cached(kind, key) as T | undefined);
    const pair = this.#fullInformerOf(kind, namespace);
    if (pair === undefined) {
      const outside = policy?.namespaces !== undefined && !policy.namespaces.includes(namespace);
      throw kindNotCachedError(kind, outside ? { namespace } : 'none');
    }
    return this.#overlay.read(
      kindString(kind),
      key,
      pair.informer.getIndexer().getByKey(key) as T | undefined,
    );
  }

  /**
   * An index over `kind`'s shared cache, for `watches` mappings that must find related objects
   * without scanning: `const byNode = mgr.index(kinds.pods, 'byNode', (p) => [p.spec?.nodeName ?? ''])`.
   */
  index<T extends KubeObject>(
    kind: Kind<T>,
    name: string,
    fn: (obj: T) => string[],
    options: Omit<SourceOptions<T>, 'predicates'> = {},
  ): IndexRef<T> {
    const { informer } = this.informer(kind, options);
    if (!(name in informer.getIndexer().getIndexers())) informer.addIndexers({ [name]: fn });
    return {
      list: (value) => informer.getIndexer().byIndex(name, value),
      keys: (value) => informer.getIndexer().byIndex(name, value).map(objectKey),
    };
  }

  /** This replica's identity in the Lease (leader election only). */
  get identity(): string | undefined {
    return this.#elector?.identity;
  }

  /**
   * Shard mode: the ring, this shard's identity and label selector, and how many drains it
   * acknowledged; `undefined` without `controllerRing`.
   */
  shard(): { ring: string; identity: string; selector: string; drainsAcknowledged: number } | undefined {
    const ring = this.#ring;
    return ring === undefined
      ? undefined
      : {
          ring: ring.name,
          identity: ring.identity,
          selector: ring.selector,
          drainsAcknowledged: this.#drainsAcknowledged,
        };
  }

  /** Hash sharding: the ring, members, ranges held and active; `undefined` without `hashSharding`. */
  hashShard(): HashShardStatus | undefined {
    return this.#hash?.status();
  }

  /** Whether this replica leads (always true without leader election, once started). */
  isLeader(): boolean {
    return this.#elector === undefined ? this.#started : this.#leading;
  }

  /** Every controller registered so far. */
  controllers(): ManagedController<KubeObject>[] {
    return this.#controllers.map((c) => c.controller);
  }

  /** Where the probe server listens, once started with `probes`. */
  probeAddress(): { host: string; port: number } | undefined {
    const a = this.#server?.address();
    return a && typeof a === 'object' ? { host: a.address, port: a.port } : undefined;
  }

  /**
   * The `/readyz` checks: ping, and every informer synced, hash ranges' included (the failure names
   * each one and why).
   */
  readyChecks(): HealthCheck[] {
    // With hash sharding, the informers of the ranges held now count too (a range just acquired is
    // not ready until its informer synced).
    return [
      pingCheck,
      this.#informers.syncCheck(
        () => this.#started,
        () => this.#hash?.informers() ?? [],
      ),
    ];
  }

  #stopSignal: AbortSignal | undefined;

  /**
   * Runs everything until `signal` aborts (or leadership is lost): informers, controllers (while
   * leading), probes. On stop: every reconcile in flight sees `ctx.signal` abort; the Manager waits
   * up to `gracefulShutdownMs` for them, then releases the Lease, stops the informers and the probe
   * server. Resolves when all of that is done; rejects with `ERR_LEADER_ELECTION` when leadership
   * was lost (exit and let the process restart, as controller-runtime does).
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started)
      throw new KinformerError(ErrorCodes.ALREADY_STARTED, `manager ${this.name} already started`);
    this.#started = true;
    const stop = new AbortController();
    this.#stopSignal = stop.signal;
    const onAbort = (): void => stop.abort(signal.reason);
    if (signal.aborted) stop.abort(signal.reason);
    else signal.addEventListener('abort', onAbort, { once: true });
    if (this.#options.stripManagedFields ?? true)
      this.#logger.info(
        'cached objects drop metadata.managedFields (stripManagedFields: false, or per kind in cache.byKind, keeps them)',
      );
    const workers = new AbortController(); // aborts first on stop, so reconciles end before the Lease is released
    stop.signal.addEventListener('abort', () => workers.abort(stop.signal.reason), { once: true });
    try {
      const probes = this.#options.probes;
      if (probes !== undefined)
        this.#server = await startProbeServer(
          probes,
          this.readyChecks(),
          this.#options.metrics?.registry,
          this.#logger,
        );
      const warm = this.#elector === undefined || (this.#options.warmup ?? true);
      for (const c of this.#controllers) if (!c.leader || warm) c.controller.watch();
      if (warm) this.factory.start(stop.signal);
      const free = this.#controllers.filter((c) => !c.leader || this.#elector === undefined);
      const running: Promise<void>[] = [
        this.#runControllers(
          free.map((c) => c.controller),
          workers.signal,
        ),
      ];
      const hashRun = this.#hash?.run(stop.signal);
      let electorRun: Promise<void> | undefined;
      const electorStop = new AbortController();
      if (this.#elector !== undefined) {
        this.#leadWorkers = workers.signal;
        electorRun = this.#elector.run(electorStop.signal).catch((err: unknown) => {
          this.#stopReason = err;
          stop.abort(err);
        });
      }
      await new Promise<void>((resolve) => {
        if (stop.signal.aborted) resolve();
        else stop.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      this.#logger.info({ reason: describe(stop.signal.reason) }, 'stopping');
      running.push(...this.#leaderRuns);
      const graceful = this.#options.gracefulShutdownMs ?? 30_000;
      const grace = new AbortController();
      const finished = await Promise.race([
        Promise.all([...running, ...this.#controllers.map((c) => c.controller.stopped())]).then(() => true),
        this.#clock.sleep(graceful, grace.signal).then(
          () => false,
          () => true,
        ),
      ]);
      grace.abort();
      if (!finished)
        this.#logger.warn(
          { gracefulShutdownMs: graceful },
          'reconciles still running after the graceful shutdown timeout',
        );
      await hashRun;
      for (const c of this.#controllers) c.controller.close();
      electorStop.abort();
      await electorRun;
      await this.factory.shutdown();
      await this.#ownRecorder?.shutdown();
    } finally {
      signal.removeEventListener('abort', onAbort);
      await closeProbeServer(this.#server);
      this.#server = undefined;
    }
    if (this.#stopReason !== undefined) {
      throw isKinformerError(this.#stopReason)
        ? this.#stopReason
        : new KinformerError(ErrorCodes.LEADER_ELECTION, 'leader election failed', {
            cause: this.#stopReason,
          });
    }
  }

  #leadWorkers: AbortSignal | undefined;
  readonly #leaderRuns: Promise<void>[] = [];

  /** Called when this replica starts leading: runs the leader-only controllers until `signal` aborts. */
  async #lead(
    signal: AbortSignal,
    onLeadershipChange: ((leading: boolean) => void) | undefined,
  ): Promise<void> {
    this.#leading = true;
    this.#logger.info('leading: starting controllers');
    safely(() => onLeadershipChange?.(true), this.#logger);
    const workers = this.#leadWorkers!;
    const both = AbortSignal.any([signal, workers]);
    const leaders = this.#controllers.filter((c) => c.leader).map((c) => c.controller);
    for (const c of leaders) c.watch();
    this.factory.start(this.#stopSignal!);
    const run = this.#runControllers(leaders, both);
    this.#leaderRuns.push(run);
    await run;
    if (signal.aborted && !workers.aborted) {
      // Leadership lost while we were meant to run: stop the whole Manager (controller-runtime exits).
      throw new KinformerError(ErrorCodes.LEADER_ELECTION, `manager ${this.name} lost its leadership`);
    }
  }

  /** Waits for the controllers' caches, then runs their workers until `signal` aborts. */
  async #runControllers(controllers: ManagedController<KubeObject>[], signal: AbortSignal): Promise<void> {
    if (controllers.length === 0) return;
    const synced = await this.#waitSynced(
      controllers.flatMap((c) => c.syncedFns()),
      signal,
    );
    if (!synced) return;
    this.#logger.info({ controllers: controllers.map((c) => c.name) }, 'caches synced; starting workers');
    for (const c of controllers) c.startWorkers(signal);
    await Promise.all(controllers.map((c) => c.stopped()));
  }

  /** Waits for sync; a refused list (403, 404) is logged once per cause and waited out (it may be fixed). */
  async #waitSynced(hasSynced: Array<() => boolean>, signal: AbortSignal): Promise<boolean> {
    let lastCause = '';
    for (;;) {
      try {
        return await waitForCacheSync({ signal, clock: this.#clock }, ...hasSynced);
      } catch (err) {
        const cause = isKinformerError(err) && isKinformerError(err.cause) ? err.cause : err;
        const text = isKinformerError(cause) ? `${cause.code} ${cause.message}` : String(cause);
        if (text !== lastCause) this.#logger.error({ err: cause }, 'caches cannot sync yet; still trying');
        lastCause = text;
        // sleep resolves (it does not reject) when the signal aborts; without this check a stop
        // while a list is refused spun here forever in microtasks, starving the event loop.
        if (signal.aborted) return false;
        await this.#clock.sleep(1000, signal);
        if (signal.aborted) return false;
      }
    }
  }

  #add<T extends KubeObject>(spec: ControllerSpec<T>): ManagedController<T> {
    if (this.#started)
      throw new KinformerError(ErrorCodes.ALREADY_STARTED, `controller ${spec.name} was added after start`);
    const primary = spec.primary;
    const hash = this.#hash;
    // Hash sharding: the primary kind is read through one informer per owned range, attached later.
    const ranged = (s: SourceSpec): boolean =>
      hash !== undefined &&
      s.type === 'for' &&
      primary !== undefined &&
      kindString(s.kind) === kindString(primary);
    // Owned kinds too: one informer per range held, and (field 'uid') one informer of the owned
    // objects that carry no range label yet, so that none is lost.
    const ownedRanged = (s: SourceSpec): boolean =>
      hash !== undefined && s.type === 'owns' && primary !== undefined;
    const sources: KeySource[] = spec.sources
      .filter((s) => !ranged(s) && !(ownedRanged(s) && hash?.field === 'namespace'))
      .flatMap((s) =>
        this.#namespacesOf(s).map((namespace) =>
          this.#source(
            namespace === undefined ? s : { ...s, options: { ...s.options, namespace } },
            primary,
            spec.predicates,
          ),
        ),
      );
    const retry = this.#options.retry ?? {};
    const controller = new ManagedController<T>({
      name: spec.name,
      primary: primary === undefined ? undefined : { kind: primary, read: (key) => this.read(primary, key) },
      sources,
      reconciler: spec.reconciler,
      concurrency: spec.concurrency,
      reconcileTimeoutMs: spec.reconcileTimeoutMs,
      rateLimiter: defaultControllerRateLimiter({ clock: this.#clock, ...retry }),
      hook:
        this.#ring !== undefined && primary !== undefined && this.#ring.has(primary)
          ? this.#ring.hook(
              primary,
              this.#options.reconcileHook,
              this.#logger,
              () => this.#drainsAcknowledged++,
            )
          : this.#options.reconcileHook,
      admit: hash === undefined || primary === undefined ? undefined : (key, obj) => hash.admit(key, obj),
      client: this.client,
      recorder: this.recorder,
      metrics: this.#options.metrics,
      clock: this.#clock,
      logger: componentLogger(this.#options.logger, { component: 'controller', controller: spec.name }),
    });
    this.#controllers.push({
      controller: controller as unknown as ManagedController<KubeObject>,
      leader: spec.needLeaderElection,
    });
    for (const s of spec.sources.filter(ranged))
      hash?.addController(s.kind, controller as unknown as ManagedController<KubeObject>, [
        ...spec.predicates,
        ...(s.options.predicates ?? []),
      ]);
    for (const s of spec.sources.filter(ownedRanged))
      hash?.addOwned(
        s.kind,
        sourceScope(s.options),
        controller as unknown as ManagedController<KubeObject>,
        primary!,
        [...spec.predicates, ...(s.options.predicates ?? [])],
      );
    return controller;
  }

  /** A source without a namespace of a kind cached in several namespaces watches each of them. */
  #namespacesOf(spec: SourceSpec): Array<string | undefined> {
    const namespaces = this.#cache.of(spec.kind)?.namespaces;
    return spec.options.namespace === undefined && namespaces !== undefined && namespaces.length > 1
      ? [...namespaces]
      : [undefined];
  }

  #source(spec: SourceSpec, primary: Kind | undefined, shared: readonly Predicate[]): KeySource {
    const predicates = [...shared, ...(spec.options.predicates ?? [])];
    const scope = sourceScope(spec.options);
    switch (spec.type) {
      case 'for':
        return {
          label: sourceLabel(spec.kind),
          informer: this.informer(spec.kind, scope).informer,
          keys: (obj) => [objectKey(obj)],
          // Shard mode: a drained primary passes whatever the user's predicates say.
          predicates: this.#ring?.has(spec.kind) === true ? this.#ring.predicates(predicates) : predicates,
        };
      case 'owns': {
        if (primary === undefined)
          throw new KinformerError(
            ErrorCodes.INVALID_OPTION,
            'owns() needs a primary kind: call for() first',
          );
        const hash = this.#hash;
        // Hash sharding: the owned objects are read per range (HashSharding.addOwned); this source
        // reads only those without a range label (written by another client), on every replica.
        const unlabeled = hash !== undefined;
        return {
          label: sourceLabel(spec.kind, unlabeled ? 'owned, no range label' : 'owned'),
          informer: this.informer(spec.kind, {
            ...scope,
            ...(unlabeled
              ? { labelSelector: andSelectors(scope.labelSelector, `!${HASH_RANGE_LABEL}`) }
              : {}),
            metadataOnly: true,
          }).informer,
          keys: (obj) => {
            const owner = controllerOfKind(primary, obj);
            if (owner === undefined) return [];
            // Hash sharding: an owned object follows its controller owner's range.
            if (hash !== undefined && !hash.ownerActive(obj, owner.ref.uid)) return [];
            return [owner.key];
          },
          predicates,
        };
      }
      case 'watches': {
        const map = spec.map;
        return {
          label: sourceLabel(spec.kind),
          informer: this.informer(spec.kind, scope).informer,
          keys: function* (obj) {
            for (const k of map(obj))
              yield typeof k === 'string' ? k : k.namespace ? `${k.namespace}/${k.name}` : k.name;
          },
          predicates,
        };
      }
    }
  }

  #recordWrite(kind: Kind, obj: KubeObject): void {
    const key = objectKey(obj);
    const kindKey = kindString(kind);
    this.#overlay.recordWrite(kindKey, key, obj, this.#cached(kind, key));
  }

  #recordDelete(kind: Kind, ref: ObjectRef, uid: string | undefined): void {
    const key = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
    this.#overlay.recordDelete(kindString(kind), key, uid, this.#cached(kind, key));
  }

  #cached(kind: Kind, key: string): KubeObject | undefined {
    if (this.#hash?.shards(kind) === true) return this.#hash.cached(kind, key);
    const slash = key.indexOf('/');
    return this.#fullInformerOf(kind, slash < 0 ? '' : key.slice(0, slash))
      ?.informer.getIndexer()
      .getByKey(key);
  }

  /** The informer `get` reads `kind` from in `namespace`: a full one, or metadata-only when the policy says so. */
  #fullInformerOf(kind: Kind, namespace: string): InformerAndLister<KubeObject> | undefined {
    return this.#informers.readable(kind, namespace, this.#cache.of(kind)?.metadataOnly === true);
  }
}

function describe(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  return reason === undefined ? 'stopped' : typeof reason === 'string' ? reason : JSON.stringify(reason);
}

/** Where a source reads: its namespace and selectors (those set). */
function sourceScope(options: SourceOptions): OwnedScope {
  return definedProps({
    namespace: options.namespace,
    labelSelector: options.labelSelector,
    fieldSelector: options.fieldSelector,
  });
}
