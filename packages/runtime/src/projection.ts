import { ErrorCodes, KinformerError } from '@kinformer/core';
import type { KubeObject } from '@kinformer/core';

type Prev = [never, 0, 1, 2, 3];

/**
 * The dotted paths of `T` a projection may keep (`metadata.name`, `spec.nodeName`, `status`), at
 * most four levels deep. Arrays and maps are kept whole (a path ends at them).
 */
export type ProjectionPath<T, Depth extends number = 4> = [Depth] extends [never]
  ? never
  : T extends readonly unknown[]
    ? never
    : T extends object
      ? {
          [K in keyof T & string]-?:
            | K
            | (NonNullable<T[K]> extends readonly unknown[] | Date
                ? never
                : string extends keyof NonNullable<T[K]>
                  ? never
                  : `${K}.${ProjectionPath<NonNullable<T[K]>, Prev[Depth]>}`);
        }[keyof T & string]
      : never;

type PathObject<T, P extends string> = P extends `${infer H}.${infer R}`
  ? H extends keyof T
    ? { [K in H]?: PathObject<NonNullable<T[H]>, R> }
    : never
  : P extends keyof T
    ? { [K in P]?: T[P] }
    : never;

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void
  ? I
  : never;

/** The metadata every projection keeps: what the cache keys objects by and compares relists with. */
export type ProjectionIdentity = 'metadata.name' | 'metadata.namespace' | 'metadata.resourceVersion';

/**
 * What a {@link project}ion of `T` to paths `P` leaves: only those fields (and
 * `ProjectionIdentity`), each optional. Reading any other field does not compile.
 */
export type Projected<T, P extends string> = UnionToIntersection<PathObject<T, P | ProjectionIdentity>> &
  KubeObject;

/** A transform that keeps only `paths` (see {@link project}); `paths` says which. */
export interface Projection<T extends KubeObject, U extends KubeObject> {
  (obj: T): U;
  readonly paths: readonly string[];
}

interface PathTree {
  [key: string]: PathTree | true;
}

/**
 * A transform for a cache policy (or `informer.setTransform`) that keeps only the listed fields of
 * each object, plus `metadata.name`, `metadata.namespace` and `metadata.resourceVersion`. The
 * lister's type follows: `Projected<V1Pod, 'spec.nodeName'>` has no `spec.containers`, so a
 * reconcile that reads a dropped field does not compile.
 *
 * ```ts
 * const podNodes = project<V1Pod>()(['metadata.labels', 'spec.nodeName']);
 * new Manager(kc, { cache: { byKind: [{ kind: kinds.pods, transform: podNodes }] } });
 * const pods = mgr.informer(kinds.pods, { transform: podNodes }).lister; // Lister<Projected<V1Pod, …>>
 * ```
 *
 * Curried so that `T` is given and the paths are inferred. Each object is rebuilt from the kept
 * fields (the dropped ones become garbage at once); arrays and maps are kept by reference. Throws
 * `ERR_INVALID_OPTION` for an empty path list or an empty path segment.
 */
export function project<T extends KubeObject>(): <const P extends ProjectionPath<T>>(
  paths: readonly P[],
) => Projection<T, Projected<T, P>> {
  return <const P extends ProjectionPath<T>>(paths: readonly P[]) => {
    if (paths.length === 0)
      throw new KinformerError(ErrorCodes.INVALID_OPTION, 'project() needs at least one path');
    const tree: PathTree = {};
    const all: string[] = ['metadata.name', 'metadata.namespace', 'metadata.resourceVersion', ...paths];
    for (const path of all) {
      const parts = path.split('.');
      if (parts.some((p) => p === ''))
        throw new KinformerError(
          ErrorCodes.INVALID_OPTION,
          `project(): invalid path ${JSON.stringify(path)}`,
        );
      let node = tree;
      for (let i = 0; i < parts.length; i++) {
        const part = parts[i]!;
        if (i === parts.length - 1) {
          node[part] = true;
          break;
        }
        const next = node[part];
        if (next === true) break; // a shorter path keeps the whole subtree already
        if (next === undefined) node = node[part] = {};
        else node = next;
      }
    }
    const fn = ((obj: T) => pick(obj, tree) as Projected<T, P>) as Projection<T, Projected<T, P>>;
    Object.defineProperty(fn, 'paths', { value: Object.freeze([...paths]), enumerable: true });
    return fn;
  };
}

function pick(source: unknown, tree: PathTree): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (source === null || typeof source !== 'object') return out;
  const src = source as Record<string, unknown>;
  for (const key in tree) {
    const value = src[key];
    if (value === undefined) continue;
    const sub = tree[key]!;
    if (sub === true) out[key] = value;
    else if (value !== null && typeof value === 'object' && !Array.isArray(value))
      out[key] = pick(value, sub);
  }
  return out;
}
