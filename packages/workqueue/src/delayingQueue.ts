import { ErrorCodes, KinformerError } from '@kinformer/core';
import { type Timer } from '@kinformer/core/internal';
import { WaitHeap } from './waitHeap.js';
import { WorkQueue, type WorkQueueOptions } from './workQueue.js';

/** Options of {@link DelayingQueue}: those of {@link WorkQueue}. */
export type DelayingQueueOptions = WorkQueueOptions;

/** Longest single clock timer, ms (Node's `setTimeout` limit); longer waits re-arm when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * client-go's delaying queue (`workqueue.TypedDelayingInterface`): a {@link WorkQueue} plus
 * {@link addAfter}, which adds an item once a delay has passed.
 *
 * Waiting items sit in a binary heap ordered by when they are due (then by the order they were
 * first added), and ONE clock timer is armed for the earliest of them, however many wait. An item
 * that already waits is not added twice: the earlier due time wins. Waiting items are not counted
 * by {@link WorkQueue.len} and are dropped when the queue shuts down.
 */
export class DelayingQueue<K> extends WorkQueue<K> {
  private readonly waiting = new WaitHeap<K>();
  private timer: Timer | undefined;
  /** When the armed timer fires (clock ms); `Infinity` when none is armed. */
  private timerAt = Infinity;

  constructor(options: DelayingQueueOptions = {}) {
    super(options);
  }

  /**
   * Adds `item` after `ms` milliseconds (through {@link WorkQueue.add}, so the usual collapsing
   * applies then). `ms ≤ 0` adds at once. If the item already waits, it keeps a single entry due at
   * the earlier of the two times. Ignored after shutdown. Counts a retry in the metrics. Throws
   * `ERR_INVALID_OPTION` when `ms` is not a number (`NaN`).
   */
  addAfter(item: K, ms: number): void {
    if (Number.isNaN(ms))
      throw new KinformerError(ErrorCodes.INVALID_OPTION, 'addAfter needs a delay in ms, got NaN');
    if (this.shuttingDown()) return;
    this.metrics.retry();
    if (ms <= 0) {
      this.add(item);
      return;
    }
    this.waiting.insert(item, this.clock.now() + ms);
    this.arm();
  }

  /** @internal Cancels the timer and drops the waiting items. */
  protected override onShutdown(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = Infinity;
    this.waiting.clear();
  }

  /** Makes sure the timer fires no later than the earliest waiting item is due. */
  private arm(): void {
    const next = this.waiting.peek();
    if (!next) return;
    if (this.timer && this.timerAt <= next.readyAt) return;
    this.timer?.cancel();
    const now = this.clock.now();
    const wait = Math.min(MAX_TIMER_MS, Math.max(0, next.readyAt - now));
    this.timerAt = now + wait;
    this.timer = this.clock.setTimeout(this.fire, wait);
  }

  /** Adds every item that is due, then re-arms for the next one. */
  private readonly fire = (): void => {
    this.timer = undefined;
    this.timerAt = Infinity;
    if (this.shuttingDown()) return;
    const now = this.clock.now();
    for (let next = this.waiting.peek(); next && next.readyAt <= now; next = this.waiting.peek()) {
      this.waiting.pop();
      this.add(next.item);
    }
    this.arm();
  };
}
