import { ErrorCodes, KinformerError } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import type { GroupVersionResource, KubeObject } from '@kinformer/core';
import { FakeListerWatcher } from '@kinformer/reflector/testing';
import { captureLogs, pod, podList, waitFor } from '@kinformer/test-tools';
import { InformerFactory } from './informerFactory.js';
import type { ListerWatcherRequest } from './informerFactory.js';

// The transport-free factory core. The KubeConfig-taking SharedInformerFactory (typed accessors,
// createListWatch) is kinformer's and is tested there.
describe('InformerFactory', () => {
  it('builds informers through the ListerWatcher factory it is given, one per resource and scope', async () => {
    const made: Array<{ gvr: GroupVersionResource; request: ListerWatcherRequest }> = [];
    const clock = new FakeClock();
    const factory = new InformerFactory(
      (gvr, request) => {
        const { cached: _cached, ...rest } = request;
        made.push({ gvr, request: rest });
        return new FakeListerWatcher<KubeObject>().enqueueList(podList('5', pod('a', '1')));
      },
      { clock, namespace: 'prod', tweakListOptions: { labelSelector: 'team=x' } },
    );
    const widgets = { group: 'example.com', version: 'v1', resource: 'widgets' };
    const pair = factory.forResource(widgets);
    expect(factory.forResource(widgets)).toBe(pair);
    expect(factory.forResource(widgets, { namespace: '' })).not.toBe(pair);
    expect(made).toEqual([
      { gvr: widgets, request: { namespace: 'prod', metadataOnly: false, labelSelector: 'team=x' } },
      { gvr: widgets, request: { namespace: '', metadataOnly: false, labelSelector: 'team=x' } },
    ]);
    const ac = new AbortController();
    factory.start(ac.signal);
    const synced = await factory.waitForCacheSync(ac.signal);
    expect([...synced]).toEqual([
      ['widgets.v1.example.com', true],
      ['widgets.v1.example.com?namespace=', true],
    ]);
    await waitFor(() => pair.lister.list().length === 1, 'the cache');
    await factory.shutdown();
    expect(pair.informer.isStopped()).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('warns once per scope when one resource is cached twice in it (full and metadata-only), not across scopes', () => {
    const logs = captureLogs('warn');
    const factory = new InformerFactory(() => new FakeListerWatcher<KubeObject>(), {
      clock: new FakeClock(),
      logger: logs.logger,
    });
    const pods = { group: '', version: 'v1', resource: 'pods' };
    factory.forResource(pods);
    factory.forResource(pods, { namespace: 'a', metadataOnly: true });
    factory.forResource(pods, { labelSelector: 'app=x', metadataOnly: true });
    expect(logs.lines.filter((l) => l.msg.includes('cached twice'))).toHaveLength(0);
    factory.forResource(pods, { metadataOnly: true });
    factory.forResource(pods, { transform: <T extends KubeObject>(o: T): T => o });
    const warnings = logs.lines.filter((l) => l.msg.includes('cached twice'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toContain('pods.v1 is cached twice in one scope (full and metadata-only)');
  });

  it('keys informers by their own transform too, and applies it in place of the factory one', async () => {
    const factory = new InformerFactory(
      () => new FakeListerWatcher<KubeObject>().enqueueList(podList('5', pod('a', '1'))),
      {
        clock: new FakeClock(),
        transform: <T extends KubeObject>(o: T): T => ({ ...o, kind: 'FactoryWide' }),
      },
    );
    const pods = { group: '', version: 'v1', resource: 'pods' };
    const mark = <T extends KubeObject>(o: T): T => ({ ...o, kind: 'Own' });
    const plain = factory.forResource(pods);
    const own = factory.forResource(pods, { transform: mark });
    expect(own).not.toBe(plain);
    expect(factory.forResource(pods, { transform: mark })).toBe(own);
    expect(own.informer.name).toBe('pods.v1?transform=1');
    const ac = new AbortController();
    factory.start(ac.signal);
    await factory.waitForCacheSync(ac.signal);
    expect(plain.lister.list().map((o) => o.kind)).toEqual(['FactoryWide']);
    expect(own.lister.list().map((o) => o.kind)).toEqual(['Own']);
    await factory.shutdown();
  });

  it('checks its options', () => {
    const lwf = () => new FakeListerWatcher<KubeObject>();
    expect(() => new InformerFactory(lwf, { defaultResyncMs: -1 })).toThrow(KinformerError);
    expect(() => new InformerFactory(lwf, { defaultResyncMs: Number.NaN })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
  });
});
