export type { GetOptions, GetResult, WorkQueueOptions } from './workQueue.js';
export { WorkQueue } from './workQueue.js';
export type { DelayingQueueOptions } from './delayingQueue.js';
export { DelayingQueue } from './delayingQueue.js';
export type { RateLimitingQueueOptions } from './rateLimitingQueue.js';
export { RateLimitingQueue } from './rateLimitingQueue.js';
export type {
  BucketRateLimiterOptions,
  DefaultControllerRateLimiterOptions,
  ItemExponentialFailureRateLimiterOptions,
  ItemFastSlowRateLimiterOptions,
  RateLimiter,
  WithMaxWaitRateLimiterOptions,
} from './rateLimiters.js';
export {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  defaultItemBasedRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  WithMaxWaitRateLimiter,
} from './rateLimiters.js';
export type {
  CounterMetric,
  GaugeMetric,
  HistogramMetric,
  MetricsProvider,
  SettableGaugeMetric,
} from './metrics.js';
export {
  UNFINISHED_WORK_UPDATE_PERIOD_MS,
  WORKQUEUE_ADDS_TOTAL,
  WORKQUEUE_DEPTH,
  WORKQUEUE_DURATION_BUCKETS,
  WORKQUEUE_LONGEST_RUNNING_PROCESSOR_SECONDS,
  WORKQUEUE_NAME_LABEL,
  WORKQUEUE_QUEUE_DURATION_SECONDS,
  WORKQUEUE_RETRIES_TOTAL,
  WORKQUEUE_UNFINISHED_WORK_SECONDS,
  WORKQUEUE_WORK_DURATION_SECONDS,
} from './metrics.js';
