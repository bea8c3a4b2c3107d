import { DeletedFinalStateUnknown } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import { FakeListerWatcher } from '@kinformer/reflector/testing';
import { newIndexerInformer, newInformer } from './newInformer.js';
import type { ResourceEventHandler } from './resourceEventHandler.js';
import { deferred, keyOf, noBackoff, pod, podList, prng, settle, waitFor } from '@kinformer/test-tools';
import type { Pod } from '@kinformer/test-tools';

type Event = {
  type: 'add' | 'update' | 'delete';
  key: string;
  rv?: string | undefined;
  oldRv?: string | undefined;
  initial?: boolean;
  tombstone?: boolean;
};

function recorder(events: Event[]): ResourceEventHandler<Pod> {
  return {
    onAdd: (obj, initial) =>
      void events.push({ type: 'add', key: keyOf(obj), rv: obj.metadata?.resourceVersion, initial }),
    onUpdate: (oldObj, newObj) =>
      void events.push({
        type: 'update',
        key: keyOf(newObj),
        rv: newObj.metadata?.resourceVersion,
        oldRv: oldObj.metadata?.resourceVersion,
      }),
    onDelete: (obj) =>
      void events.push(
        obj instanceof DeletedFinalStateUnknown
          ? { type: 'delete', key: obj.key, tombstone: true }
          : { type: 'delete', key: keyOf(obj), rv: obj.metadata?.resourceVersion },
      ),
  };
}

describe.each(['RealFIFO', 'DeltaFIFO'] as const)('newInformer with a %s', (queue) => {
  // client-go Example / ExampleNewInformer: a controller that deletes everything it is told about and logs deletions.
  it('runs a handler that deletes every added object; deletions arrive in order and the store ends empty', async () => {
    const clock = new FakeClock();
    const lw = new FakeListerWatcher<Pod>().enqueueList(
      podList('10', pod('a', '1'), pod('b', '2'), pod('c', '3')),
    );
    const watch = lw.nextWatch();
    const deleted: string[] = [];
    const { store, controller } = newInformer<Pod>(
      lw,
      {
        // An async handler: newInformer awaits it before the next event.
        onAdd: async (obj) => {
          (await watch).delete({
            ...obj,
            metadata: { ...obj.metadata, resourceVersion: `1${obj.metadata?.resourceVersion ?? ''}` },
          });
        },
        onDelete: (obj) => void deleted.push(obj instanceof DeletedFinalStateUnknown ? obj.key : keyOf(obj)),
      },
      { clock, queue },
    );
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await waitFor(() => deleted.length === 3, 'three deletions');
    expect(deleted).toEqual(['default/a', 'default/b', 'default/c']);
    expect(store.list()).toEqual([]);
    ac.abort();
    await done;
    expect(clock.pendingTimers()).toBe(0);
  });

  // client-go TestHammerController: random adds/updates/deletes; HasSynced false before Run, true after
  // the initial sync; the store ends equal to the source and each key's events form a valid history.
  it('survives a random stream of adds, updates and deletes and ends equal to the source', async () => {
    const random = prng(42);
    const clock = new FakeClock();
    const source = new Map<string, Pod>();
    for (let i = 0; i < 10; i++) source.set(`default/p${i}`, pod(`p${i}`, String(i + 1)));
    const lw = new FakeListerWatcher<Pod>().enqueueList(podList('100', ...source.values()));
    const events: Event[] = [];
    const { store, controller } = newInformer<Pod>(lw, recorder(events), { clock, queue });
    expect(controller.hasSynced()).toBe(false);
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await waitFor(() => controller.hasSynced(), 'sync');
    const watch = await lw.nextWatch();
    let rv = 100;
    for (let i = 0; i < 500; i++) {
      const name = `p${Math.floor(random() * 20)}`;
      const key = `default/${name}`;
      const r = random();
      rv++;
      if (source.has(key) && r < 0.3) {
        const obj = pod(name, String(rv));
        source.delete(key);
        watch.delete(obj);
      } else if (source.has(key)) {
        const obj = pod(name, String(rv));
        source.set(key, obj);
        watch.modify(obj);
      } else {
        const obj = pod(name, String(rv));
        source.set(key, obj);
        watch.add(obj);
      }
      if (i % 50 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await waitFor(
      () => controller.lastSyncResourceVersion() === String(rv) && watch.pending === 0,
      'all events',
    );
    await waitFor(() => store.listKeys().length === source.size, 'the store to catch up');
    expect(new Map(store.list().map((o) => [keyOf(o), o.metadata?.resourceVersion]))).toEqual(
      new Map([...source].map(([k, o]) => [k, o.metadata?.resourceVersion])),
    );
    // Per key: add (absent) → updates (present, old = previous new) → delete (absent) → add …
    const state = new Map<string, string>();
    for (const e of events) {
      if (e.type === 'add') {
        expect(state.has(e.key)).toBe(false);
        state.set(e.key, e.rv!);
      } else if (e.type === 'update') {
        expect(state.get(e.key)).toBe(e.oldRv);
        expect(Number(e.rv)).toBeGreaterThan(Number(e.oldRv));
        state.set(e.key, e.rv!);
      } else {
        expect(state.has(e.key)).toBe(true);
        state.delete(e.key);
      }
    }
    ac.abort();
    await done;
  });

  // client-go TestUpdate: only allowed transitions reach the handler, resync updates included
  // (a resync delivers update(x, x): same resourceVersion, never a step back).
  it('delivers only allowed transitions, including resync updates', async () => {
    const clock = new FakeClock();
    const lw = new FakeListerWatcher<Pod>().enqueueList(podList('10', pod('a', '1'), pod('b', '1')));
    const events: Event[] = [];
    const { controller } = newInformer<Pod>(lw, recorder(events), { clock, queue, resyncPeriodMs: 1000 });
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    const watch = await lw.nextWatch();
    for (let v = 2; v <= 6; v++) {
      watch.modify(pod('a', String(v))).modify(pod('b', String(v)));
      await waitFor(
        () => events.filter((e) => e.type === 'update' && e.rv === String(v)).length === 2,
        `version ${v}`,
      );
      await clock.tick(1000);
      await waitFor(
        () =>
          events.filter((e) => e.type === 'update' && e.rv === String(v) && e.oldRv === String(v)).length ===
          2,
        `resync at ${v}`,
      );
    }
    watch.delete(pod('a', '7'));
    await waitFor(() => events.some((e) => e.type === 'delete'), 'the delete');
    const last = new Map<string, string>();
    for (const e of events) {
      if (e.type === 'add') last.set(e.key, e.rv!);
      if (e.type === 'update') {
        expect(e.oldRv).toBe(last.get(e.key));
        expect(Number(e.rv)).toBeGreaterThanOrEqual(Number(e.oldRv));
        last.set(e.key, e.rv!);
      }
    }
    expect(events.filter((e) => e.rv === e.oldRv && e.type === 'update')).toHaveLength(10);
    ac.abort();
    await done;
  });

  // client-go TestTransformingInformer: handlers and store see transformed objects, with correct prev objects.
  it('applies the transform before the store and the handler see an object', async () => {
    const clock = new FakeClock();
    const lw = new FakeListerWatcher<Pod>().enqueueList(podList('10', pod('a', '1')));
    const events: Array<[string, string | undefined, string | undefined]> = [];
    const { store, controller } = newInformer<Pod>(
      lw,
      {
        onAdd: (obj) => void events.push(['add', obj.spec?.note, undefined]),
        onUpdate: (oldObj, newObj) => void events.push(['update', newObj.spec?.note, oldObj.spec?.note]),
        onDelete: (obj) => void events.push(['delete', (obj as Pod).spec?.note, undefined]),
      },
      {
        clock,
        queue,
        transform: (obj) => ({
          ...obj,
          spec: { note: `transformed-${obj.metadata?.resourceVersion ?? ''}` },
        }),
      },
    );
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    const watch = await lw.nextWatch();
    watch.modify(pod('a', '2')).delete(pod('a', '3'));
    await waitFor(() => events.length === 3, 'three events');
    expect(events).toEqual([
      ['add', 'transformed-1', undefined],
      ['update', 'transformed-2', 'transformed-1'],
      ['delete', 'transformed-3', undefined],
    ]);
    expect(store.list()).toEqual([]);
    ac.abort();
    await done;
  });

  // client-go TestTransformingInformerRace: no object is transformed twice (resyncs re-deliver cached objects untransformed).
  it('transforms each object once, even across resyncs', async () => {
    const clock = new FakeClock();
    const lw = new FakeListerWatcher<Pod>().enqueueList(podList('10', pod('a', '1'), pod('b', '1')));
    const transformed = new Map<string, number>();
    let updates = 0;
    const { controller } = newInformer<Pod>(
      lw,
      { onUpdate: () => void updates++ },
      {
        clock,
        queue,
        resyncPeriodMs: 1000,
        transform: (obj) => {
          const id = `${keyOf(obj)}@${obj.metadata?.resourceVersion ?? ''}`;
          transformed.set(id, (transformed.get(id) ?? 0) + 1);
          return obj;
        },
      },
    );
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    const watch = await lw.nextWatch();
    watch.modify(pod('a', '2'));
    await waitFor(() => updates === 1, 'the update');
    for (let i = 0; i < 3; i++) {
      await clock.tick(1000);
      await waitFor(() => updates === 3 + 2 * i, `resync ${i}`);
    }
    expect([...transformed.values()].every((n) => n === 1)).toBe(true);
    expect([...transformed.keys()].sort()).toEqual(['default/a@1', 'default/a@2', 'default/b@1']);
    ac.abort();
    await done;
  });

  // client-go TestReplaceEvents + TestResetWatch: a relist yields the deletions first (tombstones), then
  // updates/adds in list order, with isInInitialList false; the store equals the new list.
  it('on a relist delivers deletes first, then updates and adds in list order', async () => {
    const clock = new FakeClock();
    const lw = new FakeListerWatcher<Pod>().enqueueList(
      podList('10', pod('a', '1'), pod('b', '2'), pod('c', '3')),
      podList('20', pod('c', '15'), pod('d', '16'), pod('a', '1')),
    );
    const events: Event[] = [];
    const { store, controller } = newInformer<Pod>(lw, recorder(events), { clock, queue });
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await waitFor(() => controller.hasSynced(), 'sync');
    await waitFor(() => events.length === 3, 'initial adds');
    events.length = 0;
    // The watch fails with 410: the reflector relists (after one backoff step on the fake clock).
    (await lw.nextWatch()).error({ code: 410, reason: 'Expired', message: 'too old resource version' });
    await waitFor(() => lw.listCalls.length === 2 || clock.pendingTimers() > 0, 'the backoff');
    while (lw.listCalls.length < 2) await clock.tickToNext();
    await waitFor(() => events.length === 4, 'the relist events');
    const expected: Event[] = [
      { type: 'delete', key: 'default/b', tombstone: true },
      { type: 'update', key: 'default/c', rv: '15', oldRv: '3' },
      { type: 'add', key: 'default/d', rv: '16', initial: false },
      { type: 'update', key: 'default/a', rv: '1', oldRv: '1' },
    ];
    if (queue === 'DeltaFIFO') {
      // DeltaFIFO queues the listed keys first (in list order), then the tombstones.
      expect(events).toEqual([expected[1], expected[2], expected[3], expected[0]]);
    } else {
      expect(events).toEqual(expected);
    }
    expect(store.listKeys().sort()).toEqual(['default/a', 'default/c', 'default/d']);
    ac.abort();
    await done;
  });

  // client-go TestStoreResourceVersion: the store's resourceVersion follows the events applied to it.
  it.each([
    { atomicEvents: true, afterList: '10' }, // the default (client-go 1.36 AtomicFIFO): the list's
    { atomicEvents: false, afterList: '5' }, // non-atomic: the newest listed object's
  ])(
    "keeps the store's resourceVersion at the last event applied (atomicEvents $atomicEvents)",
    async ({ atomicEvents, afterList }) => {
      const clock = new FakeClock();
      const lw = new FakeListerWatcher<Pod>().enqueueList(podList('10', pod('a', '5')));
      const { store, controller } = newInformer<Pod>(lw, {}, { clock, queue, atomicEvents });
      const ac = new AbortController();
      const done = controller.run(ac.signal);
      await waitFor(() => controller.hasSynced(), 'sync');
      // A DeltaFIFO has no atomic mode: relists are applied object by object.
      expect(store.lastStoreSyncResourceVersion()).toBe(queue === 'DeltaFIFO' ? '5' : afterList);
      const watch = await lw.nextWatch();
      watch.add(pod('b', '11'));
      await waitFor(() => store.lastStoreSyncResourceVersion() === '11', 'rv 11');
      watch.delete(pod('a', '12'));
      await waitFor(() => store.lastStoreSyncResourceVersion() === '12', 'rv 12');
      ac.abort();
      await done;
    },
  );

  // client-go TestPanicPropagated: a handler throw stops the controller and propagates out of run.
  it('rejects run with the error a handler throws', async () => {
    const clock = new FakeClock();
    const lw = new FakeListerWatcher<Pod>().enqueueList(podList('10', pod('a', '1')));
    const boom = new Error('boom');
    const { controller } = newInformer<Pod>(
      lw,
      {
        onAdd: () => {
          throw boom;
        },
      },
      { clock, queue },
    );
    await expect(controller.run(new AbortController().signal)).rejects.toBe(boom);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('newIndexerInformer', () => {
  it('maintains the secondary indexes of its indexer', async () => {
    const clock = new FakeClock();
    const onNode = (node: string): Partial<Pod> => ({ spec: { nodeName: node } });
    const lw = new FakeListerWatcher<Pod>().enqueueList(
      podList('10', pod('a', '1', 'default', onNode('n1')), pod('b', '2', 'default', onNode('n2'))),
    );
    const { indexer, controller } = newIndexerInformer<Pod>(
      lw,
      {},
      {
        clock,
        indexers: { byNode: (obj) => [obj.spec?.nodeName ?? ''] },
        reflectorOptions: { backoff: noBackoff },
      },
    );
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await waitFor(() => controller.hasSynced(), 'sync');
    expect(indexer.byIndex('byNode', 'n1').map(keyOf)).toEqual(['default/a']);
    (await lw.nextWatch()).modify(pod('b', '11', 'default', onNode('n1')));
    await waitFor(() => indexer.byIndex('byNode', 'n1').length === 2, 'b to move to n1');
    expect(indexer.byIndex('byNode', 'n2')).toEqual([]);
    ac.abort();
    await done;
  });
});

// The store is the queue's knownObjects: a relist (replace) and a resync read it to decide what to
// delete and what to re-deliver. While an async handler is awaited, the rest of the popped batch must
// already be in the store, or those decisions are made against a stale cache (client-go holds the
// FIFO lock while processing, so replace/resync never see a half-applied batch).
/**
 * A newInformer over `lists` whose handler records every event, and waits on a gate in the call that
 * `blocks` picks (the first such call only): `waiting()` tells when it does, `release()` lets it go on.
 */
function gatedInformer(
  lists: Parameters<FakeListerWatcher<Pod>['enqueueList']>,
  blocks: { onAdd?: (obj: Pod) => boolean; onUpdate?: (newObj: Pod) => boolean },
  options: { resyncPeriodMs?: number } = {},
) {
  const clock = new FakeClock();
  const lw = new FakeListerWatcher<Pod>().enqueueList(...lists);
  const events: Event[] = [];
  const record = recorder(events);
  const gate = deferred();
  let waiting = false;
  const hold = async (blocked: boolean): Promise<void> => {
    if (!blocked || waiting) return;
    waiting = true;
    await gate.promise;
  };
  const { store, controller } = newInformer<Pod>(
    lw,
    {
      ...record,
      ...(blocks.onAdd && {
        onAdd: async (obj: Pod, initial: boolean) => {
          void record.onAdd?.(obj, initial);
          await hold(blocks.onAdd?.(obj) ?? false);
        },
      }),
      ...(blocks.onUpdate && {
        onUpdate: async (oldObj: Pod, newObj: Pod) => {
          void record.onUpdate?.(oldObj, newObj);
          await hold(blocks.onUpdate?.(newObj) ?? false);
        },
      }),
    },
    { clock, reflectorOptions: { backoff: noBackoff }, ...options },
  );
  const ac = new AbortController();
  const done = controller.run(ac.signal);
  return { clock, lw, events, store, waiting: () => waiting, release: gate.resolve, ac, done };
}

describe('newInformer with an async handler', () => {
  it('detects a deletion by a relist that happens while the handler awaits (no stale object left in the store)', async () => {
    const { lw, events, store, waiting, release, ac, done } = gatedInformer(
      [
        podList('10', pod('a', '1'), pod('b', '1')),
        podList('20', pod('a', '1')), // b was deleted while the watch was down
      ],
      { onAdd: (obj) => obj.metadata?.name === 'a' },
    );
    await waitFor(waiting, 'the handler to wait on a');
    (await lw.nextWatch()).error({ code: 410, reason: 'Expired', message: 'too old resource version' });
    await lw.nextWatch(); // the relist happened (and was queued) while the handler waits
    release();
    await waitFor(() => events.some((e) => e.type === 'delete'), 'the delete of b');
    await waitFor(() => store.listKeys().length === 1, 'the store to hold only a');
    expect(store.listKeys()).toEqual(['default/a']);
    expect(events.filter((e) => e.type === 'delete')).toEqual([
      { type: 'delete', key: 'default/b', tombstone: true },
    ]);
    ac.abort();
    await done;
  });

  it('never moves the store (or the handler) back to an older version when a resync happens while the handler awaits', async () => {
    const { clock, lw, events, store, waiting, release, ac, done } = gatedInformer(
      [podList('10', pod('a', '1'), pod('b', '1')), podList('20', pod('a', '2'), pod('b', '2'))],
      { onUpdate: (obj) => obj.metadata?.name === 'a' && obj.metadata.resourceVersion === '2' },
      { resyncPeriodMs: 1000 },
    );
    await waitFor(() => events.length === 2, 'the initial adds');
    (await lw.nextWatch()).error({ code: 410, reason: 'Expired', message: 'too old resource version' });
    await lw.nextWatch(); // the relist is queued, and the new watch loop's resync timer runs
    await waitFor(waiting, 'the handler to wait on a@2'); // a@2 and b@2 were popped in one batch
    await clock.tick(1000); // a resync while the handler waits
    release();
    await waitFor(
      () => events.filter((e) => e.type === 'update').length === 4,
      'the relist and resync updates',
    );
    await settle();
    for (const e of events.filter((x) => x.type === 'update'))
      expect(Number(e.rv)).toBeGreaterThanOrEqual(Number(e.oldRv));
    expect(
      store
        .list()
        .map((o) => [keyOf(o), o.metadata?.resourceVersion])
        .sort(),
    ).toEqual([
      ['default/a', '2'],
      ['default/b', '2'],
    ]);
    ac.abort();
    await done;
  });
});
