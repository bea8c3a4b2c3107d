/**
 * (a) Unit tests of PodWatcher inside a real SharedIndexInformer, without HTTP and without real time:
 *
 * - `FakeListerWatcher` stands in for the API server: you script what each LIST answers and push
 *   events into each WATCH stream (`add`, `modify`, `delete`, `error`, `breakConnection`).
 * - `FakeClock` is the informer's clock: backoff waits and resync periods pass when the test says so
 *   (`await clock.tick(ms)`), so a test of a 60 s resync takes milliseconds.
 *
 * Waiting is always for a condition, bounded (`lw.waitFor`), never a sleep.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock, FakeListerWatcher } from '@kinformer/testing';
import { SharedIndexInformer, waitForCacheSync } from 'kinformer';
import type { KubeList, SharedIndexInformerOptions } from 'kinformer';
import { PodWatcher, type PodAlert } from './podWatcher.js';
import { testPod } from './testPods.js';

function podList(resourceVersion: string, ...items: V1Pod[]): KubeList<V1Pod> {
  return { metadata: { resourceVersion }, items };
}

/** Moves the fake clock in 100 ms steps (letting promises run between) until `condition` holds; at most one minute. */
async function advanceUntil(clock: FakeClock, condition: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !condition(); i++) await clock.tick(100);
  expect(condition()).toBe(true);
}

describe('PodWatcher driven by a SharedIndexInformer over a FakeListerWatcher', () => {
  let clock: FakeClock;
  let lw: FakeListerWatcher<V1Pod>;
  let alerts: PodAlert[];
  let stop: AbortController;
  let running: Promise<void> | undefined;

  beforeEach(() => {
    clock = new FakeClock();
    lw = new FakeListerWatcher<V1Pod>();
    alerts = [];
    stop = new AbortController();
    running = undefined;
  });

  afterEach(async () => {
    stop.abort();
    await running;
    // The informer stopped cleanly: no timer left behind.
    expect(clock.pendingTimers()).toBe(0);
  });

  /** Runs an informer with a PodWatcher and waits until the watcher has handled the initial list. */
  async function start(options: SharedIndexInformerOptions<V1Pod> = {}) {
    const informer = new SharedIndexInformer<V1Pod>(lw, { clock, ...options });
    const watcher = new PodWatcher((alert) => {
      alerts.push(alert);
    });
    const registration = informer.addEventHandler(watcher);
    running = informer.run(stop.signal);
    // The registration's hasSynced: the cache has synced AND this handler has processed the initial list.
    await expect(waitForCacheSync({ signal: stop.signal, clock }, registration.hasSynced)).resolves.toBe(
      true,
    );
    return { informer, watcher };
  }

  it('alerts once for a pod failing in the initial list, and again when it recovers', async () => {
    lw.enqueueList(
      podList(
        '10',
        testPod('default/web-1', { resourceVersion: '1' }),
        testPod('default/web-2', { crash: 'CrashLoopBackOff', resourceVersion: '2' }),
      ),
    );
    const { watcher } = await start();
    expect(alerts).toEqual([{ type: 'failing', key: 'default/web-2', reason: 'app: CrashLoopBackOff' }]);

    const watch = await lw.nextWatch();
    watch
      .modify(testPod('default/web-2', { crash: 'CrashLoopBackOff', resourceVersion: '11' })) // still failing: no new alert
      .modify(testPod('default/web-2', { resourceVersion: '12' }));
    await lw.waitFor(() => alerts.length === 2, 'the recovery alert');

    expect(alerts[1]).toEqual({ type: 'recovered', key: 'default/web-2' });
    expect(watcher.failing()).toEqual([]);
  });

  it('does not alert again when a resync re-delivers a failing pod', async () => {
    lw.enqueueList(
      podList('10', testPod('default/web-2', { crash: 'ImagePullBackOff', resourceVersion: '2' })),
    );
    const { informer } = await start({ resyncPeriodMs: 60_000 });
    await lw.nextWatch(); // resyncs run while the informer watches

    await clock.tick(60_000); // a minute passes, instantly
    await lw.waitFor(() => informer.stats().handlers[0]?.dispatched === 2, 'the resync update'); // the add, then the resync

    expect(alerts).toEqual([{ type: 'failing', key: 'default/web-2', reason: 'app: ImagePullBackOff' }]);
  });

  it('reports a failing pod as gone when it is deleted, and when the informer missed its delete', async () => {
    lw.enqueueList(
      podList(
        '10',
        testPod('default/web-1', { crash: 'CrashLoopBackOff', resourceVersion: '1' }),
        testPod('default/web-2', { crash: 'CrashLoopBackOff', resourceVersion: '2' }),
      ),
    );
    const { watcher } = await start();
    expect(watcher.failing()).toEqual(['default/web-1', 'default/web-2']);

    // A delete seen on the watch.
    const watch = await lw.nextWatch();
    watch.delete(testPod('default/web-1', { crash: 'CrashLoopBackOff', resourceVersion: '11' }));
    await lw.waitFor(() => alerts.length === 3, 'the gone alert of web-1');

    // Then the watch history expires (410) and web-2 is deleted before the informer lists again:
    // the relist lacks it, so the informer delivers a DeletedFinalStateUnknown tombstone.
    lw.enqueueList(podList('20'));
    watch.error({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: 410,
      reason: 'Expired',
      message: 'too old resource version: 11 (15)',
    });
    await advanceUntil(clock, () => lw.listCalls.length === 2); // the reflector backs off (on the fake clock), then relists
    await lw.waitFor(() => alerts.length === 4, 'the gone alert of web-2');

    expect(alerts.slice(2)).toEqual([
      { type: 'gone', key: 'default/web-1' },
      { type: 'gone', key: 'default/web-2' },
    ]);
    expect(lw.listCalls[1]?.resourceVersion).toBe('11'); // the relist asked for "not older than" what we had seen
    expect(watcher.failing()).toEqual([]);
  });
});
