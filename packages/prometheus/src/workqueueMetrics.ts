import { type MetricsProvider } from '@kinformer/workqueue';
import {
  WORKQUEUE_ADDS_TOTAL,
  WORKQUEUE_DEPTH,
  WORKQUEUE_DURATION_BUCKETS,
  WORKQUEUE_LONGEST_RUNNING_PROCESSOR_SECONDS,
  WORKQUEUE_METRIC_NAMES,
  WORKQUEUE_NAME_LABEL,
  WORKQUEUE_QUEUE_DURATION_SECONDS,
  WORKQUEUE_RETRIES_TOTAL,
  WORKQUEUE_UNFINISHED_WORK_SECONDS,
  WORKQUEUE_WORK_DURATION_SECONDS,
} from '@kinformer/workqueue/internal';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { assertMetricNamesFree } from './assertMetricNamesFree.js';

/**
 * Registers client-go's seven `workqueue_*` metrics in `registry` (help texts of component-base's
 * `metrics/prometheus/workqueue`, controller-runtime's duration buckets, label `name`) and returns
 * the `MetricsProvider` that feeds them. Each queue's metric objects are bound to its `name` once,
 * when the queue is built, so the queue's hot path does a labelled `inc`/`observe` and nothing else.
 * Throws `ERR_INVALID_OPTION` when one of the names is already registered there.
 * @internal Use {@link KinformerMetrics.workqueueMetricsProvider}.
 */
export function workqueueMetricsProvider(registry: Registry): {
  provider: MetricsProvider;
  metricNames: readonly string[];
} {
  assertMetricNamesFree(registry, WORKQUEUE_METRIC_NAMES);
  const labelNames = [WORKQUEUE_NAME_LABEL];
  const registers = [registry];
  const buckets = [...WORKQUEUE_DURATION_BUCKETS];
  const depth = new Gauge({
    name: WORKQUEUE_DEPTH,
    help: 'Current depth of workqueue',
    labelNames,
    registers,
  });
  const adds = new Counter({
    name: WORKQUEUE_ADDS_TOTAL,
    help: 'Total number of adds handled by workqueue',
    labelNames,
    registers,
  });
  const latency = new Histogram({
    name: WORKQUEUE_QUEUE_DURATION_SECONDS,
    help: 'How long in seconds an item stays in workqueue before being requested',
    labelNames,
    buckets,
    registers,
  });
  const work = new Histogram({
    name: WORKQUEUE_WORK_DURATION_SECONDS,
    help: 'How long in seconds processing an item from workqueue takes.',
    labelNames,
    buckets,
    registers,
  });
  const unfinished = new Gauge({
    name: WORKQUEUE_UNFINISHED_WORK_SECONDS,
    help:
      'How many seconds of work has been done that is in progress and has not been observed by work_duration. ' +
      'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
    labelNames,
    registers,
  });
  const longest = new Gauge({
    name: WORKQUEUE_LONGEST_RUNNING_PROCESSOR_SECONDS,
    help: 'How many seconds has the longest running processor for workqueue been running.',
    labelNames,
    registers,
  });
  const retries = new Counter({
    name: WORKQUEUE_RETRIES_TOTAL,
    help: 'Total number of retries handled by workqueue',
    labelNames,
    registers,
  });
  const provider: MetricsProvider = {
    newDepthMetric: (name) => depth.labels({ name }),
    newAddsMetric: (name) => adds.labels({ name }),
    newLatencyMetric: (name) => latency.labels({ name }),
    newWorkDurationMetric: (name) => work.labels({ name }),
    newUnfinishedWorkSecondsMetric: (name) => unfinished.labels({ name }),
    newLongestRunningProcessorSecondsMetric: (name) => longest.labels({ name }),
    newRetriesMetric: (name) => retries.labels({ name }),
  };
  return { provider, metricNames: WORKQUEUE_METRIC_NAMES };
}
