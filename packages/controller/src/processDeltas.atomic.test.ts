import { newIndexer, newStore, TransactionError } from '@kinformer/cache';
import type { Store } from '@kinformer/cache';
import { DeletedFinalStateUnknown, deletionHandlingMetaNamespaceKeyFunc, ErrorCodes } from '@kinformer/core';
import { AtomicFIFO, RealFIFO } from '@kinformer/delta-fifo';
import type { Deltas } from '@kinformer/delta-fifo';
import { processDeltas, processDeltasBatch } from './processDeltas.js';
import type { ResourceEventHandler } from './resourceEventHandler.js';
import { keyOf, loggingHandler, pod } from '@kinformer/test-tools';
import type { Pod } from '@kinformer/test-tools';

// processDeltas applying the atomic-mode deltas of a RealFIFO (client-go 1.36 AtomicFIFO):
// ports of client-go's controller_test.go TestReplaceEvents, TestStoreResourceVersion and
// TestStoreResourceVersionWithNonMetaTransform (driven through the FIFO, as client-go's are), plus
// kinformer's own tests of processReplacedAllInfo's guarantees.

/** client-go's eventRecord: what the handler saw, and what the store held for that key right then. */
interface EventRecord {
  action: 'add' | 'update' | 'delete';
  key: string;
  eventRV: string;
  storeRV: string;
  initial?: boolean;
}

/** client-go's eventRecorder. */
function eventRecorder(store: Store<Pod>, history: EventRecord[]): ResourceEventHandler<Pod> {
  const record = (
    action: EventRecord['action'],
    obj: Pod | DeletedFinalStateUnknown<Pod>,
    initial?: boolean,
  ): void => {
    const key = deletionHandlingMetaNamespaceKeyFunc(obj);
    const o = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
    history.push({
      action,
      key,
      eventRV: o.metadata?.resourceVersion ?? '',
      storeRV: store.getByKey(key)?.metadata?.resourceVersion ?? '',
      ...(initial === undefined ? {} : { initial }),
    });
  };
  return {
    onAdd: (obj, initial) => record('add', obj, initial),
    onUpdate: (_, obj) => record('update', obj),
    onDelete: (obj) => record('delete', obj),
  };
}

/** A FIFO (atomic or not) feeding a store through processDeltas, and a drain. */
function pipeline(atomic: boolean): {
  fifo: RealFIFO<Pod> | AtomicFIFO<Pod>;
  store: Store<Pod>;
  history: EventRecord[];
  drain: () => Promise<void>;
} {
  const store = newStore<Pod>();
  const fifo = atomic
    ? new AtomicFIFO<Pod>({ keyFunction: deletionHandlingMetaNamespaceKeyFunc, emitDeltaTypeBookmark: true })
    : new RealFIFO<Pod>({ keyFunction: deletionHandlingMetaNamespaceKeyFunc, knownObjects: store });
  const history: EventRecord[] = [];
  const handler = eventRecorder(store, history);
  const drain = async (): Promise<void> => {
    while (fifo.length() > 0)
      await fifo.pop((deltas, initial) => processDeltas(handler, store, deltas, initial));
  };
  return { fifo, store, history, drain };
}

const withoutInitial = (h: EventRecord[]): EventRecord[] => h.map(({ initial: _, ...rest }) => rest);
/** client-go's sortDeleteEventsByKey: synthetic deletes of a replace are not ordered. */
function sortDeletes(h: EventRecord[]): EventRecord[] {
  const deletes = h.filter((e) => e.action === 'delete').sort((a, b) => a.key.localeCompare(b.key));
  const rest = h.filter((e) => e.action !== 'delete');
  return [...deletes, ...rest];
}

// The events a consumer sees for a replace queued among other events: synthetic deletes first
// (before any update), then Replaced items in list order, each applied after everything queued
// before the replace.
it('RealFIFO: a replace is applied after the items queued before it and before the items queued after it', async () => {
  const { fifo, history, drain } = pipeline(false);
  fifo.add(pod('pod-1', '1'));
  await drain();
  history.length = 0;
  fifo.update(pod('pod-1', '2')); // queued, not yet processed
  fifo.add(pod('pod-9', '3')); // queued, missing from the list: gets a tombstone after it
  fifo.replace([pod('pod-1', '4')], '4');
  fifo.add(pod('pod-5', '5'));
  await drain();
  expect(withoutInitial(history)).toEqual([
    { action: 'update', key: 'default/pod-1', eventRV: '2', storeRV: '2' },
    { action: 'add', key: 'default/pod-9', eventRV: '3', storeRV: '3' },
    { action: 'delete', key: 'default/pod-9', eventRV: '3', storeRV: '' },
    { action: 'update', key: 'default/pod-1', eventRV: '4', storeRV: '4' },
    { action: 'add', key: 'default/pod-5', eventRV: '5', storeRV: '5' },
  ]);
});

describe.each([false, true])('relist events, atomic %s (client-go TestReplaceEvents)', (atomic) => {
  const cases: Array<{ name: string; initial: Pod[]; replaced: Pod[]; rv: string; expected: EventRecord[] }> =
    [
      {
        name: 'Create with no initial objects',
        initial: [],
        replaced: [pod('pod-1', '1')],
        rv: '1',
        expected: [{ action: 'add', key: 'default/pod-1', eventRV: '1', storeRV: '1' }],
      },
      {
        name: 'Delete all objects',
        initial: [pod('pod-1', '1'), pod('pod-3', '2')],
        replaced: [],
        rv: '2',
        expected: [
          { action: 'delete', key: 'default/pod-1', eventRV: '1', storeRV: '' },
          { action: 'delete', key: 'default/pod-3', eventRV: '2', storeRV: '' },
        ],
      },
      {
        name: 'Create, update, delete',
        initial: [pod('pod-1', '1'), pod('pod-2', '2'), pod('pod-3', '3')],
        replaced: [pod('pod-1', '4'), pod('pod-2', '5'), pod('pod-4', '6')],
        rv: '6',
        expected: [
          { action: 'delete', key: 'default/pod-3', eventRV: '3', storeRV: '' },
          { action: 'update', key: 'default/pod-1', eventRV: '4', storeRV: '4' },
          { action: 'update', key: 'default/pod-2', eventRV: '5', storeRV: '5' },
          { action: 'add', key: 'default/pod-4', eventRV: '6', storeRV: '6' },
        ],
      },
    ];

  it('gives the same handler history and store contents in both modes, case after case on one pipeline', async () => {
    const { fifo, store, history, drain } = pipeline(atomic);
    fifo.replace([], '0');
    await drain();
    for (const tc of cases) {
      history.length = 0;
      for (const obj of tc.initial) fifo.add(obj);
      await drain();
      expect(history).toHaveLength(tc.initial.length);
      history.length = 0;
      fifo.replace(tc.replaced, tc.rv);
      await drain();
      const items = store.list().sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
      expect({ case: tc.name, items }).toEqual({ case: tc.name, items: tc.replaced });
      expect({ case: tc.name, history: sortDeletes(withoutInitial(history)) }).toEqual({
        case: tc.name,
        history: tc.expected,
      });
    }
  });

  it('marks the adds of the first relist as initial, later ones not (client-go TestResetWatch)', async () => {
    const { fifo, history, drain } = pipeline(atomic);
    fifo.replace([pod('pod-1', '1')], '1');
    await drain();
    fifo.replace([pod('pod-1', '1'), pod('pod-2', '2')], '2');
    await drain();
    expect(history.map((e) => [e.action, e.key, e.initial])).toEqual([
      ['add', 'default/pod-1', true],
      ['update', 'default/pod-1', undefined],
      ['add', 'default/pod-2', false],
    ]);
  });
});

describe('processDeltas with atomic deltas', () => {
  it('leaves the store at the list’s resourceVersion after a relist (non-atomic: the newest object’s)', async () => {
    const atomic = pipeline(true);
    atomic.fifo.replace([pod('a', '3'), pod('b', '5')], '10');
    await atomic.drain();
    expect(atomic.store.lastStoreSyncResourceVersion()).toBe('10');

    const nonAtomic = pipeline(false);
    nonAtomic.fifo.replace([pod('a', '3'), pod('b', '5')], '10');
    await nonAtomic.drain();
    expect(nonAtomic.store.lastStoreSyncResourceVersion()).toBe('5');
  });

  it('follows the events’ resourceVersions between relists (client-go TestStoreResourceVersion)', async () => {
    const { fifo, store, history, drain } = pipeline(true);
    fifo.replace([pod('pod-1', '1')], '1');
    await drain();
    expect(history).toEqual([
      { action: 'add', key: 'default/pod-1', eventRV: '1', storeRV: '1', initial: true },
    ]);
    fifo.update(
      pod('pod-1', '2', 'default', {
        metadata: { name: 'pod-1', namespace: 'default', resourceVersion: '2', labels: { foo: 'bar' } },
      }),
    );
    await drain();
    expect(store.lastStoreSyncResourceVersion()).toBe('2');
    fifo.delete(pod('pod-1', '3'));
    await drain();
    expect(store.lastStoreSyncResourceVersion()).toBe('3');
  });

  it('keeps the relist’s resourceVersion while objects carry none (client-go TestStoreResourceVersionWithNonMetaTransform)', async () => {
    // A transform that strips metadata: the store holds bare names.
    const keyFunction = (): string => 'pod-1';
    const store = newStore<string>(keyFunction);
    const fifo = new AtomicFIFO<string>({
      keyFunction,
      transformer: (obj) => (obj as unknown as Pod).metadata?.name ?? '',
    });
    const seen: string[] = [];
    const handler: ResourceEventHandler<string> = {
      onAdd: (o) => void seen.push(`add ${o}`),
      onUpdate: (_, o) => void seen.push(`update ${o}`),
    };
    const drain = async (): Promise<void> => {
      while (fifo.length() > 0) await fifo.pop((d, initial) => processDeltas(handler, store, d, initial));
    };
    fifo.replace([pod('pod-1', '1') as unknown as string], '1');
    await drain();
    expect(store.lastStoreSyncResourceVersion()).toBe('1');
    fifo.update(pod('pod-1', '2') as unknown as string);
    await drain();
    expect(store.lastStoreSyncResourceVersion()).toBe('1');
    fifo.replace([pod('pod-1', '3') as unknown as string], '3');
    await drain();
    expect(store.lastStoreSyncResourceVersion()).toBe('3');
    expect(seen).toEqual(['add pod-1', 'update pod-1', 'update pod-1']);
  });

  it('lets no reader see a half-applied relist: every handler call sees the whole list in the store and its indexes', () => {
    const indexer = newIndexer<Pod>(undefined, {
      byNode: (p) => (p.spec?.nodeName ? [p.spec.nodeName] : []),
    });
    indexer.add(pod('gone', '1', 'default', { spec: { nodeName: 'n1' } }));
    indexer.add(pod('moved', '2', 'default', { spec: { nodeName: 'n1' } }));
    const snapshots: string[] = [];
    const snapshot = (): void => {
      snapshots.push(
        [
          indexer.listKeys().sort().join(','),
          indexer.byIndex('byNode', 'n1').map(keyOf).sort().join(',') || '-',
          indexer.byIndex('byNode', 'n2').map(keyOf).sort().join(','),
          indexer.lastStoreSyncResourceVersion(),
        ].join(' | '),
      );
    };
    const deltas: Deltas<Pod> = [
      {
        type: 'ReplacedAll',
        object: {
          resourceVersion: '9',
          objects: [
            pod('moved', '7', 'default', { spec: { nodeName: 'n2' } }),
            pod('new', '8', 'default', { spec: { nodeName: 'n2' } }),
          ],
        },
      },
    ];
    const log: string[] = [];
    void processDeltas(loggingHandler(log, snapshot), indexer, deltas, false);
    expect(log).toEqual([
      'delete tombstone default/gone rv 1',
      'update default/moved 2->7',
      'add default/new false',
    ]);
    expect(new Set(snapshots)).toEqual(
      new Set(['default/moved,default/new | - | default/moved,default/new | 9']),
    );
  });

  it('calls onUpdate(obj, obj) for every stored object on SyncAll, and records a Bookmark’s resourceVersion', () => {
    const store = newStore<Pod>();
    store.add(pod('a', '1'));
    store.add(pod('b', '2'));
    const log: string[] = [];
    const handler: ResourceEventHandler<Pod> = {
      onUpdate: (old, o) => void log.push(`update ${keyOf(o)} ${old === o}`),
    };
    void processDeltas(handler, store, [{ type: 'SyncAll', object: {} }], false);
    void processDeltas(handler, store, [{ type: 'Bookmark', object: { resourceVersion: '42' } }], false);
    expect(log).toEqual(['update default/a true', 'update default/b true']);
    expect(store.lastStoreSyncResourceVersion()).toBe('42');
    expect(store.size()).toBe(2);
  });

  it('with an async handler: writes the whole relist at once, then makes the calls one by one, each awaited', async () => {
    const store = newStore<Pod>();
    store.add(pod('gone', '1'));
    const log: string[] = [];
    let inFlight = 0;
    const step = async (what: string): Promise<void> => {
      inFlight++;
      expect(inFlight).toBe(1);
      log.push(`${what} sees ${store.listKeys().sort().join(',')}`);
      await new Promise<void>((resolve) => setImmediate(resolve));
      inFlight--;
    };
    const handler: ResourceEventHandler<Pod> = {
      onAdd: (o) => step(`add ${keyOf(o)}`),
      onDelete: () => step('delete'),
    };
    const result = processDeltasBatch(
      handler,
      store,
      [
        [{ type: 'ReplacedAll', object: { resourceVersion: '5', objects: [pod('a', '2'), pod('b', '3')] } }],
        [{ type: 'Added', object: pod('c', '4') }],
      ],
      true,
    );
    expect(result).toBeInstanceOf(Promise);
    expect(store.listKeys().sort()).toEqual(['default/a', 'default/b', 'default/c']); // written at once
    await result;
    expect(log).toEqual([
      'delete sees default/a,default/b', // the call that went async: the rest was written after it
      'add default/a sees default/a,default/b,default/c',
      'add default/b sees default/a,default/b,default/c',
      'add default/c sees default/a,default/b,default/c',
    ]);
  });

  it('leaves the store as it was when its replace fails for a reason other than an index function', () => {
    const store = newStore<Pod>();
    store.add(pod('a', '1'));
    const broken = new Proxy(store, {
      get(target, prop: keyof Store<Pod>) {
        // A replace of a non-empty list fails, and so does a transaction: before, the fallback
        // emptied the store (replace([])) and then failed in its transaction.
        if (prop === 'replace')
          return (items: Pod[], rv: string): void => {
            if (items.length > 0) throw new Error('disk full');
            target.replace(items, rv);
          };
        if (prop === 'transaction')
          return (): void => {
            throw new Error('disk still full');
          };
        const value = target[prop];
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    expect(() =>
      processDeltas(
        {},
        broken,
        [{ type: 'ReplacedAll', object: { resourceVersion: '5', objects: [pod('b', '2')] } }],
        false,
      ),
    ).toThrow('disk full');
    expect(store.listKeys()).toEqual(['default/a']);
  });

  it('leaves out listed objects it cannot key, applies the rest, then throws a TransactionError', () => {
    const store = newStore<Pod>();
    const log: string[] = [];
    const unkeyable = { metadata: {} } as Pod;
    let thrown: unknown;
    try {
      void processDeltas(
        { onAdd: (o) => void log.push(`add ${keyOf(o)}`) },
        store,
        [
          {
            type: 'ReplacedAll',
            object: { resourceVersion: '7', objects: [pod('a', '1'), unkeyable, pod('b', '2')] },
          },
        ],
        true,
      );
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(TransactionError);
    expect(thrown).toMatchObject({
      code: ErrorCodes.TRANSACTION,
      successfulIndices: [0, 2],
      totalTransactions: 3,
    });
    expect(log).toEqual(['add default/a', 'add default/b']);
    expect(store.listKeys()).toEqual(['default/a', 'default/b']);
    expect(store.lastStoreSyncResourceVersion()).toBe('7');
  });

  it('leaves out listed objects an index function refuses (a stored one then counts as deleted), applies the rest', () => {
    const indexer = newIndexer<Pod>(undefined, {
      strict: (p) => {
        if (p.spec?.note === 'bad') throw new Error('refused');
        return [];
      },
    });
    indexer.add(pod('a', '1'));
    indexer.add(pod('b', '1'));
    const log: string[] = [];
    let thrown: unknown;
    try {
      void processDeltas(
        {
          onAdd: (o) => void log.push(`add ${keyOf(o)}`),
          onUpdate: (_, o) => void log.push(`update ${keyOf(o)}`),
          onDelete: (o) => void log.push(`delete ${deletionHandlingMetaNamespaceKeyFunc(o)}`),
        },
        indexer,
        [
          {
            type: 'ReplacedAll',
            object: {
              resourceVersion: '8',
              objects: [pod('a', '2', 'default', { spec: { note: 'bad' } }), pod('b', '2'), pod('c', '2')],
            },
          },
        ],
        false,
      );
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({
      code: ErrorCodes.TRANSACTION,
      successfulIndices: [1, 2],
      totalTransactions: 3,
    });
    expect(log).toEqual(['delete default/a', 'update default/b', 'add default/c']);
    expect(indexer.listKeys()).toEqual(['default/b', 'default/c']);
    expect(indexer.lastStoreSyncResourceVersion()).toBe('8');
  });

  // client-go 1.36's processReplacedAllInfo looks every listed object up before the replace, so it
  // would report 1->2, 1->3 (and two adds for a new key), while its non-atomic queue reports 1->2,
  // 2->3; its TestReplaceEvents requires both modes to give the same history. kinformer follows the
  // non-atomic history in both modes (an API server never lists a key twice; a custom lister may).
  it.each([
    { store: 'newStore', wrap: false },
    { store: 'a wrapped store (the entry-by-entry path)', wrap: true },
  ])(
    'reports a key listed twice as add (or update) then update, as the non-atomic modes do: $store',
    ({ wrap }) => {
      const plain = newStore<Pod>();
      plain.add(pod('a', '1'));
      const store: Store<Pod> = wrap ? delegatingStore(plain) : plain;
      const log: string[] = [];
      void processDeltas(
        {
          onAdd: (o) => void log.push(`add ${keyOf(o)}@${o.metadata?.resourceVersion}`),
          onUpdate: (old, o) =>
            void log.push(`${keyOf(o)} ${old.metadata?.resourceVersion}->${o.metadata?.resourceVersion}`),
        },
        store,
        [
          {
            type: 'ReplacedAll',
            object: {
              resourceVersion: '5',
              objects: [pod('a', '2'), pod('b', '3'), pod('a', '4'), pod('b', '5')],
            },
          },
        ],
        false,
      );
      expect(log).toEqual(['default/a 1->2', 'add default/b@3', 'default/a 2->4', 'default/b 3->5']);
      expect(store.getByKey('default/a')?.metadata?.resourceVersion).toBe('4');
      expect(store.getByKey('default/b')?.metadata?.resourceVersion).toBe('5');
    },
  );
});

// client-go does the same (processReplacedAllInfo and processDeltas pass what the store's Get returns
// as old): a list that reuses the stored objects (a custom lister, a cache-backed fake) gives
// onUpdate(obj, obj), as a resync does. Handlers compare resourceVersions, never identity; the
// shared informer then treats it as a resync (same resourceVersion) and only resyncing handlers get it.
describe('a relist whose list reuses the stored objects', () => {
  it('passes the same object as old and new, as client-go does', () => {
    const store = newStore<Pod>();
    const a = pod('a', '1');
    store.add(a);
    const updates: Array<[Pod, Pod]> = [];
    void processDeltas(
      { onUpdate: (old, obj) => void updates.push([old, obj]) },
      store,
      [{ type: 'ReplacedAll', object: { resourceVersion: '2', objects: store.list() } }],
      false,
    );
    expect(updates).toHaveLength(1);
    expect(updates[0]![0]).toBe(a);
    expect(updates[0]![1]).toBe(a);
  });
});

/** A `Store` of its own class that forwards every call to `store`. */
function delegatingStore<T>(store: Store<T>): Store<T> {
  return {
    add: (o) => store.add(o),
    update: (o) => store.update(o),
    delete: (o) => store.delete(o),
    list: () => store.list(),
    listKeys: () => store.listKeys(),
    get: (o) => store.get(o),
    getByKey: (k) => store.getByKey(k),
    replace: (items, rv) => store.replace(items, rv),
    resync: () => store.resync(),
    size: () => store.size(),
    lastStoreSyncResourceVersion: () => store.lastStoreSyncResourceVersion(),
    bookmark: (rv) => store.bookmark(rv),
    transaction: (txns) => store.transaction(txns),
  };
}

describe('the cost of a relist', () => {
  it('keys every listed object once, from the queue to the store (AtomicFIFO + newStore)', async () => {
    let keyed = 0;
    const countingKey = (obj: Pod | DeletedFinalStateUnknown<Pod>): string => {
      keyed++;
      return deletionHandlingMetaNamespaceKeyFunc(obj);
    };
    const store = newStore<Pod>(countingKey);
    for (let i = 0; i < 50; i++) store.add(pod(`p${i}`, '1'));
    const fifo = new AtomicFIFO<Pod>({ keyFunction: countingKey });
    const list = Array.from({ length: 100 }, (_, i) => pod(`p${i + 25}`, '2'));
    keyed = 0;
    fifo.replace(list, '2');
    const events: string[] = [];
    await fifo.pop((deltas, initial) =>
      processDeltas(
        {
          onAdd: () => void events.push('add'),
          onUpdate: () => void events.push('update'),
          onDelete: () => void events.push('delete'),
        },
        store,
        deltas,
        initial,
      ),
    );
    expect(keyed).toBe(100);
    expect(events.filter((e) => e === 'delete')).toHaveLength(25);
    expect(events.filter((e) => e === 'update')).toHaveLength(25);
    expect(events.filter((e) => e === 'add')).toHaveLength(75);
    expect(store.size()).toBe(100);
  });
});
