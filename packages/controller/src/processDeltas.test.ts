import { newIndexer, newStore } from '@kinformer/cache';
import { DeletedFinalStateUnknown } from '@kinformer/core';
import { DeltaFIFO } from '@kinformer/delta-fifo';
import type { Deltas } from '@kinformer/delta-fifo';
import { processDeltas, processDeltasBatch } from './processDeltas.js';
import type { ResourceEventHandler } from './resourceEventHandler.js';
import { filteringResourceEventHandler } from './resourceEventHandler.js';
import { deferred, keyOf, pod } from '@kinformer/test-tools';
import type { Pod } from '@kinformer/test-tools';

type Event = [string, ...unknown[]];

function recorder(log: Event[], extra: Partial<ResourceEventHandler<Pod>> = {}): ResourceEventHandler<Pod> {
  return {
    onAdd: (obj, initial) => void log.push(['add', keyOf(obj), obj.metadata?.resourceVersion, initial]),
    onUpdate: (oldObj, newObj) =>
      void log.push([
        'update',
        keyOf(newObj),
        oldObj.metadata?.resourceVersion,
        newObj.metadata?.resourceVersion,
      ]),
    onDelete: (obj) =>
      void log.push([
        'delete',
        obj instanceof DeletedFinalStateUnknown ? `tombstone:${obj.key}` : keyOf(obj),
      ]),
    ...extra,
  };
}

describe('processDeltas', () => {
  it('adds absent keys and updates present ones with the old object, whatever the delta type', () => {
    const store = newStore<Pod>();
    const log: Event[] = [];
    const deltas: Deltas<Pod> = [
      { type: 'Updated', object: pod('a', '1') }, // absent → add
      { type: 'Added', object: pod('a', '2') }, // present → update(1 → 2)
      { type: 'Sync', object: pod('a', '2') },
      { type: 'Replaced', object: pod('b', '3') },
    ];
    expect(processDeltas(recorder(log), store, deltas, true)).toBeUndefined();
    expect(log).toEqual([
      ['add', 'default/a', '1', true],
      ['update', 'default/a', '1', '2'],
      ['update', 'default/a', '2', '2'],
      ['add', 'default/b', '3', true],
    ]);
    expect(store.listKeys().sort()).toEqual(['default/a', 'default/b']);
  });

  // client-go TestDeletionHandlingObjectToName: a tombstone is keyed by its `key`, so the store deletes it.
  it('deletes, calling onDelete even for a key the store does not hold, and accepts tombstones', () => {
    const store = newStore<Pod>();
    store.add(pod('a', '1'));
    store.add(pod('b', '1'));
    const log: Event[] = [];
    void processDeltas(
      recorder(log),
      store,
      [
        { type: 'Deleted', object: pod('a', '2') },
        { type: 'Deleted', object: new DeletedFinalStateUnknown('default/b', pod('b', '1')) },
        { type: 'Deleted', object: pod('never-stored', '3') },
      ],
      false,
    );
    expect(log).toEqual([
      ['delete', 'default/a'],
      ['delete', 'tombstone:default/b'],
      ['delete', 'default/never-stored'],
    ]);
    expect(store.size()).toBe(0);
  });

  it('writes the store before calling the handler', () => {
    const store = newStore<Pod>();
    const seen: Array<string | undefined> = [];
    const handler: ResourceEventHandler<Pod> = {
      onAdd: (obj) => void seen.push(store.get(obj)?.metadata?.resourceVersion),
      onUpdate: (_old, obj) => void seen.push(store.get(obj)?.metadata?.resourceVersion),
      onDelete: (obj) => void seen.push(store.get(obj as Pod) === undefined ? 'gone' : 'still there'),
    };
    void processDeltas(
      handler,
      store,
      [
        { type: 'Added', object: pod('a', '1') },
        { type: 'Updated', object: pod('a', '2') },
        { type: 'Deleted', object: pod('a', '2') },
      ],
      false,
    );
    expect(seen).toEqual(['1', '2', 'gone']);
  });

  it('awaits an async handler before the next delta and returns a promise', async () => {
    const store = newStore<Pod>();
    const log: string[] = [];
    const { promise: gate, resolve: release } = deferred();
    const handler: ResourceEventHandler<Pod> = {
      onAdd: async (obj) => {
        log.push(`start ${keyOf(obj)}`);
        if (obj.metadata?.name === 'a') await gate;
        log.push(`end ${keyOf(obj)}`);
      },
    };
    const result = processDeltas(
      handler,
      store,
      [
        { type: 'Added', object: pod('a', '1') },
        { type: 'Added', object: pod('b', '1') },
      ],
      false,
    );
    expect(result).toBeInstanceOf(Promise);
    await Promise.resolve();
    expect(log).toEqual(['start default/a']); // b's handler waits for a's…
    expect(store.get(pod('b', '1'))).toBeDefined(); // …but b is in the store already (see the next test)
    release();
    await result;
    expect(log).toEqual(['start default/a', 'end default/a', 'start default/b', 'end default/b']);
  });

  // The queue reads the store (its knownObjects) on resync: a delta popped but not yet in the store
  // while a handler is awaited would be re-delivered from the stale cache and overwrite the newer one.
  it('never lets a resync during an async handler move the store back to an older version (DeltaFIFO)', async () => {
    const store = newStore<Pod>();
    const fifo = new DeltaFIFO<Pod>({ knownObjects: store });
    const log: Event[] = [];
    const { promise: gate, resolve: release } = deferred();
    const handler = recorder(log, {
      onUpdate: async (oldObj, newObj) => {
        log.push([
          'update',
          keyOf(newObj),
          oldObj.metadata?.resourceVersion,
          newObj.metadata?.resourceVersion,
        ]);
        if (newObj.metadata?.resourceVersion === '2') await gate;
      },
    });
    fifo.add(pod('a', '1'));
    await fifo.pop((deltas, initial) => processDeltas(handler, store, deltas, initial));
    fifo.update(pod('a', '2'));
    fifo.update(pod('a', '3')); // one key: popped as one item [Updated@2, Updated@3]
    const popping = fifo.pop((deltas, initial) => processDeltas(handler, store, deltas, initial));
    await Promise.resolve();
    fifo.resync(); // while the handler of a@2 is awaited
    release();
    await popping;
    while (fifo.length() > 0)
      await fifo.pop((deltas, initial) => processDeltas(handler, store, deltas, initial));
    expect(store.get(pod('a', ''))?.metadata?.resourceVersion).toBe('3');
    expect(log).toEqual([
      ['add', 'default/a', '1', false],
      ['update', 'default/a', '1', '2'],
      ['update', 'default/a', '2', '3'],
      ['update', 'default/a', '3', '3'], // the resync re-delivers the newest version
    ]);
  });

  it('applies a batch as one transaction: a refused entry is skipped, the others applied and notified, then ERR_TRANSACTION', async () => {
    const store = newIndexer<Pod>(undefined, {
      poison: (obj) => {
        if (obj.spec?.note === 'poison') throw new Error('poisoned');
        return [];
      },
    });
    const log: string[] = [];
    const handler: ResourceEventHandler<Pod> = {
      onAdd: async (obj) => {
        await Promise.resolve();
        log.push(keyOf(obj));
      },
    };
    const result = processDeltasBatch(
      handler,
      store,
      [
        [{ type: 'Added', object: pod('a', '1') }],
        [{ type: 'Added', object: pod('b', '1') }],
        [{ type: 'Added', object: pod('c', '1', 'default', { spec: { note: 'poison' } }) }],
        [{ type: 'Added', object: pod('d', '1') }],
      ],
      false,
    );
    await expect(result).rejects.toMatchObject({
      code: 'ERR_TRANSACTION',
      successfulIndices: [0, 1, 3],
      message: expect.stringContaining('failed to execute (1/4) transactions'),
    });
    expect(log).toEqual(['default/a', 'default/b', 'default/d']);
    expect(store.listKeys().sort()).toEqual(['default/a', 'default/b', 'default/d']);
  });

  // client-go TestProcessDeltasInBatch: only the applied entries of a transaction reach the handler.
  describe('a batch is one store transaction (client-go TestProcessDeltasInBatch)', () => {
    const cm = (n: number): Pod => pod(`testname${n}`, '1', 'testnamespace');
    it.each([
      {
        name: 'all transaction succeeding should works',
        objects: [1],
        failing: [],
        received: [1],
        error: undefined,
      },
      {
        name: 'all transaction failing should not trigger listener',
        objects: [1],
        failing: [1],
        received: [],
        error: 'failed to execute (1/1) transactions',
      },
      {
        name: 'partial transaction failing should only trigger successful events to listener #1',
        objects: [1, 2],
        failing: [2],
        received: [1],
        error: 'failed to execute (1/2) transactions',
      },
      {
        name: 'partial transaction failing should only trigger successful events to listener #2',
        objects: [1, 2, 3],
        failing: [2],
        received: [1, 3],
        error: 'failed to execute (1/3) transactions',
      },
    ])('$name', ({ objects, failing, received, error }) => {
      const failingNames = new Set(failing.map((n) => `testname${n}`));
      // The mock transaction store of client-go: an index function refuses the failing objects.
      const store = newIndexer<Pod>(undefined, {
        failing: (obj) => {
          if (failingNames.has(obj.metadata?.name ?? '')) throw new Error('failing object');
          return [];
        },
      });
      const seen: string[] = [];
      const handler: ResourceEventHandler<Pod> = {
        onAdd: (obj) => void seen.push(keyOf(obj)),
        onUpdate: (_old, obj) => void seen.push(keyOf(obj)),
        onDelete: (obj) => void seen.push(keyOf(obj as Pod)),
      };
      const batch = objects.map((n): Deltas<Pod> => [{ type: 'Added', object: cm(n) }]);
      // A batch of one goes the single-item way (client-go's processSingle), which also skips and throws.
      const run = (): unknown => processDeltasBatch(handler, store, batch, true);
      if (error === undefined) expect(run).not.toThrow();
      else if (objects.length > 1) expect(run).toThrow(error);
      else expect(run).toThrow();
      expect(seen).toEqual(received.map((n) => `testnamespace/testname${n}`));
      expect(store.listKeys().sort()).toEqual(received.map((n) => `testnamespace/testname${n}`));
    });

    it('turns present keys into updates and deletes into deletes, in batch order', () => {
      const store = newStore<Pod>();
      store.add(pod('a', '1'));
      store.add(pod('b', '1'));
      const log: Event[] = [];
      const transactions: number[] = [];
      const transaction = store.transaction.bind(store);
      store.transaction = (txns) => {
        transactions.push(txns.length);
        transaction(txns);
      };
      const result = processDeltasBatch(
        recorder(log),
        store,
        [
          [{ type: 'Updated', object: pod('a', '2') }],
          [{ type: 'Deleted', object: pod('b', '1') }],
          [{ type: 'Sync', object: pod('c', '1') }],
        ],
        false,
      );
      expect(result).toBeUndefined(); // synchronous handlers: applied synchronously
      expect(transactions).toEqual([3]);
      expect(log).toEqual([
        ['update', 'default/a', '1', '2'],
        ['delete', 'default/b'],
        ['add', 'default/c', '1', false],
      ]);
      expect(store.listKeys().sort()).toEqual(['default/a', 'default/c']);
    });
  });

  it('stops at the first handler error and propagates it (sync and async)', async () => {
    const store = newStore<Pod>();
    const boom = new Error('boom');
    const syncHandler: ResourceEventHandler<Pod> = {
      onAdd: () => {
        throw boom;
      },
    };
    expect(() =>
      processDeltas(
        syncHandler,
        store,
        [
          { type: 'Added', object: pod('a', '1') },
          { type: 'Added', object: pod('b', '1') },
        ],
        false,
      ),
    ).toThrow(boom);
    expect(store.listKeys()).toEqual(['default/a']); // written before the handler, b never reached

    const asyncHandler: ResourceEventHandler<Pod> = { onAdd: () => Promise.reject(boom) };
    await expect(
      processDeltas(asyncHandler, newStore<Pod>(), [{ type: 'Added', object: pod('c', '1') }], false),
    ).rejects.toBe(boom);
  });
});

describe('filteringResourceEventHandler (client-go FilteringResourceEventHandler)', () => {
  it('forwards adds/deletes that pass and turns updates into add/delete when the filter result changes', () => {
    const log: Event[] = [];
    const onNode1 = (obj: Pod | DeletedFinalStateUnknown<Pod>): boolean =>
      !(obj instanceof DeletedFinalStateUnknown) && obj.spec?.nodeName === 'n1';
    const handler = filteringResourceEventHandler(onNode1, recorder(log));
    const on1 = (rv: string): Pod => pod('a', rv, 'default', { spec: { nodeName: 'n1' } });
    const on2 = (rv: string): Pod => pod('a', rv, 'default', { spec: { nodeName: 'n2' } });
    void handler.onAdd?.(on1('1'), true);
    void handler.onAdd?.(on2('1'), true);
    void handler.onUpdate?.(on1('1'), on1('2'));
    void handler.onUpdate?.(on1('2'), on2('3'));
    void handler.onUpdate?.(on2('3'), on1('4'));
    void handler.onUpdate?.(on2('4'), on2('5'));
    void handler.onDelete?.(on1('6'));
    void handler.onDelete?.(new DeletedFinalStateUnknown('default/a', on1('6')));
    expect(log).toEqual([
      ['add', 'default/a', '1', true],
      ['update', 'default/a', '1', '2'],
      ['delete', 'default/a'],
      ['add', 'default/a', '4', false],
      ['delete', 'default/a'],
    ]);
  });
});
