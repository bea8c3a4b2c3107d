import type { KubeList, KubeObject } from '@kinformer/core';

/** The pod shape the unit tests use: a {@link KubeObject} with the spec fields they touch. */
export type Pod = KubeObject & { spec?: { nodeName?: string; note?: string } };

/** A pod `ns/name` at resourceVersion `rv`, with uid `uid-<name>`; `extra` is spread over it. */
export function pod(name: string, rv: string, ns = 'default', extra: Partial<Pod> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, resourceVersion: rv, uid: `uid-${name}` },
    ...extra,
  };
}

/** A list of `items` at resourceVersion `rv`. */
export function podList<T extends KubeObject = Pod>(rv: string, ...items: T[]): KubeList<T> {
  return { metadata: { resourceVersion: rv }, items };
}

/** `ns/name` of an object (`name` when it has no namespace). */
export function keyOf(obj: KubeObject): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ''}` : (m.name ?? '');
}
