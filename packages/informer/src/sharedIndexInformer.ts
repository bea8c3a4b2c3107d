import { newIndexer, TransactionError } from '@kinformer/cache';
import type { Indexer, Indexers } from '@kinformer/cache';
import { Controller, processDeltas } from '@kinformer/controller';
import { newInformerQueue, processDeltasBatch } from '@kinformer/controller/internal';
import type { ControllerOptions, QueueKind, ResourceEventHandler } from '@kinformer/controller';
import {
  deletionHandlingMetaNamespaceKeyFunc,
  ErrorCodes,
  isKinformerError,
  KinformerError,
  realClock,
} from '@kinformer/core';
import { getDefaultLogger } from '@kinformer/core/internal';
import { hasObjectMeta } from '@kinformer/core/internal';
import type { Clock, DeletedFinalStateUnknown, KubeObject, Logger } from '@kinformer/core';
import type { Deltas, Queue, TransformFunc } from '@kinformer/delta-fifo';
import type { PopBatchProcessFunc } from '@kinformer/delta-fifo/internal';
import { defaultWatchErrorHandler } from '@kinformer/reflector';
import type { ListerWatcher, ReflectorInfo, WatchErrorHandler, ReflectorStats } from '@kinformer/reflector';
import { EventEmitter } from 'eventemitter3';
import { ProcessorListener } from './processorListener.js';
import type { ListenerCounters } from './processorListener.js';
import type { ReadonlyIndexer, ReadonlyStore } from './readonlyIndexer.js';
import { determineResyncPeriod, SharedProcessor } from './sharedProcessor.js';
import { withSyncSource } from './syncSource.js';
import type { SyncSource } from './syncSource.js';

/** client-go's `minimumResyncPeriod`: a handler cannot ask for resyncs more often than this. */
export const MINIMUM_RESYNC_PERIOD_MS = 1_000;

/** Options of {@link SharedIndexInformer}. */
export interface SharedIndexInformerOptions<T extends KubeObject> {
  /**
   * Default resync period of handlers, ms (0 or absent: no resync). Every period, each handler gets
   * `onUpdate(obj, obj)` for every cached object. Handlers may ask for their own period.
   */
  resyncPeriodMs?: number;
  /** Secondary indexes of the cache (more can be added at any time with `addIndexers`). */
  indexers?: Indexers<T>;
  /** Runs on every object before it is cached (same as calling `setTransform` before `run`). */
  transform?: TransformFunc<T>;
  /** A name for logs, stats and errors (`pods.v1`). Default `'SharedIndexInformer'`. */
  name?: string;
  /**
   * The queue between the reflector and the cache: `'RealFIFO'` (default, as client-go 1.36: events
   * in the order they happened) or `'DeltaFIFO'` (the pre-1.33 per-key queue).
   */
  queue?: QueueKind;
  /**
   * Atomic relists and resyncs (client-go 1.36's `AtomicFIFO`; default true, with the `RealFIFO`):
   * a relist is applied to the cache in one step — listers and `byIndex` never see half of it, and
   * `lastStoreSyncResourceVersion()` is then the list's — and handlers then get the same
   * notifications as before (deletes, then adds/updates in list order). `false`: the non-atomic
   * mode, one queue entry per listed object. Ignored with the `DeltaFIFO`.
   */
  atomicEvents?: boolean;
  /** The expected `apiVersion`/`kind`: the reflector drops objects of any other type. */
  objectType?: ControllerOptions<T>['objectType'];
  /** Deep-freeze cached objects (default: development mode, see core's `defaultFreezeObjects`). */
  freeze?: boolean;
  /** Further reflector options (page size, watch-list, backoff). */
  reflectorOptions?: ControllerOptions<T>['reflectorOptions'];
  clock?: Clock;
  logger?: Logger;
}

/** Options of {@link SharedIndexInformer.addEventHandler}. */
export interface HandlerOptions {
  /**
   * This handler's resync period, ms (0: none; absent: the informer's `resyncPeriodMs`). At least
   * 1 s. Before `run` a shorter period lowers the informer's resync check period; after `run` it is
   * raised to the check period (with a warning).
   */
  resyncPeriodMs?: number;
  /** A name for logs and stats. Default `handler-<n>`, n counting this informer's registrations from 1. */
  name?: string;
}

/** The handle `addEventHandler` returns (client-go's `ResourceEventHandlerRegistration`). */
export interface ResourceEventHandlerRegistration {
  /**
   * True once the informer has synced **and** this handler has processed every add of the initial
   * list (or, for a handler added after the informer started, every synthetic add of the objects
   * cached at that time). A bound function: pass it to `waitForCacheSync` as it is.
   */
  readonly hasSynced: () => boolean;
  /**
   * Unregisters the handler (same as `informer.removeEventHandler(this)`). Idempotent. Does not
   * wait: a handler call in progress may still be running when it returns (use {@link shutdown}).
   */
  remove(): void;
  /**
   * Unregisters the handler and resolves once its listener has stopped: no call will be made any
   * more and the call in progress, if any, has returned (an async handler's promise has settled).
   * Then it is safe to free what the handler uses. Resolves at once when the informer never ran or
   * has stopped; idempotent (same as `informer.shutdownEventHandler(this)`, client-go's
   * `ShutDownEventHandler`). Never rejects. Do not await it from inside the handler's own call: it
   * would wait for itself.
   */
  shutdown(): Promise<void>;
  /** @deprecated Use {@link shutdown} (the name the work queue and the factory use; client-go's `ShutDown`). Same behaviour. */
  shutDown(): Promise<void>;
}

/** Per-handler counters (see {@link InformerStats}). */
export interface HandlerStats {
  name: string;
  /** Notifications waiting in this handler's buffer. */
  bufferDepth: number;
  /** Notifications handled (whether or not the handler failed). */
  dispatched: number;
  /** Handler calls that threw or rejected. */
  errors: number;
  /** Time spent in the handler (until an async handler's promise settled), ms. */
  busyMs: number;
  /** The longest single handler call, ms. */
  maxLatencyMs: number;
  /** The registration's `hasSynced()`. */
  synced: boolean;
  /** The resync period in effect for this handler, ms (0: none). */
  resyncPeriodMs: number;
}

/** Counters of one informer. Totals include handlers that were removed. */
export interface InformerStats {
  /** Deltas applied to the cache (an atomic relist counts one per listed object). */
  deltasProcessed: number;
  /** Deltas (or listed objects) the cache refused (a key or index function threw): logged and skipped. */
  processErrors: number;
  /** Items waiting in the queue between the reflector and the cache. */
  queueDepth: number;
  /** How often the reflector checks whether a handler's resync is due, ms (0: never). */
  resyncCheckPeriodMs: number;
  /** Notifications handed to handlers. */
  eventsDispatched: number;
  /** Handler calls that threw or rejected. */
  handlerErrors: number;
  /**
   * Cache changes by type, counted once each however many handlers there are (a resync's updates
   * included; a relist counts the adds, updates and deletes it caused).
   */
  events: { add: number; update: number; delete: number };
  /** One entry per registered handler, in registration order. */
  handlers: HandlerStats[];
}

/** The events `on` accepts and the handler each one takes. */
export interface InformerEventMap<T> {
  add: (obj: T, isInInitialList: boolean) => void | Promise<void>;
  update: (oldObj: T, newObj: T) => void | Promise<void>;
  delete: (obj: T | DeletedFinalStateUnknown<T>) => void | Promise<void>;
}

/** Error codes of a list the server refuses for good: waiting for such an informer fails. */
const TERMINAL_CODES: ReadonlySet<string> = new Set([
  ErrorCodes.UNAUTHORIZED,
  ErrorCodes.FORBIDDEN,
  ErrorCodes.NOT_FOUND,
  ErrorCodes.BAD_REQUEST,
  ErrorCodes.TLS, // an untrusted server certificate or a name mismatch (hardening, issue 16)
]);

/**
 * client-go's `SharedIndexInformer`: one list-and-watch of a resource, one cache (an indexer), any
 * number of handlers.
 *
 * - The cache is updated first; then every handler is notified through its own listener: an
 *   unbounded buffer drained by its own async loop. Per handler, events arrive one at a time and in
 *   order (an async handler is awaited before its next event); a slow handler never delays the
 *   others or the cache. Handlers must not mutate the objects they get.
 * - A handler that throws or rejects is logged (with the object's key) and counted in
 *   {@link SharedIndexInformer.stats}; it never stops the informer, other handlers or the process.
 * - A handler added before `run` sees every event; one added later first receives the cached
 *   objects as adds (`isInInitialList` true), queued atomically with respect to new events, then
 *   every later event.
 * - `hasSynced()` turns true once the initial list is in the cache (handlers may still be
 *   processing it: use the registration's `hasSynced` for that).
 * - Updates whose old and new resourceVersion are equal (periodic resync, or a relist of an unchanged
 *   object) go only to handlers whose resync is due.
 * - An informer runs once: after `run` resolved it is stopped for good.
 */
export class SharedIndexInformer<T extends KubeObject> {
  /** The name given in the options (for logs, stats, errors). */
  readonly name: string;
  /**
   * True once the initial list is in the cache. A bound function (pass it to `waitForCacheSync` as
   * it is); `syncError()` says why it cannot turn true, when the server refuses the list.
   */
  readonly hasSynced: () => boolean;

  readonly #listerWatcher: ListerWatcher<T>;
  readonly #indexer: Indexer<T>;
  readonly #processor = new SharedProcessor<T>();
  readonly #events = new EventEmitter<{ change: [] }>();
  readonly #counters: ListenerCounters = { dispatched: 0, errors: 0 };
  readonly #clock: Clock;
  readonly #baseLogger: Logger;
  readonly #logger: Logger;
  readonly #options: SharedIndexInformerOptions<T>;
  readonly #defaultResyncPeriodMs: number;
  readonly #syncSource: SyncSource;
  #resyncCheckPeriodMs: number;
  #transform: TransformFunc<T> | undefined;
  #watchErrorHandler: WatchErrorHandler<T> | undefined;
  #controller: Controller<T> | undefined;
  #queue: Queue<T> | undefined;
  #started = false;
  #stopped = false;
  #syncError: KinformerError | undefined;
  #deltasProcessed = 0;
  #processErrors = 0;
  readonly #eventCounts = { add: 0, update: 0, delete: 0 };
  #handlerSeq = 0;

  constructor(listerWatcher: ListerWatcher<T>, options: SharedIndexInformerOptions<T> = {}) {
    this.#listerWatcher = listerWatcher;
    this.#options = options;
    this.name = options.name ?? 'SharedIndexInformer';
    this.#clock = options.clock ?? realClock;
    this.#baseLogger = (options.logger ?? getDefaultLogger()).child({ informer: this.name });
    this.#logger = this.#baseLogger.child({ component: 'informer' });
    this.#defaultResyncPeriodMs = checkPeriod(options.resyncPeriodMs ?? 0, 'resyncPeriodMs');
    this.#resyncCheckPeriodMs = this.#defaultResyncPeriodMs;
    this.#transform = options.transform;
    this.#indexer = newIndexer<T>(
      deletionHandlingMetaNamespaceKeyFunc,
      { ...options.indexers },
      options.freeze === undefined ? {} : { freeze: options.freeze },
    );
    this.#syncSource = {
      name: this.name,
      syncError: () => (this.hasSynced() ? undefined : this.#syncError),
      isStopped: () => this.#stopped,
      subscribe: (listener) => {
        this.#events.on('change', listener);
        return () => this.#events.off('change', listener);
      },
    };
    this.hasSynced = withSyncSource(() => this.#controller?.hasSynced() ?? false, this.#syncSource);
  }

  /**
   * Registers a handler and returns its registration (remove it with `registration.remove()`).
   * Registering the same handler twice gives two independent registrations. Throws
   * `ERR_INFORMER_STOPPED` once the informer has stopped, `ERR_INVALID_OPTION` for a negative period.
   */
  addEventHandler(
    handler: ResourceEventHandler<T>,
    options: HandlerOptions = {},
  ): ResourceEventHandlerRegistration {
    const seq = ++this.#handlerSeq;
    const name = options.name ?? `handler-${seq}`;
    if (this.#stopped) {
      throw new KinformerError(
        ErrorCodes.INFORMER_STOPPED,
        `handler ${name} was not added to informer ${this.name}: it has stopped`,
        {
          details: { informer: this.name, handler: name },
        },
      );
    }
    let requested = checkPeriod(options.resyncPeriodMs ?? this.#defaultResyncPeriodMs, 'resyncPeriodMs');
    if (requested > 0) {
      if (requested < MINIMUM_RESYNC_PERIOD_MS) {
        this.#logger.warn(
          { handler: name, requested, minimum: MINIMUM_RESYNC_PERIOD_MS },
          'resync period too small; using the minimum',
        );
        requested = MINIMUM_RESYNC_PERIOD_MS;
      }
      if (requested < this.#resyncCheckPeriodMs) {
        if (this.#started) {
          this.#logger.warn(
            { handler: name, requested, checkPeriod: this.#resyncCheckPeriodMs },
            'resync period is smaller than the resync check period of a started informer; using the check period',
          );
          requested = this.#resyncCheckPeriodMs;
        } else {
          this.#resyncCheckPeriodMs = requested;
          this.#processor.resyncCheckPeriodChanged(requested);
        }
      }
    }
    const effective = determineResyncPeriod(requested, this.#resyncCheckPeriodMs);
    if (requested > 0 && effective === 0) {
      this.#logger.warn(
        { handler: name, requested },
        'the informer does not resync (resyncPeriodMs 0): the handler will not resync',
      );
    }
    const listener = new ProcessorListener<T>(handler, {
      name,
      logger: this.#logger,
      counters: this.#counters,
      requestedResyncPeriodMs: requested,
      resyncPeriodMs: effective,
      clock: this.#clock,
      onInitialListProcessed: () => this.#events.emit('change'),
    });
    const registration = new HandlerRegistration<T>(this, listener, this.#registrationSyncSource(listener));
    this.#processor.addListener(listener);
    if (this.#started) {
      // Synchronous, so no delta is distributed between the snapshot and the adds.
      for (const obj of this.#indexer.list()) listener.add({ type: 'add', obj, isInInitialList: true });
    }
    return registration;
  }

  /**
   * Unregisters a handler: it gets nothing more (notifications still buffered are dropped; a call in
   * progress completes). Idempotent; a registration of another informer, or any call after the
   * informer stopped, is ignored. Does not wait for the call in progress: see
   * {@link shutdownEventHandler}.
   */
  removeEventHandler(registration: ResourceEventHandlerRegistration): void {
    if (!(registration instanceof HandlerRegistration) || registration.informer !== this) return;
    if (this.#processor.removeListener(registration.listener as ProcessorListener<T>))
      this.#events.emit('change');
  }

  /**
   * client-go's `ShutDownEventHandler`: {@link removeEventHandler}, then resolves once the handler's
   * listener has stopped and its call in progress (if any, async or not) has returned. Resolves at
   * once for a registration of another informer, of an informer that never ran or that stopped.
   */
  async shutdownEventHandler(registration: ResourceEventHandlerRegistration): Promise<void> {
    this.removeEventHandler(registration);
    if (!(registration instanceof HandlerRegistration) || registration.informer !== this) return;
    await (registration.listener as ProcessorListener<T>).stop();
  }

  /** @deprecated Use {@link shutdownEventHandler} (client-go's `ShutDownEventHandler`). Same behaviour. */
  shutDownEventHandler(registration: ResourceEventHandlerRegistration): Promise<void> {
    return this.shutdownEventHandler(registration);
  }

  /**
   * Sugar over {@link addEventHandler}: `informer.on('add', (pod) => …)`. Each call registers its own
   * handler (own buffer, own order, own `hasSynced`); the returned registration removes it.
   */
  on<E extends keyof InformerEventMap<T>>(
    event: E,
    fn: InformerEventMap<T>[E],
    options: HandlerOptions = {},
  ): ResourceEventHandlerRegistration {
    switch (event) {
      case 'add':
        return this.addEventHandler({ onAdd: fn as InformerEventMap<T>['add'] }, options);
      case 'update':
        return this.addEventHandler({ onUpdate: fn as InformerEventMap<T>['update'] }, options);
      case 'delete':
        return this.addEventHandler({ onDelete: fn as InformerEventMap<T>['delete'] }, options);
      default:
        throw new KinformerError(
          ErrorCodes.INVALID_OPTION,
          `unknown informer event ${String(event)}: expected add, update or delete`,
        );
    }
  }

  /** The cache, for reading (same object as {@link getIndexer}). */
  getStore(): ReadonlyStore<T> {
    return this.#indexer;
  }

  /** The cache with its indexes, for reading. Only the informer writes it. */
  getIndexer(): ReadonlyIndexer<T> {
    return this.#indexer;
  }

  /**
   * Adds indexes, before or after `run`; the objects already cached are indexed at once. Throws
   * `ERR_INDEX` on a name conflict and `ERR_INFORMER_STOPPED` once the informer has stopped.
   */
  addIndexers(indexers: Indexers<T>): void {
    if (this.#stopped) {
      throw new KinformerError(
        ErrorCodes.INFORMER_STOPPED,
        `indexers were not added to informer ${this.name}: it has stopped`,
      );
    }
    this.#indexer.addIndexers(indexers);
  }

  /** True when objects go through a transform before they are cached (the option or {@link setTransform}). */
  hasTransform(): boolean {
    return this.#transform !== undefined;
  }

  /**
   * Sets the transform every object goes through before it is cached (replacing the option). Throws
   * `ERR_ALREADY_STARTED` after `run`.
   */
  setTransform(transform: TransformFunc<T>): void {
    this.#assertNotStarted('setTransform');
    this.#transform = transform;
  }

  /**
   * Replaces the default handler of list/watch errors (which logs them). Called with every error that
   * ends a list-and-watch cycle; the reflector then backs off and relists. Must return quickly.
   * Throws `ERR_ALREADY_STARTED` after `run`.
   */
  setWatchErrorHandler(handler: WatchErrorHandler<T>): void {
    this.#assertNotStarted('setWatchErrorHandler');
    this.#watchErrorHandler = handler;
  }

  /**
   * Why the informer cannot sync, when the server refuses its list (401, 403, 404, 400): the
   * `KinformerError` of the last failed list-and-watch cycle (`ERR_UNAUTHORIZED`, `ERR_FORBIDDEN`, …).
   * `undefined` once synced, or when the last failure (if any) is one worth retrying (a connection
   * error, a 5xx, a 429). The informer keeps retrying either way.
   */
  syncError(): KinformerError | undefined {
    return this.#syncSource.syncError();
  }

  /** The resourceVersion of the last list or watch event seen; `''` before `run`. */
  lastSyncResourceVersion(): string {
    return this.#controller?.lastSyncResourceVersion() ?? '';
  }

  /** Whether a watch is open right now. */
  isWatching(): boolean {
    return this.#controller?.isWatching() ?? false;
  }

  /**
   * The reflector's counters — lists, relists, watch starts and restarts, 410s, events, bookmarks,
   * malformed lines, stalls — or `undefined` before `run`. For dashboards and health checks.
   */
  reflectorStats(): ReflectorStats | undefined {
    return this.#controller?.reflectorStats();
  }

  /** True once `run` was called. */
  hasStarted(): boolean {
    return this.#started;
  }

  /** True once `run` has returned (a stopped informer never restarts). */
  isStopped(): boolean {
    return this.#stopped;
  }

  /** The counters (a snapshot). */
  stats(): InformerStats {
    const handlers: HandlerStats[] = [];
    for (const l of this.#processor.listeners()) {
      handlers.push({
        name: l.name,
        bufferDepth: l.bufferDepth,
        dispatched: l.dispatched,
        errors: l.errors,
        busyMs: l.busyMs,
        maxLatencyMs: l.maxLatencyMs,
        synced: this.hasSynced() && l.initialListProcessed(),
        resyncPeriodMs: l.resyncPeriodMs,
      });
    }
    return {
      deltasProcessed: this.#deltasProcessed,
      processErrors: this.#processErrors,
      queueDepth: this.#queue?.length() ?? 0,
      resyncCheckPeriodMs: this.#resyncCheckPeriodMs,
      eventsDispatched: this.#counters.dispatched,
      handlerErrors: this.#counters.errors,
      events: { ...this.#eventCounts },
      handlers,
    };
  }

  /**
   * Lists, watches and notifies until `signal` aborts; resolves once everything stopped (the
   * reflector, and the handler calls in progress — buffered notifications are dropped). Rejects with
   * `ERR_ALREADY_STARTED` when called twice and `ERR_INFORMER_STOPPED` after it stopped.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#stopped)
      throw new KinformerError(
        ErrorCodes.INFORMER_STOPPED,
        `informer ${this.name} has stopped and cannot run again`,
      );
    if (this.#started)
      throw new KinformerError(ErrorCodes.ALREADY_STARTED, `informer ${this.name} is already running`);
    this.#started = true;
    try {
      const options = this.#options;
      const queue = newInformerQueue<T>(options.queue ?? 'RealFIFO', this.#indexer, {
        ...(this.#transform === undefined ? {} : { transform: this.#transform }),
        ...(options.atomicEvents === undefined ? {} : { atomicEvents: options.atomicEvents }),
        name: this.name,
        clock: this.#clock,
        logger: this.#baseLogger,
      });
      this.#queue = queue;
      const userHandler = this.#watchErrorHandler;
      const controller = new Controller<T>({
        queue,
        listerWatcher: this.#listerWatcher,
        process: this.#process,
        processBatch: this.#processBatch,
        fullResyncPeriodMs: this.#resyncCheckPeriodMs,
        shouldResync: () => this.#processor.shouldResync(this.#clock.now()),
        watchErrorHandler: (reflector, error) => this.#onWatchError(reflector, error, userHandler),
        onSynced: () => this.#events.emit('change'),
        name: this.name,
        clock: this.#clock,
        logger: this.#baseLogger,
        ...(options.objectType === undefined ? {} : { objectType: options.objectType }),
        ...(options.reflectorOptions === undefined ? {} : { reflectorOptions: options.reflectorOptions }),
      });
      this.#controller = controller;
      this.#processor.run();
      await controller.run(signal);
    } finally {
      this.#stopped = true;
      await this.#processor.stop();
      this.#events.emit('change');
      this.#events.removeAllListeners();
    }
  }

  /** Applies one popped item to the cache and distributes it. Synchronous. */
  readonly #process = (deltas: Deltas<T>, isInInitialList: boolean): void => {
    this.#apply(countDeltas(deltas), isInInitialList, processDeltas, deltas);
  };

  /** Applies a popped batch in one store transaction (client-go's `processDeltasInBatch`). */
  readonly #processBatch: PopBatchProcessFunc<T> = (batch: Deltas<T>[], isInInitialList: boolean): void => {
    let count = 0;
    for (const item of batch) count += countDeltas(item);
    this.#apply(count, isInInitialList, processDeltasBatch, batch);
  };

  /**
   * Counts `count` deltas processed, then applies them with `apply` (handlers are synchronous here). A
   * failure is logged and counted, and the changes it concerns are skipped (what was applied stays applied).
   */
  #apply<D>(
    count: number,
    isInInitialList: boolean,
    apply: (handler: ResourceEventHandler<T>, store: Indexer<T>, deltas: D, initial: boolean) => unknown,
    deltas: D,
  ): void {
    this.#syncError = undefined;
    this.#deltasProcessed += count;
    try {
      void apply(this.#distributor, this.#indexer, deltas, isInInitialList);
    } catch (err) {
      this.#processErrors += err instanceof TransactionError ? err.errors.length : 1;
      this.#logger.error(
        { err, code: isKinformerError(err) ? err.code : undefined },
        'could not apply a change to the cache; skipped',
      );
    }
  }

  /** The informer as processDeltas' handler: turns cache changes into notifications. */
  readonly #distributor: ResourceEventHandler<T> = {
    onAdd: (obj, isInInitialList) => {
      this.#eventCounts.add++;
      if (this.#processor.size > 0) this.#processor.distribute({ type: 'add', obj, isInInitialList }, false);
    },
    onUpdate: (oldObj, newObj) => {
      this.#eventCounts.update++;
      if (this.#processor.size > 0)
        this.#processor.distribute({ type: 'update', oldObj, newObj }, isSyncUpdate(oldObj, newObj));
    },
    onDelete: (obj) => {
      this.#eventCounts.delete++;
      if (this.#processor.size > 0) this.#processor.distribute({ type: 'delete', obj }, false);
    },
  };

  #onWatchError(
    reflector: ReflectorInfo,
    error: unknown,
    userHandler: WatchErrorHandler<T> | undefined,
  ): void {
    // The last failure decides: a refusal (401/403/404/400) is kept until a later failure is not one,
    // or until deltas flow again.
    const refusal = isKinformerError(error) && TERMINAL_CODES.has(error.code) ? error : undefined;
    if (refusal !== this.#syncError) {
      this.#syncError = refusal;
      this.#events.emit('change');
    }
    (userHandler ?? defaultWatchErrorHandler)(reflector, error);
  }

  #registrationSyncSource(listener: ProcessorListener<T>): SyncSource {
    return {
      name: `${this.name} handler ${listener.name}`,
      syncError: () => this.#syncSource.syncError(),
      isStopped: () => this.#stopped || !this.#processor.has(listener),
      subscribe: (listener) => this.#syncSource.subscribe(listener),
    };
  }

  #assertNotStarted(what: string): void {
    if (this.#started) {
      throw new KinformerError(
        ErrorCodes.ALREADY_STARTED,
        `${what}: informer ${this.name} has already started`,
      );
    }
  }
}

/** The registration object (kept private: users see {@link ResourceEventHandlerRegistration}). */
class HandlerRegistration<T extends KubeObject> implements ResourceEventHandlerRegistration {
  readonly hasSynced: () => boolean;

  constructor(
    readonly informer: SharedIndexInformer<T>,
    readonly listener: ProcessorListener<T>,
    source: SyncSource,
  ) {
    this.hasSynced = withSyncSource(() => informer.hasSynced() && listener.initialListProcessed(), source);
  }

  remove(): void {
    this.informer.removeEventHandler(this);
  }

  shutdown(): Promise<void> {
    return this.informer.shutdownEventHandler(this);
  }

  shutDown(): Promise<void> {
    return this.shutdown();
  }
}

/** client-go 1.36: an update is a "sync" when old and new carry the same resourceVersion. */
function isSyncUpdate(oldObj: unknown, newObj: unknown): boolean {
  return (
    hasObjectMeta(oldObj) &&
    hasObjectMeta(newObj) &&
    oldObj.metadata.resourceVersion === newObj.metadata.resourceVersion
  );
}

function checkPeriod(ms: number, what: string): number {
  if (!Number.isFinite(ms) || ms < 0) {
    throw new KinformerError(
      ErrorCodes.INVALID_OPTION,
      `${what} must be a finite number of ms ≥ 0, got ${ms}`,
      { details: { [what]: ms } },
    );
  }
  return ms;
}

/** How many changes one popped item holds (a `ReplacedAll` counts each of its objects). */
function countDeltas<T extends KubeObject>(deltas: Deltas<T>): number {
  let n = 0;
  for (const delta of deltas) n += delta.type === 'ReplacedAll' ? delta.object.objects.length : 1;
  return n;
}
