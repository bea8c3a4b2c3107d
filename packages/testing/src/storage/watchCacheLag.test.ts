import { FakeClock } from '@kinformer/core/testing';
import { FakeApiServer } from '../index.js';
import { serverPod } from '@kinformer/test-tools';
import { request, WatchReader, type WatchLine, watchReaders, closeAfterEach } from '../wire.test.helpers.js';

// The opt-in lagging watch cache. kube-apiserver serves resourceVersion=0 ("any") lists and watches
// from its watch cache without waiting for it to be fresh (storage/cacher/delegator.go: RV=0 reads
// never delegate to etcd; cacher.go Watch: a legacy watch from ""/"0" starts from the cache's
// current state; watch_cache.go getAllEventsSinceLocked), while a consistent read (RV unset) and a
// watch-list from "" wait until the cache reaches the current revision. The cache's revision on a
// type without writes only moves with etcd progress notifications (storage/cacher/progress), so
// its bookmarks advance slowly.

let server: FakeApiServer;
const readers = watchReaders();

closeAfterEach(() => server);

const PODS = '/api/v1/namespaces/default/pods';

async function watch(query: string): Promise<WatchReader> {
  const reader = await WatchReader.open(`${server.url}${PODS}?${query}`);
  readers.push(reader);
  return reader;
}

const names = (items: unknown): string[] =>
  (items as Array<{ metadata: { name: string } }>).map((i) => i.metadata.name);
const line = (e: WatchLine): [string, unknown, unknown] => [
  e.type,
  e.object.metadata?.name,
  e.object.metadata?.resourceVersion,
];

/** A server whose cache lags 1 s: pod a written at t=0, pod b at t=2 s (not yet in the cache). */
async function seedLagging(): Promise<{ clock: FakeClock; rvA: string; rvB: string }> {
  const clock = new FakeClock(0);
  server = await FakeApiServer.start({ clock, watchCacheLag: { lagMs: 1_000 } });
  server.create('pods', serverPod('a'));
  const rvA = server.resourceVersion;
  clock.advance(2_000);
  server.create('pods', serverPod('b'));
  return { clock, rvA, rvB: server.resourceVersion };
}

describe('lagging watch cache (watchCacheLag)', () => {
  test('a resourceVersion=0 list is served from the state lagMs ago; a consistent list is current', async () => {
    const { clock, rvA } = await seedLagging();
    const any = await request(`${server.url}${PODS}?resourceVersion=0`);
    expect(names(any.json.items)).toEqual(['a']);
    expect(any.json.metadata).toEqual({ resourceVersion: rvA });
    const consistent = await request(`${server.url}${PODS}`);
    expect(names(consistent.json.items)).toEqual(['a', 'b']);
    clock.advance(1_000);
    const later = await request(`${server.url}${PODS}?resourceVersion=0`);
    expect(names(later.json.items)).toEqual(['a', 'b']);
    expect(later.json.metadata).toEqual({ resourceVersion: server.resourceVersion });
  });

  test('a watch-list from "0" starts from the lagging state, then the newer events; from "" it is consistent', async () => {
    const { rvA, rvB } = await seedLagging();
    const fromZero = await watch('watch=true&resourceVersion=0&allowWatchBookmarks=true');
    const zero = await fromZero.take(3);
    expect(zero.map(line)).toEqual([
      ['ADDED', 'a', rvA],
      ['BOOKMARK', undefined, rvA],
      ['ADDED', 'b', rvB],
    ]);
    const fromNone = await watch('watch=true&allowWatchBookmarks=true');
    expect((await fromNone.take(3)).map(line)).toEqual([
      ['ADDED', 'a', rvA],
      ['ADDED', 'b', rvB],
      ['BOOKMARK', undefined, rvB],
    ]);
  });

  test('a legacy watch from "" (no watch-list) starts from the lagging state too', async () => {
    const clock = new FakeClock(0);
    server = await FakeApiServer.start({ clock, watchList: false, watchCacheLag: { lagMs: 1_000 } });
    server.create('pods', serverPod('a'));
    clock.advance(2_000);
    server.create('pods', serverPod('b'));
    server.patch('pods', 'default/a', { metadata: { labels: { x: 'y' } } });
    const w = await watch('watch=true');
    expect((await w.take(3)).map((e) => [e.type, e.object.metadata?.name])).toEqual([
      ['ADDED', 'a'],
      ['ADDED', 'b'],
      ['MODIFIED', 'a'],
    ]);
  });

  test('bookmarks on a type without writes advance only with progress notifications', async () => {
    const clock = new FakeClock(0);
    server = await FakeApiServer.start({
      clock,
      bookmarkIntervalMs: 1_000,
      watchCacheLag: { lagMs: 0, progressNotifyIntervalMs: 10_000 },
    });
    const w = await watch(`watch=true&resourceVersion=${server.resourceVersion}&allowWatchBookmarks=true`);
    await server.waitForWatchers(1);
    server.create('configmaps', { metadata: { name: 'other-type' } });
    const moved = server.resourceVersion;
    clock.advance(5_000);
    await w.expectQuiet(30); // the global revision moved, but the pods cache does not know it yet
    clock.advance(6_000);
    expect(line(await w.next())).toEqual(['BOOKMARK', undefined, moved]);
  });
});
