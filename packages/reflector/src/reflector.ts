export type { ExpectedType, ReflectorOptions, ReflectorStats } from './reflectorOptions.js';
export { DEFAULT_STALL_MARGIN_MS } from './reflectorOptions.js';

import {
  ErrorCodes,
  KinformerError,
  realClock,
  type Clock,
  type KubeObject,
  type Logger,
} from '@kinformer/core';
import { componentLogger, type Timer } from '@kinformer/core/internal';
import type { ListerWatcher, ReflectorStore, WatchOptions } from './listerWatcher.js';
import type { ListState } from './listState.js';
import { listOnce, type ListHost } from './reflectorList.js';
import {
  DEFAULT_STALL_MARGIN_MS,
  newReflectorStats,
  validateOptions,
  type ReflectorOptions,
  type ReflectorStats,
} from './reflectorOptions.js';
import { ShardFilteringListerWatcher, toShardSelector } from './shardFilter.js';
import { streamingList, type StreamingListHost } from './streamingList.js';
import { decide, type LogLevel, type Outcome } from './transitions.js';
import {
  BookmarkCadence,
  reflectorRecovery,
  type EndedStreak,
  type ExpiredKind,
  type RecoveryPolicy,
} from './recovery.js';
import { codeOf, faultSummary, isServerError, retryAfterMs } from './reflectorErrors.js';
import { compareResourceVersions, isNumericResourceVersion } from './resourceVersion.js';
import { defaultWatchErrorHandler, type ReflectorInfo, type WatchErrorHandler } from './watchErrorHandler.js';
import {
  consumeWatch,
  NO_TIMER,
  openWatch,
  type EventSink,
  type OpenWatch,
  type WatchContext,
  type WatchOutcome,
} from './watchStream.js';
import {
  endWatchCycle,
  resyncErrorOf,
  startWatchCycle,
  watchEndOutcome,
  watchStartOutcome,
  type WatchCycle,
  type WatchCycleHost,
} from './watchCycle.js';
import { effectiveMinWatchTimeoutMs, watchTimeoutSeconds } from './watchTimeout.js';

/** How long `run` waits, once stopped, for requests whose ListerWatcher ignores their signal. */
const STOP_GRACE_MS = 10_000;

/**
 * The run loop's state, advanced by {@link Reflector.step} (kube-rs `watcher::State`): what the reflector
 * does next (see `transitions.ts`). `list` builds the store from a LIST, `stream` from a streaming list;
 * `watch` keeps it in step from the last resourceVersion, first through `stream` when a streaming list
 * handed one over, and holds `open` while a watch stream feeds the store; `backoff` waits and then goes
 * on to `then`.
 */
type Phase<T> =
  | { readonly kind: 'list' | 'stream' }
  | {
      readonly kind: 'watch';
      readonly cycle: WatchCycle;
      readonly stream: OpenWatch<T> | undefined;
      readonly open?: OpenWatch<T>;
    }
  | { readonly kind: 'backoff'; readonly ms: number; readonly then: Phase<T> };

/** How a phase ended: its outcome, the error behind it, and the stream it hands over or that stalled. */
interface PhaseEnd<T> {
  readonly outcome: Outcome | 'aborted';
  readonly error?: unknown;
  readonly stream?: OpenWatch<T> | undefined;
}

const ABORTED_END: PhaseEnd<never> = { outcome: 'aborted' };

const LIST: Phase<never> = { kind: 'list' };
const STREAM: Phase<never> = { kind: 'stream' };

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
  private readonly explicitPageSize: number | undefined;
  private readonly watchListEnabled: boolean;
  private readonly clock: Clock;
  private readonly watchErrorHandler: WatchErrorHandler<T>;
  private readonly minWatchTimeoutMs: number;
  private readonly stallMarginMs: number;
  private readonly random: () => number;
  private readonly recovery: RecoveryPolicy;
  private readonly cadence = new BookmarkCadence();
  private readonly storeSink: EventSink<T>;
  private readonly watchContext: WatchContext<T>;
  /** What the LIST and the streaming list see of this reflector. */
  private readonly host: ListHost<T> & StreamingListHost<T>;
  /** What a watch cycle sees of this reflector (its resync timer). */
  private readonly cycleHost: WatchCycleHost;
  private readonly counters: ReflectorStats = newReflectorStats();

  private readonly listState: ListState = {
    lastSyncRV: '',
    rvUnavailable: false,
    paginatedResult: false,
    populated: false,
  };
  /** The current phase; `undefined` while not running. */
  private phase: Phase<T> | undefined;
  private lastEventAt: number | undefined;
  /**
   * The last phase ended with a watch request the server answered with a 5xx once the streak was too
   * old to rewatch (`start-failed`): a LIST that fails the same way goes back to the watch, so that the
   * two take turns while the server fails both.
   */
  private takeTurns = false;
  /** Which kind of 410 ended a watch (`RecoveryPolicy.expired`). */
  private readonly expiredKind = (): ExpiredKind => this.recovery.expired();
  /** Requests whose promise has not settled: `run` waits for them before it resolves. */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(source: ListerWatcher<T>, store: ReflectorStore<T>, options: ReflectorOptions<T> = {}) {
    validateOptions(options);
    const listerWatcher =
      options.shardSelector === undefined
        ? source
        : new ShardFilteringListerWatcher(source, toShardSelector(options.shardSelector), this.counters);
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
    this.explicitPageSize = options.pageSize;
    this.watchListEnabled = (options.useWatchList ?? false) && listerWatcher.watchListSupported !== false;
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    this.recovery = reflectorRecovery(options.backoff, this.clock, options.random);
    this.watchErrorHandler = options.watchErrorHandler ?? defaultWatchErrorHandler;
    this.minWatchTimeoutMs = effectiveMinWatchTimeoutMs(options.minWatchTimeoutMs);
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
      delivered: (type, periodic, now, stream) => {
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
    this.cycleHost = {
      clock: this.clock,
      resyncPeriodMs: this.resyncPeriodMs,
      shouldResync: options.shouldResync,
      maxInternalErrorRetryDurationMs: options.maxInternalErrorRetryDurationMs ?? 0,
      counters: this.counters,
      resync: () => this.store.resync(),
      stopForResync: () => this.openStream()?.stop('resync'),
    };
    this.host = {
      listerWatcher,
      store,
      logger: this.logger,
      clock: this.clock,
      counters: this.counters,
      listState: this.listState,
      explicitPageSize: this.explicitPageSize,
      // The initial events of a streaming list are not watch progress (listSucceeded credits the list),
      // nor bookmark-cadence samples; the end bookmark starts the stream's cadence clock.
      watchContext: {
        ...this.watchContext,
        delivered: (type, _periodic, now, stream) => {
          if (type !== 'BOOKMARK') return;
          this.counters.bookmarks++;
          stream.lastBookmarkAt = now;
        },
      },
      track: (request) => this.track(request),
      watchTimeoutSeconds: () => watchTimeoutSeconds(this.minWatchTimeoutMs, this.random),
      openWatch: (options, signal) => this.openWatch(options, signal),
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
    let phase: Phase<T> = this.firstListPhase();
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
      if (phase.kind === 'watch') {
        phase.stream?.close(); // a streaming list's stream, handed over but not yet watched
        this.endCycle(phase.cycle);
      }
      await this.settleInFlight();
      this.phase = undefined;
      this.logger.debug('stopped reflector');
    }
  }

  /** The resourceVersion of the last LIST, streaming list or watch event (bookmarks included); `""` before the first. */
  lastSyncResourceVersion(): string {
    return this.listState.lastSyncRV;
  }

  /** True while a watch stream is open and feeding the store (after the initial list): the `watch` phase with `open` set. */
  isWatching(): boolean {
    return this.openStream() !== undefined;
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
  // the run loop: one step per phase, one place that applies the transition

  private async step(phase: Phase<T>, signal: AbortSignal): Promise<Phase<T>> {
    switch (phase.kind) {
      case 'list':
        return this.apply(phase, await this.listStep(signal), signal);
      case 'stream':
        return this.apply(phase, await streamingList(this.host, signal), signal);
      case 'watch':
        return this.apply(phase, await this.watchStep(phase, signal), signal);
      case 'backoff':
        this.counters.backoffs++;
        this.counters.backoffMs += phase.ms;
        if (phase.ms > 0) await this.clock.sleep(phase.ms, signal);
        else await new Promise<void>((resolve) => setImmediate(resolve));
        return phase.then;
    }
  }

  /** The list phase the cycle starts with: a streaming list when enabled, else a LIST. */
  private firstListPhase(): Phase<T> {
    return this.watchListEnabled ? STREAM : LIST;
  }

  /** client-go's `list`: paginated LIST and `store.replace` (`reflectorList.ts`). */
  private async listStep(signal: AbortSignal): Promise<PhaseEnd<T>> {
    try {
      return (await listOnce(this.host, signal)) ? { outcome: 'listed' } : ABORTED_END;
    } catch (error) {
      if (signal.aborted) return ABORTED_END;
      const state = this.listState;
      const canRewatch =
        state.populated && !state.rvUnavailable && isNumericResourceVersion(state.lastSyncRV);
      if (this.takeTurns && canRewatch && isServerError(error)) return { outcome: 'list-unavailable', error };
      return { outcome: 'list-failed', error };
    }
  }

  /**
   * Applies the transition `decide(phase, end.outcome)` (`transitions.ts`): counts, ends the cycle on a
   * relist, takes the backoff step on a failure, logs, reports to the watch error handler, and returns
   * the next phase (behind a `backoff` phase when it waits).
   */
  private apply(phase: Phase<T>, end: PhaseEnd<T>, signal: AbortSignal): Phase<T> {
    if (end.outcome === 'aborted' || signal.aborted) {
      if (phase.kind === 'watch') return { kind: 'watch', cycle: phase.cycle, stream: undefined };
      return phase.kind === 'stream' && end.stream !== undefined
        ? { kind: 'watch', cycle: this.startCycle(), stream: end.stream } // closed by run's finally
        : phase;
    }
    if (phase.kind === 'backoff') throw new Error('reflector: a backoff phase has no outcome');
    const t = decide(phase.kind, end.outcome);
    const err = end.error;
    const failuresBefore = this.recovery.failures();
    this.takeTurns = end.outcome === 'start-failed' && isServerError(err);
    if (t.counter !== undefined) this.counters[t.counter]++;
    if (t.progress) this.noteProgress(this.recovery.listSucceeded());
    const cycle = phase.kind === 'watch' ? phase.cycle : undefined;
    if (t.next === 'relist' && cycle !== undefined) {
      this.endCycle(cycle);
      this.recovery.cycleEnded();
    }
    const ms = t.wait === 'step' ? this.recovery.failed(retryAfterMs(err)) : undefined;
    if (t.log !== undefined) this.logTransition(t.log.level, t.log.msg, end, failuresBefore, ms);
    if (t.report) this.handleListAndWatchError(err);
    let next: Phase<T>;
    switch (t.next) {
      case 'relist':
        next = this.firstListPhase();
        break;
      case 'list':
        next = LIST;
        break;
      case 'stream':
        next = STREAM;
        break;
      case 'watch':
        next = { kind: 'watch', cycle: cycle ?? this.startCycle(), stream: undefined };
        break;
      case 'cycle':
        this.logger.debug({ resourceVersion: this.listState.lastSyncRV }, 'caches populated');
        next = { kind: 'watch', cycle: this.startCycle(), stream: end.stream };
        break;
    }
    if (ms === undefined) return next;
    this.logger.debug(
      { code: codeOf(err), delayMs: Math.round(ms), failures: this.recovery.failures() },
      'backing off',
    );
    return { kind: 'backoff', ms, then: next };
  }

  /** The log line of a transition (`Transition.log`). */
  private logTransition(
    level: LogLevel,
    msg: string,
    end: PhaseEnd<T>,
    failuresBefore: number,
    delayMs: number | undefined,
  ): void {
    if (level === 'stall') {
      if (end.stream !== undefined) this.noteStall(end.stream);
      return;
    }
    const err = end.error;
    const fields: Record<string, unknown> = {
      ...(err === undefined ? {} : { err: faultSummary(err) }),
      code: codeOf(err),
      resourceVersion: this.listState.lastSyncRV,
      ...(delayMs === undefined ? {} : { delayMs: Math.round(delayMs) }),
    };
    if (level === 'warn' || (level === 'streak' && failuresBefore === 0)) this.logger.warn(fields, msg);
    else if (level === 'streak') this.logger.debug({ ...fields, failures: failuresBefore }, msg);
    else this.logger.debug(fields, msg);
  }

  // ---------------------------------------------------------------------------------------------
  // requests in flight

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
  // WATCH

  /** A new watch cycle, with the resync timer running beside it (`watchCycle.ts`). */
  private startCycle(): WatchCycle {
    return startWatchCycle(this.cycleHost);
  }

  private endCycle(cycle: WatchCycle): void {
    endWatchCycle(cycle);
  }

  /**
   * One watch of client-go's `watch` loop: opens a watch from the last version (unless a streaming list
   * handed one over), applies its events, and classifies how it ended (client-go's `handleWatch` result
   * handling) for the transition table.
   */
  private async watchStep(
    phase: Extract<Phase<T>, { kind: 'watch' }>,
    signal: AbortSignal,
  ): Promise<PhaseEnd<T>> {
    const { cycle, stream: handedOver } = phase;
    if (cycle.resyncError !== undefined) {
      handedOver?.close();
      return { outcome: 'resync-failed', error: cycle.resyncError.error };
    }
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
      } catch (error) {
        if (signal.aborted) return ABORTED_END;
        const rewatch5xx = this.recovery.streakIsYoung() && isNumericResourceVersion(resourceVersion);
        return { outcome: watchStartOutcome(error, rewatch5xx, this.expiredKind), error };
      }
      if (w === undefined) return ABORTED_END;
      // Events of a watch from "" or "0" start with synthetic ADDEDs that are not in RV order.
      propagateRVFromStart = resourceVersion !== '' && resourceVersion !== '0';
    } else if (cycle.started === 0) {
      cycle.started++;
    }

    this.phase = { ...phase, open: w };
    let outcome: WatchOutcome;
    try {
      if (cycle.resyncError !== undefined) w.stop('resync');
      outcome = await consumeWatch(this.watchContext, w, this.storeSink, {
        start,
        propagateRVFromStart,
        exitOnInitialEventsEnd: false,
      });
    } finally {
      this.phase = phase;
      w.close();
    }
    cycle.retry.after(outcome.error);
    if (outcome.stopped === 'aborted' || signal.aborted) return ABORTED_END;
    if (outcome.stopped === 'resync') return { outcome: 'resync-failed', error: resyncErrorOf(cycle) };
    if (outcome.stopped === 'stalled') return { outcome: 'stalled', stream: w }; // the stall limit was the wait
    const error = outcome.error;
    if (error === undefined) return { outcome: 'ended' }; // server timeout, broken connection
    return { outcome: watchEndOutcome(cycle, error, this.listState.lastSyncRV, this.expiredKind), error };
  }

  /** The open watch stream feeding the store, if any (derived from the phase). */
  private openStream(): OpenWatch<T> | undefined {
    return this.phase?.kind === 'watch' ? this.phase.open : undefined;
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

  /** The stall warning (the counter is the transition's). */
  private noteStall(w: OpenWatch<T>): void {
    const limitMs = w.currentStallLimitMs();
    const cadenceMs = this.cadence.cadenceMs();
    const err = new KinformerError(
      ErrorCodes.WATCH_STALLED,
      cadenceMs === undefined
        ? 'the watch delivered nothing for longer than its timeout plus the stall margin'
        : `the watch delivered nothing for ${Math.round(limitMs)} ms (its stall limit; the server's bookmark cadence is ${Math.round(cadenceMs)} ms)`,
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
      { err: faultSummary(err), code: err.code, resourceVersion: this.listState.lastSyncRV },
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

  /** Logs the end of a streak of failures once, at info, with how long it lasted. */
  private noteProgress(ended: EndedStreak | undefined): void {
    if (ended === undefined) return;
    this.logger.info(
      { failures: ended.failures, failingForMs: ended.failingForMs },
      'recovered: the reflector is making progress again',
    );
  }

  private handleListAndWatchError(err: unknown): void {
    try {
      this.watchErrorHandler(this, err);
    } catch (handlerErr) {
      this.logger.error({ err: handlerErr }, 'the watch error handler threw');
    }
  }
}
