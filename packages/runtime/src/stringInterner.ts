import type { KubeObject } from '@kinformer/core';

/** Options of {@link stringInterner}. */
export interface StringInternerOptions {
  /** Longer strings are kept as they are (they are rarely repeated). Default 128. */
  maxLength?: number;
  /**
   * The table is emptied when it holds this many strings, so that names of objects long deleted do
   * not stay forever (objects keep what they share; only later ones start sharing again). Default 65,536.
   */
  maxEntries?: number;
}

/** A transform that makes equal short strings one string (see {@link stringInterner}). */
export interface StringInterner {
  <T extends KubeObject>(obj: T): T;
  /** How many distinct strings the table holds now. */
  readonly size: number;
  /**
   * Empties the table (objects keep what they share; later ones start sharing again): after a cache
   * dropped many objects at once (a hash range handed off), so that their strings do not stay.
   */
  clear(): void;
}

const EMPTY: Readonly<Record<string, never>> = Object.freeze({});

/**
 * A cache transform that replaces every string value of up to `maxLength` characters with the one
 * equal string seen first: `JSON.parse` allocates each value anew, so 10,000 pods hold 10,000
 * copies of their namespace, label keys and values, owner UIDs, image names and node names
 * (`metadata.resourceVersion`, never shared, is not kept). Within
 * `metadata.managedFields[].fieldsV1` it also makes every empty object (`{}`, its leaves, hundreds
 * per pod) one frozen object. Mutates its argument (a transform sees each object first). One
 * interner per Manager (its table is shared by every kind); the Manager uses one by default
 * (`cache.internStrings: false` turns it off). Measured by `pnpm bench:memory` on realistic pods.
 */
export function stringInterner(options: StringInternerOptions = {}): StringInterner {
  const maxLength = options.maxLength ?? 128;
  const maxEntries = options.maxEntries ?? 65_536;
  let table = new Map<string, string>();
  const str = (s: string): string => {
    if (s.length > maxLength) return s;
    const seen = table.get(s);
    if (seen !== undefined) return seen;
    if (table.size >= maxEntries) table = new Map();
    table.set(s, s);
    return s;
  };
  const walk = (v: unknown, fields: boolean): unknown => {
    if (typeof v === 'string') return str(v);
    if (v === null || typeof v !== 'object' || Object.isFrozen(v)) return v;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = walk(v[i], fields);
      return v;
    }
    const o = v as Record<string, unknown>;
    let empty = true;
    for (const k in o) {
      empty = false;
      o[k] = walk(o[k], fields || k === 'fieldsV1');
    }
    return empty && fields ? EMPTY : o;
  };
  // `metadata.resourceVersion` is left out: no two objects (or versions) share one, so it would only
  // fill the table (a new entry per event) and empty it sooner.
  const intern = (<T extends KubeObject>(obj: T): T => {
    const meta = obj.metadata as Record<string, unknown> | undefined;
    if (Object.isFrozen(obj) || meta === null || typeof meta !== 'object' || Object.isFrozen(meta))
      return walk(obj, false) as T;
    const o = obj as Record<string, unknown>;
    for (const k in o)
      if (k !== 'metadata') o[k] = walk(o[k], false);
      else for (const m in meta) if (m !== 'resourceVersion') meta[m] = walk(meta[m], false);
    return obj;
  }) as StringInterner;
  Object.defineProperty(intern, 'size', { get: () => table.size, enumerable: true });
  intern.clear = () => {
    table = new Map();
  };
  return intern;
}
