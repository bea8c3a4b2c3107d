import {
  ErrorCodes,
  KinformerError,
  type Backoff,
  type Clock,
  type KubeObject,
  type Logger,
  type ShardSelector,
} from '@kinformer/core';
import type { WatchErrorHandler } from './watchErrorHandler.js';

/** Default {@link ReflectorOptions.stallMarginMs}: 30 s. */
export const DEFAULT_STALL_MARGIN_MS = 30_000;

/** The apiVersion and kind every watched object must have (client-go's `expectedGVK`). */
export interface ExpectedType {
  /** `v1`, `apps/v1`, `example.com/v1alpha1`… */
  apiVersion: string;
  kind: string;
}

/** Options of {@link Reflector}. Every duration is in milliseconds. */
export interface ReflectorOptions<T extends KubeObject = KubeObject> {
  /** Used in logs. Default: `apiVersion/kind` of `expectedType`, else `"reflector"`. */
  name?: string;
  /**
   * When set, watch events whose object states a different `apiVersion` or `kind` are logged and
   * skipped (client-go skips them too). Objects that carry no `apiVersion`/`kind` are accepted. LIST
   * items are never checked (as in client-go).
   */
  expectedType?: ExpectedType;
  /** Call `store.resync()` this often while a watch loop runs. `0` (default) never resyncs. */
  resyncPeriodMs?: number;
  /** Consulted on every resync tick; `store.resync()` only runs when it returns true. Default: always. */
  shouldResync?: () => boolean;
  /**
   * LIST page size. Unset (the default), lists from `resourceVersion` `"0"` or `""` use pages of 500 and
   * relists from a specific resourceVersion are unpaginated so the watch cache can serve them (unless
   * an earlier RV="0" list came back paginated, which shows the cache is off). When set, every LIST uses
   * this page size (client-go's `WatchListPageSize`); lists at a specific version then bypass the
   * watch cache, so set it only for good reason. Must be a positive integer.
   */
  pageSize?: number;
  /**
   * Build the initial state from a streaming list (`sendInitialEvents=true`) instead of a LIST, falling
   * back to LIST on any failure. Default **false**, unlike client-go 1.35+: servers differ (the fake
   * server, proxies and older clusters may not support it). Ignored when the ListerWatcher says
   * `watchListSupported: false`.
   */
  useWatchList?: boolean;
  /**
   * The one backoff behind every retry. The reflector calls `next()` once per failure and `reset()` as
   * soon as it makes progress (see `docs/reflector.md`). Default: {@link reflectorBackoff} (100 ms
   * doubling to 30 s, jittered to `[d, 2d)`) on `clock`.
   */
  backoff?: Backoff;
  /** Source of time for every wait. Default: the wall clock. */
  clock?: Clock;
  /** pino logger; the reflector logs through a child with `component: 'reflector'`. */
  logger?: Logger;
  /**
   * Called with every error that ends a list-and-watch cycle, and with every connection failure that
   * keeps a watch from starting (retried without relisting). See {@link WatchErrorHandler}.
   * Default: {@link defaultWatchErrorHandler}.
   */
  watchErrorHandler?: WatchErrorHandler<T>;
  /**
   * Minimum watch timeout; each watch asks the server for a random `timeoutSeconds` in `[min, 2·min)`.
   * Honoured only when greater than the default of 5 minutes (as in client-go).
   */
  minWatchTimeoutMs?: number;
  /**
   * How long watches that end with an internal error (500) are retried at once without relisting.
   * Default 0: an internal error ends the watch and relists.
   */
  maxInternalErrorRetryDurationMs?: number;
  /**
   * Where no bookmark cadence is known yet, a watch that delivers nothing (no event, no bookmark) for
   * its `timeoutSeconds` plus this margin is aborted with `ERR_WATCH_STALLED` and restarted from the
   * last resourceVersion. Once the server has shown its bookmark cadence, the limit is three times
   * that cadence, at least 1 s (never more than the timeout-based one). Default 30 s.
   */
  stallMarginMs?: number;
  /** Random source in `[0, 1)` for watch timeouts (and the default backoff's jitter). Default `Math.random`. */
  random?: () => number;
  /**
   * KEP-5866 server-side sharding: only objects whose `metadata.uid` (or `metadata.namespace`) hashes
   * into these ranges, e.g. `shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')`.
   * Sent as `shardSelector` on every LIST, WATCH and streaming list; what comes back is filtered on the
   * client with the same FNV-1a 64 hash too, so the store never holds an object outside the ranges,
   * whatever the server (an older server, the `ShardedListAndWatch` gate off).
   * `stats().shardFilterMode` says which side filtered. Throws `ERR_INVALID_SELECTOR` when it does not parse.
   */
  shardSelector?: string | ShardSelector;
}

/**
 * Counters of one reflector since it was created. All numbers are monotonically increasing.
 */
export interface ReflectorStats {
  /** LIST operations started (a paginated list counts once; the immediate retry at RV `""` again). */
  lists: number;
  /** LIST or streaming-list operations started after the store had been populated once. */
  relists: number;
  /** Streaming-list (`sendInitialEvents`) requests sent. */
  watchLists: number;
  /** Plain watch requests sent. */
  watchStarts: number;
  /** Plain watch requests sent again without relisting (clean close, 429, connection failure, stall…). */
  watchRestarts: number;
  /** 410 Expired/Gone answers seen (LIST, watch start, in-stream ERROR event). */
  expired410: number;
  /** Watch events received, bookmarks included. */
  events: number;
  /** BOOKMARK events received. */
  bookmarks: number;
  /** Malformed lines, unknown event types, over-long lines and objects without metadata; each ended a watch. */
  malformed: number;
  /** Watches aborted by stall detection. */
  stalls: number;
  /** Watches that closed within a second of starting without any event. */
  veryShortWatches: number;
  /** Watch events skipped because of their type (`expectedType` mismatch, `Table` objects). */
  skipped: number;
  /** Watch events whose resourceVersion was not numeric or lower than the previous one (logged only). */
  resourceVersionAnomalies: number;
  /** `store.resync()` calls. */
  resyncs: number;
  /** Failures that made the reflector wait a backoff step. */
  backoffs: number;
  /** Total time spent waiting in backoff, ms. */
  backoffMs: number;
  /** With `shardSelector`: objects (list items, watch events) outside the ranges dropped on the client. */
  shardDropped: number;
  /**
   * With `shardSelector`: `server` when the last LIST echoed the selector in `metadata.shardInfo`,
   * `client` when it did not (or before the first LIST; a streaming list cannot tell). Absent without.
   */
  shardFilterMode?: 'server' | 'client';
}

/** Counters at zero. */
export function newReflectorStats(): ReflectorStats {
  return {
    lists: 0,
    relists: 0,
    watchLists: 0,
    watchStarts: 0,
    watchRestarts: 0,
    expired410: 0,
    events: 0,
    bookmarks: 0,
    malformed: 0,
    stalls: 0,
    veryShortWatches: 0,
    skipped: 0,
    resourceVersionAnomalies: 0,
    resyncs: 0,
    backoffs: 0,
    backoffMs: 0,
    shardDropped: 0,
  };
}

/** Throws `ERR_INVALID_OPTION` for an option out of range. */
export function validateOptions<T extends KubeObject>(options: ReflectorOptions<T>): void {
  const nonNegative = (name: string, value: number | undefined): void => {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) {
      throw new KinformerError(
        ErrorCodes.INVALID_OPTION,
        `${name} must be a finite number >= 0, got ${String(value)}`,
        {
          details: { option: name, value },
        },
      );
    }
  };
  nonNegative('resyncPeriodMs', options.resyncPeriodMs);
  nonNegative('minWatchTimeoutMs', options.minWatchTimeoutMs);
  nonNegative('maxInternalErrorRetryDurationMs', options.maxInternalErrorRetryDurationMs);
  nonNegative('stallMarginMs', options.stallMarginMs);
  if (options.pageSize !== undefined && !(Number.isInteger(options.pageSize) && options.pageSize > 0)) {
    throw new KinformerError(
      ErrorCodes.INVALID_OPTION,
      `pageSize must be a positive integer, got ${String(options.pageSize)}`,
      {
        details: { option: 'pageSize', value: options.pageSize },
      },
    );
  }
  const expected = options.expectedType;
  if (
    expected !== undefined &&
    (typeof expected.apiVersion !== 'string' ||
      expected.apiVersion === '' ||
      typeof expected.kind !== 'string' ||
      expected.kind === '')
  ) {
    throw new KinformerError(
      ErrorCodes.INVALID_OPTION,
      'expectedType needs a non-empty apiVersion and kind',
      {
        details: { option: 'expectedType' },
      },
    );
  }
}
