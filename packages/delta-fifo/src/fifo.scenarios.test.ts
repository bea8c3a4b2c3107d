import { DeletedFinalStateUnknown, ErrorCodes, KinformerError } from '@kinformer/core';
import type { Clock, KeyFunc, Logger } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import { AtomicFIFO } from './atomicFifo.js';
import { DeltaFIFO } from './deltaFifo.js';
import {
  drain,
  keyFunction,
  literalLister,
  mk,
  nextTick,
  pop,
  popNewest,
  tomb,
} from './fifo.test.helpers.js';
import type { TestObj } from './fifo.test.helpers.js';
import type { KeyListerGetter, TransformFunc } from './fifoOptions.js';
import type { Delta, Deltas } from './queue.js';
import { RealFIFO } from './realFifo.js';
import { RequeueError } from './requeueError.js';
import { deferred } from '@kinformer/test-tools';

// One scenario table for the three queues (they share one core, FIFOCore): the behaviour they share
// runs once per queue; where their rules differ, a table has one column per queue, so a difference
// is a visible cell. Queue-specific rules stay in deltaFifo.test.ts, realFifo.test.ts and
// atomicFifo.test.ts.

type Fifo = DeltaFIFO<TestObj> | RealFIFO<TestObj> | AtomicFIFO<TestObj>;
type Kind = 'DeltaFIFO' | 'RealFIFO' | 'AtomicFIFO';

interface MakeOptions {
  keyFunction?: KeyFunc<TestObj>;
  knownObjects?: KeyListerGetter<TestObj>;
  /** DeltaFIFO only (default here: true, as an informer sets it; false queues `Sync` for listed objects). */
  emitDeltaTypeReplaced?: boolean;
  transformer?: TransformFunc<TestObj>;
  clock?: Clock;
  logger?: Logger;
}

/** Each queue as an informer configures it (DeltaFIFO with `Replaced`, AtomicFIFO with bookmarks). */
const makers: Record<Kind, (options?: MakeOptions) => Fifo> = {
  DeltaFIFO: (o = {}) => new DeltaFIFO<TestObj>({ keyFunction, emitDeltaTypeReplaced: true, ...o }),
  RealFIFO: ({ emitDeltaTypeReplaced: _always, ...o } = {}) => new RealFIFO<TestObj>({ keyFunction, ...o }),
  // An AtomicFIFO has no knownObjects: its consumer reconciles a relist against its own cache.
  AtomicFIFO: ({ knownObjects: _ignored, emitDeltaTypeReplaced: _atomic, ...o } = {}) =>
    new AtomicFIFO<TestObj>({ keyFunction, emitDeltaTypeBookmark: true, ...o }),
};
const kinds = Object.keys(makers) as Kind[];

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
      const { promise: gate, resolve: release } = deferred();
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

  // TestDeltaFIFO_transformer / TestRealFIFO_transformer
  it('transforms every object exactly once, never tombstones', async () => {
    let calls = 0;
    const f = newFifo({
      transformer: (obj) => {
        if (obj instanceof DeletedFinalStateUnknown) throw new Error('transformer called with a tombstone');
        calls++;
        (obj.val as { xfrm: number }).xfrm++;
        return obj;
      },
    });
    const mkx = (name: string, rv: number): TestObj => mk(name, { rv, xfrm: 0 });
    f.add(mkx('foo', 10));
    f.add(mkx('bar', 11));
    f.update(mkx('foo', 12));
    f.delete(mkx('foo', 15));
    f.replace([], '');
    f.add(mkx('bar', 16));
    f.replace([], '');
    expect(calls).toBe(5);
    const popped = (await drain(f)).map((deltas) =>
      deltas.map(({ type, object }) => {
        if (type === 'ReplacedAll' || type === 'SyncAll' || type === 'Bookmark') return type;
        const tombstone = object instanceof DeletedFinalStateUnknown;
        const o = tombstone ? object.obj : object;
        const { rv, xfrm } = o.val as { rv: number; xfrm: number };
        expect(xfrm).toBe(1);
        return `${type} ${tombstone ? 'tombstone ' : ''}${o.name} ${rv}`;
      }),
    );
    const cells: Record<Kind, string[][]> = {
      DeltaFIFO: [
        ['Added foo 10', 'Updated foo 12', 'Deleted foo 15'],
        ['Added bar 11', 'Deleted tombstone bar 11', 'Added bar 16', 'Deleted tombstone bar 16'],
      ],
      RealFIFO: [
        ['Added foo 10'],
        ['Added bar 11'],
        ['Updated foo 12'],
        ['Deleted foo 15'],
        ['Deleted tombstone bar 11'],
        ['Added bar 16'],
        ['Deleted tombstone bar 16'],
      ],
      AtomicFIFO: [
        ['Added foo 10'],
        ['Added bar 11'],
        ['Updated foo 12'],
        ['Deleted foo 15'],
        ['ReplacedAll'],
        ['Added bar 16'],
        ['ReplacedAll'],
      ],
    };
    expect(popped).toEqual(cells[kind]);
  });

  // The logs key a replace's items as they queue them; the AtomicFIFO queues one ReplacedAll and
  // leaves keying to its consumer.
  it('replace is atomic: an unkeyable item leaves the queue unchanged (AtomicFIFO: not keyed here)', () => {
    const f = newFifo({
      keyFunction: (o) => {
        if (o.name === '') throw new KinformerError(ErrorCodes.KEY_FUNC, 'no name');
        return o.name;
      },
    });
    f.add(mk('keep', 1));
    const replace = (): void => f.replace([mk('x', 1), mk('', 1)], '1');
    const throws: Record<Kind, boolean> = { DeltaFIFO: true, RealFIFO: true, AtomicFIFO: false };
    if (throws[kind]) {
      expect(replace).toThrow(expect.objectContaining({ code: ErrorCodes.KEY_FUNC }));
      expect(f.length()).toBe(1);
    } else {
      replace();
      expect(f.length()).toBe(2);
    }
    expect(f.listKeys()).toEqual(['keep']);
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
  /** client-go runs its "only in the queue" cases with and without (empty) knownObjects, queuing Sync. */
  const onlyInTheQueue = {
    knownObjects: [],
    orNoKnownObjects: true,
    options: { emitDeltaTypeReplaced: false },
  } as const;
  const [foo1, foo2, foo3, foo5, bar6, baz7] = [
    mk('foo', 1),
    mk('foo', 2),
    mk('foo', 3),
    mk('foo', 5),
    mk('bar', 6),
    mk('baz', 7),
  ];
  const added = (object: TestObj): Delta<TestObj> => ({ type: 'Added', object });
  const updated = (object: TestObj): Delta<TestObj> => ({ type: 'Updated', object });
  const deleted = (object: TestObj | DeletedFinalStateUnknown<TestObj>): Delta<TestObj> => ({
    type: 'Deleted',
    object,
  });
  const replaced = (object: TestObj): Delta<TestObj> => ({ type: 'Replaced', object });
  const sync = (object: TestObj): Delta<TestObj> => ({ type: 'Sync', object });
  const replacedAll = (resourceVersion: string, ...objects: TestObj[]): Delta<TestObj> => ({
    type: 'ReplacedAll',
    object: { resourceVersion, objects },
  });
  const syncAll: Delta<TestObj> = { type: 'SyncAll', object: {} };
  /** One popped item holding these deltas. */
  const together = (...deltas: Deltas<TestObj>): Deltas<TestObj>[] => [deltas];
  /** One popped item per delta. */
  const apart = (...deltas: Deltas<TestObj>): Deltas<TestObj>[] => deltas.map((d) => [d]);
  const everyAddInOrder = apart(
    ...(
      [
        ['foo', 10],
        ['bar', 1],
        ['foo', 11],
        ['foo', 13],
        ['zab', 30],
        ['foo', 14],
      ] as const
    ).map(([n, v]) => added(mk(n, v))),
  );
  const rows: Array<{
    scenario: string;
    knownObjects?: readonly TestObj[];
    /** Run once more with knownObjects unset (client-go runs these cases both ways). */
    orNoKnownObjects?: true;
    options?: Pick<MakeOptions, 'emitDeltaTypeReplaced' | 'transformer'>;
    /** May pop: what it pops comes first in the cell. */
    run: (f: Fifo) => void | Promise<void | Deltas<TestObj>[]>;
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
    // TestDeltaFIFO_replaceWithDeleteDeltaIn / TestRealFIFO_replaceWithDeleteDeltaIn
    {
      scenario: 'delete of a known key, then a replace listing it again',
      knownObjects: [foo1],
      options: { emitDeltaTypeReplaced: false },
      run: (f) => {
        f.delete(foo1);
        f.replace([foo2], '');
      },
      cells: {
        DeltaFIFO: together(deleted(foo1), sync(foo2)),
        RealFIFO: apart(deleted(foo1), replaced(foo2)),
        AtomicFIFO: apart(deleted(foo1), replacedAll('', foo2)),
      },
    },
    // TestDeltaFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue / TestRealFIFOW_… (one row a case)
    {
      scenario: 'only in the queue: an added object is deleted on replace',
      ...onlyInTheQueue,
      run: (f) => {
        f.add(foo2);
        f.replace([], '0');
      },
      cells: {
        DeltaFIFO: together(added(foo2), deleted(tomb('foo', foo2))),
        RealFIFO: apart(added(foo2), deleted(tomb('foo', foo2))),
        AtomicFIFO: apart(added(foo2), replacedAll('0')),
      },
    },
    {
      scenario: 'only in the queue: a replaced object has a single delete',
      knownObjects: [],
      orNoKnownObjects: true,
      run: (f) => {
        f.add(foo2);
        f.replace([foo2], '0');
        f.replace([], '0');
      },
      cells: {
        DeltaFIFO: together(added(foo2), replaced(foo2), deleted(tomb('foo', foo2))),
        RealFIFO: apart(added(foo2), replaced(foo2), deleted(tomb('foo', foo2))),
        AtomicFIFO: apart(added(foo2), replacedAll('0', foo2), replacedAll('0')),
      },
    },
    {
      scenario: 'only in the queue: a deleted object has a single delete',
      ...onlyInTheQueue,
      run: (f) => {
        f.add(foo2);
        f.delete(foo2);
        f.replace([], '0');
      },
      cells: {
        DeltaFIFO: together(added(foo2), deleted(foo2)),
        RealFIFO: apart(added(foo2), deleted(foo2)),
        AtomicFIFO: apart(added(foo2), deleted(foo2), replacedAll('0')),
      },
    },
    {
      scenario: 'only in the queue: a synced object has a single delete',
      ...onlyInTheQueue,
      run: (f) => {
        f.add(foo2);
        f.replace([foo2], '0');
        f.replace([foo2], '0');
        f.replace([], '0');
      },
      cells: {
        DeltaFIFO: together(added(foo2), sync(foo2), sync(foo2), deleted(tomb('foo', foo2))),
        RealFIFO: apart(added(foo2), replaced(foo2), replaced(foo2), deleted(tomb('foo', foo2))),
        AtomicFIFO: apart(added(foo2), replacedAll('0', foo2), replacedAll('0', foo2), replacedAll('0')),
      },
    },
    {
      scenario: 'only in the queue: an added object has a single delete over several replaces',
      ...onlyInTheQueue,
      run: (f) => {
        f.add(foo2);
        f.replace([], '0');
        f.replace([], '1');
      },
      cells: {
        DeltaFIFO: together(added(foo2), deleted(tomb('foo', foo2))),
        RealFIFO: apart(added(foo2), deleted(tomb('foo', foo2))),
        AtomicFIFO: apart(added(foo2), replacedAll('0'), replacedAll('1')),
      },
    },
    {
      scenario: 'only in the queue: added, deleted and added again is deleted',
      ...onlyInTheQueue,
      run: (f) => {
        f.add(foo2);
        f.delete(foo2);
        f.add(foo3);
        f.replace([], '0');
      },
      cells: {
        DeltaFIFO: together(added(foo2), deleted(foo2), added(foo3), deleted(tomb('foo', foo3))),
        RealFIFO: apart(added(foo2), deleted(foo2), added(foo3), deleted(tomb('foo', foo3))),
        AtomicFIFO: apart(added(foo2), deleted(foo2), added(foo3), replacedAll('0')),
      },
    },
    // TestDeltaFIFO_enqueueingNoLister / TestRealFIFO_enqueueingNoLister
    {
      scenario: 'events of several keys, a delete of an unknown one among them',
      run: (f) => {
        f.add(mk('foo', 10));
        f.update(mk('bar', 15));
        f.add(mk('qux', 17));
        f.delete(mk('qux', 18));
        f.delete(mk('baz', 20));
      },
      cells: {
        DeltaFIFO: [
          [added(mk('foo', 10))],
          [updated(mk('bar', 15))],
          [added(mk('qux', 17)), deleted(mk('qux', 18))],
        ],
        RealFIFO: apart(
          added(mk('foo', 10)),
          updated(mk('bar', 15)),
          added(mk('qux', 17)),
          deleted(mk('qux', 18)),
          deleted(mk('baz', 20)),
        ),
        AtomicFIFO: apart(
          added(mk('foo', 10)),
          updated(mk('bar', 15)),
          added(mk('qux', 17)),
          deleted(mk('qux', 18)),
          deleted(mk('baz', 20)),
        ),
      },
    },
    // TestDeltaFIFO_enqueueingWithLister / TestRealFIFO_enqueueingWithLister
    {
      scenario: 'a delete of a key only knownObjects has',
      knownObjects: [foo5, bar6, baz7],
      run: (f) => {
        f.add(mk('foo', 10));
        f.update(mk('bar', 15));
        f.delete(mk('baz', 20));
      },
      cells: {
        DeltaFIFO: apart(added(mk('foo', 10)), updated(mk('bar', 15)), deleted(mk('baz', 20))),
        RealFIFO: apart(added(mk('foo', 10)), updated(mk('bar', 15)), deleted(mk('baz', 20))),
        AtomicFIFO: apart(added(mk('foo', 10)), updated(mk('bar', 15)), deleted(mk('baz', 20))),
      },
    },
    // TestDeltaFIFO_addReplace / TestRealFIFO_addReplace
    {
      scenario: 'an add, then a replace of the same key',
      options: { emitDeltaTypeReplaced: false },
      run: (f) => {
        f.add(mk('foo', 10));
        f.replace([mk('foo', 15)], '0');
      },
      cells: {
        DeltaFIFO: together(added(mk('foo', 10)), sync(mk('foo', 15))),
        RealFIFO: apart(added(mk('foo', 10)), replaced(mk('foo', 15))),
        AtomicFIFO: apart(added(mk('foo', 10)), replacedAll('0', mk('foo', 15))),
      },
    },
    // TestDeltaFIFO_ResyncNonExisting / TestRealFIFO_ResyncNonExisting
    {
      scenario: 'resync of a known key with a pending delete',
      knownObjects: [foo5],
      run: (f) => {
        f.delete(mk('foo', 10));
        f.resync();
      },
      cells: {
        DeltaFIFO: [[deleted(mk('foo', 10))]],
        RealFIFO: [[deleted(mk('foo', 10))]],
        AtomicFIFO: apart(deleted(mk('foo', 10)), syncAll),
      },
    },
    {
      scenario: 'resync without knownObjects',
      run: (f) => f.resync(),
      cells: { DeltaFIFO: [], RealFIFO: [], AtomicFIFO: [[syncAll]] },
    },
    // TestDeltaFIFO_UpdateResyncRace / TestRealFIFO_UpdateResyncRace
    {
      scenario: 'resync of a known key with a pending update',
      knownObjects: [foo5],
      run: (f) => {
        f.update(mk('foo', 6));
        f.resync();
      },
      cells: {
        DeltaFIFO: [[updated(mk('foo', 6))]],
        RealFIFO: [[updated(mk('foo', 6))]],
        AtomicFIFO: apart(updated(mk('foo', 6)), syncAll),
      },
    },
    // TestDeltaFIFO_DeleteExistingNonPropagated / TestRealFIFO_DeleteExistingNonPropagated
    {
      scenario: 'a delete of a key that is queued but not known',
      knownObjects: [],
      run: (f) => {
        f.add(mk('foo', 5));
        f.delete(mk('foo', 6));
      },
      cells: {
        DeltaFIFO: together(added(mk('foo', 5)), deleted(mk('foo', 6))),
        RealFIFO: apart(added(mk('foo', 5)), deleted(mk('foo', 6))),
        AtomicFIFO: apart(added(mk('foo', 5)), deleted(mk('foo', 6))),
      },
    },
    // TestDeltaFIFO_ReplaceMakesDeletions / TestRealFIFO_ReplaceMakesDeletions (one row a case)
    {
      scenario: 'replace deletes known objects missing from the list, after a queued delete',
      knownObjects: [foo5, bar6, baz7],
      options: { emitDeltaTypeReplaced: false },
      run: (f) => {
        f.delete(mk('baz', 10));
        f.replace([foo5], '0');
      },
      cells: {
        DeltaFIFO: apart(deleted(mk('baz', 10)), sync(foo5), deleted(tomb('bar', bar6))),
        RealFIFO: apart(deleted(mk('baz', 10)), deleted(tomb('bar', bar6)), replaced(foo5)),
        AtomicFIFO: apart(deleted(mk('baz', 10)), replacedAll('0', foo5)),
      },
    },
    {
      scenario: 'replace deletes known objects missing from the list, after a queued add',
      knownObjects: [foo5, bar6, baz7],
      options: { emitDeltaTypeReplaced: false },
      run: (f) => {
        f.add(mk('baz', 10));
        f.replace([foo5], '0');
      },
      cells: {
        DeltaFIFO: [
          [added(mk('baz', 10)), deleted(tomb('baz', mk('baz', 10)))],
          [sync(foo5)],
          [deleted(tomb('bar', bar6))],
        ],
        RealFIFO: apart(
          added(mk('baz', 10)),
          deleted(tomb('baz', mk('baz', 10))),
          deleted(tomb('bar', bar6)),
          replaced(foo5),
        ),
        AtomicFIFO: apart(added(mk('baz', 10)), replacedAll('0', foo5)),
      },
    },
    {
      scenario:
        'replace deletes a key deleted and re-added in the queue: the tombstone carries the newest object',
      knownObjects: [foo5, bar6, baz7],
      options: { emitDeltaTypeReplaced: false },
      run: (f) => {
        f.delete(bar6);
        f.add(mk('bar', 100));
        f.replace([foo5], '0');
      },
      cells: {
        DeltaFIFO: [
          [deleted(bar6), added(mk('bar', 100)), deleted(tomb('bar', mk('bar', 100)))],
          [sync(foo5)],
          [deleted(tomb('baz', baz7))],
        ],
        RealFIFO: apart(
          deleted(bar6),
          added(mk('bar', 100)),
          deleted(tomb('bar', mk('bar', 100))),
          deleted(tomb('baz', baz7)),
          replaced(foo5),
        ),
        AtomicFIFO: apart(deleted(bar6), added(mk('bar', 100)), replacedAll('0', foo5)),
      },
    },
    {
      scenario: 'replace after a replace: the delete uses the queued version and is not repeated',
      knownObjects: [foo5, bar6, baz7],
      options: { emitDeltaTypeReplaced: false },
      run: (f) => {
        f.replace([mk('bar', 100), foo5], '0');
        f.replace([foo5], '0');
      },
      cells: {
        DeltaFIFO: [
          [sync(mk('bar', 100)), deleted(tomb('bar', mk('bar', 100)))],
          [sync(foo5), sync(foo5)],
          [deleted(tomb('baz', baz7))],
        ],
        // The logs queue a replace's deletes first, then its items in list order.
        RealFIFO: apart(
          deleted(tomb('baz', baz7)),
          replaced(mk('bar', 100)),
          replaced(foo5),
          deleted(tomb('bar', mk('bar', 100))),
          replaced(foo5),
        ),
        AtomicFIFO: apart(replacedAll('0', mk('bar', 100), foo5), replacedAll('0', foo5)),
      },
    },
    {
      scenario: 'replace deletes a queued key missing from the list',
      ...onlyInTheQueue,
      run: (f) => {
        f.add(mk('baz', 10));
        f.replace([foo5], '0');
      },
      cells: {
        DeltaFIFO: [[added(mk('baz', 10)), deleted(tomb('baz', mk('baz', 10)))], [sync(foo5)]],
        RealFIFO: apart(added(mk('baz', 10)), deleted(tomb('baz', mk('baz', 10))), replaced(foo5)),
        AtomicFIFO: apart(added(mk('baz', 10)), replacedAll('0', foo5)),
      },
    },
    // TestDeltaFIFO_ReplaceMakesDeletionsReplaced / TestRealFIFO_ReplaceMakesDeletionsReplaced
    {
      scenario: 'replace with Replaced deltas deletes known objects missing from the list',
      knownObjects: [foo5, bar6, baz7],
      run: (f) => {
        f.delete(mk('baz', 10));
        f.replace([mk('foo', 6)], '0');
      },
      cells: {
        DeltaFIFO: apart(deleted(mk('baz', 10)), replaced(mk('foo', 6)), deleted(tomb('bar', bar6))),
        RealFIFO: apart(deleted(mk('baz', 10)), deleted(tomb('bar', bar6)), replaced(mk('foo', 6))),
        AtomicFIFO: apart(deleted(mk('baz', 10)), replacedAll('0', mk('foo', 6))),
      },
    },
    // TestDeltaFIFO_ReplaceDeltaType
    {
      scenario: 'replace of a known object with Replaced deltas',
      knownObjects: [foo5],
      run: (f) => f.replace([foo5], '0'),
      cells: {
        DeltaFIFO: [[replaced(foo5)]],
        RealFIFO: [[replaced(foo5)]],
        AtomicFIFO: [[replacedAll('0', foo5)]],
      },
    },
    // TestDeltaFIFO_detectLineJumpers / TestRealFIFO_detectLineJumpers
    {
      scenario: 'a key added again after its pop (line jumpers)',
      run: async (f) => {
        for (const [name, val] of [
          ['foo', 10],
          ['bar', 1],
          ['foo', 11],
          ['foo', 13],
          ['zab', 30],
        ] as const) {
          f.add(mk(name, val));
        }
        const first = await pop(f);
        f.add(mk('foo', 14));
        return [first];
      },
      cells: {
        // DeltaFIFO: a key keeps its first place; re-added after its pop, it goes to the back.
        DeltaFIFO: [
          [added(mk('foo', 10)), added(mk('foo', 11)), added(mk('foo', 13))],
          [added(mk('bar', 1))],
          [added(mk('zab', 30))],
          [added(mk('foo', 14))],
        ],
        RealFIFO: everyAddInOrder,
        AtomicFIFO: everyAddInOrder,
      },
    },
    // TestDeltaFIFO_transformer (a relist is transformed, a resync is not)
    {
      scenario: 'a transformer over replace and resync',
      knownObjects: [mk('k', 'cached')],
      options: { emitDeltaTypeReplaced: false, transformer: (o) => ({ ...o, val: `t(${String(o.val)})` }) },
      run: async (f) => {
        f.replace([mk('r', 1)], '1');
        f.resync();
        const popped = await drain(f);
        f.resync();
        return popped;
      },
      cells: {
        DeltaFIFO: apart(
          sync(mk('r', 't(1)')),
          deleted(tomb('k', mk('k', 'cached'))),
          sync(mk('k', 'cached')),
        ),
        RealFIFO: apart(
          deleted(tomb('k', mk('k', 'cached'))),
          replaced(mk('r', 't(1)')),
          sync(mk('k', 'cached')),
        ),
        AtomicFIFO: apart(replacedAll('1', mk('r', 't(1)')), syncAll, syncAll),
      },
    },
  ];
  const cases = rows.flatMap((row) =>
    (row.orNoKnownObjects ? [row.knownObjects, undefined] : [row.knownObjects]).flatMap((known) =>
      kinds.map((kind) => ({
        ...row,
        scenario: known === row.knownObjects ? row.scenario : `${row.scenario} (no knownObjects)`,
        known,
        kind,
        expected: row.cells[kind],
      })),
    ),
  );
  it.each(cases)('$scenario: $kind', async ({ kind, known, options, run, expected }) => {
    const f = makers[kind]({
      ...options,
      ...(known === undefined ? {} : { knownObjects: literalLister(known) }),
    });
    const popped = (await run(f)) ?? [];
    expect([...popped, ...(await drain(f))]).toStrictEqual(expected);
  });
});

// How many pops the initial population takes: DeltaFIFO counts keys, the logs count entries.
describe('initial population (pops until hasSynced)', () => {
  const resyncThenReplace = (f: Fifo): void => {
    f.resync();
    f.replace([mk('a', 1)], '1');
  };
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
      run: resyncThenReplace,
      // DeltaFIFO: the Sync and the Replaced share key a; the logs count every queued entry.
      cells: { DeltaFIFO: 1, RealFIFO: 2, AtomicFIFO: 2 },
    },
    // TestRealFIFO_HasSynced: Sync(k), then the replace's tombstone of k and Replaced(a).
    {
      scenario: 'resync before the first replace([a]), k known',
      knownObjects: [mk('k', 0)],
      run: resyncThenReplace,
      cells: { DeltaFIFO: 2, RealFIFO: 3, AtomicFIFO: 2 },
    },
    // TestDeltaFIFO_HasSyncedCorrectOnDeletion / TestRealFIFO_HasSyncedCorrectOnDeletion
    {
      scenario: 'replace([foo]) with foo, bar and baz known (two tombstones)',
      knownObjects: [mk('foo', 5), mk('bar', 6), mk('baz', 7)],
      run: (f) => f.replace([mk('foo', 5)], '0'),
      cells: { DeltaFIFO: 3, RealFIFO: 3, AtomicFIFO: 1 },
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
