import {
  deletionHandlingMetaNamespaceKeyFunc,
  ErrorCodes,
  isExpiredError,
  isKinformerError,
  isTooLargeResourceVersionError,
  type Clock,
  type KubeObject,
  type Logger,
  type Timer,
} from '@kinformer/core';
import type { ReflectorStore, WatchOptions } from './listerWatcher.js';
import { rewatchResourceVersion, type ListState } from './listState.js';
import type { ReflectorStats } from './reflectorOptions.js';
import { codeOf, faultSummary, isWatchErrorRetriable } from './reflectorErrors.js';
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
  /** Records a failure that is retried in place (429, a connection failure) and returns the delay, ms. */
  retriableFailure(err: unknown): number;
  noteStall(w: OpenWatch<T>): void;
}

/**
 * client-go's `watchList`: a streaming list into a temporary map until the `initial-events-end`
 * bookmark, then `store.replace` and hand the still-open stream over to the watch loop. Returns
 * `undefined` when the signal aborted; throws when the caller should fall back to LIST.
 */
export async function streamingList<T extends KubeObject>(
  host: StreamingListHost<T>,
  signal: AbortSignal,
): Promise<OpenWatch<T> | undefined> {
  for (;;) {
    if (signal.aborted) return undefined;
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
      if (signal.aborted) return undefined;
      if (await retryInPlace(host, err, signal)) continue;
      throw err;
    }
    if (w === undefined) return undefined;

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
      if (outcome.stopped === 'aborted' || signal.aborted) return undefined;
      if (outcome.stopped === 'stalled') {
        host.noteStall(w);
        continue;
      }
      if (await retryInPlace(host, outcome.error, signal)) continue;
      throw outcome.error;
    }
    if (!outcome.initialEventsEnd) {
      // The stream ended cleanly before the end bookmark: start a new streaming list.
      w.close();
      continue;
    }

    host.listState.rvUnavailable = false;
    try {
      host.store.replace(Array.from(temp.values()), bookmarkRV);
    } catch (err) {
      w.close();
      throw err;
    }
    host.listState.lastSyncRV = bookmarkRV;
    host.listState.populated = true;
    host.logger.debug({ items: temp.size, resourceVersion: bookmarkRV }, 'streaming list synced');
    return w;
  }
}

/** True when a streaming-list failure is retried in place (after a backoff for 429/connection errors). */
async function retryInPlace<T extends KubeObject>(
  host: StreamingListHost<T>,
  err: unknown,
  signal: AbortSignal,
): Promise<boolean> {
  if (isWatchErrorRetriable(err)) {
    const ms = host.retriableFailure(err);
    if (!isKinformerError(err, ErrorCodes.CONNECTION))
      host.logger.debug({ err: faultSummary(err), code: codeOf(err) }, 'streaming list failed; backing off');
    host.counters.backoffs++;
    host.counters.backoffMs += ms;
    await host.clock.sleep(ms, signal);
    return true;
  }
  const expired = isExpiredError(err);
  if (expired || isTooLargeResourceVersionError(err)) {
    if (expired) host.counters.expired410++;
    host.listState.rvUnavailable = true;
    return true;
  }
  return false;
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
