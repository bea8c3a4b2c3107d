import { ErrorCodes } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import type { InformerStats } from '@kinformer/informer';
import type { ReflectorStats } from '@kinformer/reflector';
import { RateLimitingQueue } from '@kinformer/workqueue';
import { Registry } from 'prom-client';
import { KinformerMetrics, parseInformerName, type MeasuredInformer } from './kinformerMetrics.js';

const reflectorStats = (over: Partial<ReflectorStats> = {}): ReflectorStats => ({
  lists: 3,
  relists: 2,
  watchLists: 0,
  watchStarts: 7,
  watchRestarts: 4,
  expired410: 1,
  events: 120,
  bookmarks: 5,
  malformed: 0,
  stalls: 0,
  veryShortWatches: 1,
  skipped: 0,
  resourceVersionAnomalies: 0,
  resyncs: 0,
  backoffs: 2,
  backoffMs: 1_500,
  shardDropped: 0,
  ...over,
});

class StubInformer implements MeasuredInformer {
  synced = true;
  watching = true;
  rv = '12345';
  size = 42;
  informerStats: InformerStats = {
    deltasProcessed: 150,
    processErrors: 0,
    queueDepth: 6,
    resyncCheckPeriodMs: 0,
    eventsDispatched: 150,
    handlerErrors: 2,
    events: { add: 100, update: 40, delete: 10 },
    handlers: [
      {
        name: 'byNode',
        bufferDepth: 3,
        dispatched: 150,
        errors: 2,
        busyMs: 1500,
        maxLatencyMs: 250,
        synced: true,
        resyncPeriodMs: 0,
      },
    ],
  };
  reflector: ReflectorStats | undefined = reflectorStats();
  constructor(readonly name: string) {}
  stats(): InformerStats {
    return this.informerStats;
  }
  reflectorStats(): ReflectorStats | undefined {
    return this.reflector;
  }
  hasSynced(): boolean {
    return this.synced;
  }
  isWatching(): boolean {
    return this.watching;
  }
  lastSyncResourceVersion(): string {
    return this.rv;
  }
  getStore(): { size(): number } {
    return { size: () => this.size };
  }
}

/** The value of one series in the registry's text output, or undefined when absent. */
/** The value of `series` in a Prometheus text body, or undefined when it is not there. */
function valueIn(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function sample(registry: Registry, series: string): Promise<number | undefined> {
  return valueIn(await registry.metrics(), series);
}

/** Asserts the value of each series (undefined: absent) in one scrape, as one comparison. */
async function expectSamples(
  registry: Registry,
  expected: Record<string, number | undefined>,
): Promise<void> {
  const text = await registry.metrics();
  const actual = Object.fromEntries(Object.keys(expected).map((series) => [series, valueIn(text, series)]));
  expect(actual).toEqual(expected);
}

describe('KinformerMetrics', () => {
  it('reports informer, handler and reflector counters under client-go names, read at scrape time', async () => {
    const registry = new Registry();
    const metrics = new KinformerMetrics({ registry });
    const pods = new StubInformer('deployments.v1.apps');
    metrics.addInformer(pods);
    const gvr = 'name="deployments.v1.apps",group="apps",version="v1",resource="deployments"';
    const name = 'name="deployments.v1.apps"';
    const handler = `${name},handler="byNode"`;

    await expectSamples(registry, {
      [`informer_queued_items{${gvr}}`]: 6,
      [`informer_store_resource_version{${gvr}}`]: 12345,
      [`reflector_lists_total{${name}}`]: 3,
      [`reflector_watches_total{${name}}`]: 7,
      [`reflector_short_watches_total{${name}}`]: 1,
      [`reflector_last_resource_version{${name}}`]: 12345,
      [`kinformer_reflector_relists_total{${name}}`]: 2,
      [`kinformer_reflector_expired_total{${name}}`]: 1,
      [`kinformer_reflector_watch_restarts_total{${name}}`]: 4,
      [`kinformer_reflector_backoffs_total{${name}}`]: 2,
      [`kinformer_reflector_backoff_seconds_total{${name}}`]: 1.5,
      [`kinformer_informer_synced{${name}}`]: 1,
      [`kinformer_informer_watching{${name}}`]: 1,
      [`kinformer_informer_cache_objects{${name}}`]: 42,
      [`kinformer_informer_events_total{${name},type="add"}`]: 100,
      [`kinformer_informer_events_total{${name},type="update"}`]: 40,
      [`kinformer_informer_events_total{${name},type="delete"}`]: 10,
      [`kinformer_informer_handler_notifications_total{${handler}}`]: 150,
      [`kinformer_informer_handler_errors_total{${handler}}`]: 2,
      [`kinformer_informer_handler_busy_seconds_total{${handler}}`]: 1.5,
      [`kinformer_informer_handler_max_latency_seconds{${handler}}`]: 0.25,
      [`kinformer_informer_handler_buffer_depth{${handler}}`]: 3,
    });
    expect(await registry.metrics()).toContain('# TYPE reflector_lists_total counter');
    expect(await registry.metrics()).toContain('# TYPE informer_queued_items gauge');

    // The next scrape reads the new values: nothing was pushed.
    pods.synced = false;
    pods.watching = false;
    pods.informerStats = { ...pods.informerStats, queueDepth: 0 };
    pods.reflector = reflectorStats({ lists: 4 });
    await expectSamples(registry, {
      [`kinformer_informer_synced{${name}}`]: 0,
      [`kinformer_informer_watching{${name}}`]: 0,
      [`informer_queued_items{${gvr}}`]: 0,
      [`reflector_lists_total{${name}}`]: 4,
    });
  });

  it('leaves out what an informer cannot tell yet, and drops a removed informer from the next scrape', async () => {
    const registry = new Registry();
    const metrics = new KinformerMetrics({ registry });
    const early = new StubInformer('pods.v1');
    early.reflector = undefined; // before run
    early.rv = '';
    const registration = metrics.addInformer(early);
    const text = await registry.metrics();
    expect(text).toContain('kinformer_informer_synced{name="pods.v1"} 1');
    expect(text).not.toContain('reflector_lists_total{');
    expect(text).not.toContain('informer_store_resource_version{');

    registration.remove();
    registration.remove();
    expect(await registry.metrics()).not.toContain('name="pods.v1"');
  });

  it('labels by the name given, and keeps 15 digits of a long resourceVersion as client-go does', async () => {
    const registry = new Registry();
    const metrics = new KinformerMetrics({ registry });
    const informer = new StubInformer('whatever');
    informer.rv = '98765432109876543210';
    metrics.addInformer(informer, {
      name: 'widgets',
      resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
    });
    expect(
      await sample(
        registry,
        'informer_store_resource_version{name="widgets",group="example.com",version="v1",resource="widgets"}',
      ),
    ).toBe(432109876543210);
  });

  it('reports which side filters a sharded reflector and what the client dropped', async () => {
    const registry = new Registry();
    const metrics = new KinformerMetrics({ registry });
    const pods = new StubInformer('pods.v1');
    metrics.addInformer(pods);
    expect(
      await sample(registry, 'kinformer_reflector_shard_filter_mode{name="pods.v1",mode="client"}'),
    ).toBe(undefined);
    pods.reflector = reflectorStats({ shardFilterMode: 'client', shardDropped: 7 });
    expect(
      await sample(registry, 'kinformer_reflector_shard_filter_mode{name="pods.v1",mode="client"}'),
    ).toBe(1);
    expect(
      await sample(registry, 'kinformer_reflector_shard_filter_mode{name="pods.v1",mode="server"}'),
    ).toBe(0);
    expect(await sample(registry, 'kinformer_reflector_shard_dropped_total{name="pods.v1"}')).toBe(7);
    pods.reflector = reflectorStats({ shardFilterMode: 'server', shardDropped: 7 });
    expect(
      await sample(registry, 'kinformer_reflector_shard_filter_mode{name="pods.v1",mode="server"}'),
    ).toBe(1);
    metrics.unregister();
  });

  it('reports leader_election_master_status per lease', async () => {
    const registry = new Registry();
    const metrics = new KinformerMetrics({ registry });
    let leading = false;
    metrics.addLeaderElector({ isLeader: () => leading }, 'my-controller');
    expect(await sample(registry, 'leader_election_master_status{name="my-controller"}')).toBe(0);
    leading = true;
    expect(await sample(registry, 'leader_election_master_status{name="my-controller"}')).toBe(1);
  });

  it('feeds the seven workqueue metrics from a queue, labelled by the queue name', async () => {
    const registry = new Registry();
    const metrics = new KinformerMetrics({ registry });
    const clock = new FakeClock();
    const queue = new RateLimitingQueue<string>({
      name: 'pods',
      clock,
      metricsProvider: metrics.workqueueMetricsProvider,
    });
    queue.add('a');
    queue.add('b');
    queue.add('a'); // collapsed into the waiting item
    clock.advance(2_000);
    const got = await queue.get();
    expect(got.item).toBe('a');
    clock.advance(500);
    queue.done('a');
    queue.addRateLimited('a');
    await expectSamples(registry, {
      'workqueue_adds_total{name="pods"}': 2,
      'workqueue_depth{name="pods"}': 1,
      'workqueue_retries_total{name="pods"}': 1,
      'workqueue_queue_duration_seconds_count{name="pods"}': 1,
      'workqueue_queue_duration_seconds_sum{name="pods"}': 2,
      'workqueue_work_duration_seconds_sum{name="pods"}': 0.5,
      'workqueue_work_duration_seconds_bucket{le="1",name="pods"}': 1,
    });
    const text = await registry.metrics();
    expect(text).toContain('# TYPE workqueue_unfinished_work_seconds gauge');
    expect(text).toContain('# TYPE workqueue_longest_running_processor_seconds gauge');
    expect(metrics.workqueueMetricsProvider).toBe(metrics.workqueueMetricsProvider);
    queue.shutdown();
  });

  it('refuses a second instance on the same registry without touching it, and unregisters cleanly', async () => {
    const registry = new Registry();
    const metrics = new KinformerMetrics({ registry });
    void metrics.workqueueMetricsProvider;
    const before = await registry.metrics();
    expect(() => new KinformerMetrics({ registry })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
    expect(await registry.metrics()).toBe(before);

    metrics.unregister();
    expect(registry.getMetricsAsArray()).toEqual([]);
    expect(() => new KinformerMetrics({ registry })).not.toThrow();
  });
});

describe('parseInformerName', () => {
  it("reads the factory's informer keys", () => {
    expect(parseInformerName('pods.v1')).toEqual({ resource: 'pods', version: 'v1' });
    expect(parseInformerName('deployments.v1.apps?namespace=x')).toEqual({
      resource: 'deployments',
      version: 'v1',
      group: 'apps',
    });
    expect(parseInformerName('widgets.v1alpha1.example.com')).toEqual({
      resource: 'widgets',
      version: 'v1alpha1',
      group: 'example.com',
    });
    expect(parseInformerName('SharedIndexInformer')).toBeUndefined();
  });
});
