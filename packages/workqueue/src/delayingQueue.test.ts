import fc from 'fast-check';
import { ErrorCodes } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import { DelayingQueue } from './delayingQueue.js';

async function getItem<K>(q: DelayingQueue<K>): Promise<K> {
  const { item, shutdown } = await q.get();
  if (shutdown) throw new Error('expected an item, the queue is shut down');
  return item;
}

function setup(): { clock: FakeClock; q: DelayingQueue<string> } {
  const clock = new FakeClock(1_000_000);
  return { clock, q: new DelayingQueue<string>({ clock }) };
}

/** Adds each `[item, ms]` with `addAfter`, and checks that none is queued yet. */
function addWaiting(q: DelayingQueue<string>, ...adds: Array<[string, number]>): void {
  for (const [item, ms] of adds) q.addAfter(item, ms);
  expect(q.length()).toBe(0);
}

/** Moves the clock on by `ms`, then takes every item queued by then, in order (each marked done). */
async function dueAfter(clock: FakeClock, q: DelayingQueue<string>, ms: number): Promise<string[]> {
  clock.advance(ms);
  const items: string[] = [];
  while (q.length() > 0) {
    const item = await getItem(q);
    q.done(item);
    items.push(item);
  }
  return items;
}

describe('DelayingQueue', () => {
  // client-go TestSimpleQueue
  it('adds an item once its delay has passed, and only once', async () => {
    const { clock, q } = setup();
    addWaiting(q, ['foo', 50]);
    expect(await dueAfter(clock, q, 49)).toEqual([]);
    expect(await dueAfter(clock, q, 11)).toEqual(['foo']);
    // Step past what would be client-go's heartbeat: nothing comes back.
    expect(await dueAfter(clock, q, 10_000)).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });

  // client-go TestDeduping
  it('keeps one entry per waiting item, due at the earlier time', async () => {
    const { clock, q } = setup();
    addWaiting(q, ['foo', 50], ['foo', 70]);
    // Step past the first block: the item arrives.
    expect(await dueAfter(clock, q, 60)).toEqual(['foo']);
    // Step past the second add: it was merged into the first, nothing arrives.
    expect(await dueAfter(clock, q, 20)).toEqual([]);

    // Again, but this time the later call is the earlier time and wins.
    addWaiting(q, ['foo', 50], ['foo', 30]);
    expect(await dueAfter(clock, q, 40)).toEqual(['foo']);
    expect(await dueAfter(clock, q, 20)).toEqual([]);

    // While the item is being processed, a delayed add marks it dirty; done requeues it.
    q.add('foo');
    expect(await getItem(q)).toBe('foo');
    q.addAfter('foo', 5);
    clock.advance(5);
    expect(q.length()).toBe(0);
    q.done('foo');
    expect(q.length()).toBe(1);
  });

  // client-go TestAddTwoFireEarly
  it('fires an item added later with a shorter delay first', async () => {
    const { clock, q } = setup();
    addWaiting(q, ['foo', 1000], ['bar', 50]);
    expect(await dueAfter(clock, q, 60)).toEqual(['bar']);
    q.addAfter('baz', 2000);
    expect(await dueAfter(clock, q, 1000)).toEqual(['foo']);
    expect(await dueAfter(clock, q, 2000)).toEqual(['baz']);
  });

  // client-go TestCopyShifting
  it('queues items that fall due together in readyAt order', async () => {
    const { clock, q } = setup();
    addWaiting(q, ['foo', 1000], ['bar', 500], ['baz', 250]);
    expect(await dueAfter(clock, q, 2000)).toEqual(['baz', 'bar', 'foo']);
  });

  it('breaks ties between equal due times by insertion order', async () => {
    const { clock, q } = setup();
    for (const item of ['c', 'a', 'd', 'b']) q.addAfter(item, 100);
    expect(await dueAfter(clock, q, 100)).toEqual(['c', 'a', 'd', 'b']);
  });

  it('orders any sequence of delayed adds by earliest due time, then first insertion', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 1, max: 50 })), {
          maxLength: 60,
        }),
        async (adds) => {
          const clock = new FakeClock();
          const q = new DelayingQueue<number>({ clock });
          const expected = new Map<number, { readyAt: number; seq: number }>();
          adds.forEach(([item, ms], seq) => {
            q.addAfter(item, ms);
            const prev = expected.get(item);
            if (!prev) expected.set(item, { readyAt: ms, seq });
            else if (ms < prev.readyAt) prev.readyAt = ms;
          });
          expect(clock.pendingTimers()).toBe(adds.length > 0 ? 1 : 0);
          clock.advance(100);
          const got: number[] = [];
          while (q.length() > 0) got.push(await getItem(q));
          const want = [...expected.entries()]
            .sort((a, b) => a[1].readyAt - b[1].readyAt || a[1].seq - b[1].seq)
            .map(([item]) => item);
          expect(got).toEqual(want);
        },
      ),
    );
  });

  it('arms a single clock timer for the earliest waiting item, however many wait', () => {
    const { clock, q } = setup();
    for (let i = 0; i < 100; i++) q.addAfter(`item-${i}`, 1000 + i);
    expect(clock.pendingTimers()).toBe(1);
    expect(clock.nextTimerAt()).toBe(clock.now() + 1000);

    q.addAfter('early', 10);
    expect(clock.pendingTimers()).toBe(1);
    expect(clock.nextTimerAt()).toBe(clock.now() + 10);

    clock.advance(10);
    expect(q.length()).toBe(1);
    expect(clock.pendingTimers()).toBe(1);
    expect(clock.nextTimerAt()).toBe(clock.now() + 990);
  });

  it('adds at once when the delay is zero or negative', () => {
    const { clock, q } = setup();
    q.addAfter('zero', 0);
    q.addAfter('negative', -5);
    expect(q.length()).toBe(2);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('cancels its timer and drops waiting items on shutdown', () => {
    const { clock, q } = setup();
    q.addAfter('foo', 50);
    q.addAfter('bar', 100);
    expect(clock.pendingTimers()).toBe(1);
    q.shutdown();
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(1000);
    expect(q.length()).toBe(0);
  });

  it('cancels its timer on shutdownWithDrain too', async () => {
    const { clock, q } = setup();
    q.addAfter('foo', 50);
    await q.shutdownWithDrain();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('ignores addAfter after shutdown', () => {
    const { clock, q } = setup();
    q.shutdown();
    q.addAfter('foo', 0);
    q.addAfter('bar', 10);
    expect(q.length()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('wakes a waiting consumer when a delayed item falls due', async () => {
    const { clock, q } = setup();
    const waiting = q.get();
    q.addAfter('foo', 30);
    await clock.tick(30);
    expect(await waiting).toEqual({ item: 'foo', shutdown: false });
  });

  it('waits in steps when the delay is longer than one timer may run', () => {
    const { clock, q } = setup();
    const ms = 2 ** 31 + 1000;
    q.addAfter('far', ms);
    expect(clock.nextTimerAt()).toBe(clock.now() + 2 ** 31 - 1);
    clock.advance(2 ** 31 - 1);
    expect(q.length()).toBe(0);
    expect(clock.pendingTimers()).toBe(1);
    clock.advance(1001);
    expect(q.length()).toBe(1);
  });

  it('rejects a NaN delay', () => {
    const { q } = setup();
    expect(() => q.addAfter('foo', Number.NaN)).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
  });
});
