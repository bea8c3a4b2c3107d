import { parseLabelSelector } from '@kinformer/core';
import type { KubeObject } from '@kinformer/core';

/**
 * Filters the events of a source before they become keys (controller-runtime's `predicate.Funcs`).
 * A method left out lets every event of its type through.
 */
export interface Predicate<T extends KubeObject = KubeObject> {
  create?(obj: T): boolean;
  update?(oldObj: T, newObj: T): boolean;
  delete?(obj: T): boolean;
}

/** Applies `p` to an event (a missing method passes). */
export function passes<T extends KubeObject>(
  p: Predicate<T>,
  event: { type: 'create'; obj: T } | { type: 'update'; oldObj: T; newObj: T } | { type: 'delete'; obj: T },
): boolean {
  switch (event.type) {
    case 'create':
      return p.create?.(event.obj) ?? true;
    case 'update':
      return p.update?.(event.oldObj, event.newObj) ?? true;
    case 'delete':
      return p.delete?.(event.obj) ?? true;
  }
}

/** Updates that change `metadata.generation` (spec changes), plus every create and delete. */
export function generationChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return { update: (o, n) => o.metadata?.generation !== n.metadata?.generation };
}

/** Updates that change `metadata.resourceVersion` (drops resyncs), plus every create and delete. */
export function resourceVersionChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return { update: (o, n) => o.metadata?.resourceVersion !== n.metadata?.resourceVersion };
}

/** Updates that change `metadata.labels`, plus every create and delete. */
export function labelsChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return { update: (o, n) => !sameRecord(o.metadata?.labels, n.metadata?.labels) };
}

/** Updates that change `metadata.annotations`, plus every create and delete. */
export function annotationsChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return { update: (o, n) => !sameRecord(o.metadata?.annotations, n.metadata?.annotations) };
}

/**
 * Objects whose labels match `selector` (Kubernetes syntax: `app=web,tier!=db`). An update passes
 * when the old or the new object matches, so a key also hears that its object stopped matching.
 * Throws `ERR_INVALID_SELECTOR` for a bad selector.
 */
export function labelSelector<T extends KubeObject = KubeObject>(selector: string): Predicate<T> {
  const parsed = parseLabelSelector(selector);
  const match = (obj: T): boolean => parsed.matches(obj.metadata?.labels ?? {});
  return { create: match, delete: match, update: (o, n) => match(o) || match(n) };
}

/** Every predicate must pass. */
export function and<T extends KubeObject = KubeObject>(...predicates: Predicate<T>[]): Predicate<T> {
  return {
    create: (obj) => predicates.every((p) => p.create?.(obj) ?? true),
    update: (o, n) => predicates.every((p) => p.update?.(o, n) ?? true),
    delete: (obj) => predicates.every((p) => p.delete?.(obj) ?? true),
  };
}

/** At least one predicate must pass (none given: nothing passes). */
export function or<T extends KubeObject = KubeObject>(...predicates: Predicate<T>[]): Predicate<T> {
  return {
    create: (obj) => predicates.some((p) => p.create?.(obj) ?? true),
    update: (o, n) => predicates.some((p) => p.update?.(o, n) ?? true),
    delete: (obj) => predicates.some((p) => p.delete?.(obj) ?? true),
  };
}

/** The opposite of `predicate`. */
export function not<T extends KubeObject = KubeObject>(predicate: Predicate<T>): Predicate<T> {
  return {
    create: (obj) => !(predicate.create?.(obj) ?? true),
    update: (o, n) => !(predicate.update?.(o, n) ?? true),
    delete: (obj) => !(predicate.delete?.(obj) ?? true),
  };
}

function sameRecord(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  if (a === b) return true;
  const ak = Object.keys(a ?? {});
  if (ak.length !== Object.keys(b ?? {}).length) return false;
  return ak.every((k) => a?.[k] === b?.[k] && b !== undefined && Object.hasOwn(b, k));
}

/**
 * The predicate builders in one object (`predicates.generationChanged()`,
 * `predicates.and(predicates.labelSelector('app'), predicates.not(…))`), as controller-runtime's
 * `predicate` package.
 */
export const predicates = Object.freeze({
  generationChanged,
  resourceVersionChanged,
  labelsChanged,
  annotationsChanged,
  labelSelector,
  and,
  or,
  not,
});
