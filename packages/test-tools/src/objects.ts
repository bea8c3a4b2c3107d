import type { KubeList, KubeObject, Status } from '@kinformer/core';

// The one home of the object builders of every package's tests: `pod` for in-memory pods (queues,
// stores, reflectors over a fake lister-watcher), `serverPod` for a pod body an API server accepts.

/** The pod shape the unit tests use: a {@link KubeObject} with the spec fields they touch. */
export type Pod = KubeObject & { spec?: { nodeName?: string; note?: string } };

/**
 * A pod `ns/name` at resourceVersion `rv`, with uid `uid-<name>`; `ns` `''` makes it cluster-scoped
 * (no namespace, the key is `name`). `extra` is spread over the pod, `extra.metadata` over its
 * metadata (`{ metadata: { labels } }` adds labels).
 */
export function pod(
  name: string,
  rv: string,
  ns = 'default',
  extra: Partial<Pod> & Record<string, unknown> = {},
): Pod {
  const { metadata, ...rest } = extra;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      ...(ns === '' ? {} : { namespace: ns }),
      resourceVersion: rv,
      uid: `uid-${name}`,
      ...metadata,
    },
    ...rest,
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

/** The names of `objects`, in their order. */
export function names(objects: readonly KubeObject[]): Array<string | undefined> {
  return objects.map((o) => o.metadata?.name);
}

/** A pod as a user would create it on an API server (it has a container, as the server requires). */
export interface ServerPod extends KubeObject {
  metadata: NonNullable<KubeObject['metadata']>;
  spec: { nodeName?: string; containers: Array<{ name: string; image: string }>; [key: string]: unknown };
  status?: { phase?: string; [key: string]: unknown };
}

/** What {@link serverPod} sets besides the name. */
export interface ServerPodFields {
  labels?: Record<string, string>;
  nodeName?: string;
  resourceVersion?: string;
  /** Spread over the spec (after the container and `nodeName`). */
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** A pod body `namespace/name` (or `name` in `default`) with one `nginx` container. */
export function serverPod(nameOrKey: string, fields: ServerPodFields = {}): ServerPod {
  const slash = nameOrKey.indexOf('/');
  const namespace = slash === -1 ? 'default' : nameOrKey.slice(0, slash);
  const name = slash === -1 ? nameOrKey : nameOrKey.slice(slash + 1);
  const out: ServerPod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      ...(fields.labels === undefined ? {} : { labels: fields.labels }),
      ...(fields.resourceVersion === undefined ? {} : { resourceVersion: fields.resourceVersion }),
    },
    spec: {
      containers: [{ name: 'c', image: 'nginx' }],
      ...(fields.nodeName === undefined ? {} : { nodeName: fields.nodeName }),
      ...fields.spec,
    },
  };
  if (fields.status !== undefined) out.status = fields.status;
  return out;
}

/** A failure `Status` as the API server sends it. */
export function status(code: number, reason: string, message: string, details?: Status['details']): Status {
  const s: Status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message };
  if (details) s.details = details;
  return s;
}

/** A namespaced custom resource type for tests (`widgets.example.com/v1`, kind `Widget`). */
export const WIDGETS = {
  group: 'example.com',
  version: 'v1',
  resource: 'widgets',
  kind: 'Widget',
  namespaced: true,
  customResource: true,
} as const;
