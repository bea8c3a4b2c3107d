export { type GetOptions, type GetResult, WorkQueue, type WorkQueueOptions } from './workQueue.js';
export { DelayingQueue, type DelayingQueueOptions } from './delayingQueue.js';
export { RateLimitingQueue, type RateLimitingQueueOptions } from './rateLimitingQueue.js';
export {
  BucketRateLimiter,
  type BucketRateLimiterOptions,
  defaultControllerRateLimiter,
  type DefaultControllerRateLimiterOptions,
  defaultItemBasedRateLimiter,
  ItemExponentialFailureRateLimiter,
  type ItemExponentialFailureRateLimiterOptions,
  ItemFastSlowRateLimiter,
  type ItemFastSlowRateLimiterOptions,
  MaxOfRateLimiter,
  type RateLimiter,
  WithMaxWaitRateLimiter,
  type WithMaxWaitRateLimiterOptions,
} from './rateLimiters.js';
export type {
  CounterMetric,
  GaugeMetric,
  HistogramMetric,
  MetricsProvider,
  SettableGaugeMetric,
} from './metrics.js';
