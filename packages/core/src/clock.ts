/** A cancellable timer returned by {@link Clock.setTimeout}. */
export interface Timer {
  cancel(): void;
  /** Lets the process exit while only this timer is pending (real clock; a no-op on the fake one). */
  unref?(): void;
}

/**
 * The source of time for everything in kinformer that waits: backoff, resync, watch timeouts, stall
 * detection, delaying queues, leader election. Inject a {@link FakeClock} in tests.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` after `ms` milliseconds, unless cancelled. */
  setTimeout(fn: () => void, ms: number): Timer;
  /**
   * Resolves after `ms` milliseconds, or as soon as `signal` aborts (it never rejects; check
   * `signal.aborted` afterwards). Removes its abort listener either way.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function sleepWith(clock: Pick<Clock, 'setTimeout'>, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const onAbort = (): void => {
      timer.cancel();
      resolve();
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The longest delay Node's `setTimeout` honours (2³¹−1 ms, about 24.8 days). A longer one fires
 * after 1 ms with a `TimeoutOverflowWarning`, so {@link realClock} waits longer delays out in steps
 * of at most this many milliseconds.
 */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * The wall clock (`Date.now`, `setTimeout`). A delay above `MAX_TIMER_DELAY_MS` is waited out
 * as a chain of timers of at most that length, so a 30-day resync fires after 30 days, not after
 * 1 ms; an infinite delay never fires. `cancel` and `unref` apply to whichever step is armed.
 */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    let remaining = Math.max(0, ms);
    let unrefed = false;
    let handle: ReturnType<typeof setTimeout>;
    const arm = (): void => {
      const step = Math.min(remaining, MAX_TIMER_DELAY_MS);
      remaining -= step;
      handle = setTimeout(remaining > 0 ? arm : fn, step);
      if (unrefed) handle.unref();
    };
    arm();
    return {
      cancel: () => clearTimeout(handle),
      unref: () => {
        unrefed = true;
        handle.unref();
      },
    };
  },
  sleep(ms, signal) {
    return sleepWith(realClock, ms, signal);
  },
};

interface FakeTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A clock that moves only when told. Timers fire in time order (then creation order) during
 * {@link FakeClock.advance}. `await clock.tick(ms)` also lets promise callbacks run between timers,
 * which is what async code driven by the clock needs.
 */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: FakeTimer[] = [];

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    const timer: FakeTimer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
        this.timers = this.timers.filter((t) => t !== timer);
      },
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal);
  }

  /** How many timers are waiting. */
  pendingTimers(): number {
    return this.timers.length;
  }

  /** When the next timer is due, or `undefined` when none waits. */
  nextTimerAt(): number | undefined {
    let next: number | undefined;
    for (const t of this.timers) if (next === undefined || t.at < next) next = t.at;
    return next;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. Synchronous. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const due = this.popDue(target);
      if (!due) break;
      this.current = Math.max(this.current, due.at);
      due.fn();
    }
    this.current = target;
  }

  /**
   * Moves time forward by `ms` like {@link advance}, but lets pending promise callbacks and I/O
   * callbacks run before and after each timer fires.
   */
  async tick(ms = 0): Promise<void> {
    const target = this.current + ms;
    await flush();
    for (;;) {
      const due = this.popDue(target);
      if (!due) break;
      this.current = Math.max(this.current, due.at);
      due.fn();
      await flush();
    }
    this.current = target;
    await flush();
  }

  /**
   * Advances straight to the next timer and fires it (and any due at the same time). Returns
   * `false`, without moving time, when no timer waits or only timers with an infinite delay do
   * (those never fire, as on the real clock).
   */
  async tickToNext(): Promise<boolean> {
    const next = this.nextTimerAt();
    if (next === undefined || next === Infinity) return false;
    await this.tick(next - this.current);
    return true;
  }

  private popDue(target: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.timers) {
      if (t.at <= target && (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq))) best = t;
    }
    if (best) this.timers = this.timers.filter((t) => t !== best);
    return best;
  }
}

/** Lets queued promise callbacks and one turn of the event loop run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
