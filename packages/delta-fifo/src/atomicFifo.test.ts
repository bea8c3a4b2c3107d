import { ErrorCodes } from '@kinformer/core';
import { AtomicFIFO } from './atomicFifo.js';
import type { AtomicFIFOOptions } from './atomicFifo.js';
import { keyFunction, mk } from './fifo.test.helpers.js';
import type { TestObj } from './fifo.test.helpers.js';
import type { Deltas } from './queue.js';
import { RealFIFO } from './realFifo.js';

// Ports of client-go's tools/cache/the_real_fifo_test.go atomic-mode tests (TestRealFIFO_ReplaceAtomic,
// TestRealFIFO_ReplaceAtomicPop, TestRealFIFO_ResyncAtomic and the non-atomic bookmark case), plus
// kinformer's own tests of the AtomicFIFO. What it shares with the other queues is in
// fifo.scenarios.test.ts.

function atomicFifo(options: AtomicFIFOOptions<TestObj> = {}): AtomicFIFO<TestObj> {
  return new AtomicFIFO<TestObj>({ keyFunction, emitDeltaTypeBookmark: true, ...options });
}

/** client-go's popN + collapseDeltas: pops everything queued and concatenates the deltas. */
async function popAll(f: AtomicFIFO<TestObj> | RealFIFO<TestObj>): Promise<Deltas<TestObj>> {
  const out: Deltas<TestObj> = [];
  while (f.length() > 0) out.push(...(await f.pop(() => undefined)));
  return out;
}

describe('AtomicFIFO (client-go 1.36 RealFIFO with AtomicEvents)', () => {
  describe('replace appends one ReplacedAll delta (TestRealFIFO_ReplaceAtomic)', () => {
    const obj = mk('foo', 2);
    const cases: Array<{
      name: string;
      operations: (f: AtomicFIFO<TestObj>) => void;
      expected: Deltas<TestObj>;
    }> = [
      {
        name: 'Base replace',
        operations: (f) => f.replace([], '123'),
        expected: [{ type: 'ReplacedAll', object: { resourceVersion: '123', objects: [] } }],
      },
      {
        name: 'Added object exists in deltas on Atomic Replace',
        operations: (f) => {
          f.add(obj);
          f.replace([], '123');
        },
        expected: [
          { type: 'Added', object: obj },
          { type: 'ReplacedAll', object: { resourceVersion: '123', objects: [] } },
        ],
      },
      {
        name: 'Multiple replaces run in order',
        operations: (f) => {
          f.add(obj);
          f.replace([obj], '10');
          f.replace([obj], '20');
          f.replace([], '56');
        },
        expected: [
          { type: 'Added', object: obj },
          { type: 'ReplacedAll', object: { resourceVersion: '10', objects: [obj] } },
          { type: 'ReplacedAll', object: { resourceVersion: '20', objects: [obj] } },
          { type: 'ReplacedAll', object: { resourceVersion: '56', objects: [] } },
        ],
      },
      {
        name: 'Bookmark object should not be included in Replace',
        operations: (f) => {
          f.bookmark('123');
          f.replace([], '1234');
        },
        expected: [
          { type: 'Bookmark', object: { resourceVersion: '123' } },
          { type: 'ReplacedAll', object: { resourceVersion: '1234', objects: [] } },
        ],
      },
    ];
    it.each(cases)('$name', async ({ operations, expected }) => {
      const f = atomicFifo();
      operations(f);
      expect(await popAll(f)).toEqual(expected);
      expect(f.length()).toBe(0);
    });
  });

  it('delivers a ReplacedAll once, after what was queued before it (TestRealFIFO_ReplaceAtomicPop)', async () => {
    const f = atomicFifo();
    f.add(mk('foo', 10));
    f.replace([mk('foo', 15)], '20');
    const first = await f.pop(() => undefined);
    expect(first).toEqual([{ type: 'Added', object: mk('foo', 10) }]);
    const second = await f.pop(() => undefined);
    expect(second).toEqual([
      { type: 'ReplacedAll', object: { resourceVersion: '20', objects: [mk('foo', 15)] } },
    ]);
    expect(f.length()).toBe(0);
    f.close();
    await expect(f.pop(() => undefined)).rejects.toMatchObject({ code: ErrorCodes.FIFO_CLOSED });
  });

  describe('resync appends one SyncAll delta (TestRealFIFO_ResyncAtomic)', () => {
    it('Base resync', async () => {
      const f = atomicFifo();
      f.resync();
      expect(await popAll(f)).toEqual([{ type: 'SyncAll', object: {} }]);
    });

    it('Added object exists in deltas on Atomic Resync', async () => {
      const f = atomicFifo();
      const obj = mk('foo', 2);
      f.add(obj);
      f.resync();
      expect(await popAll(f)).toEqual([
        { type: 'Added', object: obj },
        { type: 'SyncAll', object: {} },
      ]);
    });
  });

  it('has no bookmarks without atomic events (client-go: "Bookmark object should not be added without atomic")', async () => {
    const f = new RealFIFO<TestObj>({
      keyFunction,
      knownObjects: { listKeys: () => [], getByKey: () => undefined },
    });
    expect('bookmark' in f).toBe(false); // a reflector then has nothing to call
    f.replace([], '0');
    f.replace([], '1');
    expect(await popAll(f)).toEqual([]);
  });

  it('ignores bookmarks in atomic mode unless emitDeltaTypeBookmark is set', () => {
    const f = atomicFifo({ emitDeltaTypeBookmark: false });
    f.bookmark('5');
    expect(f.length()).toBe(0);
  });

  it('transforms every replaced object once, in list order; a throwing transformer queues nothing', async () => {
    let calls = 0;
    const f = atomicFifo({
      transformer: (o) => {
        calls++;
        if (o.val === 'bad') throw new Error('boom');
        return { ...o, val: `t(${String(o.val)})` };
      },
    });
    f.replace([mk('a', 1), mk('b', 2)], '7');
    expect(calls).toBe(2);
    expect(() => f.replace([mk('a', 1), mk('c', 'bad')], '8')).toThrow('boom');
    expect(await popAll(f)).toEqual([
      { type: 'ReplacedAll', object: { resourceVersion: '7', objects: [mk('a', 't(1)'), mk('b', 't(2)')] } },
    ]);
  });

  it('does not key the replaced objects (the consumer reports unkeyable ones)', async () => {
    const f = atomicFifo();
    const unkeyable = { val: 1 } as unknown as TestObj;
    f.replace([unkeyable], '1');
    const [delta] = await f.pop(() => undefined);
    expect(delta).toEqual({ type: 'ReplacedAll', object: { resourceVersion: '1', objects: [unkeyable] } });
  });

  it('takes the replace list over without copying it (transformed in place)', async () => {
    const items = [mk('a', 1), mk('b', 2)];
    const plain = atomicFifo();
    plain.replace(items, '1');
    const [delta] = await plain.pop(() => undefined);
    expect(delta!.type === 'ReplacedAll' && delta!.object.objects).toBe(items);

    const transformed = atomicFifo({ transformer: (o) => ({ ...o, val: 't' }) });
    const list = [mk('a', 1)];
    transformed.replace(list, '2');
    const [replaced] = await transformed.pop(() => undefined);
    expect(replaced!.type === 'ReplacedAll' && replaced!.object.objects).toBe(list);
    expect(list).toEqual([mk('a', 't')]);
  });

  describe('hasSynced', () => {
    it('the first ReplacedAll is the initial list: popped with isInInitialList, synced after it was processed', async () => {
      const f = atomicFifo();
      f.replace([mk('a', 1), mk('b', 2)], '3');
      expect(f.hasSynced()).toBe(false);
      let initial: boolean | undefined;
      let syncedWhileProcessing: boolean | undefined;
      await f.pop((_, isInInitialList) => {
        initial = isInInitialList;
        syncedWhileProcessing = f.hasSynced();
      });
      expect(initial).toBe(true);
      expect(syncedWhileProcessing).toBe(false);
      expect(f.hasSynced()).toBe(true);
      f.replace([], '4');
      await f.pop((_, isInInitialList) => {
        initial = isInInitialList;
      });
      expect(initial).toBe(false);
    });

    it('counts a bookmark and a resync queued before the first replace in the initial population', async () => {
      const f = atomicFifo();
      f.bookmark('1');
      f.resync();
      expect(f.hasSynced()).toBe(false); // neither is a first event
      f.replace([], '2');
      await f.pop(() => undefined);
      await f.pop(() => undefined);
      expect(f.hasSynced()).toBe(false);
      await f.pop(() => undefined);
      expect(f.hasSynced()).toBe(true);
    });

    it('an add before any replace syncs at once; the later ReplacedAll is not initial', async () => {
      const f = atomicFifo();
      f.add(mk('a', 1));
      expect(f.hasSynced()).toBe(true);
      f.replace([mk('a', 2)], '2');
      const flags: boolean[] = [];
      await f.pop((_, initial) => void flags.push(initial));
      await f.pop((_, initial) => void flags.push(initial));
      expect(flags).toEqual([false, false]);
    });
  });

  describe('popBatch', () => {
    it('processes ReplacedAll, SyncAll and Bookmark alone, and ends a batch before them', async () => {
      const f = atomicFifo();
      f.add(mk('a', 1));
      f.add(mk('b', 1));
      f.replace([mk('a', 2)], '5');
      f.add(mk('c', 1));
      f.resync();
      f.bookmark('6');
      f.update(mk('c', 2));
      const batches: string[][] = [];
      while (f.length() > 0) {
        await f.popBatch((batch) => {
          batches.push(
            batch.map(([d]) =>
              d!.type === 'Added' || d!.type === 'Updated' ? (d!.object as TestObj).name : d!.type,
            ),
          );
        });
      }
      expect(batches).toEqual([['a', 'b'], ['ReplacedAll'], ['c'], ['SyncAll'], ['Bookmark'], ['c']]);
    });
  });

  it('lists only the keys of per-object entries', () => {
    const f = atomicFifo();
    f.replace([mk('x', 1)], '1');
    f.add(mk('a', 1));
    f.bookmark('2');
    f.resync();
    expect(f.listKeys()).toEqual(['a']);
    expect(f.length()).toBe(4);
  });
});
