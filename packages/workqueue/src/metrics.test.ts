import { FakeClock } from '@kinformer/core/testing';
import { DelayingQueue } from './delayingQueue.js';
import {
  WORKQUEUE_DURATION_BUCKETS,
  WORKQUEUE_METRIC_NAMES,
  WORKQUEUE_METRICS as M,
  type MetricsProvider,
} from './metrics.js';
import { RateLimitingQueue } from './rateLimitingQueue.js';
import { ItemExponentialFailureRateLimiter } from './rateLimiters.js';
import { WorkQueue } from './workQueue.js';

/** Records every metric update, keyed by metric name and queue name, like a Prometheus registry would. */
class RecordingProvider implements MetricsProvider {
  readonly gauges = new Map<string, number>();
  readonly counters = new Map<string, number>();
  readonly histograms = new Map<string, number[]>();
  readonly sets = new Map<string, number[]>();

  private key(metric: string, name: string): string {
    return `${metric}{name="${name}"}`;
  }
  private gauge(metric: string, name: string) {
    const key = this.key(metric, name);
    this.gauges.set(key, 0);
    return {
      inc: () => this.gauges.set(key, this.gauges.get(key)! + 1),
      dec: () => this.gauges.set(key, this.gauges.get(key)! - 1),
    };
  }
  private counter(metric: string, name: string) {
    const key = this.key(metric, name);
    this.counters.set(key, 0);
    return { inc: () => this.counters.set(key, this.counters.get(key)! + 1) };
  }
  private histogram(metric: string, name: string) {
    const key = this.key(metric, name);
    this.histograms.set(key, []);
    return { observe: (v: number) => this.histograms.get(key)!.push(v) };
  }
  private settable(metric: string, name: string) {
    const key = this.key(metric, name);
    this.sets.set(key, []);
    return { set: (v: number) => this.sets.get(key)!.push(v) };
  }

  newDepthMetric = (name: string) => this.gauge(M.newDepthMetric.name, name);
  newAddsMetric = (name: string) => this.counter(M.newAddsMetric.name, name);
  newLatencyMetric = (name: string) => this.histogram(M.newLatencyMetric.name, name);
  newWorkDurationMetric = (name: string) => this.histogram(M.newWorkDurationMetric.name, name);
  newUnfinishedWorkSecondsMetric = (name: string) =>
    this.settable(M.newUnfinishedWorkSecondsMetric.name, name);
  newLongestRunningProcessorSecondsMetric = (name: string) =>
    this.settable(M.newLongestRunningProcessorSecondsMetric.name, name);
  newRetriesMetric = (name: string) => this.counter(M.newRetriesMetric.name, name);
}

async function getItem<K>(q: WorkQueue<K>): Promise<K> {
  const { item, shutdown } = await q.get();
  if (shutdown) throw new Error('expected an item, the queue is shut down');
  return item;
}

describe('work queue metrics', () => {
  it('uses controller-runtime metric names', () => {
    expect(WORKQUEUE_METRIC_NAMES).toEqual([
      'workqueue_depth',
      'workqueue_adds_total',
      'workqueue_queue_duration_seconds',
      'workqueue_work_duration_seconds',
      'workqueue_unfinished_work_seconds',
      'workqueue_longest_running_processor_seconds',
      'workqueue_retries_total',
    ]);
    expect(WORKQUEUE_DURATION_BUCKETS).toEqual([
      1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000,
    ]);
  });

  it('counts adds and depth, and observes queue latency and work duration in seconds', async () => {
    const clock = new FakeClock();
    const provider = new RecordingProvider();
    const q = new WorkQueue<string>({ name: 'pods', clock, metricsProvider: provider });

    q.add('a');
    q.add('b');
    q.add('a'); // collapsed: not an add
    expect(provider.counters.get('workqueue_adds_total{name="pods"}')).toBe(2);
    expect(provider.gauges.get('workqueue_depth{name="pods"}')).toBe(2);

    clock.advance(250);
    expect(await getItem(q)).toBe('a');
    expect(provider.gauges.get('workqueue_depth{name="pods"}')).toBe(1);
    expect(provider.histograms.get('workqueue_queue_duration_seconds{name="pods"}')).toEqual([0.25]);

    clock.advance(1500);
    q.done('a');
    expect(provider.histograms.get('workqueue_work_duration_seconds{name="pods"}')).toEqual([1.5]);

    // Re-added while processing: counted as an add and in depth at once, handed out after done.
    expect(await getItem(q)).toBe('b');
    q.add('b');
    expect(provider.counters.get('workqueue_adds_total{name="pods"}')).toBe(3);
    expect(provider.gauges.get('workqueue_depth{name="pods"}')).toBe(1);
    clock.advance(100);
    q.done('b');
    expect(await getItem(q)).toBe('b');
    expect(provider.gauges.get('workqueue_depth{name="pods"}')).toBe(0);
    expect(provider.histograms.get('workqueue_queue_duration_seconds{name="pods"}')).toEqual([
      0.25, 1.75, 0.1,
    ]);
    q.shutdown();
  });

  it('refreshes the unfinished-work gauges every 500 ms until shutdown', async () => {
    const clock = new FakeClock();
    const provider = new RecordingProvider();
    const q = new WorkQueue<string>({ name: 'q', clock, metricsProvider: provider });
    const unfinished = provider.sets.get('workqueue_unfinished_work_seconds{name="q"}')!;
    const longest = provider.sets.get('workqueue_longest_running_processor_seconds{name="q"}')!;

    clock.advance(500);
    expect(unfinished).toEqual([0]);
    expect(longest).toEqual([0]);

    q.add('a');
    q.add('b');
    await getItem(q); // a, started at 500
    clock.advance(250);
    await getItem(q); // b, started at 750
    clock.advance(250); // 1000: a has run 0.5 s, b 0.25 s
    expect(unfinished).toEqual([0, 0.75]);
    expect(longest).toEqual([0, 0.5]);

    q.done('a');
    clock.advance(500); // 1500: b has run 0.75 s
    expect(unfinished).toEqual([0, 0.75, 0.75]);
    expect(longest).toEqual([0, 0.5, 0.75]);

    q.shutdown();
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(5000);
    expect(unfinished).toHaveLength(3);
  });

  it('counts retries on addAfter and addRateLimited', () => {
    const clock = new FakeClock();
    const provider = new RecordingProvider();
    const q = new RateLimitingQueue<string>({
      name: 'retry',
      clock,
      metricsProvider: provider,
      rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 1 }),
    });
    q.addAfter('a', 10);
    q.addAfter('b', 0);
    q.addRateLimited('c');
    expect(provider.counters.get('workqueue_retries_total{name="retry"}')).toBe(3);
    q.shutdown();
    q.addAfter('d', 10);
    expect(provider.counters.get('workqueue_retries_total{name="retry"}')).toBe(3);
  });

  it('labels each queue by its own name', () => {
    const provider = new RecordingProvider();
    const clock = new FakeClock();
    const one = new WorkQueue<string>({ name: 'one', clock, metricsProvider: provider });
    const two = new DelayingQueue<string>({ name: 'two', clock, metricsProvider: provider });
    one.add('x');
    two.add('x');
    two.add('y');
    expect(provider.counters.get('workqueue_adds_total{name="one"}')).toBe(1);
    expect(provider.counters.get('workqueue_adds_total{name="two"}')).toBe(2);
    one.shutdown();
    two.shutdown();
  });

  it('collects only the metrics a provider makes, and runs no timer without the unfinished-work gauges', async () => {
    const clock = new FakeClock();
    let adds = 0;
    const q = new WorkQueue<string>({
      name: 'partial',
      clock,
      metricsProvider: { newAddsMetric: () => ({ inc: () => adds++ }) },
    });
    expect(clock.pendingTimers()).toBe(0);
    q.add('a');
    q.done(await getItem(q));
    expect(adds).toBe(1);
  });

  it('runs no timer and collects nothing without a provider', () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ name: 'plain', clock });
    q.add('a');
    expect(clock.pendingTimers()).toBe(0);
  });
});
