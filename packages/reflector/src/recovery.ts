import { ExponentialBackoff, type Backoff, type Clock } from '@kinformer/core';

/**
 * The reflector's default backoff: 100 ms doubling to 30 s, each delay jittered to `[d, 2d)`, and no
 * time-based reset — the reflector resets it itself as soon as it makes progress (see
 * `RecoveryPolicy`). client-go starts at 800 ms and resets only every 2 minutes, whatever
 * happened in between; that keeps a connection that has recovered idle for tens of seconds.
 */
export const REFLECTOR_BACKOFF = {
  initialMs: 100,
  capMs: 30_000,
  factor: 2,
  jitter: 1.0,
} as const;

/**
 * How {@link reflectorBackoff} waits while a streak of failures is young (the streak runs from its first
 * failure to the progress that resets the backoff): no wait is longer than `stepMs` for the first
 * `flatMs` of the streak, then the limit doubles every `doublingMs` — 150 ms until 12 s, 300 ms until
 * 17 s, then 0.6, 1.2, 2.4, 4.8, 9.6, 19.2 s, and from 47 s on it is past the 30 s cap. Each wait is
 * jittered to `[limit, 2·limit)`, and is at least the server's `Retry-After`. During the first `flatMs`
 * of a streak a watch request the server answers with a 5xx is also sent again from the last
 * resourceVersion instead of relisting (the version is still good; only a 410 says otherwise).
 *
 * A storm of faults (a fault every 250 ms, each failing every request for a second) fails most retries
 * whatever their timing, and a streak of failures there says nothing about how long the server will
 * keep failing: doubling the wait past the length of one fault only left the reflector asleep when
 * the storm ended (settle 12.3 s; p50 lag 16.5 s against 3.0 s for client-node's 1-s restart), and so
 * did 10 s of 0.5–1 s steps followed by waits as long as the streak beyond those 10 s (an unlucky 11 s
 * of failures, then waits of 6, 11 and 36 s). A server that fails every request still sees the backoff
 * grow to its cap within the first minute: in the second minute of an outage the reflector sends what
 * it sent before, one request per 30–60 s.
 */
export const STORM_RETRY = { stepMs: 150, flatMs: 12_000, doublingMs: 5_000 } as const;

/**
 * The reflector's default {@link Backoff} on `clock`: `REFLECTOR_BACKOFF`'s steps, capped while
 * the streak of failures is young (`STORM_RETRY`). A backoff passed as `ReflectorOptions.backoff`
 * is used as it is. Used on its own (outside a reflector), the streak runs from the first `next()` after
 * a `reset()`; a reflector's default backoff reads the streak its `RecoveryPolicy` keeps instead.
 */
export function reflectorBackoff(clock: Clock, random: () => number = Math.random): Backoff {
  return new YoungStreakCap(exponentialSteps(clock, random), new Streak(clock), random, true);
}

/** The reflector's {@link RecoveryPolicy} with `backoff`, or by default `reflectorBackoff`'s steps on the policy's streak. */
export function reflectorRecovery(
  backoff: Backoff | undefined,
  clock: Clock,
  random: () => number = Math.random,
): RecoveryPolicy {
  const streak = new Streak(clock);
  return new RecoveryPolicy(
    backoff ?? new YoungStreakCap(exponentialSteps(clock, random), streak, random, false),
    streak,
  );
}

function exponentialSteps(clock: Clock, random: () => number): Backoff {
  return new ExponentialBackoff({
    ...REFLECTOR_BACKOFF,
    resetAfterMs: Number.POSITIVE_INFINITY,
    clock,
    random,
  });
}

/** A streak of failures that progress ended. */
export interface EndedStreak {
  failures: number;
  /** From the streak's first failure to the progress that ended it, ms. */
  failingForMs: number;
}

/**
 * The current streak of failures: when it began and how many it holds — the one record of it, read by
 * the policy (young streaks rewatch after a 5xx; the recovery log line) and by the young-streak cap.
 */
class Streak {
  /** When the first failure since the last progress happened (clock ms), or `undefined` without one. */
  private since: number | undefined;
  private count = 0;

  constructor(private readonly clock: Clock) {}

  failures(): number {
    return this.count;
  }

  /** How long the streak has been going, ms (0 without one). */
  ageMs(): number {
    return this.since === undefined ? 0 : this.clock.now() - this.since;
  }

  failed(): void {
    this.since ??= this.clock.now();
    this.count++;
  }

  /** Ends the streak; returns it, or `undefined` when there was none. */
  end(): EndedStreak | undefined {
    if (this.count === 0) return undefined;
    const ended = { failures: this.count, failingForMs: this.ageMs() };
    this.count = 0;
    this.since = undefined;
    return ended;
  }
}

/**
 * Caps an exponential backoff's steps while `streak` is young. `owned`: a standalone backoff
 * (`reflectorBackoff`) whose own `next()`/`reset()` start and end the streak; otherwise the policy that
 * shares `streak` does.
 */
class YoungStreakCap implements Backoff {
  constructor(
    private readonly inner: Backoff,
    private readonly streak: Streak,
    private readonly random: () => number,
    private readonly owned: boolean,
  ) {}

  next(): number {
    if (this.owned) this.streak.failed();
    const step = this.inner.next();
    const beyondFlat = Math.max(0, this.streak.ageMs() - STORM_RETRY.flatMs);
    const limit = STORM_RETRY.stepMs * 2 ** Math.ceil(beyondFlat / STORM_RETRY.doublingMs);
    return step < limit ? step : Math.min(step, limit * (1 + this.random()));
  }

  reset(): void {
    if (this.owned) this.streak.end();
    this.inner.reset();
  }
}

/** Which kind of 410 ended a watch: see {@link RecoveryPolicy.expired}. */
export type ExpiredKind = 'after-progress' | 'after-outage' | 'plain';

/**
 * When the reflector waits, and for how long. One backoff serves every retry, and it grows only with
 * consecutive failures that made no progress (while a streak is young its waits are capped, see
 * `STORM_RETRY`):
 *
 * - **Progress** resets it: a watch delivered an event or a bookmark, or a LIST succeeded — unless that
 *   LIST followed a watch that failed without delivering anything. (A server whose LISTs work and whose
 *   watches fail at once would otherwise be relisted every 100 ms; with this rule it sees the backoff
 *   grow to its cap.)
 * - **Failures** wait one step, at least the server's `Retry-After` (the larger of the two, never their
 *   sum — client-go's `WithRetry.Before` waits the same): a LIST that failed, a watch that could not
 *   start, a watch that ended with an error (410, 500, a malformed line…).
 * - **No wait** at all after a clean end of a watch, a connection that broke after the watch delivered
 *   something, or a stall: the watch resumes at once from the last resourceVersion (as in client-go).
 */
export class RecoveryPolicy {
  /** True while the current cycle's watch has delivered nothing since the LIST. */
  private watchSilentSinceList = false;
  /** True when the last cycle ended with a watch that delivered nothing. */
  private lastCycleMadeNoProgress = false;
  /** True once a 410 met a watch silent since its LIST in the current streak of failures. */
  private expiredInStreak = false;

  constructor(
    private readonly backoff: Backoff,
    private readonly streak: Streak,
  ) {}

  /** Consecutive failures since the last progress. */
  failures(): number {
    return this.streak.failures();
  }

  /** True while there is no streak of failures, or it began at most `STORM_RETRY.flatMs` ago. */
  streakIsYoung(): boolean {
    return this.streak.ageMs() <= STORM_RETRY.flatMs;
  }

  /**
   * A LIST (or streaming list) succeeded. Returns the streak of failures it ends: `undefined` when there
   * was none, or when it does not count as progress (it followed a watch that delivered nothing).
   */
  listSucceeded(): EndedStreak | undefined {
    this.watchSilentSinceList = true;
    if (this.lastCycleMadeNoProgress) return undefined;
    return this.progress();
  }

  /** A watch delivered an event or a bookmark. Returns the streak of failures it ends, if any. */
  watchDelivered(): EndedStreak | undefined {
    this.watchSilentSinceList = false;
    this.lastCycleMadeNoProgress = false;
    return this.progress();
  }

  /**
   * A 410 ended a watch (in its stream or at its start): which kind of 410 it is.
   *
   * - `after-progress`: a watch delivered an event or a bookmark since the last LIST (or streaming
   *   list); the relist goes at once (`expired-after-progress`).
   * - `after-outage`: no watch delivered since the LIST, but this is the first 410 of a streak of
   *   other failures — the server answers again after failing (5xx, 429, connection refused…), and the
   *   version it was asked for is gone. The relist goes at once (`expired-after-outage`): waiting here
   *   is waiting out the outage's last backoff step a second time (30–60 s after a long one).
   * - `plain`: a 410 before any delivery, with no streak before it or after another 410 in the same
   *   streak: one backoff step, a failure like any other, so a server that expires every watch sees
   *   the backoff grow to its cap.
   */
  expired(): ExpiredKind {
    if (!this.watchSilentSinceList) return 'after-progress';
    const firstOfStreak = !this.expiredInStreak && this.streak.failures() > 0;
    this.expiredInStreak = true;
    return firstOfStreak ? 'after-outage' : 'plain';
  }

  /** The current cycle ends and the reflector will relist. */
  cycleEnded(): void {
    this.lastCycleMadeNoProgress = this.watchSilentSinceList;
  }

  /** A failure: the delay to wait before the next attempt, in ms (at least `retryAfterMs`). */
  failed(retryAfterMs: number): number {
    this.streak.failed();
    return Math.max(this.backoff.next(), retryAfterMs);
  }

  private progress(): EndedStreak | undefined {
    this.expiredInStreak = false;
    const ended = this.streak.end();
    if (ended !== undefined) this.backoff.reset();
    return ended;
  }
}

/** How many recent bookmark gaps {@link BookmarkCadence} remembers. */
const CADENCE_SAMPLES = 4;
/** Gaps needed before a cadence counts as demonstrated. */
const CADENCE_MIN_SAMPLES = 2;
/** A watch silent for this many cadences is stalled. */
const CADENCE_MULTIPLE = 3;
/** The shortest stall limit, whatever the cadence: pauses of this process must not look like a stall. */
const MIN_STALL_LIMIT_MS = 1_000;

/**
 * The cadence at which the server sends bookmarks to this reflector's watches, learnt from the
 * streams themselves. kube-apiserver's watch cache gives each bookmark-enabled watcher a bookmark
 * about a minute after the previous one (`cache_watcher.go` `nextBookmarkTime`, `defaultBookmarkFrequency`)
 * and about 2 s before the watch's deadline — but only when the resourceVersion moved, and the API docs
 * promise no interval. So the cadence is only trusted once shown: the largest of the last few gaps
 * between bookmarks (the gap from a watch's start to its first bookmark included), after two of them.
 */
export class BookmarkCadence {
  private readonly gaps: number[] = [];

  /** Records a gap (ms) between two bookmarks of one stream, or between its start and its first. */
  observe(gapMs: number): void {
    if (!(gapMs >= 0)) return;
    this.gaps.push(gapMs);
    if (this.gaps.length > CADENCE_SAMPLES) this.gaps.shift();
  }

  /** The demonstrated cadence in ms, or `undefined` while fewer than two gaps were seen. */
  cadenceMs(): number | undefined {
    if (this.gaps.length < CADENCE_MIN_SAMPLES) return undefined;
    return Math.max(...this.gaps);
  }

  /**
   * How long a watch may stay silent before it counts as stalled: three demonstrated cadences (3
   * minutes against kube-apiserver's 1-minute bookmarks), at least 1 s, but never more than
   * `timeoutLimitMs` (the watch's `timeoutSeconds` plus the stall margin, the only limit while no
   * cadence is known). A false alarm costs one rewatch from the last resourceVersion.
   */
  stallLimitMs(timeoutLimitMs: number): number {
    const cadence = this.cadenceMs();
    if (cadence === undefined) return timeoutLimitMs;
    return Math.min(timeoutLimitMs, Math.max(MIN_STALL_LIMIT_MS, CADENCE_MULTIPLE * cadence));
  }
}
