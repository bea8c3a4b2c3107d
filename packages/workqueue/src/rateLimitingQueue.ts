import { DelayingQueue, type DelayingQueueOptions } from './delayingQueue.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rateLimiters.js';

/** Options of {@link RateLimitingQueue}. */
export interface RateLimitingQueueOptions<K> extends DelayingQueueOptions {
  /**
   * Decides each retry's delay. Default: {@link defaultControllerRateLimiter} on the queue's clock
   * (5 ms doubling per item up to 1000 s, and 10 retries/s with a burst of 100 overall).
   */
  rateLimiter?: RateLimiter<K>;
}

/**
 * client-go's rate-limiting queue (`workqueue.TypedRateLimitingInterface`): a {@link DelayingQueue}
 * whose {@link addRateLimited} re-adds an item after the delay its rate limiter chooses. This is the
 * queue controllers use: on failure `addRateLimited(key)`, on success `forget(key)`, and `done(key)`
 * in both cases.
 */
export class RateLimitingQueue<K> extends DelayingQueue<K> {
  private readonly rateLimiter: RateLimiter<K>;

  constructor(options: RateLimitingQueueOptions<K> = {}) {
    super(options);
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<K>({ clock: this.clock });
  }

  /**
   * Adds `item` once the rate limiter says it may be retried (`addAfter(item, limiter.when(item))`),
   * which also counts one more requeue of it. Ignored after shutdown (the limiter is not asked then).
   */
  addRateLimited(item: K): void {
    if (this.shuttingDown()) return;
    this.addAfter(item, this.rateLimiter.when(item));
  }

  /**
   * Tells the rate limiter that `item` succeeded: its backoff starts again from the first delay.
   * Does not remove the item from the queue or cancel a pending `addRateLimited`/`addAfter`.
   */
  forget(item: K): void {
    this.rateLimiter.forget(item);
  }

  /** How many times `item` was rate-limited since it was last forgotten. */
  numRequeues(item: K): number {
    return this.rateLimiter.numRequeues(item);
  }
}
