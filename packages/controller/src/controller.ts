import { ErrorCodes, ExponentialBackoff, isKinformerError, KinformerError, realClock } from '@kinformer/core';
import { componentLogger, definedProps } from '@kinformer/core/internal';
import type { Clock, KubeObject, Logger } from '@kinformer/core';
import { RequeueError } from '@kinformer/delta-fifo';
import type { Deltas, PopProcessFunc, Queue } from '@kinformer/delta-fifo';
import type { PopBatchProcessFunc } from '@kinformer/delta-fifo/internal';
import { Reflector } from '@kinformer/reflector';
import type {
  ListerWatcher,
  ReflectorOptions,
  ReflectorStats,
  ReflectorStore,
  WatchErrorHandler,
} from '@kinformer/reflector';

/** After this many items processed back to back, the process loop lets the event loop run (I/O, timers). */
const YIELD_EVERY_ITEMS = 1000;

/** Options of {@link Controller}. */
export interface ControllerOptions<T extends KubeObject> {
  /** The queue the reflector fills and the controller drains (a `RealFIFO` or a `DeltaFIFO`). */
  queue: Queue<T>;
  /** Lists and watches the resource. */
  listerWatcher: ListerWatcher<T>;
  /**
   * Handles one popped item (client-go's `Config.Process`). May be async: the next pop waits for it.
   * What a throw does is described on {@link Controller.run}.
   */
  process: PopProcessFunc<T>;
  /**
   * Handles a batch of popped items at once (client-go's `Config.ProcessBatch`). Used only when the
   * queue has `popBatch` (a `RealFIFO`) and `retryOnError` is off; otherwise every item goes to
   * `process`. It must have the same effect as calling `process` for each item in order.
   */
  processBatch?: PopBatchProcessFunc<T>;
  /** How often the reflector asks for a resync, ms (0 or absent: never). */
  fullResyncPeriodMs?: number;
  /** Asked at each resync tick; the resync happens only when it returns true. Absent: always. */
  shouldResync?: () => boolean;
  /**
   * When true, an item whose processing throws is put back into the queue and retried (after a
   * short backoff, 10 ms doubling up to 5 s) instead of stopping the controller. client-go removed
   * this option in 1.33; kept for `DeltaFIFO`-style consumers.
   */
  retryOnError?: boolean;
  /**
   * The `apiVersion`/`kind` objects must have (the reflector's `expectedType`); objects of another
   * type are dropped by the reflector.
   */
  objectType?: ReflectorOptions<T>['expectedType'];
  /** A name for logs (the reflector's `name`). */
  name?: string;
  clock?: Clock;
  logger?: Logger;
  /** Called with every error that ends a list-and-watch cycle (see `WatchErrorHandler`). */
  watchErrorHandler?: WatchErrorHandler<T>;
  /**
   * Called once, synchronously, when {@link Controller.hasSynced} first turns true: right after the
   * last initial item was processed, or after an empty initial list was queued.
   */
  onSynced?: () => void;
  /** Further reflector options (page size, watch-list, backoff, watch timeout). */
  reflectorOptions?: Omit<
    ReflectorOptions<T>,
    'name' | 'expectedType' | 'resyncPeriodMs' | 'shouldResync' | 'clock' | 'logger' | 'watchErrorHandler'
  >;
}

/** What the controller reads from its reflector. */
type ReflectorReadout = Pick<Reflector<KubeObject>, 'lastSyncResourceVersion' | 'isWatching'> & {
  stats(): ReflectorStats | undefined;
};

/** The readout before `run` built the reflector: no resourceVersion, no watch, no counters. */
const NOT_RUNNING: ReflectorReadout = {
  lastSyncResourceVersion: () => '',
  isWatching: () => false,
  stats: () => undefined,
};

/**
 * client-go's low-level controller: a {@link Reflector} lists and watches into `queue`, and a process
 * loop pops items and hands them to `process`, one at a time (or in batches with `processBatch` and
 * a `RealFIFO`). Build one per resource; `run` it once. The loop is a task on the event loop, not a
 * thread: it lets I/O and timers run after every 1000 items it processes back to back.
 */
export class Controller<T extends KubeObject> {
  readonly #options: ControllerOptions<T>;
  readonly #queue: Queue<T>;
  readonly #logger: Logger;
  readonly #clock: Clock;
  #reflector: ReflectorReadout = NOT_RUNNING;
  #started = false;
  #syncedNotified = false;

  constructor(options: ControllerOptions<T>) {
    this.#options = options;
    this.#queue = options.queue;
    this.#clock = options.clock ?? realClock;
    this.#logger = componentLogger(options.logger, {
      component: 'controller',
      ...(options.name === undefined ? {} : { name: options.name }),
    });
  }

  /**
   * Runs the reflector and the process loop until `signal` aborts, then closes the queue, waits for
   * the reflector to stop and resolves. Call it once (a second call rejects with
   * `ERR_ALREADY_STARTED`).
   *
   * If `process` (or `processBatch`) throws or rejects — other than with a `RequeueError`, and unless
   * `retryOnError` is set — the controller stops just as if `signal` had aborted, and `run` rejects
   * with that error once the reflector stopped (client-go's `TestPanicPropagated`: a handler panic
   * propagates out of `Run`). With `retryOnError` the item is requeued and retried instead.
   *
   * If the reflector's `run` rejects (which it does only on a bug: server errors go to the
   * `watchErrorHandler`), the controller stops the same way and `run` rejects with that error, rather
   * than wait forever for a queue nothing fills (client-go's reflector cannot fail this way). The
   * first failure wins when both fail.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#started)
      throw new KinformerError(
        ErrorCodes.ALREADY_STARTED,
        'the controller is already running (run may be called once)',
      );
    this.#started = true;
    const stop = new AbortController();
    const o = this.#options;
    const reflector = new Reflector<T>(o.listerWatcher, this.#reflectorStore(), {
      ...o.reflectorOptions,
      ...definedProps({
        name: o.name,
        expectedType: o.objectType,
        resyncPeriodMs: o.fullResyncPeriodMs,
        shouldResync: o.shouldResync,
        watchErrorHandler: o.watchErrorHandler,
        logger: o.logger,
      }),
      clock: this.#clock,
    });
    this.#reflector = reflector;
    const onAbort = (): void => stop.abort(signal.reason);
    if (signal.aborted) stop.abort(signal.reason);
    else signal.addEventListener('abort', onAbort, { once: true });
    let failure: { error: unknown } | undefined;
    // The reflector rejects only on a bug (server errors go to the watch error handler). Without it
    // nothing would fill the queue again, so the controller stops rather than wait forever unsynced.
    const reflectorDone = reflector.run(stop.signal).catch((error: unknown) => {
      this.#logger.error({ err: error }, 'reflector failed; stopping the controller');
      failure ??= { error };
      stop.abort(error);
    });

    try {
      await this.#processLoop(stop.signal);
    } catch (error) {
      failure ??= { error };
    } finally {
      signal.removeEventListener('abort', onAbort);
      stop.abort();
      this.#queue.close();
      await reflectorDone;
    }
    if (failure !== undefined) throw failure.error;
  }

  /** True once the queue's initial population has been processed (the queue's `hasSynced`). */
  hasSynced(): boolean {
    return this.#queue.hasSynced();
  }

  /** The reflector's last synced resourceVersion; `''` before `run`. */
  lastSyncResourceVersion(): string {
    return this.#reflector.lastSyncResourceVersion();
  }

  /** Whether the reflector currently has a watch open (false before `run`). */
  isWatching(): boolean {
    return this.#reflector.isWatching();
  }

  /** The reflector's counters (lists, relists, watch restarts, 410s, events, stalls…), once running. */
  reflectorStats(): ReflectorStats | undefined {
    return this.#reflector.stats();
  }

  async #processLoop(signal: AbortSignal): Promise<void> {
    const o = this.#options;
    const queue = this.#queue as Queue<T> & {
      popBatch?: (
        process: PopBatchProcessFunc<T>,
        options?: { signal?: AbortSignal },
      ) => Promise<Deltas<T>[]>;
    };
    const retry = o.retryOnError === true;
    const process = retry ? requeueOnError(o.process) : o.process;
    const processBatch = !retry && typeof queue.popBatch === 'function' ? o.processBatch : undefined;
    const backoff = retry
      ? new ExponentialBackoff({ initialMs: 10, capMs: 5_000, jitter: 0, clock: this.#clock })
      : undefined;
    // A pop of a non-empty queue settles on a microtask, so a long queue (a relist of a big cluster)
    // would otherwise be drained without ever letting I/O and timers run.
    let sinceYield = 0;
    while (!signal.aborted) {
      try {
        if (processBatch !== undefined)
          sinceYield += (await queue.popBatch!(processBatch, { signal })).length;
        else {
          await queue.pop(process, { signal });
          sinceYield++;
        }
        backoff?.reset();
      } catch (err) {
        if (isKinformerError(err, ErrorCodes.FIFO_CLOSED)) return;
        if (signal.aborted && isKinformerError(err, ErrorCodes.ABORTED)) return;
        if (!(retry && err instanceof RequeueError)) throw err;
        this.#logger.warn({ err: err.cause }, 'processing failed; the item was requeued');
        await this.#clock.sleep(backoff!.next(), signal);
      }
      this.#checkSynced();
      if (sinceYield >= YIELD_EVERY_ITEMS) {
        sinceYield = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  }

  /** The queue as the reflector sees it: every write also checks whether the queue just synced. */
  #reflectorStore(): ReflectorStore<T> {
    const q = this.#queue;
    const store: ReflectorStore<T> = {
      add: (obj) => {
        q.add(obj);
        this.#checkSynced();
      },
      update: (obj) => {
        q.update(obj);
        this.#checkSynced();
      },
      delete: (obj) => {
        q.delete(obj);
        this.#checkSynced();
      },
      replace: (items, resourceVersion) => {
        q.replace(items, resourceVersion);
        this.#checkSynced();
      },
      resync: () => q.resync(),
    };
    if (q.updateResourceVersion !== undefined)
      store.updateResourceVersion = (rv) => q.updateResourceVersion?.(rv);
    if (q.bookmark !== undefined) store.bookmark = (rv) => q.bookmark?.(rv);
    return store;
  }

  #checkSynced(): void {
    if (this.#syncedNotified || !this.#queue.hasSynced()) return;
    this.#syncedNotified = true;
    try {
      this.#options.onSynced?.();
    } catch (err) {
      this.#logger.error({ err }, 'onSynced callback failed');
    }
  }
}

/** Wraps `process` so that any failure becomes a `RequeueError` (the queue then puts the item back). */
function requeueOnError<T>(process: PopProcessFunc<T>): PopProcessFunc<T> {
  return (deltas, isInInitialList) => {
    let result: void | Promise<void>;
    try {
      result = process(deltas, isInInitialList);
    } catch (err) {
      throw toRequeue(err);
    }
    if (result === undefined) return undefined;
    return Promise.resolve(result).catch((err: unknown) => {
      throw toRequeue(err);
    });
  };
}

function toRequeue(err: unknown): RequeueError {
  return err instanceof RequeueError ? err : new RequeueError(err ?? new Error('processing failed'));
}
