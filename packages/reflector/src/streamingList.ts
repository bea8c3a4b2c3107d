import {
  deletionHandlingMetaNamespaceKeyFunc,
  ErrorCodes,
  isKinformerError,
  type Clock,
  type KubeObject,
  type Logger,
} from '@kinformer/core';
import { type Timer } from '@kinformer/core/internal';
import { isExpiredError, isTooLargeResourceVersionError } from '@kinformer/core/internal';
import type { ReflectorStore, WatchOptions } from './listerWatcher.js';
import { rewatchResourceVersion, type ListState } from './listState.js';
import type { ReflectorStats } from './reflectorOptions.js';
import { isWatchErrorRetriable } from './reflectorErrors.js';
import type { Outcome } from './transitions.js';
import {
  consumeWatch,
  noop,
  type EventSink,
  type OpenWatch,
  type WatchContext,
  type WatchOutcome,
} from './watchStream.js';

/** How often a streaming list that has not seen its end bookmark logs a warning (client-go: 10 s). */
const INITIAL_EVENTS_WARNING_INTERVAL_MS = 10_000;

/** What a streaming list needs from its reflector. */
export interface StreamingListHost<T extends KubeObject> {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly store: ReflectorStore<T>;
  readonly counters: ReflectorStats;
  readonly listState: ListState;
  readonly watchContext: WatchContext<T>;
  /** A random `timeoutSeconds` for the next watch. */
  watchTimeoutSeconds(): number;
  openWatch(options: WatchOptions, signal: AbortSignal): Promise<OpenWatch<T> | undefined>;
}

/** How one streaming list ended (an {@link Outcome} of the `stream` phase, or `aborted`). */
export interface StreamingListEnd<T> {
  outcome: Extract<Outcome, `stream-${string}`> | 'aborted';
  error?: unknown;
  /** `stream-synced`: the still-open stream to hand over; `stream-stalled`: the stream that stalled. */
  stream?: OpenWatch<T>;
}

/**
 * One attempt of client-go's `watchList`: a streaming list into a temporary map until the
 * `initial-events-end` bookmark, then `store.replace`, handing the still-open stream over to the watch
 * phase. Every other end is classified for the transition table (`transitions.ts`): retried after a
 * step (429, connection failure), again at once (410 or too large: from `""`; a stall; a clean end
 * before the bookmark), or a fall back to LIST (anything else, a `replace` that threw included).
 */
export async function streamingList<T extends KubeObject>(
  host: StreamingListHost<T>,
  signal: AbortSignal,
): Promise<StreamingListEnd<T>> {
  const resourceVersion = rewatchResourceVersion(host.listState);
  const temp = new Map<string, T>();
  let bookmarkRV = '';
  const options: WatchOptions = {
    resourceVersion,
    allowWatchBookmarks: true,
    sendInitialEvents: true,
    resourceVersionMatch: 'NotOlderThan',
    timeoutSeconds: host.watchTimeoutSeconds(),
  };
  const start = host.clock.now();
  host.counters.watchLists++;
  if (host.listState.populated) host.counters.relists++;
  let w: OpenWatch<T> | undefined;
  try {
    w = await host.openWatch(options, signal);
  } catch (err) {
    if (signal.aborted) return { outcome: 'aborted' };
    return failure(host, err);
  }
  if (w === undefined) return { outcome: 'aborted' };

  const sink = tempSink(temp, (rv) => {
    bookmarkRV = rv;
  });
  const warning = armInitialEventsWarning(host, w, start, temp);
  let outcome: WatchOutcome;
  try {
    outcome = await consumeWatch(host.watchContext, w, sink, {
      start,
      propagateRVFromStart: false,
      exitOnInitialEventsEnd: true,
    });
  } finally {
    warning.cancel();
  }
  if (outcome.stopped !== undefined || outcome.error !== undefined) {
    w.close();
    if (outcome.stopped === 'aborted' || signal.aborted) return { outcome: 'aborted' };
    if (outcome.stopped === 'stalled') return { outcome: 'stream-stalled', stream: w };
    return failure(host, outcome.error);
  }
  if (!outcome.initialEventsEnd) {
    // The stream ended cleanly before the end bookmark: start a new streaming list.
    w.close();
    return { outcome: 'stream-ended-early' };
  }

  host.listState.rvUnavailable = false;
  try {
    host.store.replace(Array.from(temp.values()), bookmarkRV);
  } catch (err) {
    w.close();
    return { outcome: 'stream-failed', error: err };
  }
  host.listState.lastSyncRV = bookmarkRV;
  host.listState.populated = true;
  host.logger.debug({ items: temp.size, resourceVersion: bookmarkRV }, 'streaming list synced');
  return { outcome: 'stream-synced', stream: w };
}

/** Classifies a streaming list's failure; a 410 or too-large answer marks the version unavailable. */
function failure<T extends KubeObject>(host: StreamingListHost<T>, err: unknown): StreamingListEnd<T> {
  if (isWatchErrorRetriable(err)) {
    return {
      outcome: isKinformerError(err, ErrorCodes.CONNECTION) ? 'stream-unreachable' : 'stream-throttled',
      error: err,
    };
  }
  const expired = isExpiredError(err);
  if (expired || isTooLargeResourceVersionError(err)) {
    host.listState.rvUnavailable = true;
    return { outcome: expired ? 'stream-expired' : 'stream-too-large', error: err };
  }
  return { outcome: 'stream-failed', error: err };
}

function armInitialEventsWarning<T extends KubeObject>(
  host: StreamingListHost<T>,
  w: OpenWatch<T>,
  start: number,
  temp: Map<string, T>,
): Timer {
  let timer: Timer;
  const tick = (): void => {
    const now = host.clock.now();
    if (w.events === 0) {
      host.logger.warn(
        { elapsedMs: now - start },
        'awaiting the bookmark that ends the initial events stream; no events received yet',
      );
    } else if (now - w.lastDeliveryAt >= INITIAL_EVENTS_WARNING_INTERVAL_MS) {
      host.logger.warn(
        { lastEventAgoMs: now - w.lastDeliveryAt, objects: temp.size },
        'the bookmark that ends the initial events stream has not arrived',
      );
    }
    timer = host.clock.setTimeout(tick, INITIAL_EVENTS_WARNING_INTERVAL_MS);
  };
  timer = host.clock.setTimeout(tick, INITIAL_EVENTS_WARNING_INTERVAL_MS);
  return { cancel: () => timer.cancel() };
}

function tempSink<T extends KubeObject>(temp: Map<string, T>, setRV: (rv: string) => void): EventSink<T> {
  const key = (obj: T): string => deletionHandlingMetaNamespaceKeyFunc(obj);
  return {
    add: (obj) => temp.set(key(obj), obj),
    update: (obj) => temp.set(key(obj), obj),
    delete: (obj) => temp.delete(key(obj)),
    bookmark: noop,
    setResourceVersion: setRV,
  };
}
