import {
  ErrorCodes,
  isKinformerError,
  KinformerError,
  type Clock,
  type KubeObject,
  type Logger,
  type Status,
} from '@kinformer/core';
import { type Timer } from '@kinformer/core/internal';
import { hasObjectMeta } from '@kinformer/core/internal';
import type { ListerWatcher, WatchEvent, WatchEventType, WatchOptions } from './listerWatcher.js';
import {
  faultSummary,
  isUnsupportedTableObject,
  malformedEventError,
  stalledError,
  unknownEventTypeError,
} from './reflectorErrors.js';

/** The annotation on the BOOKMARK that ends the initial events of a streaming list (KEP-3157). */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** A watch that ends within this long without delivering an event counts as an error (client-go). */
const VERY_SHORT_WATCH_MS = 1000;

/** Why the reflector itself stopped a watch. */
export type StopReason = 'aborted' | 'stalled' | 'resync';

/** Where the events of one watch go: the store, or a streaming list's temporary map. */
export interface EventSink<T> {
  add(obj: T): void;
  update(obj: T): void;
  delete(obj: T): void;
  bookmark(rv: string): void;
  setResourceVersion(rv: string): void;
}

/** How a watch ended. */
export interface WatchOutcome {
  /** Set when the reflector itself stopped the watch. */
  stopped: StopReason | undefined;
  /** The error that ended the watch; `undefined` for a clean end. */
  error: unknown;
  /** True once the `initial-events-end` bookmark arrived. */
  initialEventsEnd: boolean;
  /** Events applied to the sink (client-go's `eventCount`); bookmarks count, skipped events do not. */
  events: number;
}

/** What a watch stream needs from the reflector that runs it. */
export interface WatchContext<T extends KubeObject> {
  readonly name: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly listerWatcher: ListerWatcher<T>;
  /** When set, events of another apiVersion/kind are skipped. */
  readonly expectedType: { apiVersion: string; kind: string } | undefined;
  readonly typeDescription: string;
  /** Called for every line the stream yields, before it is checked. */
  received(now: number): void;
  /**
   * Called for every event about to be applied (bookmarks included). `periodic` is true for a BOOKMARK
   * other than the one that ends a streaming list's initial events.
   */
  delivered(type: WatchEventType, periodic: boolean, now: number, stream: OpenWatch<T>): void;
  /** Called for every event skipped because of its type. */
  skipped(): void;
}

/**
 * One open watch request: its stream, the controller that aborts it, its stall timer. The stall limit
 * is asked for again at every check, so it tightens as soon as the server demonstrates a bookmark
 * cadence ({@link BookmarkCadence}).
 */
export class OpenWatch<T> {
  iterator: AsyncIterator<WatchEvent<T>> = EMPTY_ITERATOR as AsyncIterator<WatchEvent<T>>;
  readonly controller = new AbortController();
  /** The clock time the request was sent. */
  readonly openedAt: number;
  lastDeliveryAt: number;
  /** The clock time of the last BOOKMARK (or the open time before the first). */
  lastBookmarkAt: number;
  events = 0;
  stopReason: StopReason | undefined;
  closed = false;
  private unlink: () => void = noop;
  private stall: Timer = NO_TIMER;

  constructor(
    private readonly clock: Clock,
    readonly options: WatchOptions,
    private readonly stallLimitMs: () => number,
  ) {
    this.openedAt = clock.now();
    this.lastDeliveryAt = this.openedAt;
    this.lastBookmarkAt = this.openedAt;
  }

  /** Stops this watch when `signal` aborts, until {@link close}. */
  link(signal: AbortSignal): void {
    const onAbort = (): void => this.stop('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    this.unlink = () => signal.removeEventListener('abort', onAbort);
  }

  /** (Re)arms the stall timer for the current limit, counted from the last delivery. */
  armStallTimer(): void {
    this.stall.cancel();
    if (this.closed || this.stopReason !== undefined) return;
    const check = (): void => {
      const limit = this.stallLimitMs();
      const idle = this.clock.now() - this.lastDeliveryAt;
      if (idle >= limit) {
        this.stop('stalled');
        return;
      }
      this.stall = this.clock.setTimeout(check, limit - idle);
    };
    this.stall = this.clock.setTimeout(
      check,
      Math.max(0, this.stallLimitMs() - (this.clock.now() - this.lastDeliveryAt)),
    );
  }

  /** The stall limit now in force, ms. */
  currentStallLimitMs(): number {
    return this.stallLimitMs();
  }

  /** Asks the watch to stop: the request is aborted and its consumer wakes up. */
  stop(reason: StopReason): void {
    if (this.stopReason !== undefined || this.closed) return;
    this.stopReason = reason;
    this.controller.abort(
      reason === 'stalled'
        ? new KinformerError(ErrorCodes.WATCH_STALLED, 'watch stalled')
        : reason === 'resync'
          ? new KinformerError(ErrorCodes.ABORTED, 'watch ended after a failed resync')
          : undefined,
    );
  }

  /** Closes the request, cancels the stall timer and removes the abort listener. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unlink();
    this.stall.cancel();
    if (!this.controller.signal.aborted) this.controller.abort();
    try {
      const done = this.iterator.return?.();
      if (done !== undefined) done.then(noop, noop);
    } catch {
      // a broken iterator cannot be closed any further; the request is aborted anyway
    }
  }
}

/**
 * Sends a watch request. Resolves with the open watch, or `undefined` when `signal` aborted. Rejects
 * with the request's error, or `ERR_WATCH_STALLED` when the server never answered within the stall
 * limit. The stall timer runs from here until the watch is closed. `track` receives the request's
 * promise so that the reflector can wait for it to settle before `run` resolves.
 */
export async function openWatch<T extends KubeObject>(
  ctx: WatchContext<T>,
  options: WatchOptions,
  stallLimitMs: () => number,
  signal: AbortSignal,
  track: (request: Promise<unknown>) => void,
): Promise<OpenWatch<T> | undefined> {
  if (signal.aborted) return undefined;
  const w = new OpenWatch<T>(ctx.clock, options, stallLimitMs);
  w.link(signal);
  w.armStallTimer();
  let iterable: AsyncIterable<WatchEvent<T>> | typeof ABORTED;
  let request: Promise<AsyncIterable<WatchEvent<T>>> | undefined;
  try {
    request = ctx.listerWatcher.watch(options, { signal: w.controller.signal });
    track(request);
    iterable = await raceAbort(request, w.controller.signal);
  } catch (err) {
    const reason = w.stopReason;
    w.close();
    if (reason === 'stalled') throw stalledError(options, w.currentStallLimitMs());
    throw err;
  }
  if (iterable === ABORTED) {
    const reason = w.stopReason;
    w.close();
    // A ListerWatcher that ignores its signal may still hand over a stream: close it when it does.
    request.then(closeLateStream, noop);
    if (reason === 'stalled') throw stalledError(options, w.currentStallLimitMs());
    return undefined;
  }
  try {
    w.iterator = iterable[Symbol.asyncIterator]();
  } catch (err) {
    w.close();
    throw err;
  }
  return w;
}

/** Options of {@link consumeWatch}. */
export interface ConsumeOptions {
  /** Clock time the watch was started (for the very-short-watch rule). */
  start: number;
  /** Record every event's resourceVersion (false for watches from `""`/`"0"`, whose ADDEDs are unordered). */
  propagateRVFromStart: boolean;
  /** Return as soon as the `initial-events-end` bookmark arrives, leaving the stream open. */
  exitOnInitialEventsEnd: boolean;
}

/**
 * client-go's `handleAnyWatch`: applies the events of `w` to `sink` until the stream ends, throws, is
 * stopped, or (with `exitOnInitialEventsEnd`) delivers the `initial-events-end` bookmark — in which case
 * the stream stays open for the caller. Store errors are logged and never end the watch.
 */
export async function consumeWatch<T extends KubeObject>(
  ctx: WatchContext<T>,
  w: OpenWatch<T>,
  sink: EventSink<T>,
  options: ConsumeOptions,
): Promise<WatchOutcome> {
  // One wake-up slot, refilled for each pull: racing every next() against one long-lived promise would
  // pile a reaction per event onto it for the life of the watch.
  let wake: ((value: typeof INTERRUPTED) => void) | undefined;
  const onStop = (): void => wake?.(INTERRUPTED);
  const stopSignal = w.controller.signal;
  stopSignal.addEventListener('abort', onStop, { once: true });
  const iterator = w.iterator;
  const pull = (
    resolve: (value: IteratorResult<WatchEvent<T>> | typeof INTERRUPTED) => void,
    reject: (err: Error) => void,
  ): void => {
    wake = resolve;
    iterator.next().then(resolve, reject);
  };
  let count = 0;
  let besidesAdded = false;
  let initialEventsEnd = false;
  const outcome = (error: unknown, stopped?: StopReason): WatchOutcome => ({
    stopped,
    error,
    initialEventsEnd,
    events: count,
  });
  try {
    for (;;) {
      if (stopSignal.aborted) return outcome(undefined, w.stopReason ?? 'aborted');
      const next = await new Promise(pull);
      wake = undefined;
      if (next === INTERRUPTED) return outcome(undefined, w.stopReason ?? 'aborted');
      if (next.done === true) break;
      const now = ctx.clock.now();
      w.lastDeliveryAt = now;
      w.events++;
      ctx.received(now);

      const event = next.value;
      const type = event.type as string;
      const obj: unknown = event.object;
      if (type === 'ERROR') {
        // The contract says ListerWatchers throw these; accept one yielded anyway.
        return outcome(KinformerError.fromStatus(obj as Status));
      }
      if (!hasObjectMeta(obj)) return outcome(malformedEventError(type, obj));
      if (isSkipped(ctx, obj)) {
        ctx.skipped();
        continue;
      }
      const rv = obj.metadata.resourceVersion ?? '';
      if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED' && type !== 'BOOKMARK') {
        return outcome(unknownEventTypeError(type, rv));
      }
      const isEnd =
        type === 'BOOKMARK' && obj.metadata.annotations?.[INITIAL_EVENTS_END_ANNOTATION] === 'true';
      ctx.delivered(type, type === 'BOOKMARK' && !isEnd, now, w); // positional: no object per event
      // client-go's eventCount: only events that reached the store count against a very short watch.
      count++;
      if (type !== 'ADDED') besidesAdded = true;
      try {
        switch (type) {
          case 'ADDED':
            sink.add(obj as T);
            break;
          case 'MODIFIED':
            sink.update(obj as T);
            break;
          case 'DELETED':
            sink.delete(obj as T);
            break;
          case 'BOOKMARK':
            if (isEnd) initialEventsEnd = true;
            sink.bookmark(rv);
            break;
        }
      } catch (err) {
        // client-go: store errors are logged, never fatal, and the version still moves past the event.
        ctx.logger.error({ err, type, resourceVersion: rv }, 'the store rejected a watch event; continuing');
      }
      if (options.propagateRVFromStart || besidesAdded) {
        try {
          sink.setResourceVersion(rv);
        } catch (err) {
          ctx.logger.error(
            { err, resourceVersion: rv },
            'the store rejected a resourceVersion update; continuing',
          );
        }
      }
      if (options.exitOnInitialEventsEnd && initialEventsEnd) {
        ctx.logger.debug(
          { events: count, elapsedMs: now - options.start },
          'received the bookmark that ends the initial events stream',
        );
        return outcome(undefined);
      }
    }
  } catch (err) {
    if (w.stopReason !== undefined) return outcome(undefined, w.stopReason);
    if (!isKinformerError(err, ErrorCodes.CONNECTION)) return outcome(err);
    // A broken connection ends the stream like a clean close: re-watch from the last version.
    ctx.logger.debug({ err: faultSummary(err), events: count }, 'the watch connection broke');
  } finally {
    wake = undefined;
    stopSignal.removeEventListener('abort', onStop);
  }
  if (w.stopReason !== undefined) return outcome(undefined, w.stopReason);
  if (ctx.clock.now() - options.start < VERY_SHORT_WATCH_MS && count === 0) {
    return outcome(
      new KinformerError(
        ErrorCodes.VERY_SHORT_WATCH,
        `very short watch: ${ctx.name}: unexpected watch close - watch lasted less than a second and no items received`,
      ),
    );
  }
  ctx.logger.debug({ events: count }, 'watch closed');
  return outcome(undefined);
}

/** An event skipped for its type: an `expectedType` mismatch, or a Table. Logged. */
function isSkipped<T extends KubeObject>(ctx: WatchContext<T>, obj: KubeObject): boolean {
  const expected = ctx.expectedType;
  if (
    expected !== undefined &&
    ((obj.apiVersion !== undefined && obj.apiVersion !== expected.apiVersion) ||
      (obj.kind !== undefined && obj.kind !== expected.kind))
  ) {
    ctx.logger.error(
      {
        expected: ctx.typeDescription,
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        code: ErrorCodes.UNEXPECTED_TYPE,
      },
      'watch event object has an unexpected type; skipping it',
    );
    return true;
  }
  if (isUnsupportedTableObject(obj)) {
    ctx.logger.error(
      { apiVersion: obj.apiVersion, kind: obj.kind },
      'watch event carries a Table object; skipping it',
    );
    return true;
  }
  return false;
}

export const ABORTED: unique symbol = Symbol('aborted');
const INTERRUPTED: unique symbol = Symbol('interrupted');
export const NO_TIMER: Timer = { cancel: noop };
const EMPTY_ITERATOR: AsyncIterator<never> = {
  next: () => Promise.resolve({ done: true, value: undefined }),
};

export function noop(): void {
  // nothing to do
}

/** Closes a watch stream that arrived after its request was given up (stall or abort). */
function closeLateStream(iterable: AsyncIterable<unknown>): void {
  try {
    const done = iterable[Symbol.asyncIterator]().return?.();
    if (done !== undefined) done.then(noop, noop);
  } catch {
    // nothing more can be done; the request's signal was aborted anyway
  }
}

/** Resolves with `promise`'s value, or with {@link ABORTED} as soon as `signal` aborts. Removes its listener. */
export function raceAbort<V>(promise: Promise<V>, signal: AbortSignal): Promise<V | typeof ABORTED> {
  if (signal.aborted) {
    promise.then(noop, noop);
    return Promise.resolve(ABORTED);
  }
  return new Promise<V | typeof ABORTED>((resolve, reject) => {
    const onAbort = (): void => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: Error) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
