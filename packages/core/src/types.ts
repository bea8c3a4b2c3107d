/**
 * Structural Kubernetes object types. They are compatible with `@kubernetes/client-node`'s models
 * (`V1Pod`, `V1ObjectMeta`, …): any client-node model is assignable to {@link KubeObject}, and a
 * kinformer object can be handed to client-node APIs. kinformer never depends on the class identity
 * of a model: objects from the wire are plain JSON.
 */

/** Owner reference, as in `metav1.OwnerReference`. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** The parts of `metav1.ObjectMeta` kinformer reads. Every field is optional, as on the wire. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: Date | string;
  deletionTimestamp?: Date | string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: unknown[];
}

/** Any Kubernetes object: `apiVersion`, `kind` and `metadata`, plus whatever its type has. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** `metav1.ListMeta`. */
export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
  selfLink?: string;
  /**
   * KEP-5866: the shard selector the server applied, echoed back. Absent when the request had none or
   * the server ignored it (older server, `ShardedListAndWatch` gate off).
   */
  shardInfo?: ShardInfo;
}

/** `metav1.ShardInfo`: the shard selector that produced a filtered list. */
export interface ShardInfo {
  selector?: string;
}

/** A list response: `{ kind: 'PodList', metadata: { resourceVersion }, items }`. */
export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: ListMeta;
  items: T[];
}

/** One cause in a {@link Status}'s details. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** `metav1.Status`: the body of every API error, and the object of a watch `ERROR` event. */
export interface Status {
  kind?: 'Status';
  apiVersion?: string;
  metadata?: ListMeta;
  status?: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: StatusCause[];
    retryAfterSeconds?: number;
  };
  code?: number;
}

/** A group/version/resource triple. `group` is `''` (or omitted) for the core group. */
export interface GroupVersionResource {
  group?: string;
  version: string;
  resource: string;
}

/** True when `value` is a non-null object with an object `metadata` field. */
export function hasObjectMeta(value: unknown): value is KubeObject & { metadata: ObjectMeta } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as KubeObject).metadata === 'object' &&
    (value as KubeObject).metadata !== null
  );
}

/** The object's `metadata.resourceVersion`, or `undefined`. */
export function resourceVersionOf(obj: unknown): string | undefined {
  return hasObjectMeta(obj) ? obj.metadata.resourceVersion : undefined;
}

/** `group/version` for an API path segment: `v1` for the core group, `apps/v1` otherwise. */
export function groupVersionString(gvr: Pick<GroupVersionResource, 'group' | 'version'>): string {
  return gvr.group ? `${gvr.group}/${gvr.version}` : gvr.version;
}

/** A short, stable description: `pods.v1`, `deployments.v1.apps`. Used in logs and error messages. */
export function gvrString(gvr: GroupVersionResource): string {
  return gvr.group ? `${gvr.resource}.${gvr.version}.${gvr.group}` : `${gvr.resource}.${gvr.version}`;
}
