import { ErrorCodes, KinformerError } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import type { GroupVersionResource, KubeObject } from '@kinformer/core';
import { FakeListerWatcher } from '@kinformer/reflector/testing';
import type { V1Pod } from '@kubernetes/client-node';
import { dropManagedFields } from '@kinformer/informer';
import { SharedInformerFactory } from './sharedInformerFactory.js';
import type { ListerWatcherRequest } from '@kinformer/informer/internal';
import type { SharedInformerFactoryOptions } from './sharedInformerFactory.js';
import { pod, podList, waitFor } from '@kinformer/test-tools';

interface Made {
  gvr: GroupVersionResource;
  request: ListerWatcherRequest;
  lw: FakeListerWatcher<KubeObject>;
}

/** A factory whose ListerWatchers are FakeListerWatchers; `script` prepares each new one. */
function fakeFactory(
  options: SharedInformerFactoryOptions = {},
  script: (lw: FakeListerWatcher<KubeObject>, gvr: GroupVersionResource) => void = (lw) =>
    void lw.enqueueList(podList('1')),
) {
  const made: Made[] = [];
  const clock = new FakeClock();
  const factory = new SharedInformerFactory(undefined, {
    clock,
    ...options,
    listerWatcherFactory: (gvr, request) => {
      const lw = new FakeListerWatcher<KubeObject>();
      script(lw, gvr);
      // `cached` (the informer's cache, for reusing list items) is a function: compared separately.
      const { cached: _cached, ...rest } = request;
      made.push({ gvr, request: rest, lw });
      return lw;
    },
  });
  return { factory, made, clock };
}

describe('SharedInformerFactory', () => {
  it('shares one informer per resource, namespace, selectors and metadata-only flag', () => {
    const { factory, made } = fakeFactory();
    const pods = factory.core.v1.pods();
    expect(factory.core.v1.pods()).toBe(pods);
    expect(factory.forResource({ version: 'v1', resource: 'pods' }).informer).toBe(pods.informer);
    expect(factory.forResource({ group: '', version: 'v1', resource: 'pods' }).informer).toBe(pods.informer);
    const others = [
      factory.core.v1.pods({ namespace: 'kube-system' }).informer,
      factory.core.v1.pods({ labelSelector: 'app=web' }).informer,
      factory.core.v1.pods({ fieldSelector: 'spec.nodeName=n1' }).informer,
      factory.forResource({ version: 'v1', resource: 'pods' }, { metadataOnly: true }).informer,
      factory.apps.v1.deployments().informer,
    ];
    expect(new Set([pods.informer, ...others]).size).toBe(6);
    expect(made.map((m) => m.request)).toEqual([
      { namespace: '', metadataOnly: false },
      { namespace: 'kube-system', metadataOnly: false },
      { namespace: '', metadataOnly: false, labelSelector: 'app=web' },
      { namespace: '', metadataOnly: false, fieldSelector: 'spec.nodeName=n1' },
      { namespace: '', metadataOnly: true },
      { namespace: '', metadataOnly: false },
    ]);
    expect(made[5]!.gvr).toEqual({ group: 'apps', version: 'v1', resource: 'deployments' });
    expect(others.map((i) => i.name)).toEqual([
      'pods.v1?namespace=kube-system',
      'pods.v1?labelSelector=app%3Dweb',
      'pods.v1?fieldSelector=spec.nodeName%3Dn1',
      'pods.v1?metadataOnly=true',
      'deployments.v1.apps',
    ]);
  });

  it('maps every typed accessor to its group, version and resource', () => {
    const { factory, made } = fakeFactory();
    const accessors = [
      factory.core.v1.pods,
      factory.core.v1.services,
      factory.core.v1.configMaps,
      factory.core.v1.secrets,
      factory.core.v1.nodes,
      factory.core.v1.namespaces,
      factory.core.v1.events,
      factory.core.v1.serviceAccounts,
      factory.core.v1.endpoints,
      factory.apps.v1.deployments,
      factory.apps.v1.replicaSets,
      factory.apps.v1.statefulSets,
      factory.apps.v1.daemonSets,
      factory.batch.v1.jobs,
      factory.batch.v1.cronJobs,
      factory.networking.v1.ingresses,
      factory.discovery.v1.endpointSlices,
      factory.coordination.v1.leases,
      factory.rbac.v1.roles,
      factory.rbac.v1.roleBindings,
      factory.rbac.v1.clusterRoles,
      factory.rbac.v1.clusterRoleBindings,
    ];
    for (const get of accessors) get();
    expect(
      made.map((m) =>
        m.gvr.group
          ? `${m.gvr.group}/${m.gvr.version}/${m.gvr.resource}`
          : `${m.gvr.version}/${m.gvr.resource}`,
      ),
    ).toEqual([
      'v1/pods',
      'v1/services',
      'v1/configmaps',
      'v1/secrets',
      'v1/nodes',
      'v1/namespaces',
      'v1/events',
      'v1/serviceaccounts',
      'v1/endpoints',
      'apps/v1/deployments',
      'apps/v1/replicasets',
      'apps/v1/statefulsets',
      'apps/v1/daemonsets',
      'batch/v1/jobs',
      'batch/v1/cronjobs',
      'networking.k8s.io/v1/ingresses',
      'discovery.k8s.io/v1/endpointslices',
      'coordination.k8s.io/v1/leases',
      'rbac.authorization.k8s.io/v1/roles',
      'rbac.authorization.k8s.io/v1/rolebindings',
      'rbac.authorization.k8s.io/v1/clusterroles',
      'rbac.authorization.k8s.io/v1/clusterrolebindings',
    ]);
  });

  it('applies the factory namespace and tweakListOptions (object form ANDed, function form as given)', () => {
    const byObject = fakeFactory({ namespace: 'team-a', tweakListOptions: { labelSelector: 'owner=me' } });
    byObject.factory.core.v1.pods();
    byObject.factory.core.v1.pods({ labelSelector: 'app=web', namespace: '' });
    expect(byObject.made.map((m) => m.request)).toEqual([
      { namespace: 'team-a', metadataOnly: false, labelSelector: 'owner=me' },
      { namespace: '', metadataOnly: false, labelSelector: 'app=web,owner=me' },
    ]);
    const byFunction = fakeFactory({
      tweakListOptions: (o) => ({ ...o, fieldSelector: 'status.phase=Running' }),
    });
    byFunction.factory.core.v1.pods({ labelSelector: 'app=web' });
    expect(byFunction.made[0]!.request).toEqual({
      namespace: '',
      metadataOnly: false,
      labelSelector: 'app=web',
      fieldSelector: 'status.phase=Running',
    });
  });

  it('starts only informers not yet started; informers asked for later start with the next start call', async () => {
    const { factory, made } = fakeFactory();
    const ac = new AbortController();
    const pods = factory.core.v1.pods();
    factory.start(ac.signal);
    factory.start(ac.signal);
    const services = factory.core.v1.services();
    expect(pods.informer.hasStarted()).toBe(true);
    expect(services.informer.hasStarted()).toBe(false);
    const firstSync = await factory.waitForCacheSync(ac.signal);
    expect([...firstSync]).toEqual([['pods.v1', true]]); // only started informers are waited for
    factory.start(ac.signal);
    expect(services.informer.hasStarted()).toBe(true);
    const synced = await factory.waitForCacheSync(ac.signal);
    expect(synced).toEqual(
      new Map([
        ['pods.v1', true],
        ['services.v1', true],
      ]),
    );
    expect(made.map((m) => m.lw.listCalls.length)).toEqual([1, 1]);
    await factory.shutdown();
  });

  it('gives every informer a namespace index, and a lister over its cache', async () => {
    const { factory, made } = fakeFactory(
      {},
      (lw) =>
        void lw.enqueueList(
          podList(
            '10',
            pod('a', '1', 'ns1'),
            pod('b', '2', 'ns2'),
            pod('c', '3', 'ns1', { metadata: { labels: { app: 'web' } } }),
          ),
        ),
    );
    const { informer, lister } = factory.core.v1.pods();
    expect(Object.keys(informer.getIndexer().getIndexers())).toEqual(['namespace']);
    factory.start(new AbortController().signal);
    await factory.waitForCacheSync(new AbortController().signal);
    expect(
      lister
        .namespace('ns1')
        .list()
        .map((p: V1Pod) => p.metadata?.name)
        .sort(),
    ).toEqual(['a', 'c']);
    expect(
      lister
        .namespace('ns1')
        .list('app=web')
        .map((p) => p.metadata?.name),
    ).toEqual(['c']);
    expect(lister.namespace('ns2').get('b')?.metadata?.resourceVersion).toBe('2');
    expect(lister.list()).toHaveLength(3);
    (await made[0]!.lw.nextWatch()).add(pod('d', '11', 'ns2'));
    await waitFor(() => lister.namespace('ns2').list().length === 2, 'd in the lister');
    await factory.shutdown();
  });

  it("applies the factory's transform to every informer", async () => {
    const withFields = (name: string) => {
      const p = pod(name, '1');
      p.metadata!.managedFields = [{ manager: 'kubectl' }];
      return p;
    };
    const { factory } = fakeFactory(
      { transform: dropManagedFields },
      (lw) => void lw.enqueueList(podList('10', withFields('a'))),
    );
    const { lister } = factory.core.v1.configMaps();
    factory.start(new AbortController().signal);
    await factory.waitForCacheSync(new AbortController().signal);
    expect(lister.namespace('default').get('a')?.metadata).toEqual({
      name: 'a',
      namespace: 'default',
      resourceVersion: '1',
      uid: 'uid-a',
    });
    await factory.shutdown();
  });

  it('resolves waitForCacheSync with false for informers not synced when the signal aborts', async () => {
    const { factory } = fakeFactory({}, (lw, gvr) => {
      if (gvr.resource === 'pods') lw.enqueueList(podList('1')); // services' list hangs
    });
    factory.core.v1.pods();
    factory.core.v1.services();
    factory.start(new AbortController().signal);
    const ac = new AbortController();
    const wait = factory.waitForCacheSync(ac.signal);
    await waitFor(() => factory.core.v1.pods().informer.hasSynced(), 'pods');
    ac.abort();
    await expect(wait).resolves.toEqual(
      new Map([
        ['pods.v1', true],
        ['services.v1', false],
      ]),
    );
    await factory.shutdown();
  });

  it.each([
    [403, 'Forbidden', ErrorCodes.FORBIDDEN],
    [404, 'NotFound', ErrorCodes.NOT_FOUND],
    [401, 'Unauthorized', ErrorCodes.UNAUTHORIZED],
  ])('rejects waitForCacheSync when the server refuses a list with %d', async (code, reason, causeCode) => {
    const refusal = KinformerError.fromStatus({ code, reason, message: `${reason}: no` });
    const { factory } = fakeFactory({}, (lw, gvr) => {
      if (gvr.resource === 'secrets') lw.enqueueList(refusal, refusal, refusal);
      else lw.enqueueList(podList('1'));
    });
    factory.core.v1.pods();
    factory.core.v1.secrets({ namespace: 'prod' });
    factory.start(new AbortController().signal);
    const err = await factory.waitForCacheSync(new AbortController().signal).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: ErrorCodes.CACHE_SYNC_FAILED,
      httpStatus: code,
      cause: { code: causeCode },
    });
    expect((err as Error).message).toContain('secrets.v1?namespace=prod cannot sync');
    await factory.shutdown();
  });

  it('shuts everything down: informers stop, no timers remain, start becomes a no-op', async () => {
    const { factory, made, clock } = fakeFactory({ defaultResyncMs: 30_000 });
    const pods = factory.core.v1.pods();
    const nodes = factory.core.v1.nodes();
    const userSignal = new AbortController();
    factory.start(userSignal.signal);
    await factory.waitForCacheSync(userSignal.signal);
    await Promise.all(made.map((m) => m.lw.nextWatch()));
    expect(clock.pendingTimers()).toBeGreaterThan(0);
    await factory.shutdown();
    expect(pods.informer.isStopped()).toBe(true);
    expect(nodes.informer.isStopped()).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
    expect(made.every((m) => m.lw.watches.every((w) => w.isFinished))).toBe(true);
    const late = factory.core.v1.services();
    factory.start(userSignal.signal);
    expect(late.informer.hasStarted()).toBe(false);
    await factory.shutdown(); // twice is fine
  });

  it("stops the informers of a start call when that call's signal aborts", async () => {
    const { factory } = fakeFactory({}, (lw) => void lw.enqueueList(podList('1')));
    const first = new AbortController();
    const pods = factory.core.v1.pods();
    factory.start(first.signal);
    const second = new AbortController();
    const nodes = factory.core.v1.nodes();
    factory.start(second.signal);
    await factory.waitForCacheSync(new AbortController().signal);
    first.abort();
    await waitFor(() => pods.informer.isStopped(), 'pods to stop');
    expect(nodes.informer.isStopped()).toBe(false);
    await factory.shutdown();
    expect(nodes.informer.isStopped()).toBe(true);
  });

  it('gives each informer its own reflector options and exposes the reflector counters', async () => {
    const asked: string[] = [];
    const { factory, made } = fakeFactory({
      reflectorOptions: (key) => {
        asked.push(key);
        return { pageSize: 7 };
      },
    });
    const pods = factory.core.v1.pods();
    factory.core.v1.configMaps();
    expect(asked).toEqual(['pods.v1', 'configmaps.v1']);
    expect(pods.informer.reflectorStats()).toBeUndefined();
    const ac = new AbortController();
    factory.start(ac.signal);
    await factory.waitForCacheSync(ac.signal);
    expect(made[0]!.lw.listCalls[0]!.limit).toBe(7);
    expect(pods.informer.reflectorStats()?.lists).toBe(1);
    ac.abort();
    await factory.shutdown();
  });

  it('needs a KubeConfig or a listerWatcherFactory, and checks its options', () => {
    expect(() => new SharedInformerFactory(undefined)).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
    const listerWatcherFactory = (): FakeListerWatcher<KubeObject> => new FakeListerWatcher();
    expect(() => new SharedInformerFactory(undefined, { listerWatcherFactory, defaultResyncMs: -5 })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
    const factory = new SharedInformerFactory(undefined, { listerWatcherFactory });
    expect(() => factory.forResource({ version: '', resource: 'pods' })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
  });

  it('caches PartialObjectMetadata for metadata-only informers', async () => {
    const { factory, made } = fakeFactory(
      {},
      (lw) =>
        void lw.enqueueList({
          metadata: { resourceVersion: '5' },
          items: [
            {
              apiVersion: 'meta.k8s.io/v1',
              kind: 'PartialObjectMetadata',
              metadata: { name: 'web', namespace: 'default', resourceVersion: '4' },
            },
          ],
        }),
    );
    const { informer, lister } = factory.forResource(
      { group: 'apps', version: 'v1', resource: 'deployments' },
      { metadataOnly: true },
    );
    factory.start(new AbortController().signal);
    await factory.waitForCacheSync(new AbortController().signal);
    expect(made[0]!.request.metadataOnly).toBe(true);
    expect(informer.name).toBe('deployments.v1.apps?metadataOnly=true');
    expect(lister.namespace('default').get('web')?.metadata.resourceVersion).toBe('4');
    await factory.shutdown();
  });

  it('by default lists through createListWatch on the KubeConfig, with the namespace and selectors', async () => {
    const { createServer } = await import('node:http');
    const requests: string[] = [];
    const server = createServer((req, res) => {
      requests.push(req.url ?? '');
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'Forbidden',
          code: 403,
          message: 'pods is forbidden',
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const { KubeConfig } = await import('@kubernetes/client-node');
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
        users: [{ name: 'u' }],
        contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
        currentContext: 'ctx',
      });
      const factory = new SharedInformerFactory(kc, { tweakListOptions: { labelSelector: 'app=web' } });
      factory.core.v1.pods({ namespace: 'default' });
      factory.start(new AbortController().signal);
      await expect(factory.waitForCacheSync(new AbortController().signal)).rejects.toMatchObject({
        code: ErrorCodes.CACHE_SYNC_FAILED,
        cause: { code: ErrorCodes.FORBIDDEN },
      });
      await factory.shutdown();
      expect(requests[0]).toMatch(/^\/api\/v1\/namespaces\/default\/pods\?/);
      expect(new URL(requests[0]!, 'http://x').searchParams.get('labelSelector')).toBe('app=web');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
