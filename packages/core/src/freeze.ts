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

/**
 * Freezes `value` and everything reachable from it. Returns `value`. Already-frozen parts are skipped.
 * Iterative (an explicit stack, no recursion), so an object nested arbitrarily deep cannot overflow
 * the call stack; cycles end because a part is frozen before its children are visited.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  const stack: object[] = [value];
  Object.freeze(value);
  while (stack.length > 0) {
    const obj = stack.pop() as Record<string, unknown>;
    const children: unknown[] = Array.isArray(obj) ? obj : Object.values(obj);
    for (const child of children) {
      if (typeof child === 'object' && child !== null && !Object.isFrozen(child)) {
        Object.freeze(child);
        stack.push(child);
      }
    }
  }
  return value;
}
