import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ErrorCodes, isKinformerError } from '@kinformer/core';
import { flush } from '@kinformer/core/testing';
import { WorkQueue, type GetResult } from './workQueue.js';

/** One macrotask turn: lets other async tasks run (stands in for client-go's short sleeps). */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Resolves true when `promise` has settled after pending callbacks ran. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await flush();
  return settled;
}

/** A queue whose `items` have all been handed out (being processed, not done). */
async function queueProcessing(...items: string[]): Promise<WorkQueue<string>> {
  const q = new WorkQueue<string>();
  for (const item of items) q.add(item);
  for (const item of items) expect(await getItem(q)).toBe(item);
  return q;
}

async function getItem<K>(q: WorkQueue<K>): Promise<K> {
  const { item, shutdown } = await q.get();
  if (shutdown) throw new Error('expected an item, the queue is shut down');
  return item;
}

const shutdownVariants: [string, (q: WorkQueue<unknown>) => Promise<void> | void][] = [
  ['shutdown', (q) => q.shutdown()],
  ['shutdownWithDrain', (q) => q.shutdownWithDrain()],
];

describe('WorkQueue', () => {
  // client-go TestBasic
  describe.each(shutdownVariants)('with many producers and consumers, stopped by %s', (_name, stop) => {
    it('processes every item after its last add, never one key twice at once, and nothing added after shutdown', async () => {
      const q = new WorkQueue<number | string>();
      let seq = 0;
      const lastAdd = new Map<number | string, number>();
      const lastStart = new Map<number | string, number>();
      const inFlight = new Set<number | string>();
      const problems: string[] = [];

      const producers = Array.from({ length: 50 }, async (_, i) => {
        for (let j = 0; j < 50; j++) {
          lastAdd.set(i, seq++);
          q.add(i);
          await turn();
        }
      });
      const consumers = Array.from({ length: 10 }, async (_, worker) => {
        for (;;) {
          const { item, shutdown } = await q.get();
          if (item === 'added after shutdown!') problems.push('got an item added after shutdown');
          if (shutdown) return;
          if (inFlight.has(item)) problems.push(`worker ${worker}: ${item} is already being processed`);
          inFlight.add(item);
          lastStart.set(item, seq++);
          await turn();
          await turn();
          inFlight.delete(item);
          q.done(item);
        }
      });

      await Promise.all(producers);
      const stopped = stop(q);
      q.add('added after shutdown!');
      await Promise.all(consumers);
      await stopped;

      expect(problems).toEqual([]);
      expect(q.length()).toBe(0);
      expect(q.shuttingDown()).toBe(true);
      for (let i = 0; i < 50; i++) expect(lastStart.get(i)).toBeGreaterThan(lastAdd.get(i)!);
    });
  });

  // client-go TestAddWhileProcessing
  describe.each(shutdownVariants)(
    'when consumers re-add items while processing them, stopped by %s',
    (_name, stop) => {
      it('terminates with an empty queue', async () => {
        const q = new WorkQueue<number>();
        for (let i = 0; i < 50; i++) q.add(i);
        const consumers = Array.from({ length: 10 }, async () => {
          const counters = new Map<number, number>();
          for (;;) {
            const { item, shutdown } = await q.get();
            if (shutdown) return;
            const n = (counters.get(item) ?? 0) + 1;
            counters.set(item, n);
            if (n < 2) q.add(item);
            q.done(item);
          }
        });
        await stop(q);
        await Promise.all(consumers);
        expect(q.length()).toBe(0);
      });
    },
  );

  it('hands an item re-added while processing out again, once, only after done', async () => {
    const q = new WorkQueue<number>();
    for (let i = 0; i < 50; i++) q.add(i);
    const processed = new Map<number, number>();
    const inFlight = new Set<number>();
    const problems: string[] = [];
    const consumers = Array.from({ length: 10 }, async () => {
      for (;;) {
        const { item, shutdown } = await q.get();
        if (shutdown) return;
        if (inFlight.has(item)) problems.push(`${item} handed out twice at once`);
        inFlight.add(item);
        const n = (processed.get(item) ?? 0) + 1;
        processed.set(item, n);
        if (n < 2) {
          q.add(item);
          q.add(item);
        }
        await turn();
        inFlight.delete(item);
        q.done(item);
      }
    });
    for (let i = 0; i < 1000 && [...processed.values()].filter((n) => n === 2).length < 50; i++) await turn();
    q.shutdown();
    await Promise.all(consumers);
    expect(problems).toEqual([]);
    expect([...processed.entries()].sort((a, b) => a[0] - b[0])).toEqual(
      Array.from({ length: 50 }, (_, i) => [i, 2]),
    );
    expect(q.length()).toBe(0);
  });

  // client-go TestLen
  it('counts distinct waiting items in len', () => {
    const q = new WorkQueue<string>();
    q.add('foo');
    expect(q.length()).toBe(1);
    q.add('bar');
    expect(q.length()).toBe(2);
    q.add('foo'); // should not increase the queue length
    expect(q.length()).toBe(2);
  });

  // client-go TestReinsert
  it('requeues an item added during processing once it is done', async () => {
    const q = new WorkQueue<string>();
    q.add('foo');
    const first = await getItem(q);
    expect(first).toBe('foo');
    q.add(first);
    expect(q.length()).toBe(0);
    q.done(first);
    expect(q.length()).toBe(1);
    expect(await getItem(q)).toBe('foo');
    q.done('foo');
    expect(q.length()).toBe(0);
  });

  // client-go TestCollapse
  it('collapses two adds of a waiting item into one', async () => {
    const q = new WorkQueue<string>();
    q.add('bar');
    q.add('bar');
    expect(q.length()).toBe(1);
    expect(await getItem(q)).toBe('bar');
    q.done('bar');
    expect(q.length()).toBe(0);
    q.shutdown();
    expect(await q.get()).toEqual({ item: undefined, shutdown: true });
  });

  // client-go TestCollapseWhileProcessing
  it('keeps a second worker waiting for an item being processed until it is done', async () => {
    const q = new WorkQueue<string>();
    q.add('foo');
    expect(await getItem(q)).toBe('foo');
    q.add('foo');
    q.add('foo');
    expect(q.length()).toBe(0);

    const second = q.get();
    expect(await isSettled(second)).toBe(false);
    q.done('foo');
    expect(await second).toEqual({ item: 'foo', shutdown: false });
    q.done('foo');
    expect(q.length()).toBe(0);
  });

  it('serves waiting consumers in the order they called get', async () => {
    const q = new WorkQueue<string>();
    const gets = [q.get(), q.get(), q.get()];
    q.add('a');
    q.add('b');
    q.add('c');
    expect((await Promise.all(gets)).map((r) => r.item)).toEqual(['a', 'b', 'c']);
  });

  it('hands items out first in, first out across many adds and gets', async () => {
    const q = new WorkQueue<number>();
    const out: number[] = [];
    let next = 0;
    // Interleave so the internal buffer both grows long and gets compacted.
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 3000; i++) q.add(next++);
      for (let i = 0; i < 2500; i++) {
        const item = await getItem(q);
        out.push(item);
        q.done(item);
      }
    }
    while (q.length() > 0) {
      const item = await getItem(q);
      out.push(item);
      q.done(item);
    }
    expect(out).toEqual(Array.from({ length: 12000 }, (_, i) => i));
  });

  it('compares items by identity, not by value', async () => {
    const q = new WorkQueue<{ name: string }>();
    const a = { name: 'x' };
    q.add(a);
    q.add({ name: 'x' });
    q.add(a);
    expect(q.length()).toBe(2);
    expect(await getItem(q)).toBe(a);
  });

  it('ignores done for an item that is not being processed', async () => {
    const q = new WorkQueue<string>();
    q.add('foo');
    q.done('foo'); // never handed out: must not queue it a second time
    expect(q.length()).toBe(1);
    expect(await getItem(q)).toBe('foo');
    expect(q.length()).toBe(0);
  });

  describe('shutdown', () => {
    it('ignores adds after shutdown but still hands out items queued before it', async () => {
      const q = new WorkQueue<string>();
      q.add('a');
      q.add('b');
      q.shutdown();
      q.add('c');
      expect(q.shuttingDown()).toBe(true);
      expect(q.length()).toBe(2);
      expect(await q.get()).toEqual({ item: 'a', shutdown: false });
      expect(await q.get()).toEqual({ item: 'b', shutdown: false });
      expect(await q.get()).toEqual({ item: undefined, shutdown: true });
    });

    it('wakes every waiting consumer with shutdown', async () => {
      const q = new WorkQueue<string>();
      const gets = [q.get(), q.get()];
      expect(q.shuttingDown()).toBe(false);
      q.shutdown();
      expect(await Promise.all(gets)).toEqual([
        { item: undefined, shutdown: true },
        { item: undefined, shutdown: true },
      ]);
    });

    // client-go TestQueueDrainageUsingShutDownWithDrain
    it('shutdownWithDrain resolves only once every item being processed is done', async () => {
      const q = new WorkQueue<string>();
      q.add('foo');
      q.add('bar');
      const first = await getItem(q);
      const second = await getItem(q);

      const drained = q.shutdownWithDrain();
      expect(await q.get()).toEqual({ item: undefined, shutdown: true });
      expect(await isSettled(drained)).toBe(false);
      q.done(first);
      expect(await isSettled(drained)).toBe(false);
      q.done(second);
      expect(await isSettled(drained)).toBe(true);
    });

    it('shutdownWithDrain resolves at once when nothing is being processed', async () => {
      const q = new WorkQueue<string>();
      q.add('queued');
      expect(await isSettled(q.shutdownWithDrain())).toBe(true);
    });

    // client-go TestNoQueueDrainageUsingShutDown
    it('shutdown returns without waiting for items being processed', async () => {
      const q = await queueProcessing('foo', 'bar');
      expect(q.shutdown()).toBeUndefined();
      expect(await q.get()).toEqual({ item: undefined, shutdown: true });
    });

    // client-go TestForceQueueShutdownUsingShutDown
    it('shutdown after shutdownWithDrain makes the drain resolve without the items being done', async () => {
      const q = await queueProcessing('foo', 'bar');
      const drained = q.shutdownWithDrain();
      expect(await q.get()).toEqual({ item: undefined, shutdown: true });
      expect(await isSettled(drained)).toBe(false);
      q.shutdown();
      expect(await isSettled(drained)).toBe(true);
    });

    // client-go TestQueueDrainageUsingShutDownWithDrainWithDirtyItem
    it('requeues a dirty item on done after shutdown, hands it out, and drains after it', async () => {
      const q = new WorkQueue<string>();
      q.add('foo');
      const gotten = await getItem(q);
      q.add('foo');

      const drained = q.shutdownWithDrain();
      expect(await q.get()).toEqual({ item: undefined, shutdown: true });

      q.done(gotten);
      const again = await q.get();
      expect(again).toEqual({ item: 'foo', shutdown: false });
      expect(await isSettled(drained)).toBe(false);
      q.done('foo');

      expect(await q.get()).toEqual({ item: undefined, shutdown: true });
      expect(await isSettled(drained)).toBe(true);
    });

    it('keeps a drain waiting while a worker calls done and get back to back with items queued', async () => {
      const q = new WorkQueue<string>();
      q.add('a');
      q.add('b');
      const a = await getItem(q);
      const drained = q.shutdownWithDrain();
      q.done(a);
      const b = await getItem(q); // same synchronous turn as done, as a worker loop would do
      expect(b).toBe('b');
      expect(await isSettled(drained)).toBe(false);
      q.done(b);
      expect(await isSettled(drained)).toBe(true);
    });
  });

  describe('get with an AbortSignal', () => {
    it('rejects with ERR_ABORTED and takes no item', async () => {
      const q = new WorkQueue<string>();
      const controller = new AbortController();
      const waiting = q.get({ signal: controller.signal });
      controller.abort();
      const err: unknown = await waiting.catch((e: unknown) => e);
      expect(isKinformerError(err, ErrorCodes.ABORTED)).toBe(true);
      q.add('a');
      expect(q.length()).toBe(1);
      expect(await q.get()).toEqual({ item: 'a', shutdown: false });
    });

    it('rejects at once for an already aborted signal when nothing is queued', async () => {
      const q = new WorkQueue<string>();
      const err: unknown = await q.get({ signal: AbortSignal.abort() }).catch((e: unknown) => e);
      expect(isKinformerError(err, ErrorCodes.ABORTED)).toBe(true);
    });

    it('removes its abort listener once an item arrives', async () => {
      const q = new WorkQueue<string>();
      const controller = new AbortController();
      const waiting = q.get({ signal: controller.signal });
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
      q.add('a');
      expect(await waiting).toEqual({ item: 'a', shutdown: false });
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    });

    it('skips aborted waiters and serves the live ones, also after many aborts', async () => {
      const q = new WorkQueue<number>();
      const live: Promise<GetResult<number>>[] = [];
      for (let i = 0; i < 200; i++) {
        const controller = new AbortController();
        const waiting = q.get({ signal: controller.signal });
        if (i % 50 === 49) {
          live.push(waiting);
        } else {
          waiting.catch(() => {});
          controller.abort();
        }
      }
      for (let i = 0; i < 4; i++) q.add(i);
      expect((await Promise.all(live)).map((r) => r.item)).toEqual([0, 1, 2, 3]);
      expect(q.length()).toBe(0);
    });
  });

  // client-go TestGarbageCollection
  it('lets items that were added, processed and done be garbage collected', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const q = new WorkQueue<object>();
    let ref: WeakRef<object> | undefined;
    await (async () => {
      const big = { data: new Uint8Array(1024) };
      ref = new WeakRef(big);
      q.add(big);
      for (let i = 0; i < 2000; i++) q.add({ filler: i }); // the buffer stays non-empty, so its spent slot must be cleared
      const item = await getItem(q);
      q.done(item);
    })();
    await turn();
    gc();
    await turn();
    expect(ref!.deref()).toBeUndefined();
    expect(q.length()).toBe(2000);
  });

  it('refuses a metricsProvider without a name', () => {
    expect(() => new WorkQueue({ metricsProvider: {} })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
  });

  describe('deprecated client-go spellings', () => {
    it('len() is length()', () => {
      const q = new WorkQueue<string>();
      q.add('a');
      q.add('b');
      expect(q.len()).toBe(2);
      expect(q.len()).toBe(q.length());
    });

    it('shutDown() shuts down like shutdown()', async () => {
      const q = new WorkQueue<string>();
      q.add('a');
      q.shutDown();
      expect(q.shuttingDown()).toBe(true);
      q.add('ignored');
      expect(await q.get()).toEqual({ item: 'a', shutdown: false });
      expect(await q.get()).toEqual({ item: undefined, shutdown: true });
    });

    it('shutDownWithDrain() waits for the items being processed like shutdownWithDrain()', async () => {
      const q = new WorkQueue<string>();
      q.add('a');
      await q.get();
      const drained = q.shutDownWithDrain();
      expect(await isSettled(drained)).toBe(false);
      q.done('a');
      expect(await isSettled(drained)).toBe(true);
    });
  });
});
