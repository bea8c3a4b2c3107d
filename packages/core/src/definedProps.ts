/** `T` with every property optional and never `undefined` (what `exactOptionalPropertyTypes` options want). */
export type DefinedProps<T> = { [K in keyof T]?: Exclude<T[K], undefined> };

/**
 * A copy of `props` without its `undefined` properties: `definedProps({ name: o.name, logger: o.logger })`
 * in place of one `...(o.name === undefined ? {} : { name: o.name })` per option, so an options object can be
 * passed on under `exactOptionalPropertyTypes`.
 */
export function definedProps<T extends object>(props: T): DefinedProps<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(props)) if (value !== undefined) out[key] = value;
  return out as DefinedProps<T>;
}
