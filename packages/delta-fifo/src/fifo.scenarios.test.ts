import { DeletedFinalStateUnknown, ErrorCodes, KinformerError } from '@kinformer/core';
import type { Clock, Logger } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import { AtomicFIFO } from './atomicFifo.js';
import { DeltaFIFO } from './deltaFifo.js';
import type { KeyListerGetter, TransformFunc } from './fifoOptions.js';
import type { Deltas } from './queue.js';
import { RealFIFO } from './realFifo.js';
import { RequeueError } from './requeueError.js';

// One scenario table for the three queues (they share one core, FIFOCore): the behaviour they share
// runs once per queue; where their rules differ, a table has one column per queue, so a difference
// is a visible cell. Queue-specific rules stay in deltaFifo.test.ts, realFifo.test.ts and
// atomicFifo.test.ts.

// client-go's testFifoObject / mkFifoObj / testFifoObjectKeyFunc.
interface TestObj {
  name: string;
  val: unknown;
}
const mk = (name: string, val: unknown): TestObj => ({ name, val });
const keyFunction = (o: TestObj): string => o.name;
const tomb = (key: string, obj: TestObj): DeletedFinalStateUnknown<TestObj> =>
  new DeletedFinalStateUnknown(key, obj);

/** client-go's literalListerGetter: a fixed list of known objects. */
function literalLister(objs: TestObj[]): KeyListerGetter<TestObj> {
  return {
    listKeys: () => objs.map((o) => o.name),
    getByKey: (key) => objs.find((o) => o.name === key),
  };
}

type Fifo = DeltaFIFO<TestObj> | RealFIFO<TestObj> | AtomicFIFO<TestObj>;
type Kind = 'DeltaFIFO' | 'RealFIFO' | 'AtomicFIFO';

interface MakeOptions {
  knownObjects?: KeyListerGetter<TestObj>;
  transformer?: TransformFunc<TestObj>;
  clock?: Clock;
  logger?: Logger;
}

/** Each queue as an informer configures it (DeltaFIFO with `Replaced`, AtomicFIFO with bookmarks). */
const makers: Record<Kind, (options?: MakeOptions) => Fifo> = {
  DeltaFIFO: (o = {}) => new DeltaFIFO<TestObj>({ keyFunction, emitDeltaTypeReplaced: true, ...o }),
  RealFIFO: (o = {}) => new RealFIFO<TestObj>({ keyFunction, ...o }),
  // An AtomicFIFO has no knownObjects: its consumer reconciles a relist against its own cache.
  AtomicFIFO: ({ knownObjects: _ignored, ...o } = {}) =>
    new AtomicFIFO<TestObj>({ keyFunction, emitDeltaTypeBookmark: true, ...o }),
};
const kinds = Object.keys(makers) as Kind[];

const pop = (f: Fifo): Promise<Deltas<TestObj>> => f.pop(() => undefined);

/** Pops everything queued, one item per element. */
async function drain(f: Fifo): Promise<Deltas<TestObj>[]> {
  const out: Deltas<TestObj>[] = [];
  while (f.length() > 0) out.push(await pop(f));
  return out;
}

/** The newest object of the next pop. */
async function popNewest(f: Fifo): Promise<TestObj> {
  const deltas = await pop(f);
  return deltas[deltas.length - 1]!.object as TestObj;
}

/** Records the listeners added to and removed from a signal. */
function spyOnListeners(signal: AbortSignal): { added: unknown[][]; removed: unknown[][] } {
  const added: unknown[][] = [];
  const removed: unknown[][] = [];
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = (...args: Parameters<typeof add>) => {
    added.push(args);
    add(...args);
  };
  signal.removeEventListener = (...args: Parameters<typeof remove>) => {
    removed.push(args);
    remove(...args);
  };
  return { added, removed };
}

/** Resolves on the next macrotask (lets every pending promise callback run first). */
const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe.each(kinds)('%s (shared core)', (kind) => {
  const newFifo = makers[kind];

  // TestDeltaFIFO_basic / TestRealFIFO_basic
  it('preserves each producer’s order when producers and a consumer interleave', async () => {
    const f = newFifo();
    const amount = 500;
    const produce = async (prefix: string): Promise<void> => {
      for (let i = 0; i < amount; i++) {
        f.add(mk(`${prefix}${i}`, { prefix, i }));
        if (i % 7 === 0) await nextTick();
      }
    };
    const producers = Promise.all([produce('a'), produce('b')]);
    const last: Record<string, number> = { a: -1, b: -1 };
    for (let n = 0; n < amount * 2; n++) {
      const { prefix, i } = (await popNewest(f)).val as { prefix: string; i: number };
      expect(i).toBeGreaterThan(last[prefix]!);
      last[prefix] = i;
    }
    await producers;
    expect(last).toEqual({ a: amount - 1, b: amount - 1 });
    expect(f.length()).toBe(0);
  });

  it('keeps order across many items (ring buffer growth and shrink)', async () => {
    const f = newFifo();
    const n = 5000;
    for (let i = 0; i < n; i++) f.add(mk(`k${i}`, i));
    for (let i = 0; i < n / 2; i++) expect((await popNewest(f)).val).toBe(i);
    for (let i = n; i < n + 100; i++) f.add(mk(`k${i}`, i));
    for (let i = n / 2; i < n + 100; i++) expect((await popNewest(f)).val).toBe(i);
    expect(f.length()).toBe(0);
  });

  // TestDeltaFIFO_KeyOf / TestRealFIFO_KeyOf
  it('keys objects, tombstones and Deltas (including Deltas of tombstones)', () => {
    const f = newFifo();
    expect(f.keyOf(mk('A', 0))).toBe('A');
    expect(f.keyOf(tomb('B', mk('x', 0)))).toBe('B');
    expect(f.keyOf([{ type: 'Added', object: mk('C', 0) }])).toBe('C');
    expect(f.keyOf([{ type: 'Deleted', object: tomb('D', mk('x', 0)) }])).toBe('D');
    expect(() => f.keyOf([])).toThrow(expect.objectContaining({ code: ErrorCodes.KEY_FUNC }));
  });

  it('a throwing transformer queues nothing', () => {
    const f = newFifo({
      transformer: () => {
        throw new Error('nope');
      },
    });
    expect(() => f.add(mk('a', 1))).toThrow('nope');
    expect(() => f.replace([mk('b', 1)], '1')).toThrow('nope');
    expect(f.length()).toBe(0);
    expect(f.hasSynced()).toBe(false);
  });

  // TestDeltaFIFO_PopShouldUnblockWhenClosed / TestRealFIFO_PopShouldUnblockWhenClosed
  it('wakes every blocked pop with ERR_FIFO_CLOSED on close', async () => {
    const f = newFifo();
    const pops: Promise<unknown>[] = Array.from({ length: 10 }, () => pop(f));
    if (!(f instanceof DeltaFIFO)) pops.push(f.popBatch(() => undefined));
    await nextTick();
    expect(f.isClosed()).toBe(false);
    f.close();
    expect(f.isClosed()).toBe(true);
    for (const r of await Promise.allSettled(pops)) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason).toMatchObject({ code: ErrorCodes.FIFO_CLOSED });
    }
  });

  it('still drains a closed queue, then rejects with ERR_FIFO_CLOSED', async () => {
    const f = newFifo();
    f.add(mk('a', 1));
    f.close();
    expect((await popNewest(f)).val).toBe(1);
    await expect(pop(f)).rejects.toBeInstanceOf(KinformerError);
    await expect(pop(f)).rejects.toMatchObject({ code: ErrorCodes.FIFO_CLOSED });
  });

  it('a waiting pop takes an item added later', async () => {
    const f = newFifo();
    const popped = popNewest(f);
    await nextTick();
    f.add(mk('late', 1));
    expect(await popped).toEqual(mk('late', 1));
  });

  describe('abort signal', () => {
    it('rejects a waiting pop with ERR_ABORTED and removes its listener', async () => {
      const f = newFifo();
      const controller = new AbortController();
      const spy = spyOnListeners(controller.signal);
      const popped = f.pop(() => undefined, { signal: controller.signal });
      await nextTick();
      const reason = new Error('stop');
      controller.abort(reason);
      await expect(popped).rejects.toMatchObject({ code: ErrorCodes.ABORTED, cause: reason });
      // Registered with `once: true`, so the platform removed it when it fired.
      expect(spy.added).toHaveLength(1);
      expect(spy.added[0]![2]).toEqual({ once: true });
      f.add(mk('a', 1));
      expect(f.length()).toBe(1); // the aborted pop took nothing
    });

    it('removes its listener when an item arrives', async () => {
      const f = newFifo();
      const controller = new AbortController();
      const spy = spyOnListeners(controller.signal);
      const popped = f.pop(() => undefined, { signal: controller.signal });
      await nextTick();
      f.add(mk('a', 1));
      await popped;
      expect(spy.added).toHaveLength(1);
      expect(spy.removed).toHaveLength(1);
      expect(spy.removed[0]![1]).toBe(spy.added[0]![1]);
    });

    it('rejects at once when the signal is already aborted', async () => {
      const f = newFifo();
      f.add(mk('a', 1));
      await expect(f.pop(() => undefined, { signal: AbortSignal.abort() })).rejects.toMatchObject({
        code: ErrorCodes.ABORTED,
      });
      expect(f.length()).toBe(1);
    });
  });

  describe('process functions', () => {
    it('waits for an async process function before resolving', async () => {
      const f = newFifo();
      f.add(mk('a', 1));
      const order: string[] = [];
      await f.pop(async () => {
        await nextTick();
        order.push('processed');
      });
      order.push('resolved');
      expect(order).toEqual(['processed', 'resolved']);
    });

    it('rejects pop with any other error and drops the item', async () => {
      const f = newFifo();
      f.add(mk('a', 1));
      const boom = new Error('boom');
      await expect(
        f.pop(() => {
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(f.length()).toBe(0);
      f.add(mk('b', 1));
      await expect(f.pop(() => Promise.reject(boom))).rejects.toBe(boom);
      expect(f.length()).toBe(0);
    });

    // TestDeltaFIFO_requeueOnPop (client-go ≤ 1.32)
    it('puts the item back on RequeueError: silent without a cause, rejecting with it when there is one', async () => {
      const f = newFifo();
      f.add(mk('foo', 10));
      await expect(
        f.pop(() => {
          throw new RequeueError();
        }),
      ).resolves.toStrictEqual([{ type: 'Added', object: mk('foo', 10) }]);
      expect(f.listKeys()).toEqual(['foo']);

      const cause = new Error('test error');
      const rejection = await f
        .pop(() => {
          throw new RequeueError(cause);
        })
        .catch((err: unknown) => err);
      expect(rejection).toBeInstanceOf(RequeueError);
      expect((rejection as RequeueError).cause).toBe(cause);
      expect((rejection as RequeueError).message).toContain('test error');
      expect(await drain(f)).toStrictEqual([[{ type: 'Added', object: mk('foo', 10) }]]);
    });
  });

  // TestDeltaFIFO_HasSynced / TestRealFIFO_HasSynced (the parts every queue shares)
  describe('hasSynced', () => {
    const table: Array<{ name: string; actions: Array<(f: Fifo) => unknown>; expected: boolean }> = [
      { name: 'empty', actions: [], expected: false },
      { name: 'after an Add', actions: [(f: Fifo) => f.add(mk('a', 1))], expected: true },
      {
        name: 'after Replace of 2',
        actions: [(f: Fifo) => f.replace([mk('a', 1), mk('b', 2)], '0')],
        expected: false,
      },
      {
        name: 'after Replace of 2 and everything popped',
        actions: [(f: Fifo) => f.replace([mk('a', 1), mk('b', 2)], '0'), drain],
        expected: true,
      },
    ];
    it.each(table)('$name: $expected', async ({ actions, expected }) => {
      const f = newFifo();
      for (const action of actions) await action(f);
      expect(f.hasSynced()).toBe(expected);
    });

    it('an add before the first replace makes the replace not count as initial', async () => {
      const f = newFifo();
      f.add(mk('x', 1));
      f.replace([mk('a', 1), mk('b', 2)], '0');
      expect(f.hasSynced()).toBe(true);
      const seen: boolean[] = [];
      while (f.length() > 0) await f.pop((_d, initial) => void seen.push(initial));
      expect(seen.every((initial) => !initial)).toBe(true);
    });

    it('stays false while the last initial item is being processed by an async process function', async () => {
      const f = newFifo();
      f.replace([mk('a', 1)], '0');
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let syncedDuring: boolean | undefined;
      const popped = f.pop(async () => {
        await gate;
        syncedDuring = f.hasSynced();
      });
      await nextTick();
      expect(f.hasSynced()).toBe(false);
      release();
      await popped;
      expect(syncedDuring).toBe(false);
      expect(f.hasSynced()).toBe(true);
    });

    // client-go 1.36 lowers the count after `process` whatever it returned (the_real_fifo.go Pop's
    // deferred decrement; delta_fifo.go Pop before process; 1.32's ErrRequeue did not restore it).
    it('counts a requeued initial item as processed: synced after it, popped again as a later item', async () => {
      const f = newFifo();
      f.replace([mk('a', 1)], '0');
      const seen: boolean[] = [];
      await f.pop((_d, initial) => {
        seen.push(initial);
        throw new RequeueError();
      });
      expect(f.hasSynced()).toBe(true);
      expect(f.length()).toBe(1);
      await f.pop((_d, initial) => void seen.push(initial));
      expect(seen).toEqual([true, false]);
    });
  });

  it('logs a slow process function when the queue is deep', async () => {
    const clock = new FakeClock();
    const lines: unknown[] = [];
    const logger = {
      child: () => logger,
      info: (obj: unknown, msg: string) => lines.push([obj, msg]),
      warn: () => undefined,
      debug: () => undefined,
    };
    const f = newFifo({ clock, logger: logger as never });
    for (let i = 0; i < 20; i++) f.add(mk(`k${i}`, i));
    await f.pop(() => clock.advance(50));
    expect(lines).toEqual([]);
    await f.pop(() => clock.advance(150));
    expect(lines).toEqual([[{ key: 'k1', depth: 18, ms: 150 }, 'slow event handlers blocking the queue']]);
  });
});

// Where the rules differ: one row per scenario, one column per queue. Each cell is what a consumer
// pops, item by item (an item is a `Deltas`).
describe('what each queue hands out', () => {
  const a1 = mk('a', 1);
  const a2 = mk('a', 2);
  const b1 = mk('b', 1);
  const c1 = mk('c', 1);
  const rows: Array<{
    scenario: string;
    knownObjects?: TestObj[];
    run: (f: Fifo) => void | Promise<unknown>;
    cells: Record<Kind, Deltas<TestObj>[]>;
  }> = [
    {
      scenario: 'add, update, delete of one key',
      run: (f) => {
        f.add(a1);
        f.update(a2);
        f.delete(a2);
      },
      cells: {
        // DeltaFIFO: the changes of a key travel together.
        DeltaFIFO: [
          [
            { type: 'Added', object: a1 },
            { type: 'Updated', object: a2 },
            { type: 'Deleted', object: a2 },
          ],
        ],
        RealFIFO: [
          [{ type: 'Added', object: a1 }],
          [{ type: 'Updated', object: a2 }],
          [{ type: 'Deleted', object: a2 }],
        ],
        AtomicFIFO: [
          [{ type: 'Added', object: a1 }],
          [{ type: 'Updated', object: a2 }],
          [{ type: 'Deleted', object: a2 }],
        ],
      },
    },
    {
      scenario: 'delete of a key neither queued nor known',
      run: (f) => f.delete(a1),
      cells: {
        DeltaFIFO: [], // ignored: a relist presumably reported it already
        RealFIFO: [[{ type: 'Deleted', object: a1 }]],
        AtomicFIFO: [[{ type: 'Deleted', object: a1 }]],
      },
    },
    {
      scenario: 'replace([a, b]) with c known',
      knownObjects: [c1],
      run: (f) => f.replace([a1, b1], '7'),
      cells: {
        DeltaFIFO: [
          [{ type: 'Replaced', object: a1 }],
          [{ type: 'Replaced', object: b1 }],
          [{ type: 'Deleted', object: tomb('c', c1) }],
        ],
        RealFIFO: [
          [{ type: 'Deleted', object: tomb('c', c1) }],
          [{ type: 'Replaced', object: a1 }],
          [{ type: 'Replaced', object: b1 }],
        ],
        AtomicFIFO: [[{ type: 'ReplacedAll', object: { resourceVersion: '7', objects: [a1, b1] } }]],
      },
    },
    {
      scenario: 'resync with a known',
      knownObjects: [a1],
      run: (f) => f.resync(),
      cells: {
        DeltaFIFO: [[{ type: 'Sync', object: a1 }]],
        RealFIFO: [[{ type: 'Sync', object: a1 }]],
        AtomicFIFO: [[{ type: 'SyncAll', object: {} }]],
      },
    },
    {
      scenario: 'a requeued item whose key was queued again meanwhile',
      run: async (f) => {
        f.add(a1);
        await f.pop(() => {
          f.update(a2);
          throw new RequeueError();
        });
      },
      cells: {
        // DeltaFIFO merges the requeued deltas in front of the newer ones; the logs put the entry back at the head.
        DeltaFIFO: [
          [
            { type: 'Added', object: a1 },
            { type: 'Updated', object: a2 },
          ],
        ],
        RealFIFO: [[{ type: 'Added', object: a1 }], [{ type: 'Updated', object: a2 }]],
        AtomicFIFO: [[{ type: 'Added', object: a1 }], [{ type: 'Updated', object: a2 }]],
      },
    },
    {
      scenario: 'a requeued item behind another key',
      run: async (f) => {
        f.add(a1);
        f.add(b1);
        await f.pop(() => {
          throw new RequeueError();
        });
      },
      cells: {
        DeltaFIFO: [[{ type: 'Added', object: b1 }], [{ type: 'Added', object: a1 }]], // back of the line
        RealFIFO: [[{ type: 'Added', object: a1 }], [{ type: 'Added', object: b1 }]], // head: event order kept
        AtomicFIFO: [[{ type: 'Added', object: a1 }], [{ type: 'Added', object: b1 }]],
      },
    },
    {
      scenario: 'bookmark("5") then add',
      run: (f) => {
        if ('bookmark' in f) f.bookmark('5');
        f.add(a1);
      },
      cells: {
        DeltaFIFO: [[{ type: 'Added', object: a1 }]], // no bookmark method
        RealFIFO: [[{ type: 'Added', object: a1 }]], // no bookmark method (client-go: ignored without atomic events)
        AtomicFIFO: [
          [{ type: 'Bookmark', object: { resourceVersion: '5' } }],
          [{ type: 'Added', object: a1 }],
        ],
      },
    },
  ];
  const cases = rows.flatMap((row) => kinds.map((kind) => ({ ...row, kind, expected: row.cells[kind] })));
  it.each(cases)('$scenario: $kind', async ({ kind, knownObjects, run, expected }) => {
    const f = makers[kind](knownObjects === undefined ? {} : { knownObjects: literalLister(knownObjects) });
    await run(f);
    expect(await drain(f)).toStrictEqual(expected);
  });
});

// How many pops the initial population takes: DeltaFIFO counts keys, the logs count entries.
describe('initial population (pops until hasSynced)', () => {
  const rows: Array<{
    scenario: string;
    knownObjects?: TestObj[];
    run: (f: Fifo) => void;
    cells: Record<Kind, number>;
  }> = [
    // An empty relist is still one ReplacedAll entry for the AtomicFIFO (the consumer must apply it).
    {
      scenario: 'replace([])',
      run: (f) => f.replace([], '1'),
      cells: { DeltaFIFO: 0, RealFIFO: 0, AtomicFIFO: 1 },
    },
    {
      scenario: 'replace([a, b])',
      run: (f) => f.replace([mk('a', 1), mk('b', 1)], '1'),
      cells: { DeltaFIFO: 2, RealFIFO: 2, AtomicFIFO: 1 },
    },
    {
      scenario: 'replace listing one key twice',
      run: (f) => f.replace([mk('a', 1), mk('a', 2)], '1'),
      cells: { DeltaFIFO: 1, RealFIFO: 2, AtomicFIFO: 1 },
    },
    {
      scenario: 'replace([a]) with b known (a tombstone)',
      knownObjects: [mk('b', 1)],
      run: (f) => f.replace([mk('a', 1)], '1'),
      cells: { DeltaFIFO: 2, RealFIFO: 2, AtomicFIFO: 1 },
    },
    {
      scenario: 'resync before the first replace([a]), a known',
      knownObjects: [mk('a', 0)],
      run: (f) => {
        f.resync();
        f.replace([mk('a', 1)], '1');
      },
      // DeltaFIFO: the Sync and the Replaced share key a; the logs count every queued entry.
      cells: { DeltaFIFO: 1, RealFIFO: 2, AtomicFIFO: 2 },
    },
  ];
  const cases = rows.flatMap((row) => kinds.map((kind) => ({ ...row, kind, expected: row.cells[kind] })));
  it.each(cases)('$scenario: $kind takes $expected', async ({ kind, knownObjects, run, expected }) => {
    const f = makers[kind](knownObjects === undefined ? {} : { knownObjects: literalLister(knownObjects) });
    run(f);
    let pops = 0;
    const initial: boolean[] = [];
    while (!f.hasSynced()) {
      await f.pop((_d, isInInitialList) => void initial.push(isInInitialList));
      pops++;
    }
    expect(pops).toBe(expected);
    expect(initial.every(Boolean)).toBe(true);
  });
});
