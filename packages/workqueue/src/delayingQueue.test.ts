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

describe('DelayingQueue', () => {
  // client-go TestSimpleQueue
  it('adds an item once its delay has passed, and only once', async () => {
    const { clock, q } = setup();
    q.addAfter('foo', 50);
    expect(q.length()).toBe(0);

    clock.advance(49);
    expect(q.length()).toBe(0);
    clock.advance(11);
    expect(q.length()).toBe(1);
    q.done(await getItem(q));

    // Step past what would be client-go's heartbeat: nothing comes back.
    clock.advance(10_000);
    expect(q.length()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  // client-go TestDeduping
  it('keeps one entry per waiting item, due at the earlier time', async () => {
    const { clock, q } = setup();
    q.addAfter('foo', 50);
    q.addAfter('foo', 70);
    expect(q.length()).toBe(0);

    // Step past the first block: the item arrives.
    clock.advance(60);
    expect(q.length()).toBe(1);
    q.done(await getItem(q));
    // Step past the second add: it was merged into the first, nothing arrives.
    clock.advance(20);
    expect(q.length()).toBe(0);

    // Again, but this time the later call is the earlier time and wins.
    q.addAfter('foo', 50);
    q.addAfter('foo', 30);
    expect(q.length()).toBe(0);
    clock.advance(40);
    expect(q.length()).toBe(1);
    q.done(await getItem(q));
    clock.advance(20);
    expect(q.length()).toBe(0);

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
    q.addAfter('foo', 1000);
    q.addAfter('bar', 50);
    expect(q.length()).toBe(0);

    clock.advance(60);
    expect(q.length()).toBe(1);
    expect(await getItem(q)).toBe('bar');

    q.addAfter('baz', 2000);
    clock.advance(1000);
    expect(q.length()).toBe(1);
    expect(await getItem(q)).toBe('foo');

    clock.advance(2000);
    expect(q.length()).toBe(1);
    expect(await getItem(q)).toBe('baz');
  });

  // client-go TestCopyShifting
  it('queues items that fall due together in readyAt order', async () => {
    const { clock, q } = setup();
    q.addAfter('foo', 1000);
    q.addAfter('bar', 500);
    q.addAfter('baz', 250);
    expect(q.length()).toBe(0);

    clock.advance(2000);
    expect(q.length()).toBe(3);
    expect(await getItem(q)).toBe('baz');
    expect(await getItem(q)).toBe('bar');
    expect(await getItem(q)).toBe('foo');
  });

  it('breaks ties between equal due times by insertion order', async () => {
    const { clock, q } = setup();
    for (const item of ['c', 'a', 'd', 'b']) q.addAfter(item, 100);
    clock.advance(100);
    expect([await getItem(q), await getItem(q), await getItem(q), await getItem(q)]).toEqual([
      'c',
      'a',
      'd',
      'b',
    ]);
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
