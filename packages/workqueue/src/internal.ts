/**
 * `@kinformer/workqueue/internal`: building blocks the other `@kinformer/*` packages share (constants, decoders,
 * helpers). Not public API: no compatibility promise, not re-exported by `kinformer`.
 */
export {
  type MetricSpec,
  UNFINISHED_WORK_UPDATE_PERIOD_MS,
  WORKQUEUE_DURATION_BUCKETS,
  WORKQUEUE_METRIC_NAMES,
  WORKQUEUE_METRICS,
  WORKQUEUE_NAME_LABEL,
} from './metrics.js';
