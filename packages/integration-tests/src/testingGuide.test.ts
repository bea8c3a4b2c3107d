// The examples of docs/testing.md, verbatim (between the `// docs:` markers), so that the guide
// only shows code that runs. Keep the two in step when changing either.

import { createLogger, deletionHandlingMetaNamespaceKeyFunc as keyOf, ErrorCodes, splitMetaNamespaceKey } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import { SharedIndexInformer, SharedInformerFactory, waitForCacheSync } from 'kinformer';
import { FakeApiServer, FakeListerWatcher } from '@kinformer/testing';
import { ObjectClient, typedResource } from '@kinformer/client-node';
import { RateLimitingQueue } from '@kinformer/workqueue';
import { CoreV1Api, CustomObjectsApi, loadYaml, type KubeConfig, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';

// docs: helpers
/** A custom resource of the examples. */
type Widget = { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string }; spec?: { size?: number }; status?: { ready?: boolean } };
/** A minimal pod: `name` or `namespace/name`, with optional labels and resourceVersion. */
function pod(nameOrKey: string, labels?: Record<string, string>, resourceVersion?: string): V1Pod {
  const slash = nameOrKey.indexOf('/');
  const namespace = slash === -1 ? 'default' : nameOrKey.slice(0, slash);
  const name = nameOrKey.slice(slash + 1);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, ...(labels && { labels }), ...(resourceVersion && { resourceVersion }) },
    spec: { containers: [{ name: 'app', image: 'nginx' }] },
  };
}
// docs: end

describe('quick start', () => {
  // docs: quick-start
  let server: FakeApiServer;
  let factory: SharedInformerFactory;
  afterEach(async () => {
    await factory?.shutdown(); // stops every informer, closes every watch
    await server?.close(); // ends every stream, closes every socket
  });

  test('my handler sees the pods that exist and the ones created later', async () => {
    server = await FakeApiServer.start();
    server.create('pods', pod('web-1'));
    factory = new SharedInformerFactory(server.kubeConfig());
    const names: string[] = [];
    const handler = factory.core.v1.pods().informer.on('add', (p) => void names.push(p.metadata?.name ?? ''));
    factory.start(AbortSignal.timeout(10_000));
    await waitForCacheSync(AbortSignal.timeout(5_000), handler.hasSynced); // initial adds handled
    server.create('pods', pod('web-2'));
    await server.waitFor(() => names.length === 2); // bounded wait (5 s), never a sleep
    expect(names).toEqual(['web-1', 'web-2']);
  });
  // docs: end
});

// docs: controller
/** The controller under test: gives every pod in `default` the label `seen=true`, through the API. */
async function runLabeler(kubeConfig: KubeConfig, signal: AbortSignal): Promise<void> {
  const factory = new SharedInformerFactory(kubeConfig, { namespace: 'default' });
  const { informer, lister } = factory.core.v1.pods();
  const queue = new RateLimitingQueue<string>({ name: 'labeler' });
  informer.addEventHandler({ onAdd: (p) => queue.add(keyOf(p)), onUpdate: (_old, p) => queue.add(keyOf(p)) });
  const api = kubeConfig.makeApiClient(CoreV1Api);
  signal.addEventListener('abort', () => queue.shutdown(), { once: true });
  factory.start(signal);
  await factory.waitForCacheSync(signal);
  for (;;) {
    const { item: key, shutdown } = await queue.get();
    if (shutdown) break;
    try {
      const { name } = splitMetaNamespaceKey(key);
      const current = lister.namespace('default').get(name);
      if (current !== undefined && current.metadata?.labels?.seen !== 'true') {
        const labels = { ...current.metadata?.labels, seen: 'true' };
        await api.patchNamespacedPod({ name, namespace: 'default', body: [{ op: 'add', path: '/metadata/labels', value: labels }] });
      }
      queue.forget(key);
    } catch {
      queue.addRateLimited(key); // retried after 5 ms, 10 ms, 20 ms…
    } finally {
      queue.done(key);
    }
  }
  await factory.shutdown();
}
// docs: end

describe('testing a controller', () => {
  // docs: controller-test
  let server: FakeApiServer;
  afterEach(() => server?.close());

  test('the labeler labels existing and new pods, and retries a patch the server refused', async () => {
    server = await FakeApiServer.start();
    server.create('pods', pod('a'));
    server.faults.failNext({ status: 500, verbs: ['patch'] }); // the first PATCH fails
    const stop = new AbortController();
    const done = runLabeler(server.kubeConfig(), stop.signal);
    server.create('pods', pod('b', { app: 'web' }));

    await server.waitFor(() => server.list<V1Pod>('pods').every((p) => p.metadata?.labels?.seen === 'true'));
    stop.abort();
    await done;

    expect(server.get<V1Pod>('pods', 'b').metadata?.labels).toEqual({ app: 'web', seen: 'true' });
    const patches = server.requests.filter((r) => r.verb === 'patch').map((r) => `${r.name} ${r.status}`);
    expect(patches.filter((p) => p.startsWith('a '))).toEqual(['a 500', 'a 200']); // retried once
    expect(patches.filter((p) => p.startsWith('b '))).toEqual(['b 200']); // our own update did not loop
  });
  // docs: end
});

describe('seeding and churn', () => {
  let server: FakeApiServer;
  afterEach(() => server?.close());

  test('objects, custom resources and writes', async () => {
    // docs: seeding
    server = await FakeApiServer.start({ historySize: 50_000 });
    server.createMany(
      'pods',
      Array.from({ length: 3000 }, (_, i) => pod(`team-${i % 10}/pod-${i}`, { app: i % 2 ? 'db' : 'web' })),
    );
    server.registerResource({ group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true, customResource: true });
    const widgets = { group: 'example.com', version: 'v1', resource: 'widgets' };
    server.create(widgets, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'default' }, spec: { size: 1 } });
    // docs: end

    // docs: churn
    const before = server.resourceVersion; // the global revision, as a string
    server.patch('pods', 'team-1/pod-1', { metadata: { labels: { app: 'cache' } } }); // merge patch
    const p2 = server.get<V1Pod>('pods', 'team-2/pod-2');
    server.update('pods', { ...p2, spec: { ...p2.spec!, nodeName: 'node-1' } }); // PUT (RV must be current)
    server.delete('pods', 'team-3/pod-3'); // two writes: deletionTimestamp (MODIFIED), then DELETED
    server.patch(widgets, 'default/w1', [{ op: 'replace', path: '/spec/size', value: 3 }], { type: 'json' });
    server.bumpResourceVersion(10); // writes to "other types": bookmarks and list RVs move on
    expect(Number(server.resourceVersion)).toBe(Number(before) + 5 + 10);
    // docs: end
    expect(server.list('pods')).toHaveLength(2999);
    expect(server.get<{ spec: { size: number } } & V1Pod>(widgets, 'default/w1').spec.size).toBe(3);
  });
});

describe('CRDs and namespaces, as in a cluster', () => {
  let server: FakeApiServer;
  afterEach(() => server?.close());

  test('a CRD from YAML is served at once; its objects get the schema defaults; writes need their namespace', async () => {
    const crdYaml = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {color: {type: string, default: blue}}}
`;
    // docs: crds
    server = await FakeApiServer.start();
    server.create('customresourcedefinitions', loadYaml<KubernetesObject>(crdYaml)); // e.g. read from config/crd/
    server.create('namespaces', { metadata: { name: 'team-a' } }); // HTTP writes into a namespace need it
    const api = server.kubeConfig().makeApiClient(CustomObjectsApi);
    const widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: {} };
    await api.createNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'team-a', plural: 'widgets', body: widget });
    expect(server.get<{ spec: unknown } & KubernetesObject>('widgets.example.com', 'team-a/w1').spec).toEqual({ color: 'blue' });
    await expect(
      api.createNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'nope', plural: 'widgets', body: widget }),
    ).rejects.toMatchObject({ code: 404 }); // namespaces "nope" not found
    // docs: end
  });
});

describe('writes as in a cluster', () => {
  let server: FakeApiServer;
  afterEach(() => server?.close());

  test('status split, apply conflicts, dry run', async () => {
    // docs: writes
    server = await FakeApiServer.start();
    server.registerResource({
      group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true,
      customResource: true,
      subresources: { status: {} },
      listTypes: { 'spec.ports': { type: 'map', keys: ['port'] } }, // else CR lists apply atomically
    });
    const widgets = typedResource<Widget>({ group: 'example.com', version: 'v1', resource: 'widgets' });
    const client = new ObjectClient(server.kubeConfig(), { fieldManager: 'my-controller' });
    const w = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' } };
    await client.apply(widgets, { ...w, spec: { size: 1 } }); // server-side apply: creates it
    const key = { namespace: 'default', name: 'w' };
    const viaObject = await client.patch(widgets, key, { status: { ready: true } });
    expect(viaObject.status).toBeUndefined(); // only /status writes status
    await client.patchStatus(widgets, key, { status: { ready: true } });
    const rv = server.resourceVersion;
    await client.delete(widgets, key, { dryRun: true });
    expect(server.resourceVersion).toBe(rv); // a dry run changes nothing
    const theirs = client.apply(widgets, { ...w, spec: { size: 2 } }, { fieldManager: 'someone-else' });
    await expect(theirs).rejects.toMatchObject({ status: { reason: 'Conflict' } }); // .spec.size is mine
    // docs: end
  });
});

describe('faults and requests', () => {
  let server: FakeApiServer;
  let factory: SharedInformerFactory;
  afterEach(async () => {
    await factory?.shutdown();
    await server?.close();
  });

  test('a dropped watch resumes from the last resourceVersion: no relist, nothing lost', async () => {
    // docs: faults
    server = await FakeApiServer.start();
    factory = new SharedInformerFactory(server.kubeConfig());
    const { lister } = factory.core.v1.pods();
    factory.start(AbortSignal.timeout(10_000));
    await factory.waitForCacheSync(AbortSignal.timeout(5_000));
    const listRV = server.resourceVersion;
    const a = server.create('pods', pod('a'));
    await server.waitFor(() => lister.list().length === 1);

    server.faults.dropWatches(); // the connection breaks mid-stream
    server.create('pods', pod('b')); // written while the client reconnects
    await server.waitFor(() => lister.list().length === 2);

    const calls = server.requests.map((r) => `${r.verb} ${r.query.resourceVersion}`);
    expect(calls).toEqual(['list 0', `watch ${listRV}`, `watch ${a.metadata?.resourceVersion}`]);
    // docs: end
  });

  test('403 makes waitForCacheSync reject with the cause', async () => {
    // docs: forbidden
    server = await FakeApiServer.start();
    server.faults.failNext({ status: 403, verbs: ['list'], count: 10 });
    factory = new SharedInformerFactory(server.kubeConfig());
    factory.core.v1.pods();
    factory.start(AbortSignal.timeout(10_000));
    await expect(factory.waitForCacheSync(AbortSignal.timeout(5_000))).rejects.toMatchObject({
      code: ErrorCodes.CACHE_SYNC_FAILED,
      cause: { code: ErrorCodes.FORBIDDEN, httpStatus: 403 },
    });
    // docs: end
  });

  test('an outage: the server restarts and answers 429 while its cache warms up; the informer resumes without relisting', async () => {
    server = await FakeApiServer.start();
    factory = new SharedInformerFactory(server.kubeConfig());
    const { lister } = factory.core.v1.pods();
    factory.start(AbortSignal.timeout(10_000));
    await factory.waitForCacheSync(AbortSignal.timeout(5_000));
    server.create('pods', pod('a'));
    await server.waitFor(() => lister.list().length === 1);
    // docs: outage
    server.faults.failNext({ status: 429, verbs: ['watch'], retryAfterSeconds: 1 });
    await server.faults.restart();
    // docs: end
    server.delete('pods', 'a');
    server.create('pods', pod('b'));
    await server.waitFor(() => lister.list().map((p) => p.metadata?.name).join() === 'b');
    const watches = server.requests.filter((r) => r.verb === 'watch').map((r) => r.status);
    expect(watches).toEqual([200, 429, 200]); // the third after Retry-After, from the last resourceVersion
    expect(server.requests.filter((r) => r.verb === 'list')).toHaveLength(1);
  });

  test('logs are captured in memory', async () => {
    // docs: logs
    const lines: Array<{ level: number; msg: string; code?: string }> = [];
    const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
    server = await FakeApiServer.start();
    server.faults.failNext({ status: 500, verbs: ['list'] });
    factory = new SharedInformerFactory(server.kubeConfig(), { logger });
    factory.core.v1.pods();
    factory.start(AbortSignal.timeout(10_000));
    await factory.waitForCacheSync(AbortSignal.timeout(5_000)); // the second list (after 0.8–1.6 s) works
    expect(lines).toContainEqual(expect.objectContaining({ level: 50, code: ErrorCodes.INTERNAL, msg: 'failed to list and watch; retrying after backoff' }));
    // docs: end
  });
});

describe('unit tests without HTTP', () => {
  test('FakeListerWatcher and FakeClock drive an informer: list, watch events, resync', async () => {
    // docs: unit
    const clock = new FakeClock();
    const lw = new FakeListerWatcher<V1Pod>().enqueueList({ metadata: { resourceVersion: '10' }, items: [pod('a', {}, '5')] });
    const informer = new SharedIndexInformer<V1Pod>(lw, { clock, resyncPeriodMs: 60_000 });
    const seen: string[] = [];
    informer.addEventHandler({
      onAdd: (p) => void seen.push(`add ${p.metadata?.name}`),
      onUpdate: (_old, p) => void seen.push(`update ${p.metadata?.name}`),
    });
    const stop = new AbortController();
    const done = informer.run(stop.signal);

    const watch = await lw.nextWatch(); // it listed, and now watches from the list's RV
    expect(watch.options.resourceVersion).toBe('10');
    watch.add(pod('b', {}, '11'));
    await lw.waitFor(() => seen.length === 2);
    await clock.tick(60_000); // one resync period: every cached object again, as an update
    await lw.waitFor(() => seen.length === 4);
    expect(seen).toEqual(['add a', 'add b', 'update a', 'update b']);
    expect(lw.listCalls.map((o) => o.resourceVersion)).toEqual(['0']);
    stop.abort();
    await done;
    // docs: end
  });
});

describe('docs/testing.md', () => {
  test('every line of its code examples is code of this file (the guide shows only tested code)', async () => {
    const { readFile } = await import('node:fs/promises');
    const guide = await readFile(new URL('../../../docs/testing.md', import.meta.url), 'utf8');
    const self = await readFile(new URL(import.meta.url), 'utf8');
    const ours = new Set(self.split('\n').map((l) => l.trim()));
    const blocks = [...guide.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks.length).toBeGreaterThanOrEqual(9);
    const missing = blocks
      .flatMap((b) => b.split('\n'))
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('import ') && !ours.has(l));
    expect(missing).toEqual([]);
  });
});
