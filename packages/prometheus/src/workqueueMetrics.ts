import { type MetricsProvider } from '@kinformer/workqueue';
import {
  WORKQUEUE_DURATION_BUCKETS,
  WORKQUEUE_METRIC_NAMES,
  WORKQUEUE_METRICS as M,
  WORKQUEUE_NAME_LABEL,
} from '@kinformer/workqueue/internal';
import { type Registry } from 'prom-client';
import { assertMetricNamesFree } from './assertMetricNamesFree.js';
import { collectorsIn } from './collectors.js';

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
  const { counter, gauge, histogram } = collectorsIn(registry, [WORKQUEUE_NAME_LABEL]);
  /** Binds a metric to one queue's `name` label. */
  const perQueue =
    <L>(metric: { labels(labels: Record<string, string>): L }) =>
    (name: string): L =>
      metric.labels({ name });
  const provider: MetricsProvider = {
    newDepthMetric: perQueue(gauge(M.newDepthMetric)),
    newAddsMetric: perQueue(counter(M.newAddsMetric)),
    newLatencyMetric: perQueue(histogram(M.newLatencyMetric, WORKQUEUE_DURATION_BUCKETS)),
    newWorkDurationMetric: perQueue(histogram(M.newWorkDurationMetric, WORKQUEUE_DURATION_BUCKETS)),
    newUnfinishedWorkSecondsMetric: perQueue(gauge(M.newUnfinishedWorkSecondsMetric)),
    newLongestRunningProcessorSecondsMetric: perQueue(gauge(M.newLongestRunningProcessorSecondsMetric)),
    newRetriesMetric: perQueue(counter(M.newRetriesMetric)),
  };
  return { provider, metricNames: WORKQUEUE_METRIC_NAMES };
}
