import { ErrorCodes, isKinformerError, KinformerError, realClock } from '@kinformer/core';
import { componentLogger, rejectOnAbort } from '@kinformer/core/internal';
import type { Clock, Logger } from '@kinformer/core';
import { leaderElectionRecordKey } from './resourceLock.js';
import type { LeaderElectionRecord, ResourceLock } from './resourceLock.js';

/** How much the acquire loop's retry period is jittered: each wait is `retryPeriod × (1 + random × 1.2)`. */
export const JITTER_FACTOR = 1.2;
/** Default {@link LeaderElectorOptions.leaseDurationMs}: 15 s, as client-go's core clients use. */
export const DEFAULT_LEASE_DURATION_MS = 15_000;
/** Default {@link LeaderElectorOptions.renewDeadlineMs}: 10 s. */
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
/** Default {@link LeaderElectorOptions.retryPeriodMs}: 2 s. */
export const DEFAULT_RETRY_PERIOD_MS = 2_000;

/** What a {@link LeaderElector} calls as leadership comes and goes (client-go's `LeaderCallbacks`). */
export interface LeaderCallbacks {
  /**
   * Called (asynchronously, never awaited by the election loop) when this candidate becomes the
   * leader. `signal` aborts when leadership ends: lost, given up, or `run`'s signal aborted. Do the
   * leader's work until then. A rejection while still leading makes the elector give up leadership
   * and `run` reject with that error; a rejection after `signal` aborted is only logged.
   */
  onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  /**
   * Called exactly once per `run`, at its end, whether or not this candidate ever led (client-go
   * defers it). Awaited before `run` settles; a throw is logged.
   */
  onStoppedLeading: () => void | Promise<void>;
  /**
   * Called (asynchronously, never blocking the loop) each time the observed holder changes,
   * including the first holder observed. The identity is `''` when the holder released the lease.
   * A throw is logged.
   */
  onNewLeader?: (identity: string) => void | Promise<void>;
}

/** Options of {@link LeaderElector} (client-go's `LeaderElectionConfig`). */
export interface LeaderElectorOptions {
  /** The lock to campaign for (usually a `LeaseLock`); its identity must be non-empty. */
  lock: ResourceLock;
  /**
   * How long candidates wait, from the last change they observed in the record, before they take
   * over (default 15 s). Written to the record in whole seconds, rounded up.
   */
  leaseDurationMs?: number;
  /** How long the leader keeps retrying a renewal before it gives up leadership (default 10 s). */
  renewDeadlineMs?: number;
  /** The wait between attempts (default 2 s; jittered by `JITTER_FACTOR` while acquiring). */
  retryPeriodMs?: number;
  /**
   * When `run`'s signal aborts (or leadership is lost while the record still names us), write a
   * record with an empty holder and `leaseDurationSeconds: 1` so another candidate takes over at
   * once. Only safe when the leader's work has stopped before the signal aborts.
   */
  releaseOnCancel?: boolean;
  /** A name for logs and for {@link LeaderElector.check}'s error (default: the lock's description). */
  name?: string;
  clock?: Clock;
  /** Source of randomness for the jitter, in [0, 1) (default `Math.random`). */
  random?: () => number;
  logger?: Logger;
  callbacks: LeaderCallbacks;
}

const NO_RECORD: LeaderElectionRecord = Object.freeze({
  holderIdentity: '',
  leaseDurationSeconds: 0,
  leaderTransitions: 0,
});

/**
 * Lease-based leader election: client-go's `tools/leaderelection.LeaderElector`.
 *
 * Candidates share a {@link ResourceLock}. `run` tries to acquire it every retry period (jittered);
 * once acquired it calls `onStartedLeading` and renews every retry period, each renewal retried
 * until `renewDeadlineMs`; when a renewal fails for that long, leadership is lost. A candidate takes
 * over a lock held by someone else only after it has seen the record unchanged for the record's
 * lease duration, measured on its own clock: the holder's timestamps are never compared with local
 * time, so clock skew between candidates does not matter (only skew rate does).
 *
 * Like client-go this does not fence: two candidates may briefly both believe they lead (for
 * example a leader whose renewals hang). Keep `leaseDurationMs` > `renewDeadlineMs` with a margin.
 */
export class LeaderElector {
  readonly #lock: ResourceLock;
  readonly #leaseDurationMs: number;
  readonly #leaseDurationSeconds: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #releaseOnCancel: boolean;
  readonly #name: string;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #callbacks: LeaderCallbacks;
  readonly #logger: Logger;
  /** The record last read or written, and when (local clock) it was observed. */
  #observed: LeaderElectionRecord = NO_RECORD;
  #observedTime = 0;
  /** {@link leaderElectionRecordKey} of the record last *read* (client-go's `observedRawRecord`). */
  #observedReadKey: string | undefined;
  #reportedLeader = '';
  #running = false;

  /**
   * Validates the options as client-go's `NewLeaderElector` does: leaseDuration > renewDeadline >
   * 1.2 × retryPeriod, all > 0, both required callbacks present, a lock with a non-empty identity.
   * Throws `ERR_INVALID_OPTION` otherwise.
   */
  constructor(options: LeaderElectorOptions) {
    const leaseDurationMs = options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    const renewDeadlineMs = options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    const retryPeriodMs = options.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    const invalid = (message: string): KinformerError =>
      new KinformerError(ErrorCodes.INVALID_OPTION, message);
    if (!(leaseDurationMs > renewDeadlineMs))
      throw invalid('leaseDuration must be greater than renewDeadline');
    if (!(renewDeadlineMs > JITTER_FACTOR * retryPeriodMs))
      throw invalid('renewDeadline must be greater than retryPeriod*JitterFactor');
    if (!(leaseDurationMs > 0) || !Number.isFinite(leaseDurationMs))
      throw invalid('leaseDuration must be greater than zero');
    if (!(renewDeadlineMs > 0) || !Number.isFinite(renewDeadlineMs))
      throw invalid('renewDeadline must be greater than zero');
    if (!(retryPeriodMs > 0)) throw invalid('retryPeriod must be greater than zero');
    const callbacks = options.callbacks as Partial<LeaderCallbacks> | undefined;
    if (typeof callbacks?.onStartedLeading !== 'function')
      throw invalid('OnStartedLeading callback must not be nil');
    if (typeof callbacks.onStoppedLeading !== 'function')
      throw invalid('OnStoppedLeading callback must not be nil');
    const lock = options.lock as ResourceLock | undefined;
    if (lock === undefined || lock === null) throw invalid('Lock must not be nil.');
    if (typeof lock.identity !== 'string' || lock.identity === '') throw invalid('Lock identity is empty');

    this.#lock = lock;
    this.#leaseDurationMs = leaseDurationMs;
    this.#leaseDurationSeconds = Math.ceil(leaseDurationMs / 1000);
    this.#renewDeadlineMs = renewDeadlineMs;
    this.#retryPeriodMs = retryPeriodMs;
    this.#releaseOnCancel = options.releaseOnCancel ?? false;
    this.#name = options.name ?? lock.describe();
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
    this.#callbacks = options.callbacks;
    this.#logger = componentLogger(options.logger, {
      component: 'leader-election',
      lock: lock.describe(),
      identity: lock.identity,
    });
  }

  /** This candidate's identity (the lock's). */
  get identity(): string {
    return this.#lock.identity;
  }

  /** True when the last observed record names this candidate as holder. */
  isLeader(): boolean {
    return this.#observed.holderIdentity === this.#lock.identity;
  }

  /** The holder in the last observed record; `''` before any observation or after a release. For information only. */
  getLeader(): string {
    return this.#observed.holderIdentity;
  }

  /**
   * For health checks (client-go's `Check`): an error when this candidate believes it leads but has
   * not renewed for longer than the lease duration plus `maxTolerableExpiredMs` — its renew loop is
   * stuck or was stopped while it still thinks it leads. `undefined` otherwise, including when it
   * does not lead.
   */
  check(maxTolerableExpiredMs = 0): KinformerError | undefined {
    if (!this.isLeader()) return undefined;
    const sinceMs = this.#clock.now() - this.#observedTime;
    if (sinceMs <= this.#leaseDurationMs + maxTolerableExpiredMs) return undefined;
    return new KinformerError(
      ErrorCodes.LEADER_ELECTION,
      `failed election to renew leadership on lease ${this.#name}`,
      {
        details: {
          sinceLastRenewalMs: sinceMs,
          leaseDurationMs: this.#leaseDurationMs,
          maxTolerableExpiredMs,
        },
      },
    );
  }

  /**
   * Campaigns until `signal` aborts or leadership is lost, then resolves. While acquiring it tries
   * every retry period (jittered); once leader it calls `onStartedLeading` with a signal that aborts
   * when leadership ends, and renews. With `releaseOnCancel` it releases the lock on the way out.
   * `onStoppedLeading` is called once at the end in every case. Rejects with `ERR_ALREADY_STARTED`
   * when this elector is already running, and with `onStartedLeading`'s error when that rejected
   * while leading. API errors never reject `run`: they are logged and retried.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#running)
      throw new KinformerError(
        ErrorCodes.ALREADY_STARTED,
        `leader election on ${this.#name} is already running`,
      );
    this.#running = true;
    let failure: { error: unknown } | undefined;
    try {
      if (await this.#acquire(signal)) failure = await this.#lead(signal);
    } finally {
      try {
        await this.#callbacks.onStoppedLeading();
      } catch (err) {
        this.#logger.error({ err }, 'onStoppedLeading failed');
      }
      this.#running = false;
    }
    if (failure !== undefined) throw failure.error;
  }

  /** Tries until the lock is acquired (true) or `signal` aborts (false). client-go's `acquire`. */
  async #acquire(signal: AbortSignal): Promise<boolean> {
    this.#logger.info('attempting to acquire leader lease');
    while (!signal.aborted) {
      const acquired = await this.#tryAcquireOrRenew(signal);
      this.#maybeReportTransition();
      if (acquired) {
        this.#recordEvent('became leader');
        this.#logger.info('successfully acquired lease');
        return true;
      }
      this.#logger.debug({ holder: this.#observed.holderIdentity }, 'failed to acquire lease');
      await this.#clock.sleep(this.#retryPeriodMs * (1 + this.#random() * JITTER_FACTOR), signal);
    }
    return false;
  }

  /** Leads until leadership ends; returns the leader callback's failure, if that ended it. */
  async #lead(signal: AbortSignal): Promise<{ error: unknown } | undefined> {
    const stop = new AbortController();
    const leader = new AbortController();
    const onAbort = (): void => stop.abort(signal.reason);
    if (signal.aborted) stop.abort(signal.reason);
    else signal.addEventListener('abort', onAbort, { once: true });
    let failure: { error: unknown } | undefined;
    this.#startLeading(leader.signal, (error) => {
      failure ??= { error };
      stop.abort(error);
    });
    try {
      await this.#renew(stop.signal);
    } finally {
      this.#recordEvent('stopped leading');
      signal.removeEventListener('abort', onAbort);
      const reason: unknown = stop.signal.aborted
        ? stop.signal.reason
        : new KinformerError(ErrorCodes.LEADER_ELECTION, `leadership of ${this.#name} was lost`);
      leader.abort(reason);
    }
    if (this.#releaseOnCancel) await this.#release();
    return failure;
  }

  #startLeading(signal: AbortSignal, onFailure: (error: unknown) => void): void {
    Promise.resolve()
      .then(() => this.#callbacks.onStartedLeading(signal))
      .then(undefined, (err: unknown) => {
        if (signal.aborted) {
          this.#logger.warn({ err }, 'onStartedLeading rejected after leadership ended');
          return;
        }
        this.#logger.error({ err }, 'onStartedLeading failed; giving up leadership');
        onFailure(err);
      })
      .catch(() => undefined);
  }

  /** client-go's `Lock.RecordEvent`: best effort, a throwing recorder is logged. */
  #recordEvent(message: string): void {
    try {
      this.#lock.recordEvent?.(message);
    } catch (err) {
      this.#logger.warn({ err }, 'recording a leader election event failed');
    }
  }

  /** Renews every retry period until a renewal fails for renewDeadline or `signal` aborts. client-go's `renew`. */
  async #renew(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const renewed = await this.#renewWithinDeadline(signal);
      this.#maybeReportTransition();
      if (!renewed) {
        if (signal.aborted) this.#logger.info('stopping leader election');
        else
          this.#logger.info(
            { holder: this.#observed.holderIdentity },
            'failed to renew lease; leadership lost',
          );
        return;
      }
      this.#logger.trace('successfully renewed lease');
      await this.#clock.sleep(this.#retryPeriodMs, signal);
    }
  }

  /** Tries every retry period until one attempt succeeds (true) or renewDeadline passes (false). */
  async #renewWithinDeadline(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return false;
    const deadline = this.#renewDeadline('renew');
    const onAbort = (): void => deadline.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        if (await this.#tryAcquireOrRenew(deadline.signal)) return true;
        if (deadline.signal.aborted) return false;
        await this.#clock.sleep(this.#retryPeriodMs, deadline.signal);
        if (deadline.signal.aborted) return false;
      }
    } finally {
      deadline.cancel();
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * A signal that aborts (`ERR_TIMEOUT`) renewDeadline from now, or when `abort` is called; `cancel` stops
   * its timer.
   */
  #renewDeadline(what: 'renew' | 'release'): {
    signal: AbortSignal;
    abort(reason: unknown): void;
    cancel(): void;
  } {
    const deadline = new AbortController();
    const timer = this.#clock.setTimeout(() => {
      const message = `could not ${what} ${this.#name} within ${this.#renewDeadlineMs} ms`;
      deadline.abort(new KinformerError(ErrorCodes.TIMEOUT, message));
    }, this.#renewDeadlineMs);
    return {
      signal: deadline.signal,
      abort: (reason) => deadline.abort(reason),
      cancel: () => timer.cancel(),
    };
  }

  /**
   * One attempt (client-go's `tryAcquireOrRenew`). Never rejects: failures are logged and return
   * false; nothing is recorded once `signal` aborted.
   */
  async #tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const now = this.#clock.now();
    const record: LeaderElectionRecord = {
      holderIdentity: this.#lock.identity,
      leaseDurationSeconds: this.#leaseDurationSeconds,
      acquireTime: new Date(now),
      renewTime: new Date(now),
      leaderTransitions: 0,
    };

    // 1. Fast path: the leader writes optimistically, assuming the record it last saw is current.
    if (this.isLeader() && this.#isLeaseValid(now)) {
      record.acquireTime = this.#observed.acquireTime;
      record.leaderTransitions = this.#observed.leaderTransitions;
      try {
        await rejectOnAbort(this.#lock.update(record, { signal }), signal);
        if (signal.aborted) return false;
        this.#setObserved(record);
        return true;
      } catch (err) {
        if (signal.aborted) return false;
        this.#logFailure(err, 'failed to update lock optimistically; falling back to the slow path');
      }
    }

    // 2. Get the record, or create it.
    let old: LeaderElectionRecord;
    try {
      old = await rejectOnAbort(this.#lock.get({ signal }), signal);
    } catch (err) {
      if (signal.aborted) return false;
      if (!isKinformerError(err, ErrorCodes.NOT_FOUND)) {
        this.#logger.error({ err }, 'error retrieving resource lock');
        return false;
      }
      return this.#write(
        () => this.#lock.create(record, { signal }),
        record,
        signal,
        'error initially creating leader election record',
      );
    }
    if (signal.aborted) return false;

    // 3. Record what we read, timed by our clock if it changed; respect a live holder.
    this.#observeRead(old);
    if (old.holderIdentity !== '' && this.#isLeaseValid(now) && !this.isLeader()) {
      this.#logger.debug(
        { holder: old.holderIdentity },
        'lock is held by another candidate and has not yet expired',
      );
      return false;
    }

    // 4. Take over or renew: keep acquireTime and transitions when renewing, count a transition otherwise.
    if (this.isLeader()) {
      record.acquireTime = old.acquireTime;
      record.leaderTransitions = old.leaderTransitions;
    } else {
      record.leaderTransitions = old.leaderTransitions + 1;
    }
    return this.#write(() => this.#lock.update(record, { signal }), record, signal, 'failed to update lock');
  }

  /**
   * Runs a create or update of `record` (bounded by `signal`): true and `record` observed once it
   * succeeded; false, with `failure` logged unless `signal` aborted, otherwise.
   */
  async #write(
    write: () => Promise<void>,
    record: LeaderElectionRecord,
    signal: AbortSignal,
    failure: string,
  ): Promise<boolean> {
    try {
      await rejectOnAbort(write(), signal);
    } catch (err) {
      if (!signal.aborted) this.#logFailure(err, failure);
      return false;
    }
    if (signal.aborted) return false;
    this.#setObserved(record);
    return true;
  }

  /** client-go's `release`: hands the lock over when we hold it, bounded by renewDeadline. */
  async #release(): Promise<boolean> {
    if (!this.isLeader()) return true;
    const deadline = this.#renewDeadline('release');
    const signal = deadline.signal;
    try {
      // A conflict means someone wrote the lease since our last write: re-read it and release only
      // while it still names us (a few times at most).
      for (let attempt = 0; attempt < 3; attempt++) {
        const now = this.#clock.now();
        const record: LeaderElectionRecord = {
          holderIdentity: '',
          leaseDurationSeconds: 1,
          acquireTime: new Date(now),
          renewTime: new Date(now),
          leaderTransitions: this.#observed.leaderTransitions,
        };
        try {
          await rejectOnAbort(this.#lock.update(record, { signal }), signal);
          this.#setObserved(record);
          this.#logger.info('released leader lease');
          return true;
        } catch (err) {
          if (!isKinformerError(err, ErrorCodes.CONFLICT)) {
            this.#logger.error({ err }, 'failed to release lock');
            return false;
          }
          this.#logger.debug({ err }, 'conflict while releasing lock; re-reading it');
        }
        try {
          this.#observeRead(await rejectOnAbort(this.#lock.get({ signal }), signal));
        } catch (err) {
          this.#logger.error({ err }, 'failed to release lock: error retrieving it');
          return false;
        }
        if (!this.isLeader()) return true;
      }
      this.#logger.error('failed to release lock: it kept changing');
      return false;
    } finally {
      deadline.cancel();
    }
  }

  #isLeaseValid(now: number): boolean {
    return this.#observedTime + this.#observed.leaseDurationSeconds * 1000 > now;
  }

  #setObserved(record: LeaderElectionRecord): void {
    this.#observed = record;
    this.#observedTime = this.#clock.now();
  }

  /** Records a record read from the lock when it differs from the last one read (client-go compares raw bytes). */
  #observeRead(record: LeaderElectionRecord): void {
    const key = leaderElectionRecordKey(record);
    if (key === this.#observedReadKey) return;
    this.#observedReadKey = key;
    this.#setObserved(record);
  }

  /** A 409 is a lost race, not an error: debug. Anything else: error. */
  #logFailure(err: unknown, message: string): void {
    if (isKinformerError(err, ErrorCodes.CONFLICT))
      this.#logger.debug({ err }, `${message} (conflict: another candidate wrote first)`);
    else this.#logger.error({ err }, message);
  }

  #maybeReportTransition(): void {
    const holder = this.#observed.holderIdentity;
    if (holder === this.#reportedLeader) return;
    this.#reportedLeader = holder;
    if (this.#callbacks.onNewLeader === undefined) return;
    Promise.resolve()
      .then(() => this.#callbacks.onNewLeader?.(holder))
      .catch((err: unknown) => this.#logger.error({ err, holder }, 'onNewLeader failed'));
  }
}
