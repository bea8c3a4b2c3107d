import type { Clock } from '@kinformer/core';
import type { Timer } from '@kinformer/core/internal';

/** Options of the lagging watch cache ({@link FakeApiServerOptions.watchCacheLag}). */
export interface WatchCacheLagOptions {
  /** How far the watch cache is behind storage: a write is visible to "any" reads after this long. */
  lagMs: number;
  /**
   * How often the cache learns the storage revision without an event of its type (etcd's progress
   * notify; etcd's default `--experimental-watch-progress-notify-interval` is 10 min). Default
   * 600 000. Bookmarks on a quiet type only advance at this pace (and after a consistent LIST).
   */
  progressNotifyIntervalMs?: number;
}

/**
 * A watch cache that lags behind storage, as kube-apiserver's cacher does under load: reads that
 * accept any revision (`resourceVersion=0` lists, watches from `0` and legacy watches from `""`)
 * see the state of a while ago; a type without writes learns newer revisions only from progress
 * notifications, so its bookmarks advance slowly. Consistent reads (`resourceVersion` unset) stay
 * fresh, as the real cacher makes them wait for the current revision.
 */
export class WatchCacheLag {
  readonly #clock: Clock;
  readonly #lagMs: number;
  /** Revisions with the time they were reached, oldest first (only those the lag may still need). */
  readonly #log: Array<[rev: number, at: number]> = [];
  #base: number;
  #progressRev: number;
  #ticker: Timer | undefined;

  constructor(clock: Clock, initialRev: number, options: WatchCacheLagOptions) {
    this.#clock = clock;
    this.#lagMs = Math.max(0, options.lagMs);
    this.#base = initialRev;
    this.#progressRev = initialRev;
    const interval = options.progressNotifyIntervalMs ?? 600_000;
    if (interval > 0) {
      const tick = (): void => {
        this.#progressRev = Math.max(this.#progressRev, this.cacheRev());
        this.#ticker = clock.setTimeout(tick, interval);
      };
      this.#ticker = clock.setTimeout(tick, interval);
    }
  }

  /** Records that storage reached `rev` now. */
  record(rev: number): void {
    this.#log.push([rev, this.#clock.now()]);
  }

  /** The newest revision the cache has caught up with: the last one reached at least `lagMs` ago. */
  cacheRev(): number {
    const horizon = this.#clock.now() - this.#lagMs;
    let n = 0;
    while (n < this.#log.length && this.#log[n]![1] <= horizon) n++;
    if (n > 0) {
      this.#base = this.#log[n - 1]![0];
      this.#log.splice(0, n);
    }
    return this.#base;
  }

  /** The revision a bookmark of a quiet type may carry: the last progress notification's. */
  get progressRev(): number {
    return this.#progressRev;
  }

  /** A consistent read made the cache catch up with storage (`rev`), as its progress request does. */
  caughtUp(rev: number): void {
    this.#progressRev = Math.max(this.#progressRev, rev);
  }

  /** Stops the progress-notify timer. */
  stop(): void {
    this.#ticker?.cancel();
    this.#ticker = undefined;
  }
}
