import { getEventListeners } from 'node:events';

import { FakeClock, flush, MAX_TIMER_DELAY_MS, realClock } from './clock.js';

function abortListeners(signal: AbortSignal): number {
  return getEventListeners(signal, 'abort').length;
}

/**
 * A FakeClock starting at `start`, and what its timers recorded: `record(label)` is a callback that
 * pushes `label` onto `fired`, or without a label the clock's time when it runs.
 */
function recordingClock(start?: number): {
  clock: FakeClock;
  fired: (string | number)[];
  record: (label?: string) => () => void;
} {
  const clock = new FakeClock(start);
  const fired: (string | number)[] = [];
  const record = (label?: string) => () => void fired.push(label ?? clock.now());
  return { clock, fired, record };
}

/** Sleeps `delays` on `clock` one after another, pushing the clock's time onto `log` after each. */
function sleepChain(clock: FakeClock, delays: number[]): { log: number[]; chain: Promise<void> } {
  const log: number[] = [];
  const chain = (async () => {
    for (const ms of delays) {
      await clock.sleep(ms);
      log.push(clock.now());
    }
  })();
  return { log, chain };
}

describe('FakeClock', () => {
  it('starts at the given time and moves only when told', () => {
    const clock = new FakeClock(1_000);
    expect(clock.now()).toBe(1_000);
    expect(new FakeClock().now()).toBe(0);
    clock.advance(250);
    expect(clock.now()).toBe(1_250);
  });

  it('fires timers in time order, then in creation order for equal times', () => {
    const { clock, fired, record } = recordingClock();
    clock.setTimeout(record('c@30'), 30);
    clock.setTimeout(record('a@10'), 10);
    clock.setTimeout(record('b1@20'), 20);
    clock.setTimeout(record('b2@20'), 20);
    clock.setTimeout(record('z@0'), -5); // negative delays count as 0
    expect(clock.pendingTimers()).toBe(5);
    expect(clock.nextTimerAt()).toBe(0);
    clock.advance(25);
    expect(fired).toEqual(['z@0', 'a@10', 'b1@20', 'b2@20']);
    expect(clock.now()).toBe(25);
    expect(clock.pendingTimers()).toBe(1);
    expect(clock.nextTimerAt()).toBe(30);
    clock.advance(5);
    expect(fired).toEqual(['z@0', 'a@10', 'b1@20', 'b2@20', 'c@30']);
    expect(clock.nextTimerAt()).toBeUndefined();
  });

  it('runs each timer with now() equal to its due time', () => {
    const { clock, fired, record } = recordingClock(100);
    clock.setTimeout(record(), 10);
    clock.setTimeout(record(), 40);
    clock.advance(100);
    expect(fired).toEqual([110, 140]);
    expect(clock.now()).toBe(200);
  });

  it('fires timers that a firing timer schedules within the same advance', () => {
    const { clock, fired, record } = recordingClock();
    clock.setTimeout(() => {
      record()();
      clock.setTimeout(record(), 5);
      clock.setTimeout(record(), 50);
    }, 10);
    clock.advance(20);
    expect(fired).toEqual([10, 15]);
    expect(clock.pendingTimers()).toBe(1);
  });

  it('does not fire a cancelled timer and forgets it', () => {
    const { clock, fired, record } = recordingClock();
    const a = clock.setTimeout(record('a'), 10);
    clock.setTimeout(record('b'), 10);
    a.cancel();
    a.cancel(); // idempotent
    expect(clock.pendingTimers()).toBe(1);
    clock.advance(10);
    expect(fired).toEqual(['b']);
  });

  it('lets a timer cancel a later one', () => {
    const { clock, fired, record } = recordingClock();
    const later = clock.setTimeout(record('later'), 20);
    clock.setTimeout(() => later.cancel(), 10);
    clock.advance(30);
    expect(fired).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('tick() lets promise callbacks run between timers, so async chains driven by the clock complete', async () => {
    const clock = new FakeClock();
    const { log, chain } = sleepChain(clock, [10, 5, 100]);
    await clock.tick(20);
    expect(log).toEqual([10, 15]);
    expect(clock.now()).toBe(20);
    await clock.tick(100);
    expect(log).toEqual([10, 15, 115]);
    await chain;
  });

  it('advance() alone does not run promise callbacks in between (synchronous)', async () => {
    const clock = new FakeClock();
    const { log, chain } = sleepChain(clock, [10, 5]);
    clock.advance(20);
    await flush();
    // The second sleep was only scheduled once the first resolved, after advance() returned: due at 25.
    expect(log).toEqual([20]);
    expect(clock.nextTimerAt()).toBe(25);
    await clock.tick(5);
    await chain;
    expect(log).toEqual([20, 25]);
  });

  it('tickToNext() jumps to the next timer and reports whether there was one', async () => {
    const { clock, fired, record } = recordingClock();
    clock.setTimeout(record(), 300);
    clock.setTimeout(record(), 300);
    clock.setTimeout(record(), 700);
    expect(await clock.tickToNext()).toBe(true);
    expect(fired).toEqual([300, 300]);
    expect(clock.now()).toBe(300);
    expect(await clock.tickToNext()).toBe(true);
    expect(clock.now()).toBe(700);
    expect(await clock.tickToNext()).toBe(false);
    expect(clock.now()).toBe(700);
  });
});

describe('Clock.sleep', () => {
  it('resolves after the delay and removes its abort listener', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    let done = false;
    const sleeping = clock.sleep(1_000, controller.signal).then(() => (done = true));
    expect(abortListeners(controller.signal)).toBe(1);
    await clock.tick(999);
    expect(done).toBe(false);
    await clock.tick(1);
    await sleeping;
    expect(done).toBe(true);
    expect(abortListeners(controller.signal)).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('resolves as soon as the signal aborts, cancels its timer and removes its listener', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    let done = false;
    const sleeping = clock.sleep(60_000, controller.signal).then(() => (done = true));
    await flush();
    expect(done).toBe(false);
    controller.abort();
    await sleeping;
    expect(done).toBe(true);
    expect(clock.now()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
    expect(abortListeners(controller.signal)).toBe(0);
  });

  it('resolves at once, without a timer or listener, when the signal is already aborted', async () => {
    const clock = new FakeClock();
    const signal = AbortSignal.abort();
    await clock.sleep(60_000, signal);
    expect(clock.pendingTimers()).toBe(0);
    expect(abortListeners(signal)).toBe(0);
  });

  it('leaves no listeners behind after many sleeps on one long-lived signal', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    for (let i = 0; i < 50; i++) {
      const s = clock.sleep(10, controller.signal);
      await clock.tick(10);
      await s;
    }
    expect(abortListeners(controller.signal)).toBe(0);
  });
});

describe('FakeClock with delays beyond the real timer limit', () => {
  it('fires a 30-day timer exactly when due and never fires an infinite one', async () => {
    const { clock, fired, record } = recordingClock();
    const thirtyDays = 30 * 24 * 3_600_000;
    clock.setTimeout(record(), thirtyDays);
    clock.setTimeout(record('fired at Infinity'), Infinity);
    clock.advance(1);
    expect(fired).toEqual([]);
    expect(await clock.tickToNext()).toBe(true);
    expect(fired).toEqual([thirtyDays]);
    expect(await clock.tickToNext()).toBe(false);
    expect(clock.now()).toBe(thirtyDays);
    clock.advance(Number.MAX_SAFE_INTEGER);
    expect(fired).toEqual([thirtyDays]);
  });
});

describe('realClock', () => {
  it('reads the wall clock', () => {
    const before = Date.now();
    const now = realClock.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it('runs timers and can cancel them', async () => {
    const fired: string[] = [];
    const cancelled = realClock.setTimeout(() => fired.push('cancelled'), 1);
    realClock.setTimeout(() => fired.push('kept'), 1);
    cancelled.cancel();
    await new Promise((resolve) => realClock.setTimeout(() => resolve(undefined), 2)); // after both 1 ms timers
    expect(fired).toEqual(['kept']);
  });

  it('sleeps and wakes early on abort, removing its listener', async () => {
    const controller = new AbortController();
    await realClock.sleep(1, controller.signal);
    expect(abortListeners(controller.signal)).toBe(0);
    const long = realClock.sleep(60_000, controller.signal);
    expect(abortListeners(controller.signal)).toBe(1);
    controller.abort();
    await long; // would time the test out if the timer were still what resolves it
    expect(abortListeners(controller.signal)).toBe(0);
  });

  it('does not fire a 30-day timer early (Node fires delays above 2^31-1 ms after 1 ms)', async () => {
    const fired: string[] = [];
    const long = realClock.setTimeout(() => fired.push('30 days'), 30 * 24 * 3_600_000);
    const never = realClock.setTimeout(() => fired.push('Infinity'), Infinity);
    try {
      await new Promise((resolve) => setTimeout(resolve, 5)); // an overflowed delay fires after 1 ms
      expect(fired).toEqual([]);
    } finally {
      long.cancel();
      never.cancel();
    }
  });
});

describe('realClock with a stubbed global setTimeout', () => {
  interface Armed {
    fn: () => void;
    ms: number;
    cleared: boolean;
    unrefed: boolean;
  }

  /** Replaces the global timer functions for `body`, recording every timer armed. */
  function withStubbedTimers(body: (armed: Armed[]) => void): void {
    const realSet = globalThis.setTimeout;
    const realClear = globalThis.clearTimeout;
    const armed: Armed[] = [];
    const stubSet = (fn: () => void, ms: number): unknown => {
      const timer: Armed = { fn, ms, cleared: false, unrefed: false };
      armed.push(timer);
      return {
        unref: () => {
          timer.unrefed = true;
        },
        timer,
      };
    };
    const stubClear = (handle: { timer: Armed }): void => {
      handle.timer.cleared = true;
    };
    globalThis.setTimeout = stubSet as unknown as typeof setTimeout;
    globalThis.clearTimeout = stubClear as unknown as typeof clearTimeout;
    try {
      body(armed);
    } finally {
      globalThis.setTimeout = realSet;
      globalThis.clearTimeout = realClear;
    }
  }

  it('waits a delay above the limit out in steps of at most 2^31-1 ms, then fires once', () => {
    withStubbedTimers((armed) => {
      const thirtyDays = 30 * 24 * 3_600_000;
      let fired = 0;
      realClock.setTimeout(() => fired++, thirtyDays);
      expect(armed.map((t) => t.ms)).toEqual([MAX_TIMER_DELAY_MS]);
      armed[0]!.fn();
      expect(fired).toBe(0);
      expect(armed.map((t) => t.ms)).toEqual([MAX_TIMER_DELAY_MS, thirtyDays - MAX_TIMER_DELAY_MS]);
      armed[1]!.fn();
      expect(fired).toBe(1);
      expect(armed).toHaveLength(2);
    });
  });

  it('arms a delay within the limit as one timer', () => {
    withStubbedTimers((armed) => {
      realClock.setTimeout(() => undefined, MAX_TIMER_DELAY_MS);
      realClock.setTimeout(() => undefined, -5);
      expect(armed.map((t) => t.ms)).toEqual([MAX_TIMER_DELAY_MS, 0]);
    });
  });

  it('cancels and unrefs whichever step is armed', () => {
    withStubbedTimers((armed) => {
      let fired = 0;
      const timer = realClock.setTimeout(() => fired++, 3 * MAX_TIMER_DELAY_MS);
      timer.unref?.();
      armed[0]!.fn();
      expect(armed[1]!.unrefed).toBe(true); // a re-armed step stays unref'd
      timer.cancel();
      expect(armed[1]!.cleared).toBe(true);
      expect(armed[0]!.cleared).toBe(false);
      expect(fired).toBe(0);
    });
  });

  it('never fires an infinite delay: each step re-arms', () => {
    withStubbedTimers((armed) => {
      let fired = 0;
      realClock.setTimeout(() => fired++, Infinity);
      for (let i = 0; i < 5; i++) armed[i]!.fn();
      expect(armed.map((t) => t.ms)).toEqual(Array(6).fill(MAX_TIMER_DELAY_MS));
      expect(fired).toBe(0);
    });
  });
});
