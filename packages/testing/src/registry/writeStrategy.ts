import type { JsonObject } from './fieldSets.js';
import type { ResourceType } from './resourceRegistry.js';

/**
 * What kube-apiserver's per-kind REST strategies do to a write, for the parts a client can observe:
 * which subresources a kind has, what `PrepareForCreate` resets, how the main resource and the
 * `status` subresource split an object between them (`PrepareForUpdate` of the strategy and of its
 * status strategy), and when `metadata.generation` moves. Sources: `pkg/registry/<group>/<kind>/strategy.go`
 * in kubernetes/kubernetes (`podStrategy`, `podStatusStrategy`, `deploymentStrategy`,
 * `deploymentStatusStrategy`, …) and, for custom resources, apiextensions-apiserver's
 * `pkg/registry/customresource/strategy.go` and `status_strategy.go`.
 */

/** `PrepareForCreate`: the status a new object starts with (kube resets what a client sent). */
export function prepareForCreate(type: ResourceType, obj: JsonObject): JsonObject {
  if (!type.subresources.status) return obj;
  if (type.customResource) {
    // customresource/strategy.go PrepareForCreate: `delete(customResource, "status")`.
    const { status: _dropped, ...rest } = obj;
    return rest;
  }
  switch (`${type.group}/${type.resource}`) {
    case '/nodes':
      return obj; // nodeStrategy keeps the status the kubelet registers with.
    case '/pods':
      // podStrategy.PrepareForCreate: Phase Pending and the QOS class (computed by defaulting.ts).
      return { ...obj, status: { phase: 'Pending', ...qosOf(obj) } };
    case '/namespaces':
      return { ...obj, status: { phase: 'Active' } }; // namespaceStrategy: Phase Active.
    case '/services':
      return { ...obj, status: { loadBalancer: {} } }; // svcStrategy: an empty ServiceStatus.
    default:
      return { ...obj, status: {} }; // deployments, replicasets, …: `Status = XStatus{}`.
  }
}

/**
 * The metadata fields a `status` write may not change, by kind (the status strategies'
 * `PrepareForUpdate` / `GetResetFields`): pods keep their owner references and deletion timestamp
 * (`podStatusStrategy`), deployments, replicasets and statefulsets their labels; custom resources
 * keep all metadata (`customresource/status_strategy.go` copies the old object and sets only status).
 */
function statusKeepsMeta(type: ResourceType): readonly string[] | 'all' {
  if (type.customResource) return 'all';
  switch (`${type.group}/${type.resource}`) {
    case '/pods':
      return ['ownerReferences', 'deletionTimestamp'];
    case 'apps/deployments':
    case 'apps/replicasets':
    case 'apps/statefulsets':
      return ['labels'];
    default:
      return [];
  }
}

/**
 * `PrepareForUpdate` of the main resource or of `status`: a write to the main resource keeps the
 * stored status (`newX.Status = oldX.Status`); a write to `status` keeps everything else (`newX.Spec =
 * oldX.Spec`) and the metadata the kind protects ({@link statusKeepsMeta}). Types without a
 * `status` subresource are written as given.
 */
export function prepareForUpdate(
  type: ResourceType,
  subresource: string | undefined,
  next: JsonObject,
  old: JsonObject,
): JsonObject {
  if (!type.subresources.status) return next;
  if (subresource === 'status') {
    const keep = statusKeepsMeta(type);
    const oldMeta = (old.metadata ?? {}) as JsonObject;
    const newMeta = (next.metadata ?? {}) as JsonObject;
    let metadata: JsonObject;
    if (keep === 'all') metadata = { ...oldMeta, managedFields: newMeta.managedFields };
    else {
      metadata = { ...newMeta };
      for (const key of keep) {
        if (oldMeta[key] === undefined) delete metadata[key];
        else metadata[key] = oldMeta[key];
      }
    }
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(old)) if (key !== 'status') out[key] = value;
    out.metadata = metadata;
    if (next.status !== undefined) out.status = next.status;
    return out;
  }
  const out: JsonObject = { ...next };
  if (old.status === undefined) delete out.status;
  else out.status = old.status;
  return out;
}

/**
 * The paths (as field-name lists) a manager of this write does not own because the strategy resets
 * them (`GetResetFields`): `status` for the main resource; for `status` everything but status and
 * the metadata a status write may change.
 */
export function resetPaths(
  type: ResourceType,
  subresource: string | undefined,
  obj: JsonObject,
): ReadonlyArray<readonly string[]> {
  if (!type.subresources.status) return [];
  if (subresource !== 'status') return [['status']];
  const keep = statusKeepsMeta(type);
  const paths: Array<readonly string[]> = [];
  for (const key of Object.keys(obj)) if (key !== 'status' && key !== 'metadata') paths.push([key]);
  if (!paths.some((p) => p[0] === 'spec')) paths.push(['spec']);
  if (keep === 'all') paths.push(['metadata']);
  else for (const key of keep) paths.push(['metadata', key]);
  return paths;
}

function withoutKeys(obj: JsonObject, keys: readonly string[]): string {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(obj)) if (!keys.includes(key)) out[key] = value;
  return JSON.stringify(out);
}

/**
 * `metadata.generation` after a write: 1 on create for objects with a spec and for every custom
 * resource (`PrepareForCreate` sets `Generation = 1`); +1 when the spec changed (built-ins: the
 * strategies compare `Spec`) or, for a custom resource, anything but metadata (and status, when it
 * has a `status` subresource) changed (`customResourceStrategy.PrepareForUpdate`).
 */
export function nextGeneration(type: ResourceType, old: JsonObject | undefined, next: JsonObject): unknown {
  if (old === undefined) return type.customResource || next.spec !== undefined ? 1 : undefined;
  const oldGeneration = (old.metadata as JsonObject | undefined)?.generation;
  if (typeof oldGeneration !== 'number')
    return type.customResource || next.spec !== undefined ? 1 : undefined;
  let changed: boolean;
  if (type.customResource) {
    const ignored = type.subresources.status ? ['metadata', 'status'] : ['metadata'];
    changed = withoutKeys(old, ignored) !== withoutKeys(next, ignored);
  } else changed = JSON.stringify(old.spec) !== JSON.stringify(next.spec);
  return changed ? oldGeneration + 1 : oldGeneration;
}

/** The `qosClass` the defaulting computed into a new pod's status, if any. */
function qosOf(obj: JsonObject): JsonObject {
  const status = obj['status'];
  const qos = typeof status === 'object' && status !== null ? (status as JsonObject)['qosClass'] : undefined;
  return typeof qos === 'string' ? { qosClass: qos } : {};
}
