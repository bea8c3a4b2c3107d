/**
 * A deep copy with `JSON.parse(JSON.stringify(value))` semantics (Dates and other `toJSON` values
 * become their JSON form, `undefined`/functions are dropped from objects and become `null` in
 * arrays, non-finite numbers become `null`), several times faster for the small objects Kubernetes
 * manifests are, because nothing is serialised to text.
 */
export function jsonClone<T>(value: T): T {
  return copy(value) as T;
}

function dropped(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

function copy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) {
    return typeof value === 'number' && !Number.isFinite(value) ? null : value;
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return JSON.parse(JSON.stringify(value) ?? 'null') as unknown;
  }
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = copy(value[i]);
      out[i] = dropped(item) ? null : item;
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const item = copy((value as Record<string, unknown>)[key]);
    if (dropped(item)) continue;
    // `__proto__` is data here: define it as an own key instead of setting the copy's prototype.
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
    else out[key] = item;
  }
  return out;
}
