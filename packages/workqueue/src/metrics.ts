import type { Clock } from '@kinformer/core';
import type { Timer } from '@kinformer/core/internal';

/** A metric's name and help text (component-base's `metrics/prometheus/workqueue`). */
export interface MetricSpec {
  readonly name: string;
  readonly help: string;
}

/**
 * client-go's seven workqueue metrics, keyed by the {@link MetricsProvider} method that makes each, in the
 * order client-go's `MetricsProvider` lists them: name and help text (component-base's
 * `metrics/prometheus/workqueue`, so dashboards and alerts written for client-go work unchanged).
 */
export const WORKQUEUE_METRICS = Object.freeze({
  /** Gauge `workqueue_depth`: how many items are waiting to be processed (added, not yet handed out). */
  newDepthMetric: { name: 'workqueue_depth', help: 'Current depth of workqueue' },
  /** Counter `workqueue_adds_total`: adds that were not collapsed into an item already waiting. */
  newAddsMetric: { name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue' },
  /** Histogram `workqueue_queue_duration_seconds`: seconds an item waited between add and get. */
  newLatencyMetric: {
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in workqueue before being requested',
  },
  /** Histogram `workqueue_work_duration_seconds`: seconds between get and done. */
  newWorkDurationMetric: {
    name: 'workqueue_work_duration_seconds',
    help: 'How long in seconds processing an item from workqueue takes.',
  },
  /** Gauge `workqueue_unfinished_work_seconds`: seconds of work in progress, summed over all items being processed. */
  newUnfinishedWorkSecondsMetric: {
    name: 'workqueue_unfinished_work_seconds',
    help:
      'How many seconds of work has been done that is in progress and has not been observed by work_duration. ' +
      'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
  },
  /** Gauge `workqueue_longest_running_processor_seconds`: age of the oldest item being processed. */
  newLongestRunningProcessorSecondsMetric: {
    name: 'workqueue_longest_running_processor_seconds',
    help: 'How many seconds has the longest running processor for workqueue been running.',
  },
  /** Counter `workqueue_retries_total`: `addAfter` / `addRateLimited` calls on a live queue. */
  newRetriesMetric: { name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue' },
} as const satisfies Record<keyof MetricsProvider, MetricSpec>);

/** The seven metric names, in the order client-go's `MetricsProvider` lists them. */
export const WORKQUEUE_METRIC_NAMES: readonly string[] = Object.freeze(
  Object.values(WORKQUEUE_METRICS).map((metric) => metric.name),
);
/** The label every workqueue metric carries: the queue's `name` option. */
export const WORKQUEUE_NAME_LABEL = 'name';
/**
 * Histogram buckets controller-runtime uses for the two duration histograms (seconds):
 * `prometheus.ExponentialBuckets(10e-9, 10, 12)`, i.e. 1e-8 … 1e3.
 */
export const WORKQUEUE_DURATION_BUCKETS: readonly number[] = Object.freeze(
  Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1))),
);

/** How often the unfinished-work gauges are refreshed, ms (client-go's `defaultUnfinishedWorkUpdatePeriod`). */
export const UNFINISHED_WORK_UPDATE_PERIOD_MS = 500;

/** A gauge that goes up and down by one (depth). */
export interface GaugeMetric {
  inc(): void;
  dec(): void;
}

/** A gauge that is set to a value (unfinished work, longest running processor). */
export interface SettableGaugeMetric {
  set(value: number): void;
}

/** A counter (adds, retries). */
export interface CounterMetric {
  inc(): void;
}

/** A histogram of seconds (queue duration, work duration). */
export interface HistogramMetric {
  observe(seconds: number): void;
}

/**
 * Where a queue sends its metrics (client-go's `MetricsProvider`). Each method is called once, when
 * a queue is constructed, with the queue's `name`, and returns the metric that queue updates; a
 * method left out means that metric is not collected. A prom-client backed provider is a few lines:
 * `newDepthMetric: (name) => depthGauge.labels({ name })` and so on (see the README). The metric
 * objects are called on the queue's hot path: keep them cheap and never let them throw.
 */
export interface MetricsProvider {
  /** `workqueue_depth`. */
  newDepthMetric?(name: string): GaugeMetric;
  /** `workqueue_adds_total`. */
  newAddsMetric?(name: string): CounterMetric;
  /** `workqueue_queue_duration_seconds`. */
  newLatencyMetric?(name: string): HistogramMetric;
  /** `workqueue_work_duration_seconds`. */
  newWorkDurationMetric?(name: string): HistogramMetric;
  /** `workqueue_unfinished_work_seconds`; refreshed every 500 ms while the queue is not shut down. */
  newUnfinishedWorkSecondsMetric?(name: string): SettableGaugeMetric;
  /** `workqueue_longest_running_processor_seconds`; refreshed every 500 ms while the queue is not shut down. */
  newLongestRunningProcessorSecondsMetric?(name: string): SettableGaugeMetric;
  /** `workqueue_retries_total`. */
  newRetriesMetric?(name: string): CounterMetric;
}

/**
 * What a queue reports to (client-go's `queueMetrics` + `retryMetrics`).
 * @internal Used by the queue classes of this package only.
 */
export interface QueueMetrics<K> {
  add(item: K): void;
  get(item: K): void;
  done(item: K): void;
  retry(): void;
  /** Stops the periodic unfinished-work refresh. Idempotent. */
  stop(): void;
}

const noop = (): void => {};

const noMetrics: QueueMetrics<never> = { add: noop, get: noop, done: noop, retry: noop, stop: noop };

/**
 * The metrics of one queue: a no-op when `provider` is undefined, otherwise the metrics the provider
 * makes for `name`, with a 500 ms clock timer refreshing the unfinished-work gauges (only when the
 * provider makes at least one of them).
 * @internal Used by the queue classes of this package only.
 */
export function createQueueMetrics<K>(
  name: string,
  provider: MetricsProvider | undefined,
  clock: Clock,
): QueueMetrics<K> {
  if (!provider) return noMetrics;
  return new DefaultQueueMetrics<K>(name, provider, clock);
}

const noGauge: GaugeMetric = { inc: noop, dec: noop };
const noCounter: CounterMetric = { inc: noop };
const noHistogram: HistogramMetric = { observe: noop };

class DefaultQueueMetrics<K> implements QueueMetrics<K> {
  private readonly depth: GaugeMetric;
  private readonly adds: CounterMetric;
  private readonly latency: HistogramMetric;
  private readonly workDuration: HistogramMetric;
  private readonly unfinishedWorkSeconds: SettableGaugeMetric | undefined;
  private readonly longestRunningProcessor: SettableGaugeMetric | undefined;
  private readonly retries: CounterMetric;
  /** When each waiting item was first added (clock ms). */
  private readonly addTimes = new Map<K, number>();
  /** When each item being processed was handed out (clock ms). */
  private readonly processingStartTimes = new Map<K, number>();
  private timer: Timer | undefined;
  private stopped = false;

  constructor(
    name: string,
    provider: MetricsProvider,
    private readonly clock: Clock,
  ) {
    this.depth = provider.newDepthMetric?.(name) ?? noGauge;
    this.adds = provider.newAddsMetric?.(name) ?? noCounter;
    this.latency = provider.newLatencyMetric?.(name) ?? noHistogram;
    this.workDuration = provider.newWorkDurationMetric?.(name) ?? noHistogram;
    this.unfinishedWorkSeconds = provider.newUnfinishedWorkSecondsMetric?.(name);
    this.longestRunningProcessor = provider.newLongestRunningProcessorSecondsMetric?.(name);
    this.retries = provider.newRetriesMetric?.(name) ?? noCounter;
    if (this.unfinishedWorkSeconds || this.longestRunningProcessor) this.schedule();
  }

  add(item: K): void {
    this.adds.inc();
    this.depth.inc();
    if (!this.addTimes.has(item)) this.addTimes.set(item, this.clock.now());
  }

  get(item: K): void {
    const now = this.clock.now();
    this.depth.dec();
    this.processingStartTimes.set(item, now);
    const addedAt = this.addTimes.get(item);
    if (addedAt !== undefined) {
      this.latency.observe((now - addedAt) / 1000);
      this.addTimes.delete(item);
    }
  }

  done(item: K): void {
    const startedAt = this.processingStartTimes.get(item);
    if (startedAt !== undefined) {
      this.workDuration.observe((this.clock.now() - startedAt) / 1000);
      this.processingStartTimes.delete(item);
    }
  }

  retry(): void {
    this.retries.inc();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private schedule(): void {
    this.timer = this.clock.setTimeout(this.tick, UNFINISHED_WORK_UPDATE_PERIOD_MS);
  }

  private readonly tick = (): void => {
    this.timer = undefined;
    if (this.stopped) return;
    this.updateUnfinishedWork();
    this.schedule();
  };

  private updateUnfinishedWork(): void {
    const now = this.clock.now();
    let total = 0;
    let oldest = 0;
    for (const startedAt of this.processingStartTimes.values()) {
      const age = (now - startedAt) / 1000;
      total += age;
      if (age > oldest) oldest = age;
    }
    this.unfinishedWorkSeconds?.set(total);
    this.longestRunningProcessor?.set(oldest);
  }
}
