import { FakeClock } from '@kinformer/core/testing';
import { FakeApiServer } from '../index.js';
import { serverPod } from '@kinformer/test-tools';
import { request, WatchReader, type WatchLine, watchReaders, closeAfterEach } from '../wire.test.helpers.js';

// Deletion as kube-apiserver's generic registry does it: registry/rest/delete.go BeforeDelete,
// registry/generic/registry/store.go Delete / updateForGracefulDeletionAndFinalizers /
// markAsDeleting / ShouldDeleteDuringUpdate, and the pod strategy's CheckGracefulDelete
// (pkg/registry/core/pod/strategy.go). The fake plays the kubelet: it deletes a gracefully
// deleted pod with grace 0 once its grace period has passed on the server's clock.

let server: FakeApiServer;
const readers = watchReaders();

closeAfterEach(() => server);

const T0 = Date.parse('2026-12-01T10:00:00Z');
const PODS = '/api/v1/namespaces/default/pods';

/** Starts the server with graceful pod deletion on a FakeClock at T0; returns the clock. */
async function startGraceful(): Promise<FakeClock> {
  const clock = new FakeClock(T0);
  server = await FakeApiServer.start({ clock, gracefulPodDeletion: true });
  return clock;
}

async function watchPods(): Promise<WatchReader> {
  const reader = await WatchReader.open(
    `${server.url}${PODS}?watch=true&resourceVersion=${server.resourceVersion}`,
  );
  readers.push(reader);
  await server.waitForWatchers(1);
  return reader;
}

const summary = (e: WatchLine): [string, unknown, unknown] => [
  e.type,
  e.object.metadata?.deletionTimestamp,
  e.object.metadata?.deletionGracePeriodSeconds,
];

describe('graceful pod deletion (gracefulPodDeletion)', () => {
  test('a scheduled pod gets deletionTimestamp = now + 30 s (MODIFIED) and goes when the grace period has passed (DELETED)', async () => {
    // CheckGracefulDelete: gracePeriodSeconds, else spec.terminationGracePeriodSeconds (defaulted to 30).
    const clock = await startGraceful();
    server.create('pods', serverPod('p', { spec: { nodeName: 'n1' } }));
    const w = await watchPods();
    const res = await request(`${server.url}${PODS}/p`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(res.json.metadata).toMatchObject({
      deletionTimestamp: '2026-12-01T10:00:30Z',
      deletionGracePeriodSeconds: 30,
      generation: 2,
    });
    expect(summary(await w.next())).toEqual(['MODIFIED', '2026-12-01T10:00:30Z', 30]);
    expect(server.list('pods')).toHaveLength(1);
    clock.advance(29_999);
    await w.expectQuiet(30);
    clock.advance(1);
    // The kubelet's DELETE with grace 0: the grace is shortened to 0 (MODIFIED), then the pod goes.
    expect((await w.take(2)).map(summary)).toEqual([
      ['MODIFIED', '2026-12-01T10:00:30Z', 0],
      ['DELETED', '2026-12-01T10:00:30Z', 0],
    ]);
    expect(server.list('pods')).toEqual([]);
  });

  test("gracePeriodSeconds in the body or the query, or the pod's terminationGracePeriodSeconds, sets the period; finishGracefulDeletions ends them", async () => {
    const clock = await startGraceful();
    for (const name of ['a', 'b', 'c'])
      server.create('pods', serverPod(name, { spec: { nodeName: 'n1', terminationGracePeriodSeconds: 7 } }));
    const a = await request(`${server.url}${PODS}/a`, {
      method: 'DELETE',
      body: JSON.stringify({ gracePeriodSeconds: 5 }),
    });
    const b = await request(`${server.url}${PODS}/b?gracePeriodSeconds=3`, { method: 'DELETE' });
    const c = server.delete('pods', 'default/c');
    expect([a.json.metadata, b.json.metadata, c.metadata]).toMatchObject([
      { deletionGracePeriodSeconds: 5, deletionTimestamp: '2026-12-01T10:00:05Z' },
      { deletionGracePeriodSeconds: 3, deletionTimestamp: '2026-12-01T10:00:03Z' },
      { deletionGracePeriodSeconds: 7, deletionTimestamp: '2026-12-01T10:00:07Z' },
    ]);
    clock.advance(3_000);
    expect(server.list('pods').map((p) => p.metadata.name)).toEqual(['a', 'c']);
    server.finishGracefulDeletions();
    expect(server.list('pods')).toEqual([]);
  });

  test('a second DELETE may only shorten the grace period; a longer one changes nothing', async () => {
    const clock = await startGraceful();
    server.create('pods', serverPod('p', { spec: { nodeName: 'n1' } }));
    const first = server.delete('pods', 'default/p');
    const rv = server.resourceVersion;
    const again = server.delete('pods', 'default/p', { gracePeriodSeconds: 60 });
    expect(again).toEqual(first);
    expect(server.resourceVersion).toBe(rv);
    clock.advance(10_000);
    const shorter = server.delete('pods', 'default/p', { gracePeriodSeconds: 25 });
    // The timestamp moves back by the old period and forward by the new one: T0 + 25 s.
    expect(shorter.metadata).toMatchObject({
      deletionTimestamp: '2026-12-01T10:00:25Z',
      deletionGracePeriodSeconds: 25,
    });
    const now = server.delete('pods', 'default/p', { gracePeriodSeconds: 0 });
    expect(now.metadata).toMatchObject({
      deletionTimestamp: '2026-12-01T10:00:10Z',
      deletionGracePeriodSeconds: 0,
    });
    expect(server.list('pods')).toEqual([]);
  });

  test('an unscheduled or finished pod, or gracePeriodSeconds 0, is deleted at once: MODIFIED with the deletionTimestamp, then DELETED', async () => {
    await startGraceful();
    server.create('pods', serverPod('unscheduled'));
    server.create('pods', serverPod('done', { spec: { nodeName: 'n1' }, status: { phase: 'Succeeded' } }));
    server.create('pods', serverPod('forced', { spec: { nodeName: 'n1' } }));
    const w = await watchPods();
    server.delete('pods', 'default/unscheduled');
    server.delete('pods', 'default/done');
    const forced = await request(`${server.url}${PODS}/forced`, {
      method: 'DELETE',
      body: JSON.stringify({ gracePeriodSeconds: 0 }),
    });
    expect(forced.json.metadata).toMatchObject({ deletionGracePeriodSeconds: 0 });
    const events = await w.take(6);
    expect(
      events.map((e) => [e.type, e.object.metadata?.name, e.object.metadata?.deletionGracePeriodSeconds]),
    ).toEqual([
      ['MODIFIED', 'unscheduled', 0],
      ['DELETED', 'unscheduled', 0],
      ['MODIFIED', 'done', 0],
      ['DELETED', 'done', 0],
      ['MODIFIED', 'forced', 0],
      ['DELETED', 'forced', 0],
    ]);
    expect(server.list('pods')).toEqual([]);
  });

  test('a gracefully deleted pod with finalizers stays after its grace period until they are removed', async () => {
    // ShouldDeleteDuringUpdate deletes only once deletionGracePeriodSeconds is 0 (the kubelet's delete).
    const clock = await startGraceful();
    server.create('pods', {
      ...serverPod('p', { spec: { nodeName: 'n1' } }),
      metadata: { name: 'p', namespace: 'default', finalizers: ['example.com/hold'] },
    });
    server.delete('pods', 'default/p');
    server.patch('pods', 'default/p', { metadata: { labels: { still: 'here' } } });
    expect(server.list('pods')).toHaveLength(1);
    clock.advance(30_000);
    expect(server.get('pods', 'default/p').metadata).toMatchObject({ deletionGracePeriodSeconds: 0 });
    server.patch('pods', 'default/p', { metadata: { finalizers: null } });
    expect(server.list('pods')).toEqual([]);
  });

  test('with gracefulPodDeletion: false a pod is deleted at once with grace 0: MODIFIED (deletionTimestamp) then DELETED', async () => {
    server = await FakeApiServer.start({ gracefulPodDeletion: false });
    server.create('pods', serverPod('p', { spec: { nodeName: 'n1' } }));
    const w = await watchPods();
    server.delete('pods', 'default/p');
    const marked = await w.next();
    expect(marked.type).toBe('MODIFIED');
    expect(marked.object.metadata).toMatchObject({
      deletionTimestamp: expect.any(String),
      deletionGracePeriodSeconds: 0,
    });
    expect((await w.next()).type).toBe('DELETED');
    expect(server.list('pods')).toEqual([]);
  });
});

describe('deletion with finalizers (any type)', () => {
  test('sets deletionTimestamp, grace 0 and bumps the generation once (markAsDeleting); repeating the DELETE writes nothing; clearing the finalizers deletes it', async () => {
    const clock = new FakeClock(T0);
    server = await FakeApiServer.start({ clock });
    server.create('deployments.apps', {
      metadata: { name: 'd', finalizers: ['example.com/hold'] },
      spec: { replicas: 1 },
    });
    const first = server.delete('deployments.apps', 'default/d');
    expect(first.metadata).toMatchObject({
      generation: 2,
      deletionTimestamp: '2026-12-01T10:00:00Z',
      deletionGracePeriodSeconds: 0,
    });
    const rv = server.resourceVersion;
    clock.advance(5_000);
    expect(server.delete('deployments.apps', 'default/d')).toEqual(first);
    expect(server.resourceVersion).toBe(rv);
    server.patch('deployments.apps', 'default/d', { metadata: { finalizers: [] } });
    expect(server.list('deployments.apps')).toEqual([]);
  });
});
