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
