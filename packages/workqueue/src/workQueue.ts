import { ErrorCodes, KinformerError, realClock, type Clock, type Logger } from '@kinformer/core';
import { abortError } from '@kinformer/core/internal';
import { componentLogger } from '@kinformer/core/internal';
import { RingBuffer } from '@kinformer/core/internal';
import { createQueueMetrics, type MetricsProvider, type QueueMetrics } from './metrics.js';

/** Options of {@link WorkQueue}. */
export interface WorkQueueOptions {
  /**
   * The queue's name: the `name` label of its metrics and a binding of its log lines. Required when
   * `metricsProvider` is set.
   */
  name?: string;
  /** Source of time for metrics (and for the delaying queue's timer). Default: the wall clock. */
  clock?: Clock;
  /** Where to send metrics; none are collected (and no timer runs) without one. */
  metricsProvider?: MetricsProvider;
  /** pino logger; the queue logs through `logger.child({ component: 'workqueue', queue: name })`. */
  logger?: Logger;
}

/**
 * What {@link WorkQueue.get} resolves with, client-go's `(item, shutdown)`: either an item to
 * process (`shutdown: false`), or `shutdown: true` with no item once the queue is shut down and
 * empty. Destructure it and test `shutdown` first; TypeScript then knows `item` is a `K`:
 *
 * ```ts
 * const { item, shutdown } = await queue.get();
 * if (shutdown) return;
 * ```
 */
export type GetResult<K> =
  { readonly item: K; readonly shutdown: false } | { readonly item: undefined; readonly shutdown: true };

/** Options of {@link WorkQueue.get}. */
export interface GetOptions {
  /** Stops waiting: the promise rejects with `ERR_ABORTED` and no item is taken. */
  signal?: AbortSignal;
}

interface Waiter<K> {
  resolve(result: GetResult<K>): void;
  reject(err: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  settled: boolean;
}

const SHUT_DOWN: GetResult<never> = Object.freeze({ item: undefined, shutdown: true });

/** Compact the waiter buffer once at least this many aborted waiters sit in it. */
const COMPACT_ABORTED_WAITERS = 64;

/**
 * client-go's work queue (`workqueue.TypedInterface`): the queue between informer event handlers
 * and the workers of a controller.
 *
 * - **Fair**: items are handed out in the order they were added (FIFO); `add` and `get` are
 *   amortised O(1).
 * - **Stingy**: an item is never handed to two workers at once, and adding an item that is already
 *   waiting is a no-op (duplicates collapse). An item added again while it is being processed is
 *   remembered ("dirty") and handed out again only after {@link WorkQueue.done}.
 * - **Many producers and consumers**: any number of async tasks may `add` and `await get()`.
 * - **Shutdown**: after {@link WorkQueue.shutdown} adds are ignored, items still queued are still
 *   handed out, and `get` resolves `{ shutdown: true }` once the queue is empty.
 *
 * Items are compared by identity (`Set`/`Map` semantics, `SameValueZero`): two equal-looking
 * objects are two items. Use string keys (`metaNamespaceKeyFunc(obj)`) and look the object up in
 * the informer's lister when processing it.
 *
 * Every item handed out by `get` must be given back with `done`, also after shutdown.
 */
export class WorkQueue<K> {
  /** The queue's name ('' when none was given). */
  readonly name: string;
  /** @internal */
  protected readonly clock: Clock;
  /** @internal */
  protected readonly logger: Logger;
  /** @internal */
  protected readonly metrics: QueueMetrics<K>;

  /** Order of the items to hand out. Each is in `dirty` and not in `processing`. */
  private readonly queue = new RingBuffer<K>();
  /** Every item that needs processing (queued, or re-added while being processed). */
  private readonly dirty = new Set<K>();
  /** Every item handed out and not yet done. May also be dirty. */
  private readonly processing = new Set<K>();
  /** Consumers waiting in `get`. Only non-empty while `queue` is empty. */
  private readonly waiters = new RingBuffer<Waiter<K>>();
  private abortedWaiters = 0;
  /** Callers of `shutdownWithDrain` waiting for `processing` to empty. */
  private drainWaiters: (() => void)[] = [];
  private drainCheckScheduled = false;
  private closing = false;
  private drain = false;

  constructor(options: WorkQueueOptions = {}) {
    this.name = options.name ?? '';
    if (options.metricsProvider && this.name === '') {
      throw new KinformerError(
        ErrorCodes.INVALID_OPTION,
        'a work queue with a metricsProvider needs a name to label its metrics',
      );
    }
    this.clock = options.clock ?? realClock;
    this.logger = componentLogger(
      options.logger,
      this.name === '' ? { component: 'workqueue' } : { component: 'workqueue', queue: this.name },
    );
    this.metrics = createQueueMetrics<K>(this.name, options.metricsProvider, this.clock);
  }

  /**
   * Marks `item` as needing processing. Ignored after shutdown, and when the item is already
   * waiting. When the item is being processed it is handed out again after its `done`; otherwise it
   * goes to the back of the queue (or straight to a waiting `get`).
   */
  add(item: K): void {
    if (this.closing || this.dirty.has(item)) return;
    this.metrics.add(item);
    this.dirty.add(item);
    if (this.processing.has(item)) return;
    this.enqueue(item);
  }

  /** How many items wait to be handed out (not counting items being processed). Informational only. */
  length(): number {
    return this.queue.size;
  }

  /** @deprecated Use {@link length} (the name the FIFOs use; client-go's `Len`). Same behaviour. */
  len(): number {
    return this.length();
  }

  /**
   * Waits for an item and takes it: the item moves to the processing set until {@link done} is
   * called with it. Resolves `{ item, shutdown: false }`, or `{ item: undefined, shutdown: true }`
   * once the queue is shut down and empty (items queued before the shutdown are still handed out).
   * Waiting consumers are served in the order they called `get`. With `signal`, rejects with
   * `ERR_ABORTED` when it aborts before an item arrived.
   */
  get(options?: GetOptions): Promise<GetResult<K>> {
    if (this.queue.size > 0) {
      const item = this.queue.shift() as K;
      this.startProcessing(item);
      return Promise.resolve({ item, shutdown: false });
    }
    if (this.closing) return Promise.resolve(SHUT_DOWN);
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise<GetResult<K>>((resolve, reject) => {
      const waiter: Waiter<K> = { resolve, reject, signal, onAbort: undefined, settled: false };
      if (signal) {
        waiter.onAbort = () => {
          if (waiter.settled) return;
          waiter.settled = true;
          this.abortedWaiters++;
          if (
            this.abortedWaiters >= COMPACT_ABORTED_WAITERS &&
            this.abortedWaiters * 2 >= this.waiters.size
          ) {
            this.waiters.removeWhere((w) => w.settled);
            this.abortedWaiters = 0;
          }
          reject(abortError(signal));
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.waiters.push(waiter);
    });
  }

  /**
   * Marks `item` as done processing. If it was added again meanwhile, it goes back to the queue
   * (also after shutdown, so a draining worker still sees it). An item that is not being processed
   * is ignored (client-go would queue it a second time; here it is logged at warn level).
   */
  done(item: K): void {
    if (!this.processing.delete(item)) {
      this.logger.warn(
        { item: typeof item === 'string' ? item : typeof item },
        'done called for an item that is not being processed',
      );
      return;
    }
    this.metrics.done(item);
    if (this.dirty.has(item)) this.enqueue(item);
    if (this.processing.size === 0) this.scheduleDrainCheck();
  }

  /**
   * Shuts the queue down at once: later adds are ignored, waiting `get`s resolve `{ shutdown: true }`,
   * items still queued keep being handed out, and a pending {@link shutdownWithDrain} resolves
   * without waiting for the items being processed. Idempotent.
   */
  shutdown(): void {
    this.drain = false;
    this.beginShutdown();
    this.resolveDrainWaiters();
  }

  /** @deprecated Use {@link shutdown} (the name the factory and the event recorder use; client-go's `ShutDown`). */
  shutDown(): void {
    this.shutdown();
  }

  /**
   * Shuts the queue down like {@link shutdown}, then resolves once no item is being processed (every
   * item handed out has been given back with `done`). Workers must keep calling `done`, or the promise
   * never resolves; a later {@link shutdown} makes it resolve at once. The check runs after the
   * current synchronous turn, so a worker that calls `done` and then `get` straight away keeps the
   * drain waiting while items remain queued.
   */
  shutdownWithDrain(): Promise<void> {
    this.drain = true;
    this.beginShutdown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  /** @deprecated Use {@link shutdownWithDrain} (client-go's `ShutDownWithDrain`). Same behaviour. */
  shutDownWithDrain(): Promise<void> {
    return this.shutdownWithDrain();
  }

  /** True once {@link shutdown} or {@link shutdownWithDrain} was called. */
  shuttingDown(): boolean {
    return this.closing;
  }

  /**
   * Called once, when the queue starts shutting down (after `shuttingDown()` turned true).
   * @internal Subclasses release their timers here.
   */
  protected onShutdown(): void {}

  private enqueue(item: K): void {
    while (this.waiters.size > 0) {
      const waiter = this.waiters.shift() as Waiter<K>;
      if (waiter.settled) {
        this.abortedWaiters--;
        continue;
      }
      this.settle(waiter);
      this.startProcessing(item);
      waiter.resolve({ item, shutdown: false });
      return;
    }
    this.queue.push(item);
  }

  private startProcessing(item: K): void {
    this.metrics.get(item);
    this.processing.add(item);
    this.dirty.delete(item);
  }

  private settle(waiter: Waiter<K>): void {
    waiter.settled = true;
    if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
  }

  private beginShutdown(): void {
    if (this.closing) return;
    this.closing = true;
    this.logger.debug(
      { queued: this.queue.size, processing: this.processing.size, drain: this.drain },
      'work queue shutting down',
    );
    this.metrics.stop();
    this.onShutdown();
    // Waiters only exist while the queue is empty: each of them is told to stop.
    while (this.waiters.size > 0) {
      const waiter = this.waiters.shift() as Waiter<K>;
      if (waiter.settled) continue;
      this.settle(waiter);
      waiter.resolve(SHUT_DOWN);
    }
    this.abortedWaiters = 0;
  }

  private scheduleDrainCheck(): void {
    if (this.drainWaiters.length === 0 || this.drainCheckScheduled) return;
    this.drainCheckScheduled = true;
    queueMicrotask(() => {
      this.drainCheckScheduled = false;
      if (this.processing.size === 0 || !this.drain) this.resolveDrainWaiters();
    });
  }

  private resolveDrainWaiters(): void {
    if (this.drainWaiters.length === 0) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
