import { FakeClock } from '@kinformer/core/testing';
import type { KubeObject } from '@kinformer/core';
import { FakeListerWatcher } from '@kinformer/reflector/testing';
import { SharedIndexInformer } from './sharedIndexInformer.js';
import type { SharedIndexInformerOptions } from './sharedIndexInformer.js';
import { InformerFactory } from './informerFactory.js';
import { keyOf, loggingHandler, noBackoff, pod, podList, waitFor } from '@kinformer/test-tools';
import type { Pod } from '@kinformer/test-tools';

// The informer's default atomic mode (client-go 1.36 AtomicFIFO): a relist reaches the cache in
// one step, handlers get the same per-key notifications as in the non-atomic mode.

function newInformer(lw: FakeListerWatcher<Pod>, options: SharedIndexInformerOptions<Pod> = {}) {
  return new SharedIndexInformer<Pod>(lw, {
    clock: new FakeClock(),
    reflectorOptions: { backoff: noBackoff },
    indexers: { byNode: (p) => (p.spec?.nodeName ? [p.spec.nodeName] : []) },
    ...options,
  });
}

const onNode = (node: string): Partial<Pod> => ({ spec: { nodeName: node } });

/** Runs an informer through a list, a broken watch and a relist; returns what a handler saw. */
async function relist(options: SharedIndexInformerOptions<Pod>) {
  const lw = new FakeListerWatcher<Pod>().enqueueList(
    podList(
      '10',
      pod('a', '1', 'default', onNode('n1')),
      pod('b', '2', 'default', onNode('n1')),
      pod('c', '3'),
    ),
    podList('20', pod('b', '12', 'default', onNode('n2')), pod('d', '13', 'default', onNode('n2'))),
  );
  const informer = newInformer(lw, options);
  const indexer = informer.getIndexer();
  const events: string[] = [];
  /** What a lister sees while a relist notification is handled (only after the initial list). */
  const views = new Set<string>();
  const view = (initial: boolean): void => {
    if (initial) return;
    views.add(
      `${indexer.listKeys().sort().join(',')} n1=${indexer.byIndex('byNode', 'n1').map(keyOf).sort().join(',')} rv=${indexer.lastStoreSyncResourceVersion()}`,
    );
  };
  const reg = informer.addEventHandler(loggingHandler(events, view));
  const ac = new AbortController();
  const done = informer.run(ac.signal);
  await waitFor(reg.hasSynced, 'sync');
  const afterList = indexer.lastStoreSyncResourceVersion();
  (await lw.nextWatch()).breakConnection();
  await waitFor(() => events.length === 3 + 4, 'the relist notifications');
  const afterRelist = indexer.lastStoreSyncResourceVersion();
  ac.abort();
  await done;
  return { events, views, afterList, afterRelist };
}

describe('SharedIndexInformer atomic relists', () => {
  it('is on by default: the cache holds the list’s resourceVersion; handlers get deletes first, then list order', async () => {
    const r = await relist({});
    expect(r.afterList).toBe('10');
    expect(r.afterRelist).toBe('20');
    expect(r.events).toEqual([
      'add default/a true',
      'add default/b true',
      'add default/c true',
      'delete tombstone default/a rv 1',
      'delete tombstone default/c rv 3',
      'update default/b 2->12',
      'add default/d false',
    ]);
  });

  it('gives the same notifications with atomicEvents: false, but the store’s resourceVersion is the newest object’s', async () => {
    const atomic = await relist({});
    const nonAtomic = await relist({ atomicEvents: false });
    expect(nonAtomic.events).toEqual(atomic.events);
    expect(nonAtomic.afterList).toBe('3');
    expect(nonAtomic.afterRelist).toBe('13');
  });

  it('never lets a lister or byIndex see a half-applied relist', async () => {
    const r = await relist({});
    // Every relist notification observed the finished relist, in the keys, the index and the RV.
    expect(r.views).toEqual(new Set(['default/b,default/d n1= rv=20']));
  });

  it.each([
    { atomicEvents: true, partial: false },
    { atomicEvents: false, partial: true }, // applied in batches of 1000: handlers see the steps
  ])(
    'handlers of a big relist see a partly applied cache: $partial (atomicEvents $atomicEvents)',
    async ({ atomicEvents, partial }) => {
      const many = Array.from({ length: 1500 }, (_, i) => pod(`p${i}`, String(100 + i)));
      const lw = new FakeListerWatcher<Pod>().enqueueList(podList('1'), podList('2000', ...many));
      const informer = newInformer(lw, { atomicEvents });
      const seen = new Set<number>();
      informer.addEventHandler({ onAdd: () => void seen.add(informer.getStore().size()) });
      const ac = new AbortController();
      const done = informer.run(ac.signal);
      await waitFor(informer.hasSynced, 'sync');
      (await lw.nextWatch()).breakConnection();
      await waitFor(() => informer.stats().eventsDispatched === 1500, 'the relist adds', 20_000);
      expect(Math.max(...seen)).toBe(1500);
      expect(Math.min(...seen) < 1500).toBe(partial);
      ac.abort();
      await done;
    },
  );

  it.each([
    { atomicEvents: true, rv: '30' }, // a Bookmark delta reaches the cache, in order with the events
    { atomicEvents: false, rv: '11' }, // no Bookmark deltas: the last object written
  ])(
    'records a watch bookmark’s resourceVersion in the cache: $rv (atomicEvents $atomicEvents)',
    async ({ atomicEvents, rv }) => {
      const lw = new FakeListerWatcher<Pod>().enqueueList(podList('10', pod('a', '1')));
      const informer = newInformer(lw, { atomicEvents });
      const ac = new AbortController();
      const done = informer.run(ac.signal);
      await waitFor(informer.hasSynced, 'sync');
      const watch = await lw.nextWatch();
      watch.add(pod('b', '11')).bookmark('30');
      await waitFor(() => informer.lastSyncResourceVersion() === '30', 'the bookmark');
      await waitFor(() => informer.getStore().size() === 2, 'the add');
      await waitFor(() => informer.stats().queueDepth === 0, 'the queue to drain');
      expect(informer.getStore().lastStoreSyncResourceVersion()).toBe(rv);
      ac.abort();
      await done;
    },
  );

  it('applies a resync as onUpdate(obj, obj) for every cached object', async () => {
    const lw = new FakeListerWatcher<Pod>().enqueueList(podList('10', pod('a', '1'), pod('b', '2')));
    const clock = new FakeClock();
    const informer = newInformer(lw, { clock, resyncPeriodMs: 30_000 });
    const synced: string[] = [];
    informer.addEventHandler({
      onUpdate: (old, obj) => void synced.push(`${keyOf(obj)} ${old === obj}`),
    });
    const ac = new AbortController();
    const done = informer.run(ac.signal);
    await waitFor(informer.hasSynced, 'sync');
    await lw.nextWatch();
    clock.advance(30_000);
    await waitFor(() => synced.length === 2, 'the resync');
    expect(synced).toEqual(['default/a true', 'default/b true']);
    ac.abort();
    await done;
  });
});

describe('InformerFactory atomicEvents', () => {
  it.each([
    { atomicEvents: undefined, rv: '10' },
    { atomicEvents: false, rv: '3' },
  ])('passes atomicEvents $atomicEvents to its informers', async ({ atomicEvents, rv }) => {
    const factory = new InformerFactory(
      () => new FakeListerWatcher<KubeObject>().enqueueList(podList('10', pod('a', '3'))),
      { clock: new FakeClock(), ...(atomicEvents === undefined ? {} : { atomicEvents }) },
    );
    const { informer } = factory.forResource({ version: 'v1', resource: 'pods' });
    const ac = new AbortController();
    factory.start(ac.signal);
    await factory.waitForCacheSync(ac.signal);
    expect(informer.getStore().lastStoreSyncResourceVersion()).toBe(rv);
    ac.abort();
    await factory.shutdown();
  });
});
