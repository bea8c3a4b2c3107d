import type { JsonObject } from '../api/json.js';
import type { ResourceType } from './resourceRegistry.js';

/**
 * The generic part of kube-apiserver's REST strategies, applying each kind's `ResourceStrategy`
 * (`ResourceType.strategy`) to a write, for the parts a client can observe: what `PrepareForCreate` resets, how the main resource and the
 * `status` subresource split an object between them (`PrepareForUpdate` of the strategy and of its
 * status strategy), and when `metadata.generation` moves. Sources: `pkg/registry/<group>/<kind>/strategy.go`
 * in kubernetes/kubernetes (`podStrategy`, `podStatusStrategy`, `deploymentStrategy`,
 * `deploymentStatusStrategy`, …) and, for custom resources, apiextensions-apiserver's
 * `pkg/registry/customresource/strategy.go` and `status_strategy.go`.
 */

/** `PrepareForCreate`: the status a new object starts with (kube resets what a client sent). */
export function prepareForCreate(type: ResourceType, obj: JsonObject): JsonObject {
  if (!type.subresources.status) return obj;
  const prepare = type.strategy.prepareForCreate;
  // Deployments, replicasets, …: `Status = XStatus{}`.
  return prepare === undefined ? { ...obj, status: {} } : prepare(obj);
}

/** The metadata fields a `status` write may not change, by kind (`ResourceStrategy.statusKeepsMeta`). */
function statusKeepsMeta(type: ResourceType): readonly string[] | 'all' {
  return type.strategy.statusKeepsMeta ?? [];
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

/** The default generation source: the spec (built-in strategies compare `Spec`). */
function specOf(obj: JsonObject): string | undefined {
  return obj.spec === undefined ? undefined : JSON.stringify(obj.spec);
}

/**
 * `metadata.generation` after a write: 1 on create for an object with a generation source (a spec;
 * every custom resource: `PrepareForCreate` sets `Generation = 1`), +1 when the source changed
 * (`ResourceStrategy.generationSource`: the spec, or for a custom resource all but metadata and
 * status).
 */
export function nextGeneration(type: ResourceType, old: JsonObject | undefined, next: JsonObject): unknown {
  const source = type.strategy.generationSource ?? specOf;
  const oldGeneration = (old?.metadata as JsonObject | undefined)?.generation;
  if (old === undefined || typeof oldGeneration !== 'number')
    return source(next) !== undefined ? 1 : undefined;
  return source(old) !== source(next) ? oldGeneration + 1 : oldGeneration;
}
