import { ErrorCodes } from '@kinformer/core';
import { DeltaFIFO } from './deltaFifo.js';
import type { DeltaFIFOOptions } from './deltaFifo.js';
import { keyFunction, literalLister, mk, nextTick, pop, popNewest, tomb } from './fifo.test.helpers.js';
import type { TestObj } from './fifo.test.helpers.js';
import type { Delta } from './queue.js';
import { RequeueError } from './requeueError.js';

// DeltaFIFO's own rules (one entry a key, its deltas merged and deduplicated, addIfNotPresent).
// What it shares with RealFIFO and AtomicFIFO, and the cases client-go runs against both queues
// (replace, resync, enqueueing, line jumpers, transformer), are rows of fifo.scenarios.test.ts.

function newFifo(options: DeltaFIFOOptions<TestObj> = {}): DeltaFIFO<TestObj> {
  return new DeltaFIFO<TestObj>({ keyFunction, ...options });
}

/** Pops `f`'s head and re-queues it a tick later (`RequeueError`), so the test can change the queue meanwhile. */
function popAndRequeue(f: DeltaFIFO<TestObj>): Promise<unknown> {
  return f.pop(async () => {
    await nextTick();
    throw new RequeueError();
  });
}

describe('DeltaFIFO', () => {
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
      const popped = popAndRequeue(f);
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
      const popped = popAndRequeue(f);
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
      const gp = popAndRequeue(g);
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
