import { FakeClock } from '@kinformer/core/testing';
import { ItemExponentialFailureRateLimiter, type RateLimiter } from './rateLimiters.js';
import { RateLimitingQueue } from './rateLimitingQueue.js';

async function getItem<K>(q: RateLimitingQueue<K>): Promise<K> {
  const { item, shutdown } = await q.get();
  if (shutdown) throw new Error('expected an item, the queue is shut down');
  return item;
}

/** How long until the clock's next timer fires (the delay of the last rate-limited add), or undefined. */
function delayOf(clock: FakeClock): number | undefined {
  const at = clock.nextTimerAt();
  return at === undefined ? undefined : at - clock.now();
}

/** Rate-limits `item` once per entry of `delays`, expecting that delay each time and waiting it out. */
function expectDelays(q: RateLimitingQueue<string>, clock: FakeClock, item: string, delays: number[]): void {
  for (const expected of delays) {
    q.addRateLimited(item);
    expect(delayOf(clock)).toBe(expected);
    clock.advance(expected);
  }
}

describe('RateLimitingQueue', () => {
  // client-go TestRateLimitingQueue
  it('delays each rate-limited add by the limiter, per item, and forget resets the item', () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue<string>({
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 1, maxDelayMs: 1000 }),
    });
    expectDelays(q, clock, 'one', [1, 2]);
    expect(q.numRequeues('one')).toBe(2);
    expectDelays(q, clock, 'two', [1, 2]);
    q.forget('one');
    expect(q.numRequeues('one')).toBe(0);
    expectDelays(q, clock, 'one', [1]);
  });

  it('adds the item once the delay has passed', async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue<string>({
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 10, maxDelayMs: 1000 }),
    });
    q.addRateLimited('a');
    q.addRateLimited('a'); // 20 ms; the pending 10 ms entry wins
    clock.advance(9);
    expect(q.length()).toBe(0);
    clock.advance(1);
    expect(q.length()).toBe(1);
    expect(await getItem(q)).toBe('a');
    clock.advance(100);
    expect(q.length()).toBe(0);
  });

  it('does not remove a pending item on forget', () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue<string>({
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 10 }),
    });
    q.addRateLimited('a');
    q.forget('a');
    clock.advance(10);
    expect(q.length()).toBe(1);
  });

  it('uses the default controller rate limiter when none is given: per-item backoff from 5 ms', () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue<string>({ clock });
    expectDelays(q, clock, 'a', [5, 10]);
    expect(q.numRequeues('a')).toBe(2);
  });

  it('uses the default controller rate limiter when none is given: 10 qps overall after a burst of 100, on the queue clock', () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue<string>({ clock });
    for (let i = 0; i < 100; i++) q.addRateLimited(`fresh-${i}`);
    q.addRateLimited('late'); // the bucket is empty: waits one token, 100 ms
    clock.advance(5);
    expect(q.length()).toBe(100);
    clock.advance(94);
    expect(q.length()).toBe(100);
    clock.advance(1);
    expect(q.length()).toBe(101);
  });

  it('ignores addRateLimited after shutdown without asking the limiter', () => {
    const clock = new FakeClock();
    const asked: string[] = [];
    const limiter: RateLimiter<string> = {
      when: (item) => {
        asked.push(item);
        return 1;
      },
      forget: () => {},
      numRequeues: () => 0,
    };
    const q = new RateLimitingQueue<string>({ clock, rateLimiter: limiter });
    q.shutdown();
    q.addRateLimited('a');
    clock.advance(10);
    expect(asked).toEqual([]);
    expect(q.length()).toBe(0);
  });

  it('runs the canonical controller loop: retry with backoff on failure, forget on success', async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue<string>({
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 5 }),
    });
    const attempts: [string, number][] = [];
    let failuresLeft = 2;
    const sync = (key: string): void => {
      attempts.push([key, clock.now()]);
      if (failuresLeft-- > 0) throw new Error('transient');
    };
    const worker = (async () => {
      for (;;) {
        const { item: key, shutdown } = await q.get();
        if (shutdown) return;
        try {
          sync(key);
          q.forget(key);
        } catch {
          q.addRateLimited(key);
        } finally {
          q.done(key);
        }
      }
    })();

    q.add('ns/a');
    await clock.tick(0);
    await clock.tick(5);
    await clock.tick(10);
    q.shutdown();
    await worker;
    expect(attempts).toEqual([
      ['ns/a', 0],
      ['ns/a', 5],
      ['ns/a', 15],
    ]);
    expect(q.numRequeues('ns/a')).toBe(0);
  });
});
