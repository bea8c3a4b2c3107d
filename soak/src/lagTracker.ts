/** Delivery-lag figures: from the server's write to a handler seeing that version (or a later one). */
export interface LagSummary {
  /** Writes whose delivery was measured. */
  writes: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Writes delivered more than 1 s / 10 s after they were made. */
  over1s: number;
  over10s: number;
  /** Writes not delivered by the end (should be 0 once quiescent). */
  undelivered: number;
}

interface Pending {
  readonly rv: number;
  readonly at: number;
}

/**
 * Measures per-write delivery lag for a set of streams (one per resource): {@link wrote} records that
 * the server reached resourceVersion `rv` through a write of that stream at time `at`; {@link seen}
 * records that a handler of an unscoped informer saw an object of that stream at `rv`. Every write
 * with a version ≤ the highest seen so far is delivered: a relist may skip intermediate versions, and
 * the cache then holds a newer one. Times are `performance.now()` ms unless given.
 */
export class LagTracker {
  readonly #pending = new Map<string, Pending[]>();
  readonly #heads = new Map<string, number>();
  readonly #seenMax = new Map<string, number>();
  readonly #lags: number[] = [];

  wrote(stream: string, rv: number, at = performance.now()): void {
    let queue = this.#pending.get(stream);
    if (queue === undefined) {
      queue = [];
      this.#pending.set(stream, queue);
      this.#heads.set(stream, 0);
    }
    if ((this.#seenMax.get(stream) ?? -1) >= rv) return; // already delivered (a racing handler)
    queue.push({ rv, at });
  }

  seen(stream: string, rv: number, at = performance.now()): void {
    if (!Number.isFinite(rv)) return;
    const max = this.#seenMax.get(stream) ?? -1;
    if (rv <= max) return;
    this.#seenMax.set(stream, rv);
    const queue = this.#pending.get(stream);
    if (queue === undefined) return;
    let head = this.#heads.get(stream) ?? 0;
    while (head < queue.length && queue[head]!.rv <= rv) {
      this.#lags.push(Math.max(0, at - queue[head]!.at));
      head++;
    }
    if (head > 1024 && head * 2 > queue.length) {
      queue.splice(0, head);
      head = 0;
    }
    this.#heads.set(stream, head);
  }

  /** The highest version seen on `stream`, or -1. */
  highestSeen(stream: string): number {
    return this.#seenMax.get(stream) ?? -1;
  }

  /** The lags measured so far, and the writes still waiting. */
  summary(): LagSummary {
    const lags = Float64Array.from(this.#lags).sort();
    const at = (q: number): number =>
      lags.length === 0 ? 0 : lags[Math.min(lags.length - 1, Math.floor(q * lags.length))]!;
    let over1s = 0;
    let over10s = 0;
    for (const l of lags) {
      if (l > 1000) over1s++;
      if (l > 10_000) over10s++;
    }
    let undelivered = 0;
    for (const [stream, queue] of this.#pending) undelivered += queue.length - (this.#heads.get(stream) ?? 0);
    return {
      writes: lags.length,
      p50Ms: at(0.5),
      p90Ms: at(0.9),
      p99Ms: at(0.99),
      maxMs: lags.length === 0 ? 0 : lags[lags.length - 1]!,
      over1s,
      over10s,
      undelivered,
    };
  }

  /** The largest lag of a write still waiting at `now`, ms (0 when none waits). */
  currentLagMs(now = performance.now()): number {
    let oldest = 0;
    for (const [stream, queue] of this.#pending) {
      const head = queue[this.#heads.get(stream) ?? 0];
      if (head !== undefined) oldest = Math.max(oldest, now - head.at);
    }
    return oldest;
  }
}
