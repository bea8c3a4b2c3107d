import { ErrorCodes, isKinformerError, type Clock } from '@kinformer/core';
import { isExpiredError, isTooManyRequestsError, type Timer } from '@kinformer/core/internal';
import type { ReflectorStats } from './reflectorOptions.js';
import {
  isInternalError,
  isMalformedStreamError,
  isServerError,
  isWatchErrorRetriable,
} from './reflectorErrors.js';
import type { ExpiredKind } from './recovery.js';
import { RetryWithDeadline } from './retryWithDeadline.js';
import type { Outcome } from './transitions.js';
import { NO_TIMER } from './watchStream.js';

/**
 * One list-and-watch cycle's watch loop (client-go's `watch` locals and `watchWithResync`): the state
 * its watches share, the resync timer beside them, and how a watch of the cycle ended — the outcome the
 * transition table (`transitions.ts`) turns into the next step.
 */

/** `RetryWithDeadline`'s `minResetPeriod` in client-go. */
const INTERNAL_ERROR_RESET_PERIOD_MS = 60_000;

/** The watch loop's state within one list-and-watch cycle. */
export interface WatchCycle {
  readonly retry: RetryWithDeadline;
  resync: Timer;
  /** The resourceVersion at which the last watch ended with a malformed stream, if it did. */
  malformedAt: string | undefined;
  /** Watches started in this cycle. */
  started: number;
  /** Set when `store.resync()` threw: the cycle ends and the reflector relists. */
  resyncError: { error: unknown } | undefined;
}

/** What a cycle needs from its reflector. */
export interface WatchCycleHost {
  readonly clock: Clock;
  readonly resyncPeriodMs: number;
  readonly shouldResync: (() => boolean) | undefined;
  readonly maxInternalErrorRetryDurationMs: number;
  readonly counters: ReflectorStats;
  /** The store's `resync()`. */
  resync(): void;
  /** Stops the open watch, if any, because the resync failed. */
  stopForResync(): void;
}

/** A new watch cycle, with the resync timer running beside it (client-go's `watchWithResync`). */
export function startWatchCycle(host: WatchCycleHost): WatchCycle {
  const cycle: WatchCycle = {
    retry: new RetryWithDeadline(
      host.maxInternalErrorRetryDurationMs,
      INTERNAL_ERROR_RESET_PERIOD_MS,
      isInternalError,
      host.clock,
    ),
    resync: NO_TIMER,
    malformedAt: undefined,
    started: 0,
    resyncError: undefined,
  };
  cycle.resync = startResync(host, cycle);
  return cycle;
}

export function endWatchCycle(cycle: WatchCycle): void {
  cycle.resync.cancel();
}

function startResync(host: WatchCycleHost, cycle: WatchCycle): Timer {
  if (host.resyncPeriodMs <= 0) return NO_TIMER;
  let timer: Timer | undefined;
  const tick = (): void => {
    timer = undefined;
    try {
      if (host.shouldResync === undefined || host.shouldResync()) {
        host.counters.resyncs++;
        host.resync();
      }
    } catch (error) {
      // client-go: a resync error ends the current watch (logged; ListAndWatch returns nil → relist).
      cycle.resyncError = { error };
      host.stopForResync();
      return;
    }
    timer = host.clock.setTimeout(tick, host.resyncPeriodMs);
  };
  timer = host.clock.setTimeout(tick, host.resyncPeriodMs);
  return { cancel: () => timer?.cancel() };
}

/** What `store.resync()` threw in this cycle (set by the resync timer while the watch ran). */
export function resyncErrorOf(cycle: WatchCycle): unknown {
  return cycle.resyncError?.error;
}

/** The outcome of a 410 in a watch's stream, by its kind. */
const EXPIRED_IN_STREAM: Readonly<Record<ExpiredKind, Outcome>> = {
  'after-progress': 'expired-after-progress',
  'after-outage': 'expired-after-outage',
  plain: 'expired',
};

/** The outcome of a 410 answer to a watch request, by its kind. */
const EXPIRED_AT_START: Readonly<Record<ExpiredKind, Outcome>> = {
  'after-progress': 'start-expired-after-progress',
  'after-outage': 'start-expired-after-outage',
  plain: 'start-expired',
};

/**
 * Classifies an error that ended an open watch of `cycle` (client-go's `handleWatch` result handling);
 * remembers where a malformed line was. `resourceVersion`: the last synced version; `expiredKind`: which
 * kind of 410 it is (`RecoveryPolicy.expired`, asked only for a 410: it records the 410).
 */
export function watchEndOutcome(
  cycle: WatchCycle,
  err: unknown,
  resourceVersion: string,
  expiredKind: () => ExpiredKind,
): Outcome {
  if (isExpiredError(err)) return EXPIRED_IN_STREAM[expiredKind()];
  if (isTooManyRequestsError(err)) return 'throttled';
  if (isMalformedStreamError(err)) {
    // The server replayed the same bad line (e.g. an object whose event is longer than the line limit):
    // rewatching from here would fail forever. A LIST has no line limit.
    if (cycle.malformedAt === resourceVersion) return 'malformed-again';
    cycle.malformedAt = resourceVersion;
    return 'malformed';
  }
  if (isInternalError(err) && cycle.retry.shouldRetry()) return 'internal-retry';
  if (isKinformerError(err, ErrorCodes.VERY_SHORT_WATCH)) return 'very-short';
  return 'failed';
}

/**
 * Classifies an error that kept a watch from starting. `rewatch5xx`: the reflector has been failing for
 * at most `STORM_RETRY.flatMs` (or not at all) and watched from a version the server handed out
 * as a number, so a 5xx rewatches instead of relisting. `expiredKind`: as for {@link watchEndOutcome}.
 */
export function watchStartOutcome(
  err: unknown,
  rewatch5xx: boolean,
  expiredKind: () => ExpiredKind,
): Outcome {
  if (isKinformerError(err, ErrorCodes.WATCH_STALLED)) return 'start-stalled';
  if (isKinformerError(err, ErrorCodes.CONNECTION)) return 'start-unreachable';
  if (isWatchErrorRetriable(err)) return 'start-throttled';
  if (isExpiredError(err)) return EXPIRED_AT_START[expiredKind()];
  if (rewatch5xx && isServerError(err)) return 'start-unavailable';
  return 'start-failed';
}
