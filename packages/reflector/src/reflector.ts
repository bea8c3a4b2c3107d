import {
  componentLogger,
  deletionHandlingMetaNamespaceKeyFunc,
  ErrorCodes,
  ExponentialBackoff,
  hasObjectMeta,
  isExpiredError,
  isKinformerError,
  isTooLargeResourceVersionError,
  isTooManyRequestsError,
  KinformerError,
  realClock,
  type Backoff,
  type Clock,
  type KubeObject,
  type Logger,
  type Status,
  type Timer,
} from '@kinformer/core';
import type {
  ListerWatcher,
  ListOptions,
  ReflectorStore,
  WatchEvent,
  WatchOptions,
} from './listerWatcher.js';
import { DEFAULT_PAGE_SIZE, listAllPages, type PagedList } from './pager.js';
import { compareResourceVersions, isNumericResourceVersion } from './resourceVersion.js';
import { RetryWithDeadline } from './retryWithDeadline.js';
import { defaultWatchErrorHandler, type WatchErrorHandler } from './watchErrorHandler.js';
import { effectiveMinWatchTimeoutMs, watchTimeoutSeconds } from './watchTimeout.js';

/** The annotation on the BOOKMARK that ends the initial events of a streaming list (KEP-3157). */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** Default {@link ReflectorOptions.stallMarginMs}: 30 s. */
export const DEFAULT_STALL_MARGIN_MS = 30_000;

/** A watch that ends within this long without delivering an event counts as an error (client-go). */
const VERY_SHORT_WATCH_MS = 1000;
/** `RetryWithDeadline`'s `minResetPeriod` in client-go. */
const INTERNAL_ERROR_RESET_PERIOD_MS = 60_000;
/** How often a streaming list that has not seen its end bookmark logs a warning (client-go: 10 s). */
const INITIAL_EVENTS_WARNING_INTERVAL_MS = 10_000;

/** The apiVersion and kind every watched object must have (client-go's `expectedGVK`). */
export interface ExpectedType {
  /** `v1`, `apps/v1`, `example.com/v1alpha1`… */
  apiVersion: string;
  kind: string;
}

/** Options of {@link Reflector}. Every duration is in milliseconds. */
export interface ReflectorOptions<T extends KubeObject = KubeObject> {
  /** Used in logs. Default: `apiVersion/kind` of `expectedType`, else `"reflector"`. */
  name?: string;
  /**
   * When set, watch events whose object states a different `apiVersion` or `kind` are logged and
   * skipped (client-go skips them too). Objects that carry no `apiVersion`/`kind` are accepted. LIST
   * items are never checked (as in client-go).
   */
  expectedType?: ExpectedType;
  /** Call `store.resync()` this often while a watch loop runs. `0` (default) never resyncs. */
  resyncPeriodMs?: number;
  /** Consulted on every resync tick; `store.resync()` only runs when it returns true. Default: always. */
  shouldResync?: () => boolean;
  /**
   * LIST page size. Unset (the default), lists from `resourceVersion` `"0"` or `""` use pages of 500 and
   * relists from a specific resourceVersion are unpaginated so the watch cache can serve them (unless
   * an earlier RV="0" list came back paginated, which shows the cache is off). When set, every LIST uses
   * this page size (client-go's `WatchListPageSize`); lists at a specific version then bypass the
   * watch cache, so set it only for good reason. Must be a positive integer.
   */
  pageSize?: number;
  /**
   * Build the initial state from a streaming list (`sendInitialEvents=true`) instead of a LIST, falling
   * back to LIST on any failure. Default **false**, unlike client-go 1.35+: servers differ (the fake
   * server, proxies and older clusters may not support it). Ignored when the ListerWatcher says
   * `watchListSupported: false`.
   */
  useWatchList?: boolean;
  /**
   * The one backoff shared by the run loop and every watch retry. Default: client-go's reflector
   * backoff (800 ms doubling to 30 s, jitter 1.0, reset after 2 minutes) on `clock`.
   */
  backoff?: Backoff;
  /** Source of time for every wait. Default: the wall clock. */
  clock?: Clock;
  /** pino logger; the reflector logs through a child with `component: 'reflector'`. */
  logger?: Logger;
  /**
   * Called with every error that ends a list-and-watch cycle, and with every connection failure that
   * keeps a watch from starting (retried without relisting). See {@link WatchErrorHandler}.
   * Default: {@link defaultWatchErrorHandler}.
   */
  watchErrorHandler?: WatchErrorHandler<T>;
  /**
   * Minimum watch timeout; each watch asks the server for a random `timeoutSeconds` in `[min, 2·min)`.
   * Honoured only when greater than the default of 5 minutes (as in client-go).
   */
  minWatchTimeoutMs?: number;
  /**
   * How long watches that end with an internal error (500) are retried at once without relisting.
   * Default 0: an internal error ends the watch and relists.
   */
  maxInternalErrorRetryDurationMs?: number;
  /**
   * A watch that delivers nothing (no event, no bookmark) for its `timeoutSeconds` plus this margin is
   * aborted with `ERR_WATCH_STALLED` and restarted from the last resourceVersion. Default 30 s.
   */
  stallMarginMs?: number;
  /** Random source in `[0, 1)` for watch timeouts. Default `Math.random`. */
  random?: () => number;
}

/**
 * Counters of one reflector since it was created. All are monotonically increasing.
 */
export interface ReflectorStats {
  /** LIST operations started (a paginated list counts once; the immediate retry at RV `""` again). */
  lists: number;
  /** LIST or streaming-list operations started after the store had been populated once. */
  relists: number;
  /** Streaming-list (`sendInitialEvents`) requests sent. */
  watchLists: number;
  /** Plain watch requests sent. */
  watchStarts: number;
  /** Plain watch requests sent again without relisting (clean close, 429, connection failure, stall…). */
  watchRestarts: number;
  /** 410 Expired/Gone answers seen (LIST, watch start, in-stream ERROR event). */
  expired410: number;
  /** Watch events received, bookmarks included. */
  events: number;
  /** BOOKMARK events received. */
  bookmarks: number;
  /** Malformed lines, unknown event types, over-long lines and objects without metadata; each ended a watch. */
  malformed: number;
  /** Watches aborted by stall detection. */
  stalls: number;
  /** Watches that closed within a second of starting without any event. */
  veryShortWatches: number;
  /** Watch events skipped because of their type (`expectedType` mismatch, `Table` objects). */
  skipped: number;
  /** Watch events whose resourceVersion was not numeric or lower than the previous one (logged only). */
  resourceVersionAnomalies: number;
  /** `store.resync()` calls. */
  resyncs: number;
}

/**
 * client-go's Reflector: keeps a {@link ReflectorStore} in step with the API server.
 *
 * `run(signal)` loops until the signal aborts: LIST (paginated, from resourceVersion `"0"` first, then
 * the last synced version) → `store.replace(items, listRV)` → WATCH from the last synced version with
 * bookmarks, applying each event (`add`/`update`/`delete`, bookmarks only move the version) and
 * re-watching after every clean close. Which failures relist and which re-watch, and the backoff
 * between attempts, follow client-go 1.36 exactly; see `docs/reflector.md` for the timeline.
 *
 * Server errors never reject `run`: they go to the `watchErrorHandler` (list-and-watch failures and
 * connection failures at watch start) or to the log (watch errors), and the reflector retries. The
 * store's methods are called synchronously, one at a time, in the order of the events.
 */
export class Reflector<T extends KubeObject = KubeObject> {
  /** The name used in logs. */
  readonly name: string;
  /** `"apiVersion, Kind=kind"` of the expected type, or `"<unspecified>"` (client-go's `TypeDescription`). */
  readonly typeDescription: string;
  /** The reflector's logger (a child with `component: 'reflector'`); handlers may log through it. */
  readonly logger: Logger;

  private readonly listerWatcher: ListerWatcher<T>;
  private readonly store: ReflectorStore<T>;
  private readonly expectedType: ExpectedType | undefined;
  private readonly resyncPeriodMs: number;
  private readonly shouldResync: (() => boolean) | undefined;
  private readonly explicitPageSize: number | undefined;
  private readonly watchListEnabled: boolean;
  private readonly backoff: Backoff;
  private readonly clock: Clock;
  private readonly watchErrorHandler: WatchErrorHandler<T>;
  private readonly minWatchTimeoutMs: number;
  private readonly maxInternalErrorRetryDurationMs: number;
  private readonly stallMarginMs: number;
  private readonly random: () => number;
  private readonly storeSink: EventSink<T>;
  private readonly counters: ReflectorStats = {
    lists: 0,
    relists: 0,
    watchLists: 0,
    watchStarts: 0,
    watchRestarts: 0,
    expired410: 0,
    events: 0,
    bookmarks: 0,
    malformed: 0,
    stalls: 0,
    veryShortWatches: 0,
    skipped: 0,
    resourceVersionAnomalies: 0,
    resyncs: 0,
  };

  private lastSyncRV = '';
  private rvUnavailable = false;
  private paginatedResult = false;
  private populated = false;
  private watching = false;
  private running = false;
  private lastEventAt: number | undefined;
  private activeWatch: OpenWatch<T> | undefined;
  private resyncFailed = false;
  private resyncError: unknown;

  constructor(listerWatcher: ListerWatcher<T>, store: ReflectorStore<T>, options: ReflectorOptions<T> = {}) {
    validateOptions(options);
    this.listerWatcher = listerWatcher;
    this.store = store;
    this.expectedType = options.expectedType;
    this.typeDescription = options.expectedType
      ? `${options.expectedType.apiVersion}, Kind=${options.expectedType.kind}`
      : '<unspecified>';
    this.name =
      options.name ??
      (options.expectedType
        ? `${options.expectedType.apiVersion}/${options.expectedType.kind}`
        : 'reflector');
    this.resyncPeriodMs = options.resyncPeriodMs ?? 0;
    this.shouldResync = options.shouldResync;
    this.explicitPageSize = options.pageSize;
    this.watchListEnabled = (options.useWatchList ?? false) && listerWatcher.watchListSupported !== false;
    this.clock = options.clock ?? realClock;
    this.backoff = options.backoff ?? new ExponentialBackoff({ clock: this.clock });
    this.watchErrorHandler = options.watchErrorHandler ?? defaultWatchErrorHandler;
    this.minWatchTimeoutMs = effectiveMinWatchTimeoutMs(options.minWatchTimeoutMs);
    this.maxInternalErrorRetryDurationMs = options.maxInternalErrorRetryDurationMs ?? 0;
    this.stallMarginMs = options.stallMarginMs ?? DEFAULT_STALL_MARGIN_MS;
    this.random = options.random ?? Math.random;
    this.logger = componentLogger(options.logger, {
      component: 'reflector',
      reflector: this.name,
      type: this.typeDescription,
    });
    this.storeSink = {
      add: (obj) => this.store.add(obj),
      update: (obj) => this.store.update(obj),
      delete: (obj) => this.store.delete(obj),
      bookmark: (rv) => this.store.bookmark?.(rv),
      setResourceVersion: (rv) => this.setResourceVersionFromEvent(rv),
    };
  }

  /**
   * Lists and watches until `signal` aborts, then resolves once every request is closed, every timer
   * cancelled and every abort listener removed. Never rejects for server errors; rejects with
   * `ERR_ALREADY_STARTED` when this reflector is already running. May be called again after it resolved
   * (it resumes from {@link lastSyncResourceVersion}).
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) {
      throw new KinformerError(ErrorCodes.ALREADY_STARTED, `reflector ${this.name} is already running`);
    }
    this.running = true;
    this.logger.debug(
      { resyncPeriodMs: this.resyncPeriodMs, watchList: this.watchListEnabled },
      'starting reflector',
    );
    try {
      while (!signal.aborted) {
        let error: unknown;
        let failed = false;
        try {
          await this.listAndWatch(signal);
        } catch (err) {
          failed = true;
          error = err;
        }
        if (signal.aborted) break;
        if (failed) this.handleListAndWatchError(error);
        // client-go: every return from ListAndWatch, error or not, waits one backoff step and relists.
        await this.sleepBackoff(failed ? error : undefined, signal);
      }
    } finally {
      this.running = false;
      this.watching = false;
      this.activeWatch = undefined;
      this.logger.debug('stopped reflector');
    }
  }

  /** The resourceVersion of the last LIST, streaming list or watch event (bookmarks included); `""` before the first. */
  lastSyncResourceVersion(): string {
    return this.lastSyncRV;
  }

  /** True while a watch stream is open and feeding the store (after the initial list). */
  isWatching(): boolean {
    return this.watching;
  }

  /** The clock time (ms) of the last watch event received, bookmarks included; `undefined` before the first. */
  lastEventTime(): number | undefined {
    return this.lastEventAt;
  }

  /** True when the initial state comes from streaming lists (`useWatchList` on and supported). */
  usesWatchList(): boolean {
    return this.watchListEnabled;
  }

  /** A snapshot of the counters. */
  stats(): ReflectorStats {
    return { ...this.counters };
  }

  // ---------------------------------------------------------------------------------------------
  // list and watch

  /** client-go's `ListAndWatchWithContext`. Throws what should reach the watch error handler. */
  private async listAndWatch(signal: AbortSignal): Promise<void> {
    let handedOver: OpenWatch<T> | undefined;
    if (this.watchListEnabled) {
      try {
        handedOver = await this.watchList(signal);
        if (handedOver === undefined) return; // the signal aborted
      } catch (err) {
        if (signal.aborted) return;
        this.logger.warn(
          { err, code: codeOf(err) },
          'the streaming list failed; falling back to LIST/WATCH (making progress beats deadlocking)',
        );
        handedOver = undefined;
      }
    }
    if (handedOver === undefined) {
      const listed = await this.list(signal);
      if (!listed) return;
    }
    this.logger.debug({ resourceVersion: this.lastSyncRV }, 'caches populated');
    await this.watchWithResync(handedOver, signal);
  }

  /** `"0"` for the first list, `""` once the last version proved unavailable, else the last version. */
  private relistResourceVersion(): string {
    if (this.rvUnavailable) return '';
    if (this.lastSyncRV === '') return '0';
    return this.lastSyncRV;
  }

  /** The version a streaming list starts from: `""` when unavailable or unknown, else the last version. */
  private rewatchResourceVersion(): string {
    return this.rvUnavailable ? '' : this.lastSyncRV;
  }

  /** client-go's `list`: paginated LIST, store.replace. Returns false when the signal aborted. */
  private async list(signal: AbortSignal): Promise<boolean> {
    const resourceVersion = this.relistResourceVersion();
    let pageSize: number;
    if (this.explicitPageSize !== undefined) pageSize = this.explicitPageSize;
    else if (this.paginatedResult) pageSize = DEFAULT_PAGE_SIZE;
    else if (resourceVersion !== '' && resourceVersion !== '0') pageSize = 0;
    else pageSize = DEFAULT_PAGE_SIZE;

    let result: PagedList<T> | typeof ABORTED;
    try {
      result = await this.pagedList({ resourceVersion }, pageSize, signal);
    } catch (err) {
      if (signal.aborted) return false;
      const expired = isExpiredError(err);
      const rejected = isRejectedResourceVersionError(err, resourceVersion);
      if (!expired && !rejected && !isTooLargeResourceVersionError(err)) {
        // The watch error handler reports it (the default one logs at error); keep this at debug.
        this.logger.debug({ err, code: codeOf(err), resourceVersion }, 'failed to list');
        throw err;
      }
      if (expired) this.counters.expired410++;
      if (rejected) {
        // Not in client-go: a resourceVersion the server cannot parse (a non-numeric one that came in
        // a watch event) would otherwise be asked for again on every relist, and refused forever.
        this.logger.warn(
          { code: codeOf(err), message: messageOf(err), resourceVersion },
          'the server rejected the list resourceVersion; retrying at once with a consistent read',
        );
      } else {
        this.logger.debug(
          { code: codeOf(err), resourceVersion },
          'the list resourceVersion is unavailable; retrying at once with a consistent read',
        );
      }
      this.rvUnavailable = true;
      try {
        result = await this.pagedList({ resourceVersion: this.relistResourceVersion() }, pageSize, signal);
      } catch (retryErr) {
        if (signal.aborted) return false;
        if (isExpiredError(retryErr)) this.counters.expired410++;
        this.logger.debug({ err: retryErr, code: codeOf(retryErr) }, 'failed to list');
        throw retryErr;
      }
    }
    if (result === ABORTED) return false;

    const { list, paginated } = result;
    if (resourceVersion === '0' && paginated) this.paginatedResult = true;
    this.rvUnavailable = false;
    if (isUnsupportedTableObject(list)) {
      throw new KinformerError(
        ErrorCodes.BAD_RESPONSE,
        `unsupported list kind ${String(list.apiVersion)}/${String(list.kind)}`,
      );
    }
    const listRV = list.metadata?.resourceVersion ?? '';
    this.store.replace(list.items, listRV);
    this.lastSyncRV = listRV;
    this.populated = true;
    this.logger.debug(
      { items: list.items.length, resourceVersion: listRV, requests: result.requests },
      'listed',
    );
    return true;
  }

  private pagedList(
    options: ListOptions,
    pageSize: number,
    signal: AbortSignal,
  ): Promise<PagedList<T> | typeof ABORTED> {
    this.counters.lists++;
    if (this.populated) this.counters.relists++;
    const lw = this.listerWatcher;
    return raceAbort(
      listAllPages((opts, context) => lw.list(opts, context), options, { signal, pageSize }),
      signal,
    );
  }

  /**
   * client-go's `watchList`: a streaming list into a temporary map until the `initial-events-end`
   * bookmark, then `store.replace` and hand the still-open stream over to the watch loop. Returns
   * `undefined` when the signal aborted; throws when the caller should fall back to LIST.
   */
  private async watchList(signal: AbortSignal): Promise<OpenWatch<T> | undefined> {
    for (;;) {
      if (signal.aborted) return undefined;
      const resourceVersion = this.rewatchResourceVersion();
      const temp = new Map<string, T>();
      let bookmarkRV = '';
      const timeoutSeconds = watchTimeoutSeconds(this.minWatchTimeoutMs, this.random);
      const options: WatchOptions = {
        resourceVersion,
        allowWatchBookmarks: true,
        sendInitialEvents: true,
        resourceVersionMatch: 'NotOlderThan',
        timeoutSeconds,
      };
      const start = this.clock.now();
      this.counters.watchLists++;
      if (this.populated) this.counters.relists++;
      let w: OpenWatch<T> | undefined;
      try {
        w = await this.openWatch(options, signal);
      } catch (err) {
        if (signal.aborted) return undefined;
        if (await this.retryWatchList(err, signal)) continue;
        throw err;
      }
      if (w === undefined) return undefined;

      const sink = this.tempSink(temp, (rv) => {
        bookmarkRV = rv;
      });
      const warning = this.armInitialEventsWarning(w, start, temp);
      let outcome: WatchOutcome;
      try {
        outcome = await this.consume(w, sink, start, false, true);
      } finally {
        warning.cancel();
      }
      if (outcome.stopped !== undefined || outcome.error !== undefined) {
        this.closeWatch(w);
        if (outcome.stopped === 'aborted' || signal.aborted) return undefined;
        if (outcome.stopped === 'stalled') {
          this.noteStall(options);
          continue;
        }
        if (await this.retryWatchList(outcome.error, signal)) continue;
        throw outcome.error;
      }
      if (!outcome.initialEventsEnd) {
        // The stream ended cleanly before the end bookmark: start a new streaming list.
        this.closeWatch(w);
        continue;
      }

      this.rvUnavailable = false;
      try {
        this.store.replace(Array.from(temp.values()), bookmarkRV);
      } catch (err) {
        this.closeWatch(w);
        throw err;
      }
      this.lastSyncRV = bookmarkRV;
      this.populated = true;
      this.logger.debug({ items: temp.size, resourceVersion: bookmarkRV }, 'streaming list synced');
      return w;
    }
  }

  /** True when a streaming-list failure is retried in place (after a backoff for 429/connection errors). */
  private async retryWatchList(err: unknown, signal: AbortSignal): Promise<boolean> {
    if (isWatchErrorRetriable(err)) {
      if (isKinformerError(err, ErrorCodes.CONNECTION)) {
        this.reportWatchStartConnectionFailure(err, this.rewatchResourceVersion(), 'streaming list');
      } else {
        this.logger.debug({ err, code: codeOf(err) }, 'streaming list failed; backing off');
      }
      await this.sleepBackoff(err, signal);
      return true;
    }
    const expired = isExpiredError(err);
    if (expired || isTooLargeResourceVersionError(err)) {
      if (expired) this.counters.expired410++;
      this.rvUnavailable = true;
      return true;
    }
    return false;
  }

  private tempSink(temp: Map<string, T>, setRV: (rv: string) => void): EventSink<T> {
    const key = (obj: T): string => deletionHandlingMetaNamespaceKeyFunc(obj);
    return {
      add: (obj) => temp.set(key(obj), obj),
      update: (obj) => temp.set(key(obj), obj),
      delete: (obj) => temp.delete(key(obj)),
      bookmark: noop,
      setResourceVersion: setRV,
    };
  }

  private armInitialEventsWarning(w: OpenWatch<T>, start: number, temp: Map<string, T>): Timer {
    let timer: Timer;
    const tick = (): void => {
      const now = this.clock.now();
      if (w.events === 0) {
        this.logger.warn(
          { elapsedMs: now - start },
          'awaiting the bookmark that ends the initial events stream; no events received yet',
        );
      } else if (now - w.lastDeliveryAt >= INITIAL_EVENTS_WARNING_INTERVAL_MS) {
        this.logger.warn(
          { lastEventAgoMs: now - w.lastDeliveryAt, objects: temp.size },
          'the bookmark that ends the initial events stream has not arrived',
        );
      }
      timer = this.clock.setTimeout(tick, INITIAL_EVENTS_WARNING_INTERVAL_MS);
    };
    timer = this.clock.setTimeout(tick, INITIAL_EVENTS_WARNING_INTERVAL_MS);
    return { cancel: () => timer.cancel() };
  }

  /** client-go's `watchWithResync`: the watch loop with the resync timer running beside it. */
  private async watchWithResync(handedOver: OpenWatch<T> | undefined, signal: AbortSignal): Promise<void> {
    this.resyncFailed = false;
    this.resyncError = undefined;
    const resync = this.startResync();
    try {
      await this.watchLoop(handedOver, signal);
    } finally {
      resync.cancel();
      this.resyncFailed = false;
      this.resyncError = undefined;
    }
  }

  private startResync(): Timer {
    if (this.resyncPeriodMs <= 0) return NO_TIMER;
    let timer: Timer | undefined;
    const tick = (): void => {
      timer = undefined;
      try {
        if (this.shouldResync === undefined || this.shouldResync()) {
          this.counters.resyncs++;
          this.store.resync();
        }
      } catch (err) {
        // client-go: a resync error ends the current watch (logged; ListAndWatch returns nil → relist).
        this.resyncFailed = true;
        this.resyncError = err;
        if (this.activeWatch !== undefined) this.stopWatch(this.activeWatch, 'resync');
        return;
      }
      timer = this.clock.setTimeout(tick, this.resyncPeriodMs);
    };
    timer = this.clock.setTimeout(tick, this.resyncPeriodMs);
    return { cancel: () => timer?.cancel() };
  }

  /** client-go's `watch`: returns to relist, loops to re-watch, throws what the error handler should see. */
  private async watchLoop(handedOver: OpenWatch<T> | undefined, signal: AbortSignal): Promise<void> {
    const retry = new RetryWithDeadline(
      this.maxInternalErrorRetryDurationMs,
      INTERNAL_ERROR_RESET_PERIOD_MS,
      isInternalError,
      this.clock,
    );
    // The resourceVersion at which the last watch ended with a malformed stream, if it did.
    let malformedAt: string | undefined;
    let w = handedOver;
    let restart = handedOver !== undefined;
    for (;;) {
      if (signal.aborted) {
        if (w !== undefined) this.closeWatch(w);
        return;
      }
      if (this.resyncFailed) {
        if (w !== undefined) this.closeWatch(w);
        this.logResyncFailure();
        return;
      }
      const start = this.clock.now();
      let propagateRVFromStart = true;
      if (w === undefined) {
        const resourceVersion = this.lastSyncRV;
        const options: WatchOptions = {
          resourceVersion,
          timeoutSeconds: watchTimeoutSeconds(this.minWatchTimeoutMs, this.random),
          allowWatchBookmarks: true,
        };
        this.counters.watchStarts++;
        if (restart) this.counters.watchRestarts++;
        restart = true;
        try {
          w = await this.openWatch(options, signal);
        } catch (err) {
          if (signal.aborted) return;
          if (isKinformerError(err, ErrorCodes.WATCH_STALLED)) {
            this.noteStall(options);
            continue;
          }
          if (isWatchErrorRetriable(err)) {
            if (isKinformerError(err, ErrorCodes.CONNECTION)) {
              this.reportWatchStartConnectionFailure(err, resourceVersion, 'watch');
            } else {
              this.logger.debug(
                { err, code: codeOf(err), resourceVersion },
                'could not start the watch; backing off and re-watching',
              );
            }
            await this.sleepBackoff(err, signal);
            continue;
          }
          if (isExpiredError(err)) this.counters.expired410++;
          throw err;
        }
        if (w === undefined) return;
        // Events of a watch from "" or "0" start with synthetic ADDEDs that are not in RV order.
        propagateRVFromStart = resourceVersion !== '' && resourceVersion !== '0';
      }

      this.activeWatch = w;
      this.watching = true;
      let outcome: WatchOutcome;
      try {
        if (this.resyncFailed) this.stopWatch(w, 'resync');
        outcome = await this.consume(w, this.storeSink, start, propagateRVFromStart, false);
      } finally {
        this.activeWatch = undefined;
        this.watching = false;
        this.closeWatch(w);
      }
      w = undefined;
      retry.after(outcome.error);

      if (outcome.stopped !== undefined) {
        if (outcome.stopped === 'aborted') return;
        if (outcome.stopped === 'resync') {
          this.logResyncFailure();
          return;
        }
        this.noteStall(undefined);
        continue;
      }
      const err = outcome.error;
      if (err === undefined) continue; // clean close (server timeout): re-watch from the last version
      const code = codeOf(err);
      if (isExpiredError(err)) {
        this.counters.expired410++;
        this.logger.debug(
          { code, resourceVersion: this.lastSyncRV },
          'watch closed: resourceVersion expired; relisting',
        );
        return;
      }
      if (isTooManyRequestsError(err)) {
        this.logger.debug(
          { code, retryAfterSeconds: retryAfterMs(err) / 1000 },
          'watch answered 429; backing off and re-watching',
        );
        await this.sleepBackoff(err, signal);
        continue;
      }
      if (isMalformedStreamError(err)) {
        this.counters.malformed++;
        if (malformedAt === this.lastSyncRV) {
          // The server replayed the same bad line (e.g. an object whose event is longer than the line
          // limit): rewatching from here would fail forever. A LIST has no line limit: relist.
          this.logger.warn(
            { err, code, resourceVersion: this.lastSyncRV },
            'bad watch event again at the same resourceVersion; relisting',
          );
          return;
        }
        malformedAt = this.lastSyncRV;
        this.logger.warn(
          { err, code, resourceVersion: this.lastSyncRV },
          'bad watch event; ending this watch and resuming from the last good resourceVersion',
        );
        await this.sleepBackoff(err, signal);
        continue;
      }
      if (isInternalError(err) && retry.shouldRetry()) {
        this.logger.debug({ err, code }, 'watch ended with an internal error; retrying the watch');
        continue;
      }
      if (isKinformerError(err, ErrorCodes.VERY_SHORT_WATCH)) this.counters.veryShortWatches++;
      this.logger.warn(
        { err, code, resourceVersion: this.lastSyncRV },
        'watch ended with an error; relisting',
      );
      return;
    }
  }

  private logResyncFailure(): void {
    this.logger.warn({ err: this.resyncError }, 'store resync failed; ending the watch and relisting');
    this.resyncFailed = false;
    this.resyncError = undefined;
  }

  private noteStall(options: WatchOptions | undefined): void {
    this.counters.stalls++;
    const err = new KinformerError(
      ErrorCodes.WATCH_STALLED,
      'the watch delivered nothing for longer than its timeout plus the stall margin',
      {
        details: {
          resourceVersion: this.lastSyncRV,
          timeoutSeconds: options?.timeoutSeconds,
          stallMarginMs: this.stallMarginMs,
        },
      },
    );
    this.logger.warn(
      { err, code: err.code, resourceVersion: this.lastSyncRV },
      'watch stalled; restarting it from the last resourceVersion',
    );
  }

  // ---------------------------------------------------------------------------------------------
  // one watch stream

  /**
   * Sends a watch request. Resolves with the open watch, or `undefined` when the run signal aborted.
   * Rejects with the request's error, or `ERR_WATCH_STALLED` when the server never answered within the
   * stall limit. The stall timer runs from here until {@link closeWatch}.
   */
  private async openWatch(options: WatchOptions, signal: AbortSignal): Promise<OpenWatch<T> | undefined> {
    if (signal.aborted) return undefined;
    const controller = new AbortController();
    const w: OpenWatch<T> = {
      iterator: EMPTY_ITERATOR as AsyncIterator<WatchEvent<T>>,
      controller,
      unlink: noop,
      stall: NO_TIMER,
      stallAfterMs: (options.timeoutSeconds ?? 0) * 1000 + this.stallMarginMs,
      lastDeliveryAt: this.clock.now(),
      events: 0,
      stopReason: undefined,
      closed: false,
    };
    const onAbort = (): void => this.stopWatch(w, 'aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    w.unlink = () => signal.removeEventListener('abort', onAbort);
    w.stall = this.armStallTimer(w);
    let iterable: AsyncIterable<WatchEvent<T>> | typeof ABORTED;
    let request: Promise<AsyncIterable<WatchEvent<T>>> | undefined;
    try {
      request = this.listerWatcher.watch(options, { signal: controller.signal });
      iterable = await raceAbort(request, controller.signal);
    } catch (err) {
      const reason = w.stopReason;
      this.closeWatch(w);
      if (reason === 'stalled') throw stalledError(options);
      throw err;
    }
    if (iterable === ABORTED) {
      const reason = w.stopReason;
      this.closeWatch(w);
      // A ListerWatcher that ignores its signal may still hand over a stream: close it when it does.
      request.then(closeLateStream, noop);
      if (reason === 'stalled') throw stalledError(options);
      return undefined;
    }
    try {
      w.iterator = iterable[Symbol.asyncIterator]();
    } catch (err) {
      this.closeWatch(w);
      throw err;
    }
    return w;
  }

  private armStallTimer(w: OpenWatch<T>): Timer {
    let timer: Timer;
    const check = (): void => {
      const idle = this.clock.now() - w.lastDeliveryAt;
      if (idle >= w.stallAfterMs) {
        this.stopWatch(w, 'stalled');
        return;
      }
      timer = this.clock.setTimeout(check, w.stallAfterMs - idle);
    };
    timer = this.clock.setTimeout(check, w.stallAfterMs);
    return { cancel: () => timer.cancel() };
  }

  /** Asks a watch to stop: the request is aborted and its consumer wakes up. */
  private stopWatch(w: OpenWatch<T>, reason: StopReason): void {
    if (w.stopReason !== undefined || w.closed) return;
    w.stopReason = reason;
    w.controller.abort(
      reason === 'stalled'
        ? new KinformerError(ErrorCodes.WATCH_STALLED, 'watch stalled')
        : reason === 'resync'
          ? new KinformerError(ErrorCodes.ABORTED, 'watch ended after a failed resync')
          : undefined,
    );
  }

  /** Closes the request, cancels the stall timer and removes the abort listener. Idempotent. */
  private closeWatch(w: OpenWatch<T>): void {
    if (w.closed) return;
    w.closed = true;
    w.unlink();
    w.stall.cancel();
    if (!w.controller.signal.aborted) w.controller.abort();
    try {
      const done = w.iterator.return?.();
      if (done !== undefined) done.then(noop, noop);
    } catch {
      // a broken iterator cannot be closed any further; the request is aborted anyway
    }
  }

  /**
   * client-go's `handleAnyWatch`: applies events to `sink` until the stream ends, throws, is stopped, or
   * (with `exitOnInitialEventsEnd`) delivers the `initial-events-end` bookmark — in which case the stream
   * stays open for the caller.
   */
  private async consume(
    w: OpenWatch<T>,
    sink: EventSink<T>,
    start: number,
    propagateRVFromStart: boolean,
    exitOnInitialEventsEnd: boolean,
  ): Promise<WatchOutcome> {
    // One wake-up slot, refilled for each pull: racing every next() against one long-lived promise would
    // pile a reaction per event onto it for the life of the watch.
    let wake: ((value: typeof INTERRUPTED) => void) | undefined;
    const onStop = (): void => wake?.(INTERRUPTED);
    const stopSignal = w.controller.signal;
    stopSignal.addEventListener('abort', onStop, { once: true });
    const iterator = w.iterator;
    const pull = (
      resolve: (value: IteratorResult<WatchEvent<T>> | typeof INTERRUPTED) => void,
      reject: (err: Error) => void,
    ): void => {
      wake = resolve;
      iterator.next().then(resolve, reject);
    };
    let count = 0;
    let besidesAdded = false;
    let initialEventsEnd = false;
    try {
      for (;;) {
        if (stopSignal.aborted)
          return { stopped: w.stopReason ?? 'aborted', error: undefined, initialEventsEnd };
        const next = await new Promise(pull);
        wake = undefined;
        if (next === INTERRUPTED)
          return { stopped: w.stopReason ?? 'aborted', error: undefined, initialEventsEnd };
        if (next.done === true) break;
        const now = this.clock.now();
        w.lastDeliveryAt = now;
        w.events++;
        this.lastEventAt = now;
        this.counters.events++;

        const event = next.value;
        const type = event.type as string;
        const obj: unknown = event.object;
        if (type === 'ERROR') {
          // The contract says ListerWatchers throw these; accept one yielded anyway.
          return { stopped: undefined, error: KinformerError.fromStatus(obj as Status), initialEventsEnd };
        }
        if (!hasObjectMeta(obj)) {
          return { stopped: undefined, error: malformedEventError(type, obj), initialEventsEnd };
        }
        if (this.expectedType !== undefined && this.isUnexpectedType(obj)) {
          this.counters.skipped++;
          this.logger.error(
            {
              expected: this.typeDescription,
              apiVersion: obj.apiVersion,
              kind: obj.kind,
              code: ErrorCodes.UNEXPECTED_TYPE,
            },
            'watch event object has an unexpected type; skipping it',
          );
          continue;
        }
        if (isUnsupportedTableObject(obj)) {
          this.counters.skipped++;
          this.logger.error(
            { apiVersion: obj.apiVersion, kind: obj.kind },
            'watch event carries a Table object; skipping it',
          );
          continue;
        }
        const rv = obj.metadata.resourceVersion ?? '';
        if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED' && type !== 'BOOKMARK') {
          return {
            stopped: undefined,
            error: new KinformerError(
              ErrorCodes.UNKNOWN_EVENT_TYPE,
              `unknown watch event type ${JSON.stringify(type)}`,
              {
                details: { type, resourceVersion: rv },
              },
            ),
            initialEventsEnd,
          };
        }
        // client-go's eventCount: only events that reached the store count against a very short watch.
        count++;
        if (type !== 'ADDED') besidesAdded = true;
        try {
          switch (type) {
            case 'ADDED':
              sink.add(obj as T);
              break;
            case 'MODIFIED':
              sink.update(obj as T);
              break;
            case 'DELETED':
              sink.delete(obj as T);
              break;
            case 'BOOKMARK':
              this.counters.bookmarks++;
              if (obj.metadata.annotations?.[INITIAL_EVENTS_END_ANNOTATION] === 'true')
                initialEventsEnd = true;
              sink.bookmark(rv);
              break;
          }
        } catch (err) {
          // client-go: store errors are logged, never fatal, and the version still moves past the event.
          this.logger.error(
            { err, type, resourceVersion: rv },
            'the store rejected a watch event; continuing',
          );
        }
        if (propagateRVFromStart || besidesAdded) {
          try {
            sink.setResourceVersion(rv);
          } catch (err) {
            this.logger.error(
              { err, resourceVersion: rv },
              'the store rejected a resourceVersion update; continuing',
            );
          }
        }
        if (exitOnInitialEventsEnd && initialEventsEnd) {
          this.logger.debug(
            { events: count, elapsedMs: now - start },
            'received the bookmark that ends the initial events stream',
          );
          return { stopped: undefined, error: undefined, initialEventsEnd };
        }
      }
    } catch (err) {
      if (w.stopReason !== undefined) return { stopped: w.stopReason, error: undefined, initialEventsEnd };
      if (!isKinformerError(err, ErrorCodes.CONNECTION))
        return { stopped: undefined, error: err, initialEventsEnd };
      // A broken connection ends the stream like a clean close: re-watch from the last version.
      this.logger.debug({ err, events: count }, 'the watch connection broke');
    } finally {
      wake = undefined;
      stopSignal.removeEventListener('abort', onStop);
    }
    if (w.stopReason !== undefined) return { stopped: w.stopReason, error: undefined, initialEventsEnd };
    if (this.clock.now() - start < VERY_SHORT_WATCH_MS && count === 0) {
      return {
        stopped: undefined,
        error: new KinformerError(
          ErrorCodes.VERY_SHORT_WATCH,
          `very short watch: ${this.name}: unexpected watch close - watch lasted less than a second and no items received`,
        ),
        initialEventsEnd,
      };
    }
    this.logger.debug({ events: count, resourceVersion: this.lastSyncRV }, 'watch closed');
    return { stopped: undefined, error: undefined, initialEventsEnd };
  }

  private isUnexpectedType(obj: KubeObject): boolean {
    const expected = this.expectedType;
    if (expected === undefined) return false;
    return (
      (obj.apiVersion !== undefined && obj.apiVersion !== expected.apiVersion) ||
      (obj.kind !== undefined && obj.kind !== expected.kind)
    );
  }

  /** Records a watch event's version (client-go's `setLastSyncResourceVersion` + `UpdateResourceVersion`). */
  private setResourceVersionFromEvent(rv: string): void {
    if (!isNumericResourceVersion(rv)) {
      this.counters.resourceVersionAnomalies++;
      this.logger.debug(
        { code: ErrorCodes.BAD_RESOURCE_VERSION, resourceVersion: rv },
        'non-numeric resourceVersion; treating it as opaque',
      );
    } else {
      const order = compareResourceVersions(rv, this.lastSyncRV);
      if (order !== undefined && order < 0) {
        this.counters.resourceVersionAnomalies++;
        this.logger.warn(
          { code: ErrorCodes.BAD_RESOURCE_VERSION, resourceVersion: rv, previous: this.lastSyncRV },
          'resourceVersion went backwards',
        );
      }
    }
    this.lastSyncRV = rv;
    this.store.updateResourceVersion?.(rv);
  }

  // ---------------------------------------------------------------------------------------------
  // errors and waits

  /**
   * A connection failure when starting a watch is retried in place (client-go), but must not be
   * silent: an exec plugin that broke after the first LIST would leave the cache stale without a
   * word. Logged at warn (code and messages only: no request options, no credentials) and passed to
   * the watch error handler.
   */
  private reportWatchStartConnectionFailure(
    err: KinformerError,
    resourceVersion: string,
    what: string,
  ): void {
    const cause = messageOf(err.cause);
    this.logger.warn(
      {
        code: err.code,
        message: err.message,
        ...(cause === undefined ? {} : { cause }),
        resourceVersion,
      },
      `could not start the ${what}: connection failed; backing off and retrying (no relist)`,
    );
    this.handleListAndWatchError(err);
  }

  private handleListAndWatchError(err: unknown): void {
    try {
      this.watchErrorHandler(this, err);
    } catch (handlerErr) {
      this.logger.error({ err: handlerErr }, 'the watch error handler threw');
    }
  }

  /** One step of the shared backoff (at least the server's Retry-After), unless the signal aborts. */
  private async sleepBackoff(err: unknown, signal: AbortSignal): Promise<void> {
    const delay = Math.max(this.backoff.next(), retryAfterMs(err));
    if (signal.aborted) return;
    if (delay > 0) await this.clock.sleep(delay, signal);
    else await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

// -----------------------------------------------------------------------------------------------
// internals

type StopReason = 'aborted' | 'stalled' | 'resync';

interface OpenWatch<T> {
  iterator: AsyncIterator<WatchEvent<T>>;
  readonly controller: AbortController;
  unlink: () => void;
  stall: Timer;
  readonly stallAfterMs: number;
  lastDeliveryAt: number;
  events: number;
  stopReason: StopReason | undefined;
  closed: boolean;
}

interface EventSink<T> {
  add(obj: T): void;
  update(obj: T): void;
  delete(obj: T): void;
  bookmark(rv: string): void;
  setResourceVersion(rv: string): void;
}

interface WatchOutcome {
  /** Set when the reflector itself stopped the watch. */
  stopped: StopReason | undefined;
  /** The error that ended the watch; `undefined` for a clean end. */
  error: unknown;
  initialEventsEnd: boolean;
}

const ABORTED: unique symbol = Symbol('aborted');
const INTERRUPTED: unique symbol = Symbol('interrupted');
const NO_TIMER: Timer = { cancel: noop };
const EMPTY_ITERATOR: AsyncIterator<never> = {
  next: () => Promise.resolve({ done: true, value: undefined }),
};

function noop(): void {
  // nothing to do
}

/** Closes a watch stream that arrived after its request was given up (stall or abort). */
function closeLateStream(iterable: AsyncIterable<unknown>): void {
  try {
    const done = iterable[Symbol.asyncIterator]().return?.();
    if (done !== undefined) done.then(noop, noop);
  } catch {
    // nothing more can be done; the request's signal was aborted anyway
  }
}

/** Resolves with `promise`'s value, or with {@link ABORTED} as soon as `signal` aborts. Removes its listener. */
function raceAbort<V>(promise: Promise<V>, signal: AbortSignal): Promise<V | typeof ABORTED> {
  if (signal.aborted) {
    promise.then(noop, noop);
    return Promise.resolve(ABORTED);
  }
  return new Promise<V | typeof ABORTED>((resolve, reject) => {
    const onAbort = (): void => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: Error) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

function codeOf(err: unknown): string | undefined {
  return isKinformerError(err) ? err.code : undefined;
}

/** The message of an error (of any realm) or a string; `undefined` for anything else. */
function messageOf(err: unknown): string | undefined {
  if (typeof err === 'string') return err;
  if (typeof err !== 'object' || err === null) return undefined;
  const message = (err as { message?: unknown }).message;
  return typeof message === 'string' ? message : undefined;
}

/**
 * Status reasons client-go's `apierrors` knows (its `knownReasons`) other than `InternalError`: an
 * `ERR_INTERNAL` carrying one of these (in practice `StorageReadError`) is not an internal error.
 */
const KNOWN_NON_INTERNAL_REASONS: ReadonlySet<string> = new Set([
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'AlreadyExists',
  'Conflict',
  'Gone',
  'Invalid',
  'ServerTimeout',
  'StorageReadError',
  'Timeout',
  'TooManyRequests',
  'BadRequest',
  'MethodNotAllowed',
  'NotAcceptable',
  'RequestEntityTooLarge',
  'UnsupportedMediaType',
  'Expired',
  'ServiceUnavailable',
]);

/**
 * client-go's `apierrors.IsInternalError`: reason `InternalError`, or a 500 whose reason is unknown or
 * missing. `ServerTimeout` (`ERR_TIMEOUT`) and `StorageReadError` are not. Decides which watch errors
 * `maxInternalErrorRetryDurationMs` retries at once.
 */
function isInternalError(err: unknown): boolean {
  if (!isKinformerError(err, ErrorCodes.INTERNAL)) return false;
  const reason = err.status?.reason;
  return reason === undefined || !KNOWN_NON_INTERNAL_REASONS.has(reason);
}

/**
 * A 400 BadRequest or 422 Invalid answer to a LIST at a specific resourceVersion (neither `""` nor
 * `"0"`): the server refused the version itself (e.g. one that is not a number). Handled like an
 * expired version: the list is retried at once with `""`.
 */
function isRejectedResourceVersionError(err: unknown, resourceVersion: string): boolean {
  return (
    resourceVersion !== '' &&
    resourceVersion !== '0' &&
    (isKinformerError(err, ErrorCodes.BAD_REQUEST) || isKinformerError(err, ErrorCodes.INVALID))
  );
}

function retryAfterMs(err: unknown): number {
  return isKinformerError(err) && err.retryAfterSeconds !== undefined ? err.retryAfterSeconds * 1000 : 0;
}

/** client-go's `isWatchErrorRetriable`: connection failures and 429 re-watch after a backoff, without relisting. */
function isWatchErrorRetriable(err: unknown): boolean {
  return isKinformerError(err, ErrorCodes.CONNECTION) || isTooManyRequestsError(err);
}

function isMalformedStreamError(err: unknown): boolean {
  return (
    isKinformerError(err, ErrorCodes.MALFORMED_WATCH_EVENT) ||
    isKinformerError(err, ErrorCodes.UNKNOWN_EVENT_TYPE) ||
    isKinformerError(err, ErrorCodes.WATCH_LINE_TOO_LARGE)
  );
}

function malformedEventError(type: string, obj: unknown): KinformerError {
  return new KinformerError(
    ErrorCodes.MALFORMED_WATCH_EVENT,
    `watch event ${type} carries no object metadata`,
    {
      details: { type, object: obj === null ? 'null' : typeof obj },
    },
  );
}

function stalledError(options: WatchOptions): KinformerError {
  return new KinformerError(
    ErrorCodes.WATCH_STALLED,
    'the watch request got no answer within its timeout plus the stall margin',
    {
      details: { resourceVersion: options.resourceVersion, timeoutSeconds: options.timeoutSeconds },
    },
  );
}

/**
 * True for a `meta.k8s.io` `Table` object or list (server-side printing output), which a reflector can
 * never store: client-go rejects Table lists and skips Table watch events.
 */
export function isUnsupportedTableObject(
  obj: { apiVersion?: string | undefined; kind?: string | undefined } | null | undefined,
): boolean {
  return (
    obj?.kind === 'Table' && (obj.apiVersion === 'meta.k8s.io/v1' || obj.apiVersion === 'meta.k8s.io/v1beta1')
  );
}

function validateOptions<T extends KubeObject>(options: ReflectorOptions<T>): void {
  const nonNegative = (name: string, value: number | undefined): void => {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) {
      throw new KinformerError(
        ErrorCodes.INVALID_OPTION,
        `${name} must be a finite number >= 0, got ${String(value)}`,
        {
          details: { option: name, value },
        },
      );
    }
  };
  nonNegative('resyncPeriodMs', options.resyncPeriodMs);
  nonNegative('minWatchTimeoutMs', options.minWatchTimeoutMs);
  nonNegative('maxInternalErrorRetryDurationMs', options.maxInternalErrorRetryDurationMs);
  nonNegative('stallMarginMs', options.stallMarginMs);
  if (options.pageSize !== undefined && !(Number.isInteger(options.pageSize) && options.pageSize > 0)) {
    throw new KinformerError(
      ErrorCodes.INVALID_OPTION,
      `pageSize must be a positive integer, got ${String(options.pageSize)}`,
      {
        details: { option: 'pageSize', value: options.pageSize },
      },
    );
  }
  const expected = options.expectedType;
  if (
    expected !== undefined &&
    (typeof expected.apiVersion !== 'string' ||
      expected.apiVersion === '' ||
      typeof expected.kind !== 'string' ||
      expected.kind === '')
  ) {
    throw new KinformerError(
      ErrorCodes.INVALID_OPTION,
      'expectedType needs a non-empty apiVersion and kind',
      {
        details: { option: 'expectedType' },
      },
    );
  }
}
