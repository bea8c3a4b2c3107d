/**
 * Whether stored objects are frozen by default: in development (`NODE_ENV !== 'production'`), so a
 * handler that mutates a cached object throws instead of silently corrupting the cache.
 * `KINFORMER_FREEZE=0|1` overrides.
 */
export function defaultFreezeObjects(): boolean {
  const env = process.env.KINFORMER_FREEZE;
  if (env === '1' || env === 'true') return true;
  if (env === '0' || env === 'false') return false;
  return process.env.NODE_ENV !== 'production';
}

/** Freezes `value` and everything reachable from it. Returns `value`. Already-frozen parts are skipped. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (const v of value) deepFreeze(v);
  } else {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
