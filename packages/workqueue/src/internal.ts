/**
 * `@kinformer/workqueue/internal`: building blocks the other `@kinformer/*` packages share (constants, decoders,
 * helpers). Not public API: no compatibility promise, not re-exported by `kinformer`.
 */
export {
  UNFINISHED_WORK_UPDATE_PERIOD_MS,
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
} from './metrics.js';
