import type { JsonObject } from './fieldSets.js';
import type { ResourceType } from './resourceRegistry.js';
import type { PatchSchema } from './strategicMergePatch.js';

/**
 * What kube-apiserver's per-kind REST strategies do to a write, for the parts a client can observe:
 * which subresources a kind has, what `PrepareForCreate` resets, how the main resource and the
 * `status` subresource split an object between them (`PrepareForUpdate` of the strategy and of its
 * status strategy), and when `metadata.generation` moves. Sources: `pkg/registry/<group>/<kind>/strategy.go`
 * in kubernetes/kubernetes (`podStrategy`, `podStatusStrategy`, `deploymentStrategy`,
 * `deploymentStatusStrategy`, …) and, for custom resources, apiextensions-apiserver's
 * `pkg/registry/customresource/strategy.go` and `status_strategy.go`.
 */

/** The `scale` subresource of a custom resource (a CRD's `subresources.scale`). */
export interface ScaleSubresource {
  /** JSON path of the desired replicas, e.g. `.spec.replicas`. */
  specReplicasPath: string;
  /** JSON path of the observed replicas, e.g. `.status.replicas`. */
  statusReplicasPath: string;
  /** JSON path of the label selector string in the object, e.g. `.status.selector`. */
  labelSelectorPath?: string;
}

/** The subresources of a type, as declared (a CRD's `subresources: { status: {}, scale: {…} }`). */
export interface Subresources {
  /** Any value other than `false`/undefined declares the `status` subresource (a CRD writes `status: {}`). */
  status?: boolean | Record<string, never>;
  scale?: ScaleSubresource;
}

/** The subresources a type serves. */
export interface ResolvedSubresources {
  readonly status: boolean;
  /** For built-ins this is where the replicas live (`.spec.replicas`, `.status.replicas`). */
  readonly scale: ScaleSubresource | undefined;
}

/** One list's merge rule for server-side apply (`x-kubernetes-list-type`). */
export type ListType =
  { type: 'atomic' } | { type: 'set' } | { type: 'map'; keys: readonly [string, ...string[]] };

/** List merge rules by dotted path (`spec.ports`, `spec.groups[].rules`). */
export type ListTypes = Readonly<Record<string, ListType>>;

const WITH_STATUS = new Set([
  '/pods',
  '/services',
  '/nodes',
  '/namespaces',
  'apps/deployments',
  'apps/replicasets',
  'apps/statefulsets',
  'apps/daemonsets',
  'batch/jobs',
  'batch/cronjobs',
  'networking.k8s.io/ingresses',
]);
const WITH_SCALE = new Set(['apps/deployments', 'apps/replicasets', 'apps/statefulsets']);
const APPS_SCALE: ScaleSubresource = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  labelSelectorPath: '.spec.selector',
};

/** The subresources of a built-in type (`endpoints/installer.go` registers them from the storage map). */
export function builtinSubresources(
  group: string,
  resource: string,
  declared: Subresources | undefined,
): ResolvedSubresources {
  const key = `${group}/${resource}`;
  if (declared !== undefined)
    return { status: declared.status !== undefined && declared.status !== false, scale: declared.scale };
  return { status: WITH_STATUS.has(key), scale: WITH_SCALE.has(key) ? APPS_SCALE : undefined };
}

/** The list types of a custom resource as the patch schema the merge code reads. */
export function listTypesSchema(listTypes: ListTypes): PatchSchema | undefined {
  const entries = Object.entries(listTypes);
  if (entries.length === 0) return undefined;
  const root: MutableSchema = {};
  for (const [path, listType] of entries) {
    let node = root;
    const steps = path.split('.');
    steps.forEach((step, i) => {
      const isItems = step.endsWith('[]');
      const name = isItems ? step.slice(0, -2) : step;
      node.fields ??= {};
      node = node.fields[name] ??= {};
      if (i === steps.length - 1) {
        if (listType.type === 'map') {
          node.merge = { key: listType.keys[0] };
          if (listType.keys.length > 1) node.keys = listType.keys;
        } else if (listType.type === 'set') node.merge = { key: undefined };
      } else if (isItems) node = node.items ??= {};
    });
  }
  return root;
}

interface MutableSchema {
  fields?: Record<string, MutableSchema>;
  merge?: { key: string | undefined };
  keys?: readonly string[];
  items?: MutableSchema;
}

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
      return { ...obj, status: { phase: 'Pending' } }; // podStrategy: Phase Pending.
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
