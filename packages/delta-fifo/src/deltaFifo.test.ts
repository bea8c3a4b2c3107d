import { DeletedFinalStateUnknown, ErrorCodes } from '@kinformer/core';
import { DeltaFIFO } from './deltaFifo.js';
import type { DeltaFIFOOptions } from './deltaFifo.js';
import type { KeyListerGetter } from './fifoOptions.js';
import type { Delta, Deltas } from './queue.js';
import { RequeueError } from './requeueError.js';

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

function newFifo(options: DeltaFIFOOptions<TestObj> = {}): DeltaFIFO<TestObj> {
  return new DeltaFIFO<TestObj>({ keyFunction, ...options });
}

/** client-go's Pop(queue) helper: pop with a no-op process function. */
function pop(f: DeltaFIFO<TestObj>): Promise<Deltas<TestObj>> {
  return f.pop(() => undefined);
}

/** client-go's testPop: the newest object of the next pop. */
async function popNewest(f: DeltaFIFO<TestObj>): Promise<TestObj> {
  const deltas = await pop(f);
  return deltas[deltas.length - 1]!.object as TestObj;
}

/** client-go's pop2: the deltas and isInInitialList of the next pop. */
async function pop2(f: DeltaFIFO<TestObj>): Promise<[Deltas<TestObj>, boolean]> {
  let initial: boolean | undefined;
  const deltas = await f.pop((_d, isInInitialList) => {
    initial = isInInitialList;
  });
  return [deltas, initial!];
}

/** Resolves on the next macrotask (lets every pending promise callback run first). */
const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('DeltaFIFO', () => {
  // TestDeltaFIFO_replaceWithDeleteDeltaIn
  it('keeps a create after a queued delete: Delete then Replace yields [Deleted(old), Sync(new)]', async () => {
    const oldObj = mk('foo', 1);
    const newObj = mk('foo', 2);
    const f = newFifo({ knownObjects: literalLister([oldObj]) });
    f.delete(oldObj);
    f.replace([newObj], '');
    expect(await pop(f)).toStrictEqual([
      { type: 'Deleted', object: oldObj },
      { type: 'Sync', object: newObj },
    ]);
  });

  // TestDeltaFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue
  describe('replace deletes objects that are only in the queue', () => {
    const obj = mk('foo', 2);
    const objV2 = mk('foo', 3);
    const table: Array<{
      name: string;
      ops: (f: DeltaFIFO<TestObj>) => void;
      emitReplaced?: boolean;
      expected: Deltas<TestObj>;
    }> = [
      {
        name: 'Added object should be deleted on Replace',
        ops: (f) => {
          f.add(obj);
          f.replace([], '0');
        },
        expected: [
          { type: 'Added', object: obj },
          { type: 'Deleted', object: tomb('foo', obj) },
        ],
      },
      {
        name: 'Replaced object should have only a single Delete',
        emitReplaced: true,
        ops: (f) => {
          f.add(obj);
          f.replace([obj], '0');
          f.replace([], '0');
        },
        expected: [
          { type: 'Added', object: obj },
          { type: 'Replaced', object: obj },
          { type: 'Deleted', object: tomb('foo', obj) },
        ],
      },
      {
        name: 'Deleted object should have only a single Delete',
        ops: (f) => {
          f.add(obj);
          f.delete(obj);
          f.replace([], '0');
        },
        expected: [
          { type: 'Added', object: obj },
          { type: 'Deleted', object: obj },
        ],
      },
      {
        name: 'Synced objects should have a single delete',
        ops: (f) => {
          f.add(obj);
          f.replace([obj], '0');
          f.replace([obj], '0');
          f.replace([], '0');
        },
        expected: [
          { type: 'Added', object: obj },
          { type: 'Sync', object: obj },
          { type: 'Sync', object: obj },
          { type: 'Deleted', object: tomb('foo', obj) },
        ],
      },
      {
        name: 'Added objects should have a single delete on multiple Replaces',
        ops: (f) => {
          f.add(obj);
          f.replace([], '0');
          f.replace([], '1');
        },
        expected: [
          { type: 'Added', object: obj },
          { type: 'Deleted', object: tomb('foo', obj) },
        ],
      },
      {
        name: 'Added and deleted and added object should be deleted',
        ops: (f) => {
          f.add(obj);
          f.delete(obj);
          f.add(objV2);
          f.replace([], '0');
        },
        expected: [
          { type: 'Added', object: obj },
          { type: 'Deleted', object: obj },
          { type: 'Added', object: objV2 },
          { type: 'Deleted', object: tomb('foo', objV2) },
        ],
      },
    ];
    for (const tt of table) {
      it(`${tt.name} (with and without knownObjects)`, async () => {
        for (const knownObjects of [literalLister([]), undefined]) {
          const f = newFifo({
            emitDeltaTypeReplaced: tt.emitReplaced ?? false,
            ...(knownObjects ? { knownObjects } : {}),
          });
          tt.ops(f);
          expect(await pop(f)).toStrictEqual(tt.expected);
          expect(f.length()).toBe(0);
          expect(f.listKeys()).toEqual([]);
        }
      });
    }
  });

  // TestDeltaFIFO_addUpdate
  it('accumulates Add, Update and Delete under one key; pop returns them all and removes the key', async () => {
    const f = newFifo();
    f.add(mk('foo', 10));
    f.update(mk('foo', 12));
    f.delete(mk('foo', 15));
    expect(f.list()).toEqual([mk('foo', 15)]);
    expect(f.listKeys()).toEqual(['foo']);
    const deltas = await pop(f);
    expect(deltas.map((d) => d.type)).toEqual(['Added', 'Updated', 'Deleted']);
    expect(deltas[deltas.length - 1]!.object).toEqual(mk('foo', 15));
    expect(f.length()).toBe(0);
    expect(f.get(mk('foo', ''))).toBeUndefined();
  });

  // TestDeltaFIFO_transformer
  it('transforms every object exactly once, never tombstones or re-queued objects', async () => {
    interface RvX {
      rv: number;
      xfrm: number;
    }
    const mkx = (name: string, rv: number): TestObj => mk(name, { rv, xfrm: 0 } satisfies RvX);
    const seen: unknown[] = [];
    const transformer = (obj: TestObj): TestObj => {
      seen.push(obj);
      if (obj instanceof DeletedFinalStateUnknown) throw new Error('transformer called with a tombstone');
      (obj.val as RvX).xfrm++;
      return obj;
    };
    const f = newFifo({ transformer });
    f.add(mkx('foo', 10));
    f.add(mkx('bar', 11));
    f.update(mkx('foo', 12));
    f.delete(mkx('foo', 15));
    f.replace([], '');
    f.add(mkx('bar', 16));
    f.replace([], '');
    expect(seen).toHaveLength(5);
    expect(f.listKeys()).toEqual(['foo', 'bar']);

    const foo = await pop(f);
    const fooNewest = foo[foo.length - 1]!.object as TestObj;
    expect(fooNewest.name).toBe('foo');
    expect(foo[foo.length - 1]!.type).toBe('Deleted'); // a regular deletion, not a tombstone
    expect(fooNewest.val).toEqual({ rv: 15, xfrm: 1 });

    const bar = await pop(f);
    const barNewest = bar[bar.length - 1]!.object;
    expect(barNewest).toBeInstanceOf(DeletedFinalStateUnknown);
    const inner = (barNewest as DeletedFinalStateUnknown<TestObj>).obj;
    expect(inner.name).toBe('bar');
    expect(inner.val).toEqual({ rv: 16, xfrm: 1 });
    for (const d of [...foo, ...bar]) {
      const object = d.object as TestObj | DeletedFinalStateUnknown<TestObj>;
      const o = object instanceof DeletedFinalStateUnknown ? object.obj : object;
      expect((o.val as RvX).xfrm).toBe(1);
    }
  });

  it('transforms relisted objects even when they are queued as Sync, but not resynced ones', async () => {
    const calls: string[] = [];
    const transformer = (obj: TestObj): TestObj => {
      calls.push(obj.name);
      return { ...obj, val: `t(${String(obj.val)})` };
    };
    const known = literalLister([mk('k', 'cached')]);
    const f = newFifo({ transformer, knownObjects: known });
    f.replace([mk('r', 1)], '1');
    f.resync();
    expect(calls).toEqual(['r']);
    expect(await pop(f)).toStrictEqual([{ type: 'Sync', object: mk('r', 't(1)') }]);
    // k was missing from the list: its tombstone carries the cached object untouched.
    expect(await pop(f)).toStrictEqual([{ type: 'Deleted', object: tomb('k', mk('k', 'cached')) }]);
    f.resync();
    expect(calls).toEqual(['r']);
    expect(await pop(f)).toStrictEqual([{ type: 'Sync', object: mk('k', 'cached') }]);
  });

  // TestDeltaFIFO_enqueueingNoLister
  it('ignores a delete of a key that is neither queued nor known (no knownObjects)', async () => {
    const f = newFifo();
    f.add(mk('foo', 10));
    f.update(mk('bar', 15));
    f.add(mk('qux', 17));
    f.delete(mk('qux', 18));
    f.delete(mk('baz', 20)); // baz does not exist: nothing is queued
    for (const expected of [10, 15, 18]) expect((await popNewest(f)).val).toBe(expected);
    expect(f.length()).toBe(0);
  });

  // TestDeltaFIFO_enqueueingWithLister
  it('queues a delete of a key that only knownObjects has', async () => {
    const f = newFifo({ knownObjects: literalLister([mk('foo', 5), mk('bar', 6), mk('baz', 7)]) });
    f.add(mk('foo', 10));
    f.update(mk('bar', 15));
    f.delete(mk('baz', 20));
    for (const expected of [10, 15, 20]) expect((await popNewest(f)).val).toBe(expected);
    expect(f.length()).toBe(0);
  });

  // TestDeltaFIFO_addReplace
  it('pops an Add followed by a Replace of the same key once, with the newest value', async () => {
    const f = newFifo();
    f.add(mk('foo', 10));
    f.replace([mk('foo', 15)], '0');
    expect((await popNewest(f)).val).toBe(15);
    expect(f.length()).toBe(0);
    expect(f.get(mk('foo', ''))).toBeUndefined();
  });

  // TestDeltaFIFO_ResyncNonExisting
  it('does not queue a Sync for a key with a pending delete', () => {
    const f = newFifo({ knownObjects: literalLister([mk('foo', 5)]) });
    f.delete(mk('foo', 10));
    f.resync();
    expect(f.getByKey('foo')).toStrictEqual([{ type: 'Deleted', object: mk('foo', 10) }]);
  });

  // TestDeltaFIFO_Resync
  it('queues exactly one Sync per known object on resync', () => {
    const f = newFifo({ knownObjects: literalLister([mk('foo', 5)]) });
    f.resync();
    expect(f.getByKey('foo')).toStrictEqual([{ type: 'Sync', object: mk('foo', 5) }]);
    expect(f.listKeys()).toEqual(['foo']);
  });

  it('does nothing on resync without knownObjects', () => {
    const f = newFifo();
    f.resync();
    expect(f.length()).toBe(0);
  });

  // TestDeltaFIFO_DeleteExistingNonPropagated
  it('queues a delete of a key that is queued but not known', () => {
    const f = newFifo({ knownObjects: literalLister([]) });
    f.add(mk('foo', 5));
    f.delete(mk('foo', 6));
    const deltas = f.getByKey('foo')!;
    expect(deltas).toHaveLength(2);
    expect(deltas[1]!.type).toBe('Deleted');
  });

  // TestDeltaFIFO_ReplaceMakesDeletions
  describe('replace makes deletions for known objects missing from the list', () => {
    const known = (): KeyListerGetter<TestObj> => literalLister([mk('foo', 5), mk('bar', 6), mk('baz', 7)]);
    const expectPops = async (f: DeltaFIFO<TestObj>, expected: Deltas<TestObj>[]): Promise<void> => {
      for (const e of expected) expect(await pop(f)).toStrictEqual(e);
      expect(f.length()).toBe(0);
    };

    it('with a pre-existing Delete', async () => {
      const f = newFifo({ knownObjects: known() });
      f.delete(mk('baz', 10));
      f.replace([mk('foo', 5)], '0');
      await expectPops(f, [
        [{ type: 'Deleted', object: mk('baz', 10) }],
        [{ type: 'Sync', object: mk('foo', 5) }],
        [{ type: 'Deleted', object: tomb('bar', mk('bar', 6)) }],
      ]);
    });

    it('starting with an Add instead of a Delete', async () => {
      const f = newFifo({ knownObjects: known() });
      f.add(mk('baz', 10));
      f.replace([mk('foo', 5)], '0');
      await expectPops(f, [
        [
          { type: 'Added', object: mk('baz', 10) },
          { type: 'Deleted', object: tomb('baz', mk('baz', 10)) },
        ],
        [{ type: 'Sync', object: mk('foo', 5) }],
        [{ type: 'Deleted', object: tomb('bar', mk('bar', 6)) }],
      ]);
    });

    it('deleting and recreating in the queue: the tombstone carries the newest queued object', async () => {
      const f = newFifo({ knownObjects: known() });
      f.delete(mk('bar', 6));
      f.add(mk('bar', 100));
      f.replace([mk('foo', 5)], '0');
      await expectPops(f, [
        [
          { type: 'Deleted', object: mk('bar', 6) },
          { type: 'Added', object: mk('bar', 100) },
          { type: 'Deleted', object: tomb('bar', mk('bar', 100)) },
        ],
        [{ type: 'Sync', object: mk('foo', 5) }],
        [{ type: 'Deleted', object: tomb('baz', mk('baz', 7)) }],
      ]);
    });

    it('syncing first: the delete uses the latest (queued) version and is not duplicated', async () => {
      const f = newFifo({ knownObjects: known() });
      f.replace([mk('bar', 100), mk('foo', 5)], '0');
      f.replace([mk('foo', 5)], '0');
      await expectPops(f, [
        [
          { type: 'Sync', object: mk('bar', 100) },
          { type: 'Deleted', object: tomb('bar', mk('bar', 100)) },
        ],
        [
          { type: 'Sync', object: mk('foo', 5) },
          { type: 'Sync', object: mk('foo', 5) },
        ],
        [{ type: 'Deleted', object: tomb('baz', mk('baz', 7)) }],
      ]);
    });

    it('without knownObjects', async () => {
      const f = newFifo();
      f.add(mk('baz', 10));
      f.replace([mk('foo', 5)], '0');
      await expectPops(f, [
        [
          { type: 'Added', object: mk('baz', 10) },
          { type: 'Deleted', object: tomb('baz', mk('baz', 10)) },
        ],
        [{ type: 'Sync', object: mk('foo', 5) }],
      ]);
    });
  });

  // TestDeltaFIFO_ReplaceMakesDeletionsReplaced
  it('emits Replaced (not Sync) for listed objects with emitDeltaTypeReplaced, and tombstones the missing', async () => {
    const f = newFifo({
      knownObjects: literalLister([mk('foo', 5), mk('bar', 6), mk('baz', 7)]),
      emitDeltaTypeReplaced: true,
    });
    f.delete(mk('baz', 10));
    f.replace([mk('foo', 6)], '0');
    expect(await pop(f)).toStrictEqual([{ type: 'Deleted', object: mk('baz', 10) }]);
    expect(await pop(f)).toStrictEqual([{ type: 'Replaced', object: mk('foo', 6) }]);
    expect(await pop(f)).toStrictEqual([{ type: 'Deleted', object: tomb('bar', mk('bar', 6)) }]);
  });

  // TestDeltaFIFO_ReplaceDeltaType
  it('emits Replaced with emitDeltaTypeReplaced', async () => {
    const f = newFifo({ knownObjects: literalLister([mk('foo', 5)]), emitDeltaTypeReplaced: true });
    f.replace([mk('foo', 5)], '0');
    expect(await pop(f)).toStrictEqual([{ type: 'Replaced', object: mk('foo', 5) }]);
  });

  // TestDeltaFIFO_UpdateResyncRace
  it('does not queue a stale Sync after a pending Update', async () => {
    const f = newFifo({ knownObjects: literalLister([mk('foo', 5)]) });
    f.update(mk('foo', 6));
    f.resync();
    expect(await pop(f)).toStrictEqual([{ type: 'Updated', object: mk('foo', 6) }]);
    expect(f.length()).toBe(0);
  });

  // TestDeltaFIFO_HasSyncedCorrectOnDeletion
  it('counts tombstones in the initial population: not synced until they are popped, all popped as initial', async () => {
    const f = newFifo({ knownObjects: literalLister([mk('foo', 5), mk('bar', 6), mk('baz', 7)]) });
    f.replace([mk('foo', 5)], '0');
    const expected: Deltas<TestObj>[] = [
      [{ type: 'Sync', object: mk('foo', 5) }],
      [{ type: 'Deleted', object: tomb('bar', mk('bar', 6)) }],
      [{ type: 'Deleted', object: tomb('baz', mk('baz', 7)) }],
    ];
    for (const e of expected) {
      expect(f.hasSynced()).toBe(false);
      const [deltas, initial] = await pop2(f);
      expect(deltas).toStrictEqual(e);
      expect(initial).toBe(true);
    }
    expect(f.hasSynced()).toBe(true);
  });

  // TestDeltaFIFO_detectLineJumpers
  it('keeps a key at its first position: re-adds do not jump the line', async () => {
    const f = newFifo();
    f.add(mk('foo', 10));
    f.add(mk('bar', 1));
    f.add(mk('foo', 11));
    f.add(mk('foo', 13));
    f.add(mk('zab', 30));
    expect((await popNewest(f)).val).toBe(13);
    f.add(mk('foo', 14)); // foo goes to the back, it does not jump back in line
    expect((await popNewest(f)).val).toBe(1);
    expect((await popNewest(f)).val).toBe(30);
    expect((await popNewest(f)).val).toBe(14);
  });

  it('uses metaNamespaceKeyFunc by default', () => {
    const f = new DeltaFIFO<{ metadata: { name: string; namespace?: string } }>();
    f.add({ metadata: { name: 'a', namespace: 'ns' } });
    f.add({ metadata: { name: 'node' } });
    expect(f.listKeys()).toEqual(['ns/a', 'node']);
    expect(() => f.add({} as never)).toThrow(expect.objectContaining({ code: ErrorCodes.KEY_FUNC }));
    expect(f.length()).toBe(2);
  });

  describe('process functions', () => {
    it('merges re-queued deltas before newer ones of a key re-added meanwhile, keeping its place', async () => {
      const f = newFifo();
      f.add(mk('a', 1));
      f.add(mk('b', 1));
      const popped = f.pop(async () => {
        await nextTick();
        throw new RequeueError();
      });
      f.add(mk('c', 1));
      f.update(mk('a', 2)); // a is queued again, behind c
      await popped;
      expect(f.listKeys()).toEqual(['b', 'c', 'a']);
      expect(f.getByKey('a')).toStrictEqual([
        { type: 'Added', object: mk('a', 1) },
        { type: 'Updated', object: mk('a', 2) },
      ]);
    });

    it('collapses a re-queued trailing delete with a newer leading one', async () => {
      const f = newFifo();
      f.add(mk('a', 1));
      f.delete(mk('a', 1));
      const popped = f.pop(async () => {
        await nextTick();
        throw new RequeueError();
      });
      f.replace([], '1'); // a is not queued now, nor known: no tombstone
      f.add(mk('a', 2));
      f.delete(mk('a', 2));
      await popped;
      expect(f.getByKey('a')).toStrictEqual([
        { type: 'Added', object: mk('a', 1) },
        { type: 'Deleted', object: mk('a', 1) },
        { type: 'Added', object: mk('a', 2) },
        { type: 'Deleted', object: mk('a', 2) },
      ]);
      const g = newFifo({ knownObjects: literalLister([mk('z', 0)]) });
      g.delete(mk('z', 1));
      const gp = g.pop(async () => {
        await nextTick();
        throw new RequeueError();
      });
      g.delete(mk('z', 2));
      await gp;
      expect(g.getByKey('z')).toStrictEqual([{ type: 'Deleted', object: mk('z', 1) }]);
    });
  });

  // TestDeltaFIFO_addIfNotPresent (client-go ≤ 1.32)
  it('addIfNotPresent re-queues popped deltas at the back only when the key is absent', async () => {
    const f = newFifo();
    f.add(mk('b', 3));
    const b3 = await pop(f);
    f.add(mk('c', 4));
    f.addIfNotPresent(b3);
    f.add(mk('b', 5));
    expect(f.listKeys()).toEqual(['c', 'b']);
    expect((await popNewest(f)).val).toBe(4);
    expect(await pop(f)).toStrictEqual([
      { type: 'Added', object: mk('b', 3) },
      { type: 'Added', object: mk('b', 5) },
    ]);

    f.add(mk('d', 1));
    f.addIfNotPresent([{ type: 'Added', object: mk('d', 0) }]);
    expect(f.getByKey('d')).toStrictEqual([{ type: 'Added', object: mk('d', 1) }]);
    expect(() => f.addIfNotPresent([])).toThrow(expect.objectContaining({ code: ErrorCodes.KEY_FUNC }));
  });

  it('addIfNotPresent counts as populating the queue', () => {
    const f = newFifo();
    f.addIfNotPresent([{ type: 'Added', object: mk('a', 1) }]);
    expect(f.hasSynced()).toBe(true);
  });

  describe('dedup', () => {
    it('collapses only two trailing Deleted deltas, keeping the plain delete over a tombstone', () => {
      const f = newFifo({ knownObjects: literalLister([mk('a', 0), mk('b', 0)]) });
      f.delete(mk('a', 1));
      f.delete(mk('a', 2));
      expect(f.getByKey('a')).toStrictEqual([{ type: 'Deleted', object: mk('a', 1) }]);

      f.delete(tomb('b', mk('b', 0)));
      f.delete(mk('b', 3));
      expect(f.getByKey('b')).toStrictEqual([{ type: 'Deleted', object: mk('b', 3) }]);
    });

    it('does not merge adds, updates or syncs', () => {
      const f = newFifo();
      f.add(mk('a', 1));
      f.add(mk('a', 1));
      f.update(mk('a', 2));
      f.update(mk('a', 2));
      f.replace([mk('a', 3)], '1');
      expect(f.getByKey('a')!.map((d: Delta<TestObj>) => d.type)).toEqual([
        'Added',
        'Added',
        'Updated',
        'Updated',
        'Sync',
      ]);
    });
  });

  it('replace is atomic: an unkeyable item leaves the queue unchanged', () => {
    const f = new DeltaFIFO<{ metadata?: { name?: string } }>();
    f.add({ metadata: { name: 'keep' } });
    expect(() => f.replace([{ metadata: { name: 'x' } }, {}], '1')).toThrow(
      expect.objectContaining({ code: ErrorCodes.KEY_FUNC }),
    );
    expect(f.listKeys()).toEqual(['keep']);
    expect(f.getByKey('keep')).toHaveLength(1);
  });

  it('get and getByKey return copies of the queued deltas; list returns newest objects in queue order', () => {
    const f = newFifo();
    f.add(mk('a', 1));
    f.add(mk('b', 1));
    f.update(mk('a', 2));
    const copy = f.get(mk('a', 0))!;
    copy.push({ type: 'Sync', object: mk('a', 9) });
    expect(f.getByKey('a')).toHaveLength(2);
    expect(f.getByKey('missing')).toBeUndefined();
    expect(f.list()).toEqual([mk('a', 2), mk('b', 1)]);
    expect(f.length()).toBe(2);
  });

  it('skips a tombstone for a key knownObjects lists but cannot get', () => {
    const f = newFifo({ knownObjects: { listKeys: () => ['ghost'], getByKey: () => undefined } });
    f.replace([], '1');
    expect(f.length()).toBe(0);
    expect(f.hasSynced()).toBe(true);
  });
});
