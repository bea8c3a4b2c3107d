import { ErrorCodes, KinformerError, type KubeObject, type Status } from '@kinformer/core';
import type { WatchEvent, WatchOptions } from './listerWatcher.js';
import { INITIAL_EVENTS_END_ANNOTATION } from './watchStream.js';

type Item<T> = { kind: 'event'; event: WatchEvent<T> } | { kind: 'end' } | { kind: 'throw'; error: unknown };

/**
 * One watch stream served by a {@link FakeListerWatcher}, controlled by the test: push events, end it
 * cleanly, break the connection, or throw an error, exactly as the `ListerWatcher` contract says a real
 * stream behaves. Events are buffered until the consumer pulls them, in order.
 *
 * The stream completes (iteration done) when the test calls {@link close}, when the request's signal
 * aborts, or when the consumer stops iterating (`break`/`return()`); {@link stopped} tells the last two
 * apart from a server-side end. Anything pushed after the stream finished is dropped (and counted in
 * {@link dropped}). A stream can be iterated once.
 */
export class FakeWatchStream<T extends KubeObject = KubeObject> implements AsyncIterable<WatchEvent<T>> {
  /** The options the watch was requested with (a copy). */
  readonly options: WatchOptions;
  /** Events pushed after the stream had finished. */
  dropped = 0;
  /** Events handed to the consumer. */
  delivered = 0;

  private queue: Item<T>[] = [];
  private head = 0;
  private ended = false;
  private finished = false;
  private consumerStopped = false;
  private iterated = false;
  private waiter:
    { resolve: (r: IteratorResult<WatchEvent<T>>) => void; reject: (err: unknown) => void } | undefined;
  private readonly signal: AbortSignal;
  private readonly onAbort = (): void => this.stopByConsumer();
  private readonly finishedListeners: Array<() => void> = [];

  constructor(options: WatchOptions, signal: AbortSignal) {
    this.options = { ...options };
    this.signal = signal;
    if (signal.aborted) this.stopByConsumer();
    else signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** True once the consumer stopped the watch (its request signal aborted, or it left the iteration). */
  get stopped(): boolean {
    return this.consumerStopped;
  }

  /** True once no more events will be delivered (ended by either side). */
  get isFinished(): boolean {
    return this.finished;
  }

  /** Events pushed but not yet pulled by the consumer. */
  get pending(): number {
    return this.queue.length - this.head;
  }

  /** Queues one event. */
  push(event: WatchEvent<T>): this {
    return this.enqueue({ kind: 'event', event });
  }

  /** Queues an `ADDED` event. */
  add(obj: T): this {
    return this.push({ type: 'ADDED', object: obj });
  }

  /** Queues a `MODIFIED` event. */
  modify(obj: T): this {
    return this.push({ type: 'MODIFIED', object: obj });
  }

  /** Queues a `DELETED` event. */
  delete(obj: T): this {
    return this.push({ type: 'DELETED', object: obj });
  }

  /** Queues a `BOOKMARK` at `resourceVersion`; `initialEventsEnd` adds the `k8s.io/initial-events-end` annotation. */
  bookmark(
    resourceVersion: string,
    options: { initialEventsEnd?: boolean; annotationValue?: string } = {},
  ): this {
    const metadata: NonNullable<KubeObject['metadata']> = { resourceVersion };
    const value = options.annotationValue ?? (options.initialEventsEnd === true ? 'true' : undefined);
    if (value !== undefined) metadata.annotations = { [INITIAL_EVENTS_END_ANNOTATION]: value };
    return this.push({ type: 'BOOKMARK', object: { metadata } });
  }

  /**
   * Queues an in-stream `ERROR` event: the consumer's iteration throws `KinformerError.fromStatus(status)`
   * (or `error` itself when a `KinformerError`/`Error` is given), and the stream is over.
   */
  error(statusOrError: Status | Error): this {
    const error = statusOrError instanceof Error ? statusOrError : KinformerError.fromStatus(statusOrError);
    return this.enqueue({ kind: 'throw', error });
  }

  /** Queues a malformed line: the iteration throws `ERR_MALFORMED_WATCH_EVENT` (as a real decoder would). */
  malformed(line = '{"type":"ADDED","object":'): this {
    return this.error(
      new KinformerError(ErrorCodes.MALFORMED_WATCH_EVENT, 'watch line is not valid JSON', {
        details: { line: line.slice(0, 200) },
      }),
    );
  }

  /** Ends the stream cleanly (the server closed it, e.g. at `timeoutSeconds`). Queued after pending events. */
  close(): this {
    return this.enqueue({ kind: 'end' });
  }

  /** Ends the stream abruptly: the iteration throws `ERR_CONNECTION` after the pending events. */
  breakConnection(): this {
    return this.error(new KinformerError(ErrorCodes.CONNECTION, 'connection reset by peer'));
  }

  /** Calls `fn` once the stream finishes (at once when it already has). */
  onFinished(fn: () => void): void {
    if (this.finished) fn();
    else this.finishedListeners.push(fn);
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    if (this.iterated) throw new Error('a FakeWatchStream can only be iterated once');
    this.iterated = true;
    return {
      next: () => this.next(),
      return: () => {
        this.stopByConsumer();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  private enqueue(item: Item<T>): this {
    if (this.finished || this.ended) {
      if (item.kind === 'event') this.dropped++;
      return this;
    }
    if (item.kind !== 'event') this.ended = true;
    const waiter = this.waiter;
    if (waiter !== undefined && this.head === this.queue.length) {
      this.waiter = undefined;
      this.deliver(item, waiter);
      return this;
    }
    this.queue.push(item);
    return this;
  }

  private next(): Promise<IteratorResult<WatchEvent<T>>> {
    if (this.finished) return Promise.resolve({ done: true, value: undefined });
    if (this.head < this.queue.length) {
      const item = this.queue[this.head] as Item<T>;
      this.queue[this.head] = undefined as unknown as Item<T>;
      this.head++;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      return new Promise((resolve, reject) => this.deliver(item, { resolve, reject }));
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  private deliver(
    item: Item<T>,
    to: { resolve: (r: IteratorResult<WatchEvent<T>>) => void; reject: (err: unknown) => void },
  ): void {
    switch (item.kind) {
      case 'event':
        this.delivered++;
        to.resolve({ done: false, value: item.event });
        return;
      case 'end':
        this.finish();
        to.resolve({ done: true, value: undefined });
        return;
      case 'throw':
        this.finish();
        to.reject(item.error);
        return;
    }
  }

  private stopByConsumer(): void {
    if (this.finished) return;
    this.consumerStopped = true;
    this.finish();
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.resolve({ done: true, value: undefined });
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.ended = true;
    this.signal.removeEventListener('abort', this.onAbort);
    const dropped = this.queue.length - this.head;
    for (let i = this.head; i < this.queue.length; i++) if (this.queue[i]?.kind === 'event') this.dropped++;
    if (dropped > 0) {
      this.queue = [];
      this.head = 0;
    }
    for (const fn of this.finishedListeners.splice(0)) fn();
  }
}
