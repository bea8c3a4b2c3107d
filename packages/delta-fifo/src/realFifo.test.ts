import { ErrorCodes } from '@kinformer/core';
import type { KubeObject } from '@kinformer/core';
import { pod } from '@kinformer/test-tools';
import type { Pod } from '@kinformer/test-tools';
import { keyFunction, literalLister, mk, nextTick } from './fifo.test.helpers.js';
import type { TestObj } from './fifo.test.helpers.js';
import type { Deltas } from './queue.js';
import { RealFIFO } from './realFifo.js';
import type { RealFIFOOptions } from './realFifo.js';
import { RequeueError } from './requeueError.js';

// RealFIFO's own API (listDeltas, popBatch) and the replace events a consumer sees. What it shares
// with DeltaFIFO and AtomicFIFO, and the cases client-go runs against both logs (replace, resync,
// enqueueing, line jumpers, transformer), are rows of fifo.scenarios.test.ts.

function newFifo(options: RealFIFOOptions<TestObj> = {}): RealFIFO<TestObj> {
  return new RealFIFO<TestObj>({ keyFunction, knownObjects: literalLister([]), ...options });
}

describe('RealFIFO', () => {
  // TestRealFIFO_addUpdate (what pops hand out: fifo.scenarios.test.ts)
  it('listDeltas shows every queued delta in order, listKeys each queued key once', () => {
    const f = newFifo();
    const [foo10, bar11, foo12] = [mk('foo', 10), mk('bar', 11), mk('foo', 12)];
    f.add(foo10);
    f.add(bar11);
    f.delete(foo12);
    expect(f.listDeltas().map((d) => [d.type, d.object])).toStrictEqual([
      ['Added', foo10],
      ['Added', bar11],
      ['Deleted', foo12],
    ]);
    expect(f.listKeys()).toEqual(['foo', 'bar']);
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

  it('lets no pop interleave with a replace', async () => {
    const fifo = new RealFIFO<Pod>();
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
  // What a consumer sees for a replace queued among other events (client-go's TestReplaceEvents):
  // packages/controller/src/processDeltas.atomic.test.ts, through this FIFO and processDeltas.
});
