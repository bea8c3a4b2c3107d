import { realClock, type Clock } from './clock.js';

/** Parameters of {@link ExponentialBackoff}. Defaults are client-go's reflector backoff. */
export interface BackoffOptions {
  /** First delay, ms. Default 800. */
  initialMs?: number;
  /** Largest un-jittered delay, ms. Default 30 000. */
  capMs?: number;
  /** Multiplier per step. Default 2. */
  factor?: number;
  /** Each delay is drawn from `[d, d·(1+jitter))`. Default 1.0. */
  jitter?: number;
  /** Back to `initialMs` once this long has passed since the last reset, ms. Default 120 000. */
  resetAfterMs?: number;
  clock?: Clock;
  /** Random source in `[0, 1)`. Default `Math.random`. */
  random?: () => number;
}

/** Something that hands out the next delay to wait before a retry. */
export interface Backoff {
  /** The delay before the next attempt, in ms. Each call advances the backoff. */
  next(): number;
  /** Back to the initial delay. */
  reset(): void;
}

/**
 * client-go's reflector backoff (`wait.Backoff{800ms, cap 30s, factor 2, jitter 1.0}` wrapped in
 * `DelayWithReset(clock, 2m)`): each call returns the current delay jittered to `[d, 2d)` and doubles
 * it until the cap; once 2 minutes have passed since the last reset it starts again from 800 ms.
 */
export class ExponentialBackoff implements Backoff {
  private readonly initialMs: number;
  private readonly capMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly resetAfterMs: number;
  private readonly clock: Clock;
  private readonly random: () => number;
  private current: number;
  private lastReset: number;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 800;
    this.capMs = options.capMs ?? 30_000;
    this.factor = options.factor ?? 2;
    this.jitter = options.jitter ?? 1.0;
    this.resetAfterMs = options.resetAfterMs ?? 120_000;
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    this.current = this.initialMs;
    this.lastReset = this.clock.now();
  }

  next(): number {
    const now = this.clock.now();
    if (now - this.lastReset > this.resetAfterMs) {
      this.current = this.initialMs;
      this.lastReset = now;
    }
    const base = this.current;
    this.current = Math.min(this.capMs, base * this.factor);
    if (this.jitter <= 0) return base;
    const max = base * (1 + this.jitter);
    const delay = base + this.random() * this.jitter * base;
    // Float rounding lands on the excluded upper bound when random() is just below 1.
    return delay < max ? delay : max * (1 - Number.EPSILON);
  }

  reset(): void {
    this.current = this.initialMs;
    this.lastReset = this.clock.now();
  }
}
