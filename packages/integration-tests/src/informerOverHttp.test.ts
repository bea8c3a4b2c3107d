import { ErrorCodes, isDeletedFinalStateUnknown, isKinformerError, type KubeObject } from '@kinformer/core';
import { SharedInformerFactory, waitForCacheSync, type ResourceEventHandler } from 'kinformer';
import type { FakeApiServer } from '@kinformer/testing';
import type { V1Pod } from '@kubernetes/client-node';
import { captureLogs, names, serverPod, waitFor, WIDGETS } from '@kinformer/test-tools';
import { disposeAll, track, startServer } from './testSupport.test.helpers.js';

// SharedInformerFactory against FakeApiServer over real HTTP: a few thousand pods across namespaces,
// typed accessors, custom indexes, handlers (late, failing), CRDs, metadata-only informers,
// namespace- and label-scoped factories, failures that waitForCacheSync must surface, and a
// shutdown that leaves nothing open.

afterEach(disposeAll);

const NAMESPACES = 10;
const NODES = 20;
const PODS_PER_NAMESPACE = 300;

/** A factory whose informers run until the test ends (shut down in afterEach). */
function newFactory(
  server: FakeApiServer,
  options: ConstructorParameters<typeof SharedInformerFactory>[1] = {},
): {
  factory: SharedInformerFactory;
  signal: AbortSignal;
} {
  const factory = new SharedInformerFactory(server.kubeConfig(), options);
  const controller = new AbortController();
  track(factory, async (f) => {
    controller.abort();
    await f.shutdown();
  });
  return { factory, signal: controller.signal };
}

/** `ns-<i>/pod-<j>` on `node-<k>`, labelled app=web for even j and app=db for odd j. */
function seedPods(server: FakeApiServer): void {
  for (let i = 0; i < NAMESPACES; i++) {
    for (let j = 0; j < PODS_PER_NAMESPACE; j++) {
      server.create(
        'pods',
        serverPod(`ns-${i}/pod-${j}`, {
          labels: { app: j % 2 === 0 ? 'web' : 'db' },
          nodeName: `node-${(i * PODS_PER_NAMESPACE + j) % NODES}`,
        }),
      );
    }
  }
}

/** A handler that records what it sees as short strings: `add ns/name initial`, `update ns/name 3→4`, `delete ns/name`. */
function recorder<T extends KubeObject>(): { handler: ResourceEventHandler<T>; seen: string[] } {
  const seen: string[] = [];
  const key = (o: KubeObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
  return {
    seen,
    handler: {
      onAdd: (obj, initial) => void seen.push(`add ${key(obj)}${initial ? ' initial' : ''}`),
      onUpdate: (oldObj, newObj) =>
        void seen.push(
          `update ${key(newObj)} ${oldObj.metadata?.resourceVersion}→${newObj.metadata?.resourceVersion}`,
        ),
      onDelete: (obj) =>
        void seen.push(`delete ${isDeletedFinalStateUnknown(obj) ? `${obj.key} (tombstone)` : key(obj)}`),
    },
  };
}

function byNode(p: V1Pod): string[] {
  return p.spec?.nodeName ? [p.spec.nodeName] : [];
}

describe('SharedInformerFactory over HTTP with a few thousand pods', () => {
  test('factory.core.v1.pods() syncs every namespace, serves listers and a node index, and handlers see creates, updates, label changes and deletes', async () => {
    const server = await startServer();
    seedPods(server);
    const { factory, signal } = newFactory(server);
    const { informer, lister } = factory.core.v1.pods();
    informer.addIndexers({ byNode });
    const first = recorder<V1Pod>();
    informer.addEventHandler(first.handler);
    expect(factory.core.v1.pods().informer).toBe(informer); // shared

    factory.start(signal);
    const synced = await factory.waitForCacheSync(signal);
    expect(synced).toEqual(new Map([['pods.v1', true]]));
    const total = NAMESPACES * PODS_PER_NAMESPACE;
    expect(lister.list()).toHaveLength(total);
    expect(lister.namespace('ns-3').list()).toHaveLength(PODS_PER_NAMESPACE);
    expect(lister.namespace('ns-3').list('app=web')).toHaveLength(PODS_PER_NAMESPACE / 2);
    expect(lister.namespace('ns-3').get('pod-7')?.metadata?.labels).toEqual({ app: 'db' });
    expect(informer.getIndexer().byIndex('byNode', 'node-7')).toHaveLength(total / NODES);
    await waitFor(() => first.seen.length === total);
    expect(first.seen.every((s) => s.endsWith(' initial'))).toBe(true);

    // Writes through the server's in-process API.
    const created = server.create('pods', serverPod('ns-0/new-pod', { labels: { app: 'web' } }));
    const before = server.get<V1Pod>('pods', 'ns-0/pod-0');
    const relabelled = server.patch<V1Pod>('pods', 'ns-0/pod-0', { metadata: { labels: { app: 'cache' } } });
    const bound = server.patch<V1Pod>('pods', 'ns-0/new-pod', { spec: { nodeName: 'node-99' } });
    const doomed = server.get<V1Pod>('pods', 'ns-1/pod-1');
    server.delete('pods', 'ns-1/pod-1'); // deletionTimestamp first (an update), then the delete
    await waitFor(() => first.seen.length === total + 5, { describe: () => first.seen.slice(total) });

    expect(first.seen.slice(total)).toEqual([
      'add ns-0/new-pod',
      `update ns-0/pod-0 ${before.metadata?.resourceVersion}→${relabelled.metadata?.resourceVersion}`,
      `update ns-0/new-pod ${created.metadata?.resourceVersion}→${bound.metadata?.resourceVersion}`,
      `update ns-1/pod-1 ${doomed.metadata?.resourceVersion}→${Number(bound.metadata?.resourceVersion) + 1}`,
      'delete ns-1/pod-1',
    ]);
    expect(names(lister.namespace('ns-0').list('app=cache'))).toEqual(['pod-0']);
    expect(names(informer.getIndexer().byIndex('byNode', 'node-99'))).toEqual(['new-pod']);
    expect(lister.namespace('ns-1').get('pod-1')).toBeUndefined();
    expect(lister.list()).toHaveLength(total);

    // A handler added now first gets every cached object as an initial add, then new events.
    const late = recorder<V1Pod>();
    const registration = informer.addEventHandler(late.handler);
    expect(await waitForCacheSync(AbortSignal.timeout(3000), registration.hasSynced)).toBe(true);
    expect(late.seen).toHaveLength(total);
    expect(late.seen.every((s) => s.endsWith(' initial'))).toBe(true);
    server.delete('pods', 'ns-0/new-pod');
    await waitFor(() => late.seen.length === total + 2 && first.seen.length === total + 7);
    expect(late.seen.at(-1)).toBe('delete ns-0/new-pod');
  });
});

describe('handlers', () => {
  test('onUpdate(old, new) carries both versions; a handler that throws is logged and counted, and the others go on', async () => {
    const server = await startServer();
    server.create('pods', serverPod('a', { labels: { v: '1' } }));
    const logs = captureLogs('warn');
    const { factory, signal } = newFactory(server, { logger: logs.logger });
    const { informer } = factory.core.v1.pods({ namespace: 'default' });
    const updates: Array<[string | undefined, string | undefined]> = [];
    informer.addEventHandler(
      {
        onAdd: () => {
          throw new Error('handler bug');
        },
        onUpdate: () => Promise.reject(new Error('async handler bug')),
      },
      { name: 'broken' },
    );
    informer.addEventHandler(
      { onUpdate: (o, n) => void updates.push([o.metadata?.labels?.v, n.metadata?.labels?.v]) },
      { name: 'healthy' },
    );
    const healthy = recorder<V1Pod>();
    informer.addEventHandler(healthy.handler);
    factory.start(signal);
    await factory.waitForCacheSync(signal);
    server.patch('pods', 'a', { metadata: { labels: { v: '2' } } });
    server.create('pods', serverPod('b'));
    await waitFor(() => healthy.seen.length === 3 && updates.length === 1);

    expect(updates).toEqual([['1', '2']]);
    expect(healthy.seen).toEqual([
      'add default/a initial',
      expect.stringMatching(/^update default\/a \d+→\d+$/),
      'add default/b',
    ]);
    await waitFor(() => informer.stats().handlerErrors === 3);
    expect(informer.stats().handlers.map((h) => [h.name, h.errors])).toEqual([
      ['broken', 3],
      ['healthy', 0],
      ['handler-3', 0],
    ]);
    // Logged once at error (with the key); the repeats within the minute go to debug.
    const loud = logs.lines.filter((l) => l.level >= 50 && l.err?.message?.includes('handler bug'));
    expect(loud).toEqual([expect.objectContaining({ handler: 'broken', key: 'default/a' })]);
    expect(informer.isStopped()).toBe(false);
  });
});

describe('forResource, metadata-only and scoped factories', () => {
  test('forResource serves a CRD registered on the server', async () => {
    const server = await startServer();
    server.registerResource(WIDGETS);
    const widgets = { group: 'example.com', version: 'v1', resource: 'widgets' };
    server.create(widgets, {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w1', namespace: 'default' },
      spec: { color: 'red' },
    });
    const { factory, signal } = newFactory(server);
    const { informer, lister } = factory.forResource<KubeObject & { spec?: { color?: string } }>(widgets);
    const seen = recorder<KubeObject>();
    informer.addEventHandler(seen.handler);
    factory.start(signal);
    expect(await factory.waitForCacheSync(signal)).toEqual(new Map([['widgets.v1.example.com', true]]));
    expect(lister.namespace('default').get('w1')?.spec?.color).toBe('red');
    server.patch(widgets, 'w1', { spec: { color: 'blue' } });
    await waitFor(() => lister.namespace('default').get('w1')?.spec?.color === 'blue');
    expect(server.requests.filter((r) => r.resource === 'widgets').map((r) => `${r.verb} ${r.path}`)).toEqual(
      ['list /apis/example.com/v1/widgets', 'watch /apis/example.com/v1/widgets'],
    );
    expect(seen.seen).toEqual(['add default/w1 initial', expect.stringMatching(/^update default\/w1/)]);
  });

  test('a metadataOnly informer caches PartialObjectMetadata (no spec) from both the list and the watch', async () => {
    const server = await startServer();
    server.create('pods', serverPod('a', { labels: { app: 'web' } }));
    const { factory, signal } = newFactory(server);
    const { lister } = factory.forResource({ version: 'v1', resource: 'pods' }, { metadataOnly: true });
    factory.start(signal);
    await factory.waitForCacheSync(signal);
    server.create('pods', serverPod('b'));
    await waitFor(() => lister.list().length === 2);

    for (const obj of lister.list()) {
      expect(obj).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
      expect(Object.keys(obj).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
    }
    expect(lister.namespace('default').get('a')?.metadata.labels).toEqual({ app: 'web' });
    expect(server.requests.map((r) => r.accept)).toEqual([
      'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
      'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
    ]);
  });

  test('a namespace-scoped factory lists and watches one namespace only', async () => {
    const server = await startServer();
    server.create('pods', serverPod('team-a/one'));
    server.create('pods', serverPod('team-b/two'));
    const { factory, signal } = newFactory(server, { namespace: 'team-a' });
    const { lister } = factory.core.v1.pods();
    factory.start(signal);
    await factory.waitForCacheSync(signal);
    server.create('pods', serverPod('team-a/three'));
    server.create('pods', serverPod('team-b/four'));
    await waitFor(() => lister.list().length === 2);

    expect(
      lister
        .list()
        .map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`)
        .sort(),
    ).toEqual(['team-a/one', 'team-a/three']);
    expect(new Set(server.requests.map((r) => r.path))).toEqual(new Set(['/api/v1/namespaces/team-a/pods']));
  });

  test('a label-selected factory: objects entering the selector are adds, objects leaving it are deletes', async () => {
    const server = await startServer();
    server.create('pods', serverPod('web-1', { labels: { app: 'web' } }));
    server.create('pods', serverPod('db-1', { labels: { app: 'db' } }));
    const { factory, signal } = newFactory(server, { tweakListOptions: { labelSelector: 'app=web' } });
    const { informer, lister } = factory.core.v1.pods();
    const seen = recorder<V1Pod>();
    informer.addEventHandler(seen.handler);
    factory.start(signal);
    await factory.waitForCacheSync(signal);
    server.patch('pods', 'db-1', { metadata: { labels: { app: 'web' } } }); // enters
    server.patch('pods', 'web-1', { metadata: { labels: { app: 'db' } } }); // leaves
    await waitFor(() => seen.seen.length === 3);

    expect(seen.seen).toEqual(['add default/web-1 initial', 'add default/db-1', 'delete default/web-1']);
    expect(names(lister.list())).toEqual(['db-1']);
    expect(new Set(server.requests.map((r) => r.query.labelSelector))).toEqual(new Set(['app=web']));
  });
});

describe('waitForCacheSync surfaces failures instead of hanging', () => {
  test("403 on the list: it rejects with ERR_CACHE_SYNC_FAILED whose cause is the server's ERR_FORBIDDEN", async () => {
    const server = await startServer();
    server.faults.failNext({ status: 403, verbs: ['list'], count: 100 });
    const { factory, signal } = newFactory(server);
    factory.core.v1.pods();
    factory.start(signal);
    const err: unknown = await factory.waitForCacheSync(AbortSignal.timeout(3000)).catch((e: unknown) => e);

    expect(isKinformerError(err, ErrorCodes.CACHE_SYNC_FAILED)).toBe(true);
    const cause = (err as Error).cause;
    expect(isKinformerError(cause, ErrorCodes.FORBIDDEN)).toBe(true);
    expect((cause as Error).message).toBe(
      'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" at the cluster scope',
    );
    expect(err).toMatchObject({
      httpStatus: 403,
      details: { informer: 'pods.v1', causeCode: ErrorCodes.FORBIDDEN },
    });
  });

  test('an unknown resource: it rejects with ERR_CACHE_SYNC_FAILED whose cause is ERR_NOT_FOUND', async () => {
    const server = await startServer();
    const { factory, signal } = newFactory(server);
    factory.core.v1.pods();
    factory.forResource({ group: 'example.com', version: 'v1', resource: 'gadgets' });
    factory.start(signal);
    const err: unknown = await factory.waitForCacheSync(AbortSignal.timeout(3000)).catch((e: unknown) => e);

    expect(isKinformerError(err, ErrorCodes.CACHE_SYNC_FAILED)).toBe(true);
    expect(isKinformerError((err as Error).cause, ErrorCodes.NOT_FOUND)).toBe(true);
    expect(err).toMatchObject({ httpStatus: 404, details: { informer: 'gadgets.v1.example.com' } });
  });

  test('a 500 is worth retrying: waitForCacheSync keeps waiting and resolves once the list succeeds', async () => {
    const server = await startServer();
    server.create('pods', serverPod('a'));
    server.faults.failNext({ status: 500, verbs: ['list'] });
    const { factory, signal } = newFactory(server);
    const { lister } = factory.core.v1.pods();
    factory.start(signal);
    // The reflector's default backoff waits 0.8–1.6 s before the second list.
    expect(await factory.waitForCacheSync(AbortSignal.timeout(4000))).toEqual(new Map([['pods.v1', true]]));
    expect(lister.list()).toHaveLength(1);
  });
});

describe('shutdown', () => {
  test('leaves no watch open on the server and no socket open in the process', async () => {
    const server = await startServer();
    server.create('pods', serverPod('a'));
    const sockets = (): number =>
      process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
    await waitFor(() => sockets() === 0); // what earlier tests closed is gone
    const baseline = 0;
    const factory = new SharedInformerFactory(server.kubeConfig());
    factory.core.v1.pods();
    factory.core.v1.configMaps();
    factory.forResource({ version: 'v1', resource: 'pods' }, { metadataOnly: true });
    const controller = new AbortController();
    factory.start(controller.signal);
    await factory.waitForCacheSync(controller.signal);
    await server.waitForWatchers(3);
    expect(sockets()).toBeGreaterThan(baseline);

    await factory.shutdown();
    await waitFor(() => server.openWatchCount() === 0 && sockets() === baseline, {
      describe: () => ({ watches: server.openWatchCount(), sockets: sockets(), baseline }),
    });
    expect(factory.core.v1.pods().informer.isStopped()).toBe(true);
  });
});

describe('SharedInformerFactory relists without holding unchanged objects twice', () => {
  async function relistedCache(options: ConstructorParameters<typeof SharedInformerFactory>[1]) {
    const server = await startServer();
    for (let j = 0; j < 20; j++) server.create('pods', serverPod(`default/pod-${j}`));
    const { factory, signal } = newFactory(server, options);
    const { informer } = factory.core.v1.pods();
    factory.start(signal);
    await factory.waitForCacheSync(signal);
    const before = informer.getStore().getByKey('default/pod-0');
    server.patch('pods', 'default/pod-1', { metadata: { labels: { changed: 'yes' } } });
    await waitFor(() => informer.getStore().getByKey('default/pod-1')?.metadata?.labels?.changed === 'yes');
    const relists = informer.reflectorStats()?.relists ?? 0;
    server.faults.injectIntoWatches({
      error: {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        code: 410,
        reason: 'Expired',
        message: 'too old',
      },
    });
    server.patch('pods', 'default/pod-2', { metadata: { labels: { changed: 'yes' } } });
    await waitFor(
      () =>
        (informer.reflectorStats()?.relists ?? 0) > relists &&
        informer.getStore().getByKey('default/pod-2')?.metadata?.labels?.changed === 'yes',
    );
    return { before, after: informer.getStore().getByKey('default/pod-0'), informer };
  }

  it('keeps the cached object of every item the server did not change (same resourceVersion)', async () => {
    const { before, after } = await relistedCache({});
    expect(before).toBeDefined();
    expect(after).toBe(before);
  });

  it('does not reuse cached objects when a transform shapes them', async () => {
    const { before, after } = await relistedCache({ transform: (o) => o });
    expect(after).toEqual(before);
    expect(after).not.toBe(before);
  });
});
