import { ErrorCodes, KinformerError, realClock, type Clock } from '@kinformer/core';

/**
 * Decides how long an item waits before it is retried (client-go's `TypedRateLimiter`).
 * Implementations keep per-item memory until {@link RateLimiter.forget}.
 */
export interface RateLimiter<K> {
  /** How long, in ms, `item` should wait now. Each call counts as one more retry of it. */
  when(item: K): number;
  /** Forgets `item`'s retries (call it when the item was processed successfully). */
  forget(item: K): void;
  /** How many times `item` was retried since it was last forgotten. */
  numRequeues(item: K): number;
}

function checkDuration(what: string, ms: number): void {
  if (!(ms >= 0))
    throw new KinformerError(
      ErrorCodes.INVALID_OPTION,
      `${what} must be a number of ms ≥ 0, got ${String(ms)}`,
    );
}

/** Options of {@link ItemExponentialFailureRateLimiter}. */
export interface ItemExponentialFailureRateLimiterOptions {
  /** Delay of the first retry, ms. Default 5. */
  baseDelayMs?: number;
  /** Longest delay, ms. Default 1 000 000 (1000 s). */
  maxDelayMs?: number;
}

/**
 * Per-item exponential backoff (client-go's `ItemExponentialFailureRateLimiter`): the n-th
 * {@link when} of an item since it was forgotten returns `baseDelayMs · 2^(n-1)`, capped at
 * `maxDelayMs` (overflow-safe: a huge exponent yields the cap, never `Infinity` or `NaN`).
 */
export class ItemExponentialFailureRateLimiter<K> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(options: ItemExponentialFailureRateLimiterOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? 5;
    this.maxDelayMs = options.maxDelayMs ?? 1_000_000;
    checkDuration('baseDelayMs', this.baseDelayMs);
    checkDuration('maxDelayMs', this.maxDelayMs);
  }

  when(item: K): number {
    const exp = this.failures.get(item) ?? 0;
    this.failures.set(item, exp + 1);
    const backoff = this.baseDelayMs * 2 ** exp;
    if (!Number.isFinite(backoff) || backoff > this.maxDelayMs) return this.maxDelayMs;
    return backoff;
  }

  forget(item: K): void {
    this.failures.delete(item);
  }

  numRequeues(item: K): number {
    return this.failures.get(item) ?? 0;
  }
}

/** Options of {@link ItemFastSlowRateLimiter}. */
export interface ItemFastSlowRateLimiterOptions {
  /** Delay of the first `maxFastAttempts` retries, ms. */
  fastDelayMs: number;
  /** Delay of every later retry, ms. */
  slowDelayMs: number;
  /** How many retries get the fast delay. */
  maxFastAttempts: number;
}

/**
 * Per-item two-speed backoff (client-go's `ItemFastSlowRateLimiter`): `fastDelayMs` for the first
 * `maxFastAttempts` retries of an item, `slowDelayMs` after that.
 */
export class ItemFastSlowRateLimiter<K> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();
  private readonly fastDelayMs: number;
  private readonly slowDelayMs: number;
  private readonly maxFastAttempts: number;

  constructor(options: ItemFastSlowRateLimiterOptions) {
    this.fastDelayMs = options.fastDelayMs;
    this.slowDelayMs = options.slowDelayMs;
    this.maxFastAttempts = options.maxFastAttempts;
    checkDuration('fastDelayMs', this.fastDelayMs);
    checkDuration('slowDelayMs', this.slowDelayMs);
    if (!(this.maxFastAttempts >= 0)) {
      throw new KinformerError(
        ErrorCodes.INVALID_OPTION,
        `maxFastAttempts must be ≥ 0, got ${String(this.maxFastAttempts)}`,
      );
    }
  }

  when(item: K): number {
    const failures = (this.failures.get(item) ?? 0) + 1;
    this.failures.set(item, failures);
    return failures <= this.maxFastAttempts ? this.fastDelayMs : this.slowDelayMs;
  }

  forget(item: K): void {
    this.failures.delete(item);
  }

  numRequeues(item: K): number {
    return this.failures.get(item) ?? 0;
  }
}

/** Options of {@link BucketRateLimiter}. */
export interface BucketRateLimiterOptions {
  /** Tokens added per second. Default 10. `Infinity` means no limit. */
  qps?: number;
  /** Bucket size: how many retries may happen at once. Default 100. */
  burst?: number;
  /** Source of time. Default: the wall clock. */
  clock?: Clock;
}

/**
 * A token bucket shared by all items (client-go's `BucketRateLimiter` over `rate.Limiter`): the
 * bucket holds up to `burst` tokens, starts full and refills at `qps` tokens per second. Each
 * {@link when} reserves one token, and returns 0 when one was there, or how long until the reserved
 * token will have been refilled (reservations queue up: the n-th call past the burst waits n/qps s).
 * Not per item: `numRequeues` is always 0 and `forget` does nothing.
 */
export class BucketRateLimiter<K = unknown> implements RateLimiter<K> {
  private readonly qps: number;
  private readonly burst: number;
  private readonly clock: Clock;
  private tokens: number;
  private last: number;

  constructor(options: BucketRateLimiterOptions = {}) {
    this.qps = options.qps ?? 10;
    this.burst = options.burst ?? 100;
    this.clock = options.clock ?? realClock;
    if (!(this.qps > 0))
      throw new KinformerError(ErrorCodes.INVALID_OPTION, `qps must be > 0, got ${String(this.qps)}`);
    if (!(this.burst >= 1) || !Number.isFinite(this.burst)) {
      throw new KinformerError(
        ErrorCodes.INVALID_OPTION,
        `burst must be a finite number ≥ 1, got ${String(this.burst)}`,
      );
    }
    this.tokens = this.burst;
    this.last = this.clock.now();
  }

  when(_item: K): number {
    if (this.qps === Infinity) return 0;
    const now = this.clock.now();
    const elapsed = now - this.last;
    if (elapsed > 0) this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.qps) / 1000);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps;
  }

  forget(_item: K): void {}

  numRequeues(_item: K): number {
    return 0;
  }
}

/**
 * The strictest of several limiters (client-go's `MaxOfRateLimiter`): {@link when} asks every
 * limiter (so all of them count the retry) and returns the longest delay; `numRequeues` is the
 * largest count; `forget` forgets in all of them.
 */
export class MaxOfRateLimiter<K> implements RateLimiter<K> {
  private readonly limiters: readonly RateLimiter<K>[];

  constructor(...limiters: RateLimiter<K>[]) {
    this.limiters = limiters;
  }

  /** The longest delay of all limiters (every limiter's `when` is called: each counts the failure). */
  when(item: K): number {
    return Math.max(0, ...this.limiters.map((limiter) => limiter.when(item)));
  }

  forget(item: K): void {
    for (const limiter of this.limiters) limiter.forget(item);
  }

  numRequeues(item: K): number {
    return Math.max(0, ...this.limiters.map((limiter) => limiter.numRequeues(item)));
  }
}

/** Options of {@link WithMaxWaitRateLimiter}. */
export interface WithMaxWaitRateLimiterOptions {
  /** Longest delay `when` may return, ms. */
  maxDelayMs: number;
}

/** Caps another limiter's delays at `maxDelayMs` (client-go's `WithMaxWaitRateLimiter`). */
export class WithMaxWaitRateLimiter<K> implements RateLimiter<K> {
  private readonly maxDelayMs: number;

  constructor(
    private readonly limiter: RateLimiter<K>,
    options: WithMaxWaitRateLimiterOptions,
  ) {
    this.maxDelayMs = options.maxDelayMs;
    checkDuration('maxDelayMs', this.maxDelayMs);
  }

  when(item: K): number {
    return Math.min(this.limiter.when(item), this.maxDelayMs);
  }

  forget(item: K): void {
    this.limiter.forget(item);
  }

  numRequeues(item: K): number {
    return this.limiter.numRequeues(item);
  }
}

/** Options of {@link defaultControllerRateLimiter}. */
export interface DefaultControllerRateLimiterOptions {
  /** The bucket's source of time. Default: the wall clock. */
  clock?: Clock;
  /** The per-item backoff's first delay, ms. Default 5. */
  baseDelayMs?: number;
  /** The per-item backoff's cap, ms. Default 1,000,000 (1000 s). */
  maxDelayMs?: number;
}

/**
 * client-go's `DefaultControllerRateLimiter()`: the larger of a per-item exponential backoff
 * (5 ms doubling up to 1000 s) and an overall token bucket (10 qps, burst 100), so one failing item
 * backs off on its own while a storm of failures is held to 10 retries per second overall.
 */
export function defaultControllerRateLimiter<K>(
  options: DefaultControllerRateLimiterOptions = {},
): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(
    new ItemExponentialFailureRateLimiter<K>({
      baseDelayMs: options.baseDelayMs ?? 5,
      maxDelayMs: options.maxDelayMs ?? 1_000_000,
    }),
    new BucketRateLimiter<K>({ qps: 10, burst: 100, ...(options.clock ? { clock: options.clock } : {}) }),
  );
}

/** client-go's `DefaultItemBasedRateLimiter()`: per-item exponential backoff from 1 ms up to 1000 s. */
export function defaultItemBasedRateLimiter<K>(): RateLimiter<K> {
  return new ItemExponentialFailureRateLimiter<K>({ baseDelayMs: 1, maxDelayMs: 1_000_000 });
}
