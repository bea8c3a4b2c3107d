/**
 * (b) PodWatcher end to end: a SharedInformerFactory talking HTTP to a FakeApiServer — the same
 * list/watch protocol as a real API server, in-process — with faults injected.
 *
 * Use this kind of test for what only the wire can show: reconnects, relists, selectors, errors.
 * Changes are made with the server's in-process API (`create`, `patch`, `delete`), faults with
 * `server.faults`, and every wait is bounded (`server.waitFor`, default 5 s).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { FakeApiServer } from '@kinformer/testing';
import { SharedInformerFactory, waitForCacheSync } from 'kinformer';
import type { SharedIndexInformer } from 'kinformer';
import { PodWatcher, type PodAlert } from './podWatcher.js';
import { runDroppedWatchScenario } from './droppedWatchScenario.js';
import { testPod } from './testPods.js';

describe('PodWatcher over HTTP with FakeApiServer', () => {
  let server: FakeApiServer;
  let factory: SharedInformerFactory;
  let stop: AbortController;
  let alerts: PodAlert[];
  let informer: SharedIndexInformer<V1Pod>;

  beforeEach(async () => {
    server = await FakeApiServer.start();
    server.create('pods', testPod('default/web-1'));
    server.create('pods', testPod('default/web-2', { crash: 'CrashLoopBackOff' }));

    factory = new SharedInformerFactory(server.kubeConfig());
    stop = new AbortController();
    alerts = [];
    informer = factory.core.v1.pods().informer;
    const registration = informer.addEventHandler(
      new PodWatcher((alert) => {
        alerts.push(alert);
      }),
    );
    factory.start(stop.signal);
    await waitForCacheSync(stop.signal, registration.hasSynced);
    expect(alerts).toEqual([{ type: 'failing', key: 'default/web-2', reason: 'app: CrashLoopBackOff' }]);

    // A change seen on the watch: the client is now watching and up to date.
    server.create('pods', testPod('default/web-3', { crash: 'ErrImagePull' }));
    await server.waitFor(() => alerts.length === 2);
  });

  afterEach(async () => {
    stop.abort();
    await factory.shutdown();
    await server.close();
  });

  it('loses nothing when the watch connection drops: the informer re-watches and the server replays', async () => {
    const seenBeforeDrop = informer.lastSyncResourceVersion();

    // The fault: the watch connection is cut. The changes below happen before the client reconnects.
    expect(server.faults.dropWatches()).toBe(1);
    server.patch<V1Pod>('pods', 'default/web-1', { status: { phase: 'Failed', reason: 'Evicted' } });
    server.delete('pods', 'default/web-2');
    server.patch<V1Pod>('pods', 'default/web-3', { status: testPod('default/web-3').status });

    await server.waitFor(() => alerts.length === 5);
    expect(alerts.slice(2)).toEqual([
      { type: 'failing', key: 'default/web-1', reason: 'Evicted' },
      { type: 'gone', key: 'default/web-2' },
      { type: 'recovered', key: 'default/web-3' },
    ]);
    // How: a second watch resumed from the last resourceVersion seen; no relist was needed.
    const watches = server.requests.filter((r) => r.verb === 'watch');
    expect(watches.map((w) => w.query.resourceVersion)).toEqual([expect.any(String), seenBeforeDrop]);
    expect(server.requests.filter((r) => r.verb === 'list')).toHaveLength(1);
    expect(informer.getStore().listKeys().sort()).toEqual(['default/web-1', 'default/web-3']);
  });

  it('loses nothing when the history expired meanwhile (410): the informer relists and reports the missed delete', async () => {
    // While disconnected, web-2 is deleted and the server forgets its history: re-watching from the
    // last resourceVersion gets 410 Gone, so the informer lists again (after a backoff step) and
    // delivers the delete it never saw as a DeletedFinalStateUnknown tombstone.
    server.faults.dropWatches();
    server.delete('pods', 'default/web-2');
    server.faults.compact();

    await server.waitFor(() => alerts.length === 3);
    expect(alerts[2]).toEqual({ type: 'gone', key: 'default/web-2' });
    expect(server.requests.filter((r) => r.verb === 'list')).toHaveLength(2);
    expect(informer.getStore().listKeys().sort()).toEqual(['default/web-1', 'default/web-3']);
  });
});

describe('the demo of main.ts', () => {
  it('runs the dropped-watch scenario and reports every alert', async () => {
    const lines: string[] = [];
    const report = await runDroppedWatchScenario({ log: (line) => lines.push(line) });
    expect(report.alerts).toEqual([
      { type: 'failing', key: 'default/web-2', reason: 'app: CrashLoopBackOff' },
      { type: 'failing', key: 'default/web-3', reason: 'app: ErrImagePull' },
      { type: 'failing', key: 'default/web-1', reason: 'Evicted' },
      { type: 'gone', key: 'default/web-2' },
      { type: 'recovered', key: 'default/web-3' },
    ]);
    expect(report.watchRequests).toBe(2);
    expect(report.listRequests).toBe(1);
    expect(lines.at(-1)).toBe('nothing lost: 5 alerts, 2 watches, 1 list');
  });
});
