import { DeletedFinalStateUnknown, deletionHandlingMetaNamespaceKeyFunc, ErrorCodes } from '@kinformer/core';
import type { KubeObject } from '@kinformer/core';
import type { KeyListerGetter } from './fifoOptions.js';
import { isObjectDelta } from './queue.js';
import type { Delta, Deltas } from './queue.js';
import { RealFIFO } from './realFifo.js';
import type { RealFIFOOptions } from './realFifo.js';
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

function newFifo(options: RealFIFOOptions<TestObj> = {}): RealFIFO<TestObj> {
  return new RealFIFO<TestObj>({ keyFunction, knownObjects: literalLister([]), ...options });
}

/** client-go's Pop(queue) helper. */
function pop(f: RealFIFO<TestObj>): Promise<Deltas<TestObj>> {
  return f.pop(() => undefined);
}

/** client-go's testRealFIFOPop: the object of the next pop. */
async function popObj(f: RealFIFO<TestObj>): Promise<TestObj> {
  const deltas = await pop(f);
  expect(deltas).toHaveLength(1);
  return deltas[0]!.object as TestObj;
}

/** client-go's popN + collapseDeltas: pop `count` items and concatenate their deltas. */
async function popAll(f: RealFIFO<TestObj>): Promise<Deltas<TestObj>> {
  const out: Deltas<TestObj> = [];
  while (f.length() > 0) out.push(...(await pop(f)));
  return out;
}

const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('RealFIFO', () => {
  // TestRealFIFO_replaceWithDeleteDeltaIn
  it('keeps a create after a queued delete: [Deleted(old), Replaced(new)]', () => {
    const oldObj = mk('foo', 1);
    const newObj = mk('foo', 2);
    const f = newFifo({ knownObjects: literalLister([oldObj]) });
    f.delete(oldObj);
    f.replace([newObj], '');
    expect(f.listDeltas()).toStrictEqual([
      { type: 'Deleted', object: oldObj },
      { type: 'Replaced', object: newObj },
    ]);
  });

  // TestRealFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue
  describe('replace deletes objects that are only in the queue', () => {
    const obj = mk('foo', 2);
    const objV2 = mk('foo', 3);
    const table: Array<{ name: string; ops: (f: RealFIFO<TestObj>) => void; expected: Deltas<TestObj> }> = [
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
          { type: 'Replaced', object: obj },
          { type: 'Replaced', object: obj },
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
      it(tt.name, async () => {
        const f = newFifo();
        tt.ops(f);
        expect(await popAll(f)).toStrictEqual(tt.expected);
        expect(f.length()).toBe(0);
      });
    }
  });

  // TestRealFIFO_addUpdate
  it('queues Add, Update and Delete as three separate entries, popped in order', async () => {
    const f = newFifo();
    f.add(mk('foo', 10));
    f.update(mk('foo', 12));
    f.delete(mk('foo', 15));
    expect(f.listDeltas()).toStrictEqual([
      { type: 'Added', object: mk('foo', 10) },
      { type: 'Updated', object: mk('foo', 12) },
      { type: 'Deleted', object: mk('foo', 15) },
    ]);
    expect(f.listKeys()).toEqual(['foo']);
    expect((await popObj(f)).val).toBe(10);
    expect((await popObj(f)).val).toBe(12);
    expect((await popObj(f)).val).toBe(15);
    expect(f.length()).toBe(0);
  });

  // TestRealFIFO_transformer
  it('transforms every object exactly once and keeps every event, tombstones untransformed', async () => {
    interface RvX {
      rv: number;
      xfrm: number;
    }
    const mkx = (name: string, rv: number): TestObj => mk(name, { rv, xfrm: 0 } satisfies RvX);
    let calls = 0;
    const transformer = (obj: TestObj): TestObj => {
      if (obj instanceof DeletedFinalStateUnknown) throw new Error('transformer called with a tombstone');
      calls++;
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
    expect(calls).toBe(5);
    const x = (name: string, rv: number): TestObj => mk(name, { rv, xfrm: 1 });
    const expected: Delta<TestObj>[] = [
      { type: 'Added', object: x('foo', 10) },
      { type: 'Added', object: x('bar', 11) },
      { type: 'Updated', object: x('foo', 12) },
      { type: 'Deleted', object: x('foo', 15) },
      { type: 'Deleted', object: tomb('bar', x('bar', 11)) },
      { type: 'Added', object: x('bar', 16) },
      { type: 'Deleted', object: tomb('bar', x('bar', 16)) },
    ];
    expect(f.listDeltas()).toStrictEqual(expected);
    for (const e of expected) expect(await pop(f)).toStrictEqual([e]);
  });

  // TestRealFIFO_enqueueingNoLister
  it('queues every event, including a delete of an unknown key', async () => {
    const f = newFifo();
    f.add(mk('foo', 10));
    f.update(mk('bar', 15));
    f.add(mk('qux', 17));
    f.delete(mk('qux', 18));
    f.delete(mk('baz', 20));
    for (const expected of [10, 15, 17, 18, 20]) expect((await popObj(f)).val).toBe(expected);
    expect(f.length()).toBe(0);
  });

  // TestRealFIFO_enqueueingWithLister
  it('queues a delete of a key that only knownObjects has', async () => {
    const f = newFifo({ knownObjects: literalLister([mk('foo', 5), mk('bar', 6), mk('baz', 7)]) });
    f.add(mk('foo', 10));
    f.update(mk('bar', 15));
    f.delete(mk('baz', 20));
    for (const expected of [10, 15, 20]) expect((await popObj(f)).val).toBe(expected);
    expect(f.length()).toBe(0);
  });

  // TestRealFIFO_addReplace
  it('delivers both an Add and a later Replace of the same key', async () => {
    const f = newFifo();
    f.add(mk('foo', 10));
    f.replace([mk('foo', 15)], '0');
    expect((await popObj(f)).val).toBe(10);
    expect((await popObj(f)).val).toBe(15);
    expect(f.length()).toBe(0);
  });

  // TestRealFIFO_ResyncNonExisting
  it('does not queue a Sync for a key with a pending delete', () => {
    const f = newFifo({ knownObjects: literalLister([mk('foo', 5)]) });
    f.delete(mk('foo', 10));
    f.resync();
    expect(f.listDeltas()).toStrictEqual([{ type: 'Deleted', object: mk('foo', 10) }]);
  });

  // TestRealFIFO_Resync
  it('queues one Sync per known object with nothing queued', () => {
    const f = newFifo({ knownObjects: literalLister([mk('foo', 5)]) });
    f.resync();
    expect(f.listDeltas()).toStrictEqual([{ type: 'Sync', object: mk('foo', 5) }]);
  });

  it('does nothing on resync without knownObjects', () => {
    const f = new RealFIFO<TestObj>({ keyFunction });
    f.resync();
    expect(f.length()).toBe(0);
  });

  // TestRealFIFO_DeleteExistingNonPropagated
  it('queues a delete after an add of an unknown key', () => {
    const f = newFifo();
    f.add(mk('foo', 5));
    f.delete(mk('foo', 6));
    const items = f.listDeltas();
    expect(items).toHaveLength(2);
    expect(items[1]!.type).toBe('Deleted');
  });

  // TestRealFIFO_ReplaceMakesDeletions
  describe('replace queues deletions before the replaced items', () => {
    const known = (): KeyListerGetter<TestObj> => literalLister([mk('foo', 5), mk('bar', 6), mk('baz', 7)]);
    const expectPops = async (f: RealFIFO<TestObj>, expected: Delta<TestObj>[]): Promise<void> => {
      for (const e of expected) expect(await pop(f)).toStrictEqual([e]);
      expect(f.length()).toBe(0);
    };

    it('with a pre-existing Delete', async () => {
      const f = newFifo({ knownObjects: known() });
      f.delete(mk('baz', 10));
      f.replace([mk('foo', 5)], '0');
      await expectPops(f, [
        { type: 'Deleted', object: mk('baz', 10) },
        { type: 'Deleted', object: tomb('bar', mk('bar', 6)) },
        { type: 'Replaced', object: mk('foo', 5) },
      ]);
    });

    it('starting with an Add instead of a Delete', async () => {
      const f = newFifo({ knownObjects: known() });
      f.add(mk('baz', 10));
      f.replace([mk('foo', 5)], '0');
      await expectPops(f, [
        { type: 'Added', object: mk('baz', 10) },
        { type: 'Deleted', object: tomb('baz', mk('baz', 10)) },
        { type: 'Deleted', object: tomb('bar', mk('bar', 6)) },
        { type: 'Replaced', object: mk('foo', 5) },
      ]);
    });

    it('deleting and recreating in the queue: the tombstone carries the newest queued object', async () => {
      const f = newFifo({ knownObjects: known() });
      f.delete(mk('bar', 6));
      f.add(mk('bar', 100));
      f.replace([mk('foo', 5)], '0');
      await expectPops(f, [
        { type: 'Deleted', object: mk('bar', 6) },
        { type: 'Added', object: mk('bar', 100) },
        { type: 'Deleted', object: tomb('bar', mk('bar', 100)) },
        { type: 'Deleted', object: tomb('baz', mk('baz', 7)) },
        { type: 'Replaced', object: mk('foo', 5) },
      ]);
    });

    it('syncing first: deletes come first, then replaced items in list order, across all keys', async () => {
      const f = newFifo({ knownObjects: known() });
      f.replace([mk('bar', 100), mk('foo', 5)], '0');
      f.replace([mk('foo', 5)], '0');
      await expectPops(f, [
        { type: 'Deleted', object: tomb('baz', mk('baz', 7)) },
        { type: 'Replaced', object: mk('bar', 100) },
        { type: 'Replaced', object: mk('foo', 5) },
        { type: 'Deleted', object: tomb('bar', mk('bar', 100)) },
        { type: 'Replaced', object: mk('foo', 5) },
      ]);
    });

    it('with empty knownObjects', async () => {
      const f = newFifo();
      f.add(mk('baz', 10));
      f.replace([mk('foo', 5)], '0');
      await expectPops(f, [
        { type: 'Added', object: mk('baz', 10) },
        { type: 'Deleted', object: tomb('baz', mk('baz', 10)) },
        { type: 'Replaced', object: mk('foo', 5) },
      ]);
    });
  });

  // TestRealFIFO_ReplaceMakesDeletionsReplaced
  it('emits Replaced for listed objects and tombstones known ones missing from the list', async () => {
    const f = newFifo({ knownObjects: literalLister([mk('foo', 5), mk('bar', 6), mk('baz', 7)]) });
    f.delete(mk('baz', 10));
    f.replace([mk('foo', 6)], '0');
    expect(await pop(f)).toStrictEqual([{ type: 'Deleted', object: mk('baz', 10) }]);
    expect(await pop(f)).toStrictEqual([{ type: 'Deleted', object: tomb('bar', mk('bar', 6)) }]);
    expect(await pop(f)).toStrictEqual([{ type: 'Replaced', object: mk('foo', 6) }]);
  });

  // TestRealFIFO_UpdateResyncRace
  it('does not queue a stale Sync after a pending Update', async () => {
    const f = newFifo({ knownObjects: literalLister([mk('foo', 5)]) });
    f.update(mk('foo', 6));
    f.resync();
    expect(await pop(f)).toStrictEqual([{ type: 'Updated', object: mk('foo', 6) }]);
    expect(f.length()).toBe(0);
  });

  // TestRealFIFO_HasSyncedCorrectOnDeletion
  it('counts the synthetic deletes in the initial population and pops them first, as initial', async () => {
    const f = newFifo({ knownObjects: literalLister([mk('foo', 5), mk('bar', 6), mk('baz', 7)]) });
    f.replace([mk('foo', 5)], '0');
    const expected: Delta<TestObj>[] = [
      { type: 'Deleted', object: tomb('bar', mk('bar', 6)) },
      { type: 'Deleted', object: tomb('baz', mk('baz', 7)) },
      { type: 'Replaced', object: mk('foo', 5) },
    ];
    for (const e of expected) {
      expect(f.hasSynced()).toBe(false);
      let initial: boolean | undefined;
      const deltas = await f.pop((_d, isInInitialList) => {
        initial = isInInitialList;
      });
      expect(deltas).toStrictEqual([e]);
      expect(initial).toBe(true);
    }
    expect(f.hasSynced()).toBe(true);
  });

  // TestRealFIFO_detectLineJumpers
  it('delivers every event in order across keys', async () => {
    const f = newFifo();
    f.add(mk('foo', 10));
    f.add(mk('bar', 1));
    f.add(mk('foo', 11));
    f.add(mk('foo', 13));
    f.add(mk('zab', 30));
    expect((await popObj(f)).val).toBe(10);
    f.add(mk('foo', 14));
    for (const expected of [1, 11, 13, 30, 14]) expect((await popObj(f)).val).toBe(expected);
  });

  // TestRealFIFO_HasSynced
  it('the initial population is everything queued by the first replace, earlier resync entries included', async () => {
    const f = newFifo({ knownObjects: literalLister([mk('k', 0)]) });
    f.resync(); // Sync(k) queued before any add: the queue is not populated yet
    f.replace([mk('a', 1)], '0'); // + Deleted(tombstone k) + Replaced(a)
    expect(f.length()).toBe(3);
    for (let i = 0; i < 3; i++) {
      expect(f.hasSynced()).toBe(false);
      await pop(f);
    }
    expect(f.hasSynced()).toBe(true);
  });

  // TestRealFIFO_PopMultipleDeltaInBatch
  describe('popBatch', () => {
    async function batchOf(
      f: RealFIFO<TestObj>,
      maxBatch?: number,
    ): Promise<{ vals: unknown[]; initial: boolean; deltas: Deltas<TestObj>[] }> {
      let initial: boolean | undefined;
      const deltas = await f.popBatch(
        (batch, isInInitialList) => {
          initial = isInInitialList;
          for (const d of batch) expect(d).toHaveLength(1);
        },
        maxBatch === undefined ? {} : { maxBatch },
      );
      return { vals: deltas.map((d) => (d[0]!.object as TestObj).val), initial: initial!, deltas };
    }

    it('respects the batch size, never mixes initial and later items, and keeps keys unique', async () => {
      const f = newFifo();
      f.replace(
        ['a', 'b', 'c', 'd', 'e'].map((n) => mk(n, n)),
        '1',
      );
      f.add(mk('f', 'f'));
      f.update(mk('a', 'a2'));
      f.add(mk('g', 'g'));
      f.update(mk('a', 'a3'));

      expect(await batchOf(f, 3)).toMatchObject({ vals: ['a', 'b', 'c'], initial: true });
      expect(f.hasSynced()).toBe(false);
      expect(await batchOf(f, 10)).toMatchObject({ vals: ['d', 'e'], initial: true }); // stops at the initial boundary
      expect(f.hasSynced()).toBe(true);
      expect(await batchOf(f, 10)).toMatchObject({ vals: ['f', 'a2', 'g'], initial: false }); // stops before a duplicate key
      expect(await batchOf(f, 10)).toMatchObject({ vals: ['a3'], initial: false });
      expect(f.length()).toBe(0);
    });

    it('uses batchSize as the default maximum', async () => {
      const f = newFifo({ batchSize: 2 });
      for (const n of ['a', 'b', 'c']) f.add(mk(n, n));
      expect((await batchOf(f)).vals).toEqual(['a', 'b']);
      expect((await batchOf(f)).vals).toEqual(['c']);
    });

    it('pops a whole large batch in order', async () => {
      const f = newFifo();
      for (let i = 0; i < 2500; i++) f.add(mk(`k${i}`, i));
      const first = await batchOf(f);
      expect(first.vals).toHaveLength(1000);
      expect(first.vals[999]).toBe(999);
      expect((await batchOf(f, 5000)).vals).toHaveLength(1500);
    });

    it('rejects an invalid maxBatch or batchSize with ERR_INVALID_OPTION', async () => {
      const f = newFifo();
      f.add(mk('a', 1));
      await expect(f.popBatch(() => undefined, { maxBatch: 0 })).rejects.toMatchObject({
        code: ErrorCodes.INVALID_OPTION,
      });
      await expect(f.popBatch(() => undefined, { maxBatch: 1.5 })).rejects.toMatchObject({
        code: ErrorCodes.INVALID_OPTION,
      });
      expect(() => newFifo({ batchSize: -1 })).toThrow(
        expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
      );
      expect(f.length()).toBe(1);
    });

    it('puts the whole batch back at the head on RequeueError, counted as processed (client-go 1.36)', async () => {
      const f = newFifo();
      f.replace([mk('a', 1), mk('b', 2)], '1');
      f.add(mk('c', 3));
      await f.popBatch(() => {
        throw new RequeueError();
      });
      expect(f.listKeys()).toEqual(['a', 'b', 'c']);
      expect(f.hasSynced()).toBe(true);
      expect(await batchOf(f)).toMatchObject({ vals: [1, 2, 3], initial: false });
    });

    it('rejects on any other error and drops the batch', async () => {
      const f = newFifo();
      f.add(mk('a', 1));
      const boom = new Error('boom');
      await expect(f.popBatch(() => Promise.reject(boom))).rejects.toBe(boom);
      expect(f.length()).toBe(0);
    });

    // TestRealFIFO_PopBrokenItemsInBatch: keys are computed when an item is queued, so an item whose
    // key cannot be computed is refused by add() and never reaches a batch.
    it('refuses an unkeyable item at enqueue, so batches never contain one', async () => {
      const f = new RealFIFO<KubeObject>();
      f.add({ metadata: { name: 'a' } });
      expect(() => f.add({ metadata: {} })).toThrow(expect.objectContaining({ code: ErrorCodes.KEY_FUNC }));
      f.add({ metadata: { name: 'b' } });
      const batch = await f.popBatch(() => undefined);
      expect(batch.map((d) => (d[0]!.object as KubeObject).metadata?.name)).toEqual(['a', 'b']);
    });
  });

  describe('process functions', () => {});

  it('replace is atomic: an unkeyable item leaves the queue unchanged', () => {
    const f = new RealFIFO<KubeObject>();
    f.add({ metadata: { name: 'keep' } });
    expect(() => f.replace([{ metadata: { name: 'x' } }, {}], '1')).toThrow(
      expect.objectContaining({ code: ErrorCodes.KEY_FUNC }),
    );
    expect(f.length()).toBe(1);
  });

  it('transforms replaced items but not synthetic deletes or resynced objects', async () => {
    const names: string[] = [];
    const f = newFifo({
      knownObjects: literalLister([mk('k', 0)]),
      transformer: (o) => {
        names.push(o.name);
        return o;
      },
    });
    f.replace([mk('a', 1)], '1');
    expect(f.listDeltas()).toStrictEqual([
      { type: 'Deleted', object: tomb('k', mk('k', 0)) },
      { type: 'Replaced', object: mk('a', 1) },
    ]);
    await popAll(f);
    f.resync();
    expect(f.listDeltas()).toStrictEqual([{ type: 'Sync', object: mk('k', 0) }]);
    expect(names).toEqual(['a']);
  });

  // TestReplaceEvents (controller_test.go): the events a consumer sees for a replace, against the
  // store it maintains: synthetic deletes first (before any update), then Replaced items in list
  // order, each applied after everything queued before the replace.
  describe('replace events seen by a consumer', () => {
    interface Pod extends KubeObject {
      metadata: { name: string; namespace: string; resourceVersion: string; labels?: Record<string, string> };
    }
    const pod = (name: string, rv: string, labels?: Record<string, string>): Pod => ({
      metadata: { name, namespace: 'default', resourceVersion: rv, ...(labels ? { labels } : {}) },
    });
    type Rec = { action: string; key: string; eventRV: string; storeRV: string };

    function setup(): {
      fifo: RealFIFO<Pod>;
      store: Map<string, Pod>;
      history: Rec[];
      drain: () => Promise<void>;
    } {
      const store = new Map<string, Pod>();
      const history: Rec[] = [];
      const fifo = new RealFIFO<Pod>({
        knownObjects: { listKeys: () => [...store.keys()], getByKey: (k) => store.get(k) },
      });
      const record = (action: string, obj: Pod | DeletedFinalStateUnknown<Pod>): void => {
        const key = deletionHandlingMetaNamespaceKeyFunc(obj);
        const o = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
        history.push({
          action,
          key,
          eventRV: o.metadata.resourceVersion,
          storeRV: store.get(key)?.metadata.resourceVersion ?? '',
        });
      };
      // client-go's processDeltas, against a Map store.
      const process = (deltas: Deltas<Pod>): void => {
        for (const d of deltas) {
          if (!isObjectDelta(d)) throw new Error(`unexpected ${d.type}`);
          const key = deletionHandlingMetaNamespaceKeyFunc(d.object);
          if (d.type === 'Deleted') {
            store.delete(key);
            record('delete', d.object);
          } else {
            const obj = d.object as Pod;
            const existed = store.has(key);
            store.set(key, obj);
            record(existed ? 'update' : 'add', obj);
          }
        }
      };
      const drain = async (): Promise<void> => {
        while (fifo.length() > 0) await fifo.pop(process);
      };
      return { fifo, store, history, drain };
    }

    // client-go's TestReplaceEvents cases run in packages/controller/src/processDeltas.atomic.test.ts,
    // in both modes, through this FIFO and processDeltas.

    it('queues the replace after items already queued and before items queued later', async () => {
      const { fifo, history, drain } = setup();
      fifo.add(pod('pod-1', '1'));
      await drain();
      history.length = 0;
      fifo.update(pod('pod-1', '2')); // queued, not yet processed
      fifo.add(pod('pod-9', '3')); // queued, missing from the list: gets a tombstone after it
      fifo.replace([pod('pod-1', '4')], '4');
      fifo.add(pod('pod-5', '5'));
      await drain();
      expect(history).toEqual([
        { action: 'update', key: 'default/pod-1', eventRV: '2', storeRV: '2' },
        { action: 'add', key: 'default/pod-9', eventRV: '3', storeRV: '3' },
        { action: 'delete', key: 'default/pod-9', eventRV: '3', storeRV: '' },
        { action: 'update', key: 'default/pod-1', eventRV: '4', storeRV: '4' },
        { action: 'add', key: 'default/pod-5', eventRV: '5', storeRV: '5' },
      ]);
    });

    it('lets no pop interleave with a replace', async () => {
      const { fifo } = setup();
      fifo.replace([], '0');
      const seen: number[] = [];
      // A consumer already waiting when the replace happens sees the whole replace queued.
      const popped = fifo.pop(() => {
        seen.push(fifo.length());
      });
      await nextTick();
      fifo.replace([pod('a', '1'), pod('b', '2'), pod('c', '3')], '3');
      await popped;
      expect(seen).toEqual([2]);
    });
  });
});
