/**
 * What `pnpm start` runs: the scenario of `podWatcher.http.test.ts`, once, narrated — PodWatcher
 * behind a SharedInformerFactory on an embedded FakeApiServer whose watch connection is cut while
 * pods change.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { FakeApiServer } from '@kinformer/testing';
import { SharedInformerFactory, waitForCacheSync } from 'kinformer';
import { PodWatcher, type PodAlert } from './podWatcher.js';
import { testPod } from './testPods.js';

/** What {@link runDroppedWatchScenario} observed. */
export interface DroppedWatchReport {
  /** Every alert PodWatcher sent, in order. */
  alerts: PodAlert[];
  /** WATCH requests the server received (2: the first, and the one after the drop). */
  watchRequests: number;
  /** LIST requests the server received (1: the re-watch needed no relist). */
  listRequests: number;
}

/** Runs the scenario against a fresh embedded server and stops everything before resolving. */
export async function runDroppedWatchScenario(
  options: { log?: (line: string) => void } = {},
): Promise<DroppedWatchReport> {
  const log = options.log ?? console.log;
  const server = await FakeApiServer.start();
  const factory = new SharedInformerFactory(server.kubeConfig());
  const stop = new AbortController();
  try {
    server.create('pods', testPod('default/web-1'));
    server.create('pods', testPod('default/web-2', { crash: 'CrashLoopBackOff' }));

    const alerts: PodAlert[] = [];
    const registration = factory.core.v1.pods().informer.addEventHandler(
      new PodWatcher((alert) => {
        alerts.push(alert);
        log(`  alert: ${alert.type} ${alert.key}${alert.type === 'failing' ? ` (${alert.reason})` : ''}`);
      }),
    );
    log('starting the informer on the embedded FakeApiServer with web-1 (running) and web-2 (crash-looping)');
    factory.start(stop.signal);
    await waitForCacheSync(stop.signal, registration.hasSynced);
    log('creating web-3 (failing to pull its image)');
    server.create('pods', testPod('default/web-3', { crash: 'ErrImagePull' }));
    await server.waitFor(() => alerts.length === 2);

    log('dropping the watch connection; while it is down: web-1 is evicted, web-2 deleted, web-3 recovers');
    server.faults.dropWatches();
    server.patch<V1Pod>('pods', 'default/web-1', { status: { phase: 'Failed', reason: 'Evicted' } });
    server.delete('pods', 'default/web-2');
    server.patch<V1Pod>('pods', 'default/web-3', { status: testPod('default/web-3').status });
    await server.waitFor(() => alerts.length === 5);

    const watchRequests = server.requests.filter((r) => r.verb === 'watch').length;
    const listRequests = server.requests.filter((r) => r.verb === 'list').length;
    log(`nothing lost: ${alerts.length} alerts, ${watchRequests} watches, ${listRequests} list`);
    return { alerts, watchRequests, listRequests };
  } finally {
    stop.abort();
    await factory.shutdown();
    await server.close();
  }
}
