import {
  componentLogger,
  deletionHandlingMetaNamespaceKeyFunc,
  ErrorCodes,
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
  type Timer,
} from '@kinformer/core';
import type { ListerWatcher, ListOptions, ReflectorStore, WatchOptions } from './listerWatcher.js';
import { DEFAULT_PAGE_SIZE, listAllPages, type PagedList } from './pager.js';
import { BookmarkCadence, RecoveryPolicy, reflectorBackoff } from './recovery.js';
import {
  codeOf,
  isInternalError,
  isMalformedStreamError,
  isRejectedResourceVersionError,
  isUnsupportedTableObject,
  isWatchErrorRetriable,
  messageOf,
  retryAfterMs,
} from './reflectorErrors.js';
import { compareResourceVersions, isNumericResourceVersion } from './resourceVersion.js';
import { RetryWithDeadline } from './retryWithDeadline.js';
import { defaultWatchErrorHandler, type ReflectorInfo, type WatchErrorHandler } from './watchErrorHandler.js';
import {
  ABORTED,
  consumeWatch,
  NO_TIMER,
  noop,
  openWatch,
  raceAbort,
  type EventSink,
  type OpenWatch,
  type WatchContext,
  type WatchOutcome,
} from './watchStream.js';
import { effectiveMinWatchTimeoutMs, watchTimeoutSeconds } from './watchTimeout.js';

/** Default {@link ReflectorOptions.stallMarginMs}: 30 s. */
export const DEFAULT_STALL_MARGIN_MS = 30_000;

/** `RetryWithDeadline`'s `minResetPeriod` in client-go. */
const INTERNAL_ERROR_RESET_PERIOD_MS = 60_000;
/** How long `run` waits, once stopped, for requests whose ListerWatcher ignores their signal. */
const STOP_GRACE_MS = 10_000;
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
   * The one backoff behind every retry. The reflector calls `next()` once per failure and `reset()` as
   * soon as it makes progress (see `docs/reflector.md`). Default: {@link reflectorBackoff} (100 ms
   * doubling to 30 s, jittered to `[d, 2d)`) on `clock`.
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
   * Where no bookmark cadence is known yet, a watch that delivers nothing (no event, no bookmark) for
   * its `timeoutSeconds` plus this margin is aborted with `ERR_WATCH_STALLED` and restarted from the
   * last resourceVersion. Once the server has shown its bookmark cadence, the limit is three times
   * that cadence, at least 1 s (never more than the timeout-based one). Default 30 s.
   */
  stallMarginMs?: number;
  /** Random source in `[0, 1)` for watch timeouts (and the default backoff's jitter). Default `Math.random`. */
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
  /** Failures that made the reflector wait a backoff step. */
  backoffs: number;
  /** Total time spent waiting in backoff, ms. */
  backoffMs: number;
}

/**
 * The run loop's state, advanced by {@link Reflector.step} (kube-rs `watcher::State`): what the reflector
 * does next. `list` builds the store from a LIST (or streaming list); `watch` keeps it in step from the
 * last resourceVersion, first through `stream` when a streaming list handed one over; `backoff` waits
 * and then goes on to `then`.
 */
type Phase<T> =
  | { readonly kind: 'list' }
  | { readonly kind: 'watch'; readonly cycle: WatchCycle; readonly stream: OpenWatch<T> | undefined }
  | { readonly kind: 'backoff'; readonly ms: number; readonly then: Phase<T> };

/** The watch loop's state within one list-and-watch cycle (client-go's `watch` locals). */
interface WatchCycle {
  readonly retry: RetryWithDeadline;
  resync: Timer;
  /** The resourceVersion at which the last watch ended with a malformed stream, if it did. */
  malformedAt: string | undefined;
  /** Watches started in this cycle. */
  started: number;
  /** Set when `store.resync()` threw: the cycle ends and the reflector relists. */
  resyncError: { error: unknown } | undefined;
}

/** What the reflector knows about listing: facts that outlive one cycle. */
interface ListState {
  /** The resourceVersion of the last LIST, streaming list or watch event. */
  lastSyncRV: string;
  /** The last version proved unavailable (410, too large, refused): the next LIST reads at `""`. */
  rvUnavailable: boolean;
  /** An RV="0" LIST came back paginated: the watch cache is off, so every LIST is paginated. */
  paginatedResult: boolean;
  /** The store was populated once. */
  populated: boolean;
}

const LIST: Phase<never> = { kind: 'list' };

/**
 * client-go's Reflector: keeps a {@link ReflectorStore} in step with the API server.
 *
 * `run(signal)` loops until the signal aborts: LIST (paginated, from resourceVersion `"0"` first, then
 * the last synced version) → `store.replace(items, listRV)` → WATCH from the last synced version with
 * bookmarks, applying each event (`add`/`update`/`delete`, bookmarks only move the version) and
 * re-watching after every clean close. Which failures relist and which re-watch follow client-go 1.36;
 * how long it waits does not: the backoff grows only with failures that made no progress and resets as
 * soon as a watch delivers something (see `docs/reflector.md` for the timeline after each fault).
 *
 * Server errors never reject `run`: they go to the `watchErrorHandler` (list-and-watch failures and
 * connection failures at watch start) or to the log (watch errors), and the reflector retries. The
 * store's methods are called synchronously, one at a time, in the order of the events.
 */
export class Reflector<T extends KubeObject = KubeObject> implements ReflectorInfo {
  /** The name used in logs. */
  readonly name: string;
  /** `"apiVersion, Kind=kind"` of the expected type, or `"<unspecified>"` (client-go's `TypeDescription`). */
  readonly typeDescription: string;
  /** The reflector's logger (a child with `component: 'reflector'`); handlers may log through it. */
  readonly logger: Logger;

  private readonly listerWatcher: ListerWatcher<T>;
  private readonly store: ReflectorStore<T>;
  private readonly resyncPeriodMs: number;
  private readonly shouldResync: (() => boolean) | undefined;
  private readonly explicitPageSize: number | undefined;
  private readonly watchListEnabled: boolean;
  private readonly clock: Clock;
  private readonly watchErrorHandler: WatchErrorHandler<T>;
  private readonly minWatchTimeoutMs: number;
  private readonly maxInternalErrorRetryDurationMs: number;
  private readonly stallMarginMs: number;
  private readonly random: () => number;
  private readonly recovery: RecoveryPolicy;
  private readonly cadence = new BookmarkCadence();
  private readonly storeSink: EventSink<T>;
  private readonly watchContext: WatchContext<T>;
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
    backoffs: 0,
    backoffMs: 0,
  };

  private readonly listState: ListState = {
    lastSyncRV: '',
    rvUnavailable: false,
    paginatedResult: false,
    populated: false,
  };
  /** The current phase; `undefined` while not running. */
  private phase: Phase<T> | undefined;
  /** The watch feeding the store, while one is open. */
  private activeWatch: OpenWatch<T> | undefined;
  private lastEventAt: number | undefined;
  /** When the current streak of failures began (clock ms), for the recovery log line. */
  private failingSince: number | undefined;
  /** Requests whose promise has not settled: `run` waits for them before it resolves. */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(listerWatcher: ListerWatcher<T>, store: ReflectorStore<T>, options: ReflectorOptions<T> = {}) {
    validateOptions(options);
    this.listerWatcher = listerWatcher;
    this.store = store;
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
    this.random = options.random ?? Math.random;
    this.recovery = new RecoveryPolicy(options.backoff ?? reflectorBackoff(this.clock, options.random));
    this.watchErrorHandler = options.watchErrorHandler ?? defaultWatchErrorHandler;
    this.minWatchTimeoutMs = effectiveMinWatchTimeoutMs(options.minWatchTimeoutMs);
    this.maxInternalErrorRetryDurationMs = options.maxInternalErrorRetryDurationMs ?? 0;
    this.stallMarginMs = options.stallMarginMs ?? DEFAULT_STALL_MARGIN_MS;
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
    this.watchContext = {
      name: this.name,
      clock: this.clock,
      logger: this.logger,
      listerWatcher,
      expectedType: options.expectedType,
      typeDescription: this.typeDescription,
      received: (now) => {
        this.counters.events++;
        this.lastEventAt = now;
      },
      delivered: ({ type, periodic, now, stream }) => {
        if (type === 'BOOKMARK') {
          this.counters.bookmarks++;
          if (periodic) {
            this.cadence.observe(now - stream.lastBookmarkAt);
            stream.lastBookmarkAt = now;
          }
        }
        this.noteProgress(this.recovery.watchDelivered());
        // The limit may have tightened now that a cadence is known.
        if (periodic) stream.armStallTimer();
      },
      skipped: () => {
        this.counters.skipped++;
      },
    };
  }

  /**
   * Lists and watches until `signal` aborts, then resolves once every request it sent has settled (a
   * ListerWatcher that ignores its signal delays this), every timer is cancelled and every abort
   * listener removed. Never rejects for server errors; rejects with `ERR_ALREADY_STARTED` when this
   * reflector is already running. May be called again after it resolved (it resumes from
   * {@link lastSyncResourceVersion}).
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.phase !== undefined) {
      throw new KinformerError(ErrorCodes.ALREADY_STARTED, `reflector ${this.name} is already running`);
    }
    let phase: Phase<T> = LIST;
    this.phase = phase;
    this.logger.debug(
      { resyncPeriodMs: this.resyncPeriodMs, watchList: this.watchListEnabled },
      'starting reflector',
    );
    try {
      while (!signal.aborted) {
        phase = await this.step(phase, signal);
        this.phase = phase;
      }
    } finally {
      if (phase.kind === 'watch') this.endCycle(phase.cycle);
      this.activeWatch = undefined;
      await this.settleInFlight();
      this.phase = undefined;
      this.logger.debug('stopped reflector');
    }
  }

  /** The resourceVersion of the last LIST, streaming list or watch event (bookmarks included); `""` before the first. */
  lastSyncResourceVersion(): string {
    return this.listState.lastSyncRV;
  }

  /** True while a watch stream is open and feeding the store (after the initial list). */
  isWatching(): boolean {
    return this.activeWatch !== undefined;
  }

  /** The clock time (ms) of the last watch event received, bookmarks included; `undefined` before the first. */
  lastEventTime(): number | undefined {
    return this.lastEventAt;
  }

  /** True when the initial state comes from streaming lists (`useWatchList` on and supported). */
  usesWatchList(): boolean {
    return this.watchListEnabled;
  }

  /** Failures since the reflector last made progress (0 while healthy). */
  consecutiveFailures(): number {
    return this.recovery.failures();
  }

  /** The bookmark cadence the server has demonstrated to this reflector, ms; `undefined` while unknown. */
  bookmarkCadenceMs(): number | undefined {
    return this.cadence.cadenceMs();
  }

  /** A snapshot of the counters. */
  stats(): ReflectorStats {
    return { ...this.counters };
  }

  // ---------------------------------------------------------------------------------------------
  // the run loop: one step per phase

  private async step(phase: Phase<T>, signal: AbortSignal): Promise<Phase<T>> {
    switch (phase.kind) {
      case 'list':
        return this.listPhase(signal);
      case 'watch':
        return this.watchPhase(phase.cycle, phase.stream, signal);
      case 'backoff':
        this.counters.backoffs++;
        this.counters.backoffMs += phase.ms;
        if (phase.ms > 0) await this.clock.sleep(phase.ms, signal);
        else await new Promise<void>((resolve) => setImmediate(resolve));
        return phase.then;
    }
  }

  /** client-go's `ListAndWatch` up to the watch: a streaming list or a LIST, then the watch phase. */
  private async listPhase(signal: AbortSignal): Promise<Phase<T>> {
    let handedOver: OpenWatch<T> | undefined;
    try {
      if (this.watchListEnabled) {
        try {
          handedOver = await this.watchList(signal);
          if (handedOver === undefined) return LIST; // the signal aborted
        } catch (err) {
          if (signal.aborted) return LIST;
          this.logger.warn(
            { err, code: codeOf(err) },
            'the streaming list failed; falling back to LIST/WATCH (making progress beats deadlocking)',
          );
          handedOver = undefined;
        }
      }
      if (handedOver === undefined && !(await this.list(signal))) return LIST;
    } catch (err) {
      if (signal.aborted) return LIST;
      const ms = this.recovery.failed(retryAfterMs(err));
      this.noteFailureStart();
      this.handleListAndWatchError(err);
      return this.backoff(ms, LIST, err);
    }
    this.noteProgress(this.recovery.listSucceeded());
    this.logger.debug({ resourceVersion: this.listState.lastSyncRV }, 'caches populated');
    return { kind: 'watch', cycle: this.startCycle(), stream: handedOver };
  }

  private backoff(ms: number, then: Phase<T>, cause: unknown): Phase<T> {
    this.logger.debug(
      { code: codeOf(cause), delayMs: Math.round(ms), failures: this.recovery.failures() },
      'backing off',
    );
    return { kind: 'backoff', ms, then };
  }

  /** Leaves the watch phase for a relist after one backoff step (client-go: every return from ListAndWatch). */
  private relistAfter(cycle: WatchCycle, cause: unknown): Phase<T> {
    this.endCycle(cycle);
    this.recovery.cycleEnded();
    const ms = this.recovery.failed(retryAfterMs(cause));
    this.noteFailureStart();
    return this.backoff(ms, LIST, cause);
  }

  /** `"0"` for the first list, `""` once the last version proved unavailable, else the last version. */
  private relistResourceVersion(): string {
    if (this.listState.rvUnavailable) return '';
    if (this.listState.lastSyncRV === '') return '0';
    return this.listState.lastSyncRV;
  }

  /** The version a streaming list starts from: `""` when unavailable or unknown, else the last version. */
  private rewatchResourceVersion(): string {
    return this.listState.rvUnavailable ? '' : this.listState.lastSyncRV;
  }

  // ---------------------------------------------------------------------------------------------
  // LIST

  /** client-go's `list`: paginated LIST, store.replace. Returns false when the signal aborted. */
  private async list(signal: AbortSignal): Promise<boolean> {
    const state = this.listState;
    const resourceVersion = this.relistResourceVersion();
    let pageSize: number;
    if (this.explicitPageSize !== undefined) pageSize = this.explicitPageSize;
    else if (state.paginatedResult) pageSize = DEFAULT_PAGE_SIZE;
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
      state.rvUnavailable = true;
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
    if (resourceVersion === '0' && paginated) state.paginatedResult = true;
    state.rvUnavailable = false;
    if (isUnsupportedTableObject(list)) {
      throw new KinformerError(
        ErrorCodes.BAD_RESPONSE,
        `unsupported list kind ${String(list.apiVersion)}/${String(list.kind)}`,
      );
    }
    const listRV = list.metadata?.resourceVersion ?? '';
    this.store.replace(list.items, listRV);
    state.lastSyncRV = listRV;
    state.populated = true;
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
    if (this.listState.populated) this.counters.relists++;
    const lw = this.listerWatcher;
    const request = listAllPages((opts, context) => lw.list(opts, context), options, { signal, pageSize });
    this.track(request);
    return raceAbort(request, signal);
  }

  /**
   * Waits until every request sent has settled — a ListerWatcher settles its promises when their signal
   * aborts — or, for one that does not, {@link STOP_GRACE_MS} on the clock, then logs it and gives up.
   */
  private async settleInFlight(): Promise<void> {
    if (this.inFlight.size === 0) return;
    let timer: Timer = NO_TIMER;
    const grace = new Promise<'timeout'>((resolve) => {
      timer = this.clock.setTimeout(() => resolve('timeout'), STOP_GRACE_MS);
    });
    try {
      while (this.inFlight.size > 0) {
        const settled = await Promise.race([Promise.allSettled([...this.inFlight]), grace]);
        if (settled === 'timeout') {
          this.logger.warn(
            { requests: this.inFlight.size, graceMs: STOP_GRACE_MS },
            'the ListerWatcher left requests open after their signal aborted; stopping without them',
          );
          return;
        }
      }
    } finally {
      timer.cancel();
    }
  }

  /** Keeps `request` in {@link inFlight} until it settles. */
  private track(request: Promise<unknown>): void {
    this.inFlight.add(request);
    const settled = (): void => {
      this.inFlight.delete(request);
    };
    request.then(settled, settled);
  }

  // ---------------------------------------------------------------------------------------------
  // streaming list

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
      const options: WatchOptions = {
        resourceVersion,
        allowWatchBookmarks: true,
        sendInitialEvents: true,
        resourceVersionMatch: 'NotOlderThan',
        timeoutSeconds: watchTimeoutSeconds(this.minWatchTimeoutMs, this.random),
      };
      const start = this.clock.now();
      this.counters.watchLists++;
      if (this.listState.populated) this.counters.relists++;
      let w: OpenWatch<T> | undefined;
      try {
        w = await this.openWatch(options, signal);
      } catch (err) {
        if (signal.aborted) return undefined;
        if (await this.retryWatchList(err, signal)) continue;
        throw err;
      }
      if (w === undefined) return undefined;

      const sink = tempSink(temp, (rv) => {
        bookmarkRV = rv;
      });
      const warning = this.armInitialEventsWarning(w, start, temp);
      let outcome: WatchOutcome;
      try {
        outcome = await consumeWatch(this.watchContext, w, sink, {
          start,
          propagateRVFromStart: false,
          exitOnInitialEventsEnd: true,
        });
      } finally {
        warning.cancel();
      }
      if (outcome.stopped !== undefined || outcome.error !== undefined) {
        w.close();
        if (outcome.stopped === 'aborted' || signal.aborted) return undefined;
        if (outcome.stopped === 'stalled') {
          this.noteStall(w);
          continue;
        }
        if (await this.retryWatchList(outcome.error, signal)) continue;
        throw outcome.error;
      }
      if (!outcome.initialEventsEnd) {
        // The stream ended cleanly before the end bookmark: start a new streaming list.
        w.close();
        continue;
      }

      this.listState.rvUnavailable = false;
      try {
        this.store.replace(Array.from(temp.values()), bookmarkRV);
      } catch (err) {
        w.close();
        throw err;
      }
      this.listState.lastSyncRV = bookmarkRV;
      this.listState.populated = true;
      this.logger.debug({ items: temp.size, resourceVersion: bookmarkRV }, 'streaming list synced');
      return w;
    }
  }

  /** True when a streaming-list failure is retried in place (after a backoff for 429/connection errors). */
  private async retryWatchList(err: unknown, signal: AbortSignal): Promise<boolean> {
    if (isWatchErrorRetriable(err)) {
      const ms = this.recovery.failed(retryAfterMs(err));
      this.noteFailureStart();
      if (isKinformerError(err, ErrorCodes.CONNECTION)) this.handleListAndWatchError(err);
      else this.logger.debug({ err, code: codeOf(err) }, 'streaming list failed; backing off');
      this.counters.backoffs++;
      this.counters.backoffMs += ms;
      await this.clock.sleep(ms, signal);
      return true;
    }
    const expired = isExpiredError(err);
    if (expired || isTooLargeResourceVersionError(err)) {
      if (expired) this.counters.expired410++;
      this.listState.rvUnavailable = true;
      return true;
    }
    return false;
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

  // ---------------------------------------------------------------------------------------------
  // WATCH

  /** A new watch cycle, with the resync timer running beside it (client-go's `watchWithResync`). */
  private startCycle(): WatchCycle {
    const cycle: WatchCycle = {
      retry: new RetryWithDeadline(
        this.maxInternalErrorRetryDurationMs,
        INTERNAL_ERROR_RESET_PERIOD_MS,
        isInternalError,
        this.clock,
      ),
      resync: NO_TIMER,
      malformedAt: undefined,
      started: 0,
      resyncError: undefined,
    };
    cycle.resync = this.startResync(cycle);
    return cycle;
  }

  private endCycle(cycle: WatchCycle): void {
    cycle.resync.cancel();
  }

  private startResync(cycle: WatchCycle): Timer {
    if (this.resyncPeriodMs <= 0) return NO_TIMER;
    let timer: Timer | undefined;
    const tick = (): void => {
      timer = undefined;
      try {
        if (this.shouldResync === undefined || this.shouldResync()) {
          this.counters.resyncs++;
          this.store.resync();
        }
      } catch (error) {
        // client-go: a resync error ends the current watch (logged; ListAndWatch returns nil → relist).
        cycle.resyncError = { error };
        this.activeWatch?.stop('resync');
        return;
      }
      timer = this.clock.setTimeout(tick, this.resyncPeriodMs);
    };
    timer = this.clock.setTimeout(tick, this.resyncPeriodMs);
    return { cancel: () => timer?.cancel() };
  }

  /**
   * One watch of client-go's `watch` loop: opens a watch from the last version (unless a streaming list
   * handed one over), applies its events, and decides what comes next — another watch at once, another
   * after a backoff step, or a relist.
   */
  private async watchPhase(
    cycle: WatchCycle,
    handedOver: OpenWatch<T> | undefined,
    signal: AbortSignal,
  ): Promise<Phase<T>> {
    if (cycle.resyncError !== undefined) {
      handedOver?.close();
      return this.resyncFailed(cycle);
    }
    const watchAgain: Phase<T> = { kind: 'watch', cycle, stream: undefined };
    const start = this.clock.now();
    let w = handedOver;
    let propagateRVFromStart = true;
    if (w === undefined) {
      const resourceVersion = this.listState.lastSyncRV;
      const options: WatchOptions = {
        resourceVersion,
        timeoutSeconds: watchTimeoutSeconds(this.minWatchTimeoutMs, this.random),
        allowWatchBookmarks: true,
      };
      this.counters.watchStarts++;
      if (cycle.started > 0) this.counters.watchRestarts++;
      cycle.started++;
      try {
        w = await this.openWatch(options, signal);
      } catch (err) {
        if (signal.aborted) return watchAgain;
        if (isKinformerError(err, ErrorCodes.WATCH_STALLED)) {
          this.counters.stalls++;
          this.logger.warn(
            { code: err.code, resourceVersion },
            'the watch request got no answer; sending it again',
          );
          return watchAgain;
        }
        if (isWatchErrorRetriable(err)) {
          const ms = this.recovery.failed(retryAfterMs(err));
          this.noteFailureStart();
          if (isKinformerError(err, ErrorCodes.CONNECTION)) this.handleListAndWatchError(err);
          else
            this.logger.debug(
              { err, code: codeOf(err), resourceVersion },
              'could not start the watch; backing off and re-watching',
            );
          return this.backoff(ms, watchAgain, err);
        }
        if (isExpiredError(err)) this.counters.expired410++;
        // Ends the cycle like a failed LIST: the handler sees it, the reflector relists after a step.
        this.endCycle(cycle);
        this.recovery.cycleEnded();
        const ms = this.recovery.failed(retryAfterMs(err));
        this.noteFailureStart();
        this.handleListAndWatchError(err);
        return this.backoff(ms, LIST, err);
      }
      if (w === undefined) return watchAgain;
      // Events of a watch from "" or "0" start with synthetic ADDEDs that are not in RV order.
      propagateRVFromStart = resourceVersion !== '' && resourceVersion !== '0';
    } else if (cycle.started === 0) {
      cycle.started++;
    }

    this.activeWatch = w;
    let outcome: WatchOutcome;
    try {
      if (cycle.resyncError !== undefined) w.stop('resync');
      outcome = await consumeWatch(this.watchContext, w, this.storeSink, {
        start,
        propagateRVFromStart,
        exitOnInitialEventsEnd: false,
      });
    } finally {
      this.activeWatch = undefined;
      w.close();
    }
    cycle.retry.after(outcome.error);
    return this.afterWatch(cycle, w, outcome, signal);
  }

  /** What follows a watch that ended: client-go's `handleWatch` result handling, with kinformer's waits. */
  private afterWatch(
    cycle: WatchCycle,
    w: OpenWatch<T>,
    outcome: WatchOutcome,
    signal: AbortSignal,
  ): Phase<T> {
    const watchAgain: Phase<T> = { kind: 'watch', cycle, stream: undefined };
    if (outcome.stopped === 'aborted' || signal.aborted) return watchAgain;
    if (outcome.stopped === 'resync') return this.resyncFailed(cycle);
    if (outcome.stopped === 'stalled') {
      this.noteStall(w);
      return watchAgain; // at once: the stall limit was the wait
    }
    const err = outcome.error;
    if (err === undefined) return watchAgain; // clean close (server timeout, broken connection): at once
    const code = codeOf(err);
    const resourceVersion = this.listState.lastSyncRV;
    if (isExpiredError(err)) {
      this.counters.expired410++;
      this.logger.debug({ code, resourceVersion }, 'watch closed: resourceVersion expired; relisting');
      return this.relistAfter(cycle, err);
    }
    if (isTooManyRequestsError(err)) {
      const ms = this.recovery.failed(retryAfterMs(err));
      this.noteFailureStart();
      this.logger.debug(
        { code, retryAfterSeconds: retryAfterMs(err) / 1000, delayMs: ms },
        'watch answered 429; backing off and re-watching',
      );
      return this.backoff(ms, watchAgain, err);
    }
    if (isMalformedStreamError(err)) {
      this.counters.malformed++;
      if (cycle.malformedAt === resourceVersion) {
        // The server replayed the same bad line (e.g. an object whose event is longer than the line
        // limit): rewatching from here would fail forever. A LIST has no line limit: relist.
        this.logger.warn(
          { err, code, resourceVersion },
          'bad watch event again at the same resourceVersion; relisting',
        );
        return this.relistAfter(cycle, err);
      }
      cycle.malformedAt = resourceVersion;
      this.logger.warn(
        { err, code, resourceVersion },
        'bad watch event; ending this watch and resuming from the last good resourceVersion',
      );
      const ms = this.recovery.failed(0);
      this.noteFailureStart();
      return this.backoff(ms, watchAgain, err);
    }
    if (isInternalError(err) && cycle.retry.shouldRetry()) {
      this.logger.debug({ err, code }, 'watch ended with an internal error; retrying the watch');
      return watchAgain;
    }
    if (isKinformerError(err, ErrorCodes.VERY_SHORT_WATCH)) this.counters.veryShortWatches++;
    this.logger.warn({ err, code, resourceVersion }, 'watch ended with an error; relisting');
    return this.relistAfter(cycle, err);
  }

  private resyncFailed(cycle: WatchCycle): Phase<T> {
    this.logger.warn(
      { err: cycle.resyncError?.error },
      'store resync failed; ending the watch and relisting',
    );
    return this.relistAfter(cycle, undefined);
  }

  /** {@link openWatch} with this reflector's stall limit and request tracking. */
  private openWatch(options: WatchOptions, signal: AbortSignal): Promise<OpenWatch<T> | undefined> {
    const timeoutLimitMs = (options.timeoutSeconds ?? 0) * 1000 + this.stallMarginMs;
    return openWatch(
      this.watchContext,
      options,
      () => this.cadence.stallLimitMs(timeoutLimitMs),
      signal,
      (request) => this.track(request),
    );
  }

  private noteStall(w: OpenWatch<T>): void {
    this.counters.stalls++;
    const limitMs = w.currentStallLimitMs();
    const cadenceMs = this.cadence.cadenceMs();
    const err = new KinformerError(
      ErrorCodes.WATCH_STALLED,
      cadenceMs === undefined
        ? 'the watch delivered nothing for longer than its timeout plus the stall margin'
        : `the watch delivered nothing for ${Math.round(limitMs)} ms, three times the server's bookmark cadence`,
      {
        details: {
          resourceVersion: this.listState.lastSyncRV,
          timeoutSeconds: w.options.timeoutSeconds,
          stallLimitMs: Math.round(limitMs),
          ...(cadenceMs === undefined ? {} : { bookmarkCadenceMs: Math.round(cadenceMs) }),
        },
      },
    );
    this.logger.warn(
      { err, code: err.code, resourceVersion: this.listState.lastSyncRV },
      'watch stalled; restarting it from the last resourceVersion',
    );
  }

  /** Records a watch event's version (client-go's `setLastSyncResourceVersion` + `UpdateResourceVersion`). */
  private setResourceVersionFromEvent(rv: string): void {
    const state = this.listState;
    if (!isNumericResourceVersion(rv)) {
      this.counters.resourceVersionAnomalies++;
      this.logger.debug(
        { code: ErrorCodes.BAD_RESOURCE_VERSION, resourceVersion: rv },
        'non-numeric resourceVersion; treating it as opaque',
      );
    } else {
      const order = compareResourceVersions(rv, state.lastSyncRV);
      if (order !== undefined && order < 0) {
        this.counters.resourceVersionAnomalies++;
        this.logger.warn(
          { code: ErrorCodes.BAD_RESOURCE_VERSION, resourceVersion: rv, previous: state.lastSyncRV },
          'resourceVersion went backwards',
        );
      }
    }
    state.lastSyncRV = rv;
    this.store.updateResourceVersion?.(rv);
  }

  // ---------------------------------------------------------------------------------------------
  // failures and recovery

  private noteFailureStart(): void {
    this.failingSince ??= this.clock.now();
  }

  /** Logs the end of a streak of failures once, at info, with how long it lasted. */
  private noteProgress(endedFailures: number): void {
    if (endedFailures === 0 || this.failingSince === undefined) return;
    this.logger.info(
      { failures: endedFailures, failingForMs: this.clock.now() - this.failingSince },
      'recovered: the reflector is making progress again',
    );
    this.failingSince = undefined;
  }

  private handleListAndWatchError(err: unknown): void {
    try {
      this.watchErrorHandler(this, err);
    } catch (handlerErr) {
      this.logger.error({ err: handlerErr }, 'the watch error handler threw');
    }
  }
}

// -----------------------------------------------------------------------------------------------
// internals

function tempSink<T extends KubeObject>(temp: Map<string, T>, setRV: (rv: string) => void): EventSink<T> {
  const key = (obj: T): string => deletionHandlingMetaNamespaceKeyFunc(obj);
  return {
    add: (obj) => temp.set(key(obj), obj),
    update: (obj) => temp.set(key(obj), obj),
    delete: (obj) => temp.delete(key(obj)),
    bookmark: noop,
    setResourceVersion: setRV,
  };
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
