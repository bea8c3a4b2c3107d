import { deletionHandlingMetaNamespaceKeyFunc, ErrorCodes } from '@kinformer/core';
import { RingBuffer } from '@kinformer/core/internal';
import type { Clock, DeletedFinalStateUnknown, Logger } from '@kinformer/core';
import type { ResourceEventHandler } from '@kinformer/controller';

/** One notification for a handler. Built once per event and shared (read-only) by every listener. */
export type Notification<T> =
  | { readonly type: 'add'; readonly obj: T; readonly isInInitialList: boolean }
  | { readonly type: 'update'; readonly oldObj: T; readonly newObj: T }
  | { readonly type: 'delete'; readonly obj: T | DeletedFinalStateUnknown<T> };

/** Counters shared by every listener of one informer (they outlive removed listeners). */
export interface ListenerCounters {
  dispatched: number;
  errors: number;
}

/** Construction parameters of a {@link ProcessorListener}. */
export interface ProcessorListenerOptions {
  name: string;
  logger: Logger;
  counters: ListenerCounters;
  requestedResyncPeriodMs: number;
  resyncPeriodMs: number;
  /** The informer's clock: resync deadlines and the failure-log throttle read it. */
  clock: Clock;
  /** Called when the last pending initial-list add has been handled. */
  onInitialListProcessed: () => void;
}

/** A handler's failures are logged at error at most once per this many ms (the others at debug). */
const HANDLER_FAILURE_LOG_INTERVAL_MS = 60_000;

/** After this many synchronous handler calls in a row the drain loop lets I/O run. */
const YIELD_EVERY = 1000;

/**
 * client-go's `processorListener`: one per registered handler. Notifications are appended to an
 * unbounded ring buffer and handed to the handler one at a time, in order, by an async drain loop
 * that starts on a microtask (never inside the code that distributes). When the handler returns a
 * promise, the next notification waits for it; so a slow handler only delays itself. A handler that
 * throws or rejects is logged with the object's key (at error once a minute per handler, repeats at
 * debug) and counted; its next notification is handled as usual. The repeats are counted: the next
 * error line reports them, and so does a summary line at error once the minute is over and the
 * handler succeeded again, or when the listener stops, so a count is never lost.
 */
export class ProcessorListener<T> {
  readonly handler: ResourceEventHandler<T>;
  readonly name: string;
  /** The resync period the handler asked for (ms, 0 = none). */
  requestedResyncPeriodMs: number;
  /** The resync period in effect (ms, 0 = none), see `determineResyncPeriod`. */
  resyncPeriodMs: number;
  /** When the next resync is due (clock ms). */
  nextResyncAt: number;
  /** Whether the current resync includes this listener (client-go's `listeners[l]` flag). */
  syncing = true;
  /** Notifications handled (successfully or not). */
  dispatched = 0;
  /** Total time spent in this handler (until its promise settled, for async handlers), ms. */
  busyMs = 0;
  /** The longest single handler call, ms. */
  maxLatencyMs = 0;
  /** Notifications whose handler threw or rejected. */
  errors = 0;

  readonly #buffer = new RingBuffer<Notification<T>>();
  readonly #logger: Logger;
  readonly #counters: ListenerCounters;
  readonly #onInitialListProcessed: () => void;
  #started = false;
  #stopped = false;
  #draining: Promise<void> | undefined;
  #pendingInitial = 0;
  readonly #clock: Clock;
  /** When a handler failure was last logged at error (clock ms), and the failures since. */
  #loudAt: number | undefined;
  #quietFailures = 0;

  constructor(handler: ResourceEventHandler<T>, options: ProcessorListenerOptions) {
    this.handler = handler;
    this.name = options.name;
    this.#logger = options.logger;
    this.#counters = options.counters;
    this.#onInitialListProcessed = options.onInitialListProcessed;
    this.#clock = options.clock;
    this.requestedResyncPeriodMs = options.requestedResyncPeriodMs;
    this.resyncPeriodMs = options.resyncPeriodMs;
    this.nextResyncAt = options.clock.now() + options.resyncPeriodMs;
  }

  /** Queues a notification (dropped once stopped). Initial-list adds are tracked for `hasSynced`. */
  add(notification: Notification<T>): void {
    if (this.#stopped) return;
    if (notification.type === 'add' && notification.isInInitialList) this.#pendingInitial++;
    this.#buffer.push(notification);
    if (this.#started && this.#draining === undefined) this.#draining = this.#drain();
  }

  /** Starts delivering (what was queued before is delivered first). */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    if (this.#buffer.size > 0 && this.#draining === undefined) this.#draining = this.#drain();
  }

  /**
   * Stops delivering: queued notifications are dropped; a handler call in progress completes.
   * Resolves once it did. Idempotent.
   */
  stop(): Promise<void> {
    this.#stopped = true;
    this.#buffer.clear();
    this.#reportQuietFailures(true);
    return this.#draining ?? Promise.resolve();
  }

  isStopped(): boolean {
    return this.#stopped;
  }

  /** Notifications waiting for the handler. */
  get bufferDepth(): number {
    return this.#buffer.size;
  }

  /** True when no initial-list add is waiting for (or inside) the handler. */
  initialListProcessed(): boolean {
    return this.#pendingInitial === 0;
  }

  /** Whether a resync is due at `now` (never when the resync period is 0). */
  shouldResync(now: number): boolean {
    return this.resyncPeriodMs !== 0 && now >= this.nextResyncAt;
  }

  determineNextResync(now: number): void {
    this.nextResyncAt = now + this.resyncPeriodMs;
  }

  setResyncPeriod(periodMs: number): void {
    this.resyncPeriodMs = periodMs;
  }

  async #drain(): Promise<void> {
    // Start after the distributing code (store write + every listener's add) has finished.
    await Promise.resolve();
    let synchronousCalls = 0;
    try {
      for (;;) {
        if (this.#stopped) break;
        const notification = this.#buffer.shift();
        if (notification === undefined) break;
        const pending = this.#invoke(notification);
        if (pending !== undefined) {
          await pending;
          synchronousCalls = 0;
        } else if (++synchronousCalls >= YIELD_EVERY) {
          synchronousCalls = 0;
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
    } finally {
      this.#draining = undefined;
    }
  }

  /**
   * Calls the handler. Returns a promise (that never rejects) only when the handler returned one.
   * Never throws: whatever the handler does (throw, reject, return a hostile thenable) is a failure
   * of that one notification.
   */
  #invoke(notification: Notification<T>): Promise<void> | undefined {
    let pending: PromiseLike<unknown>;
    const start = performance.now();
    try {
      let result: unknown;
      switch (notification.type) {
        case 'add':
          result = this.handler.onAdd?.(notification.obj, notification.isInInitialList);
          break;
        case 'update':
          result = this.handler.onUpdate?.(notification.oldObj, notification.newObj);
          break;
        case 'delete':
          result = this.handler.onDelete?.(notification.obj);
          break;
      }
      if (!isPromiseLike(result)) {
        this.#done(notification, start);
        if (this.#quietFailures > 0) this.#reportQuietFailures(false);
        return undefined;
      }
      pending = result;
    } catch (err) {
      this.#failed(notification, err);
      this.#done(notification, start);
      return undefined;
    }
    return Promise.resolve(pending).then(
      () => {
        this.#done(notification, start);
        if (this.#quietFailures > 0) this.#reportQuietFailures(false);
      },
      (err: unknown) => {
        this.#failed(notification, err);
        this.#done(notification, start);
      },
    );
  }

  /** Counts a handled notification. Never throws. */
  #done(notification: Notification<T>, start: number): void {
    const latency = performance.now() - start;
    this.busyMs += latency;
    if (latency > this.maxLatencyMs) this.maxLatencyMs = latency;
    this.dispatched++;
    this.#counters.dispatched++;
    if (notification.type === 'add' && notification.isInInitialList && --this.#pendingInitial === 0) {
      try {
        this.#onInitialListProcessed();
      } catch (err) {
        this.#logger.error({ err, handler: this.name }, 'initial-list observer failed');
      }
    }
  }

  #failed(notification: Notification<T>, err: unknown): void {
    this.errors++;
    this.#counters.errors++;
    const obj = notification.type === 'update' ? notification.newObj : notification.obj;
    const fields = {
      err,
      code: ErrorCodes.HANDLER_FAILED,
      handler: this.name,
      event: notification.type,
      key: keyOf(obj),
    };
    // One error line per handler and minute: a handler that fails on every event must not flood the
    // log. Repeats go to debug; the next error line says how many there were.
    const now = this.#clock.now();
    if (this.#loudAt === undefined || now - this.#loudAt >= HANDLER_FAILURE_LOG_INTERVAL_MS) {
      this.#loudAt = now;
      const repeats = this.#quietFailures;
      this.#quietFailures = 0;
      this.#logger.error(
        repeats === 0 ? fields : { ...fields, failuresSinceLastReport: repeats },
        'event handler failed',
      );
    } else {
      this.#quietFailures++;
      this.#logger.debug(fields, 'event handler failed');
    }
  }

  /**
   * Logs at error how many failures went to debug since the last error line, once the throttle's
   * minute is over (or at once with `force`, when the listener stops), and starts a new minute.
   * Never throws.
   */
  #reportQuietFailures(force: boolean): void {
    const repeats = this.#quietFailures;
    if (repeats === 0) return;
    const now = this.#clock.now();
    if (!force && this.#loudAt !== undefined && now - this.#loudAt < HANDLER_FAILURE_LOG_INTERVAL_MS) return;
    this.#quietFailures = 0;
    this.#loudAt = now;
    try {
      this.#logger.error(
        { code: ErrorCodes.HANDLER_FAILED, handler: this.name, failuresSinceLastReport: repeats },
        'event handler failures not logged at error since the last report',
      );
    } catch {
      // A logger that throws must not break delivery.
    }
  }
}

function keyOf(obj: unknown): string | undefined {
  try {
    return deletionHandlingMetaNamespaceKeyFunc(
      obj as Parameters<typeof deletionHandlingMetaNamespaceKeyFunc>[0],
    );
  } catch {
    return undefined;
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' && value !== null && typeof (value as PromiseLike<unknown>).then === 'function'
  );
}
