/** client-go's `defaultMinWatchTimeout`: 5 minutes. */
export const DEFAULT_MIN_WATCH_TIMEOUT_MS = 5 * 60 * 1000;

/**
 * The effective minimum watch timeout: `requestedMs` when it is **greater** than 5 minutes, otherwise 5
 * minutes (client-go silently ignores smaller values to protect the control plane).
 */
export function effectiveMinWatchTimeoutMs(requestedMs: number | undefined): number {
  return requestedMs !== undefined && requestedMs > DEFAULT_MIN_WATCH_TIMEOUT_MS
    ? requestedMs
    : DEFAULT_MIN_WATCH_TIMEOUT_MS;
}

/**
 * A watch request's `timeoutSeconds`, drawn uniformly from `[min, 2·min)` seconds (so `[300, 600)` by
 * default), which spreads watch restarts over time. `random` returns a value in `[0, 1)`.
 */
export function watchTimeoutSeconds(minWatchTimeoutMs: number, random: () => number = Math.random): number {
  const minSeconds = minWatchTimeoutMs / 1000;
  return Math.floor(minSeconds * (random() + 1));
}
