import type { PatchSchema } from './strategicMergePatch.js';

/**
 * The subresources a type serves and the list rules server-side apply merges a custom resource's
 * lists by, as declared on a resource type (a CRD's `subresources` and `x-kubernetes-list-type`).
 * Built-in types get the subresources `endpoints/installer.go` registers for them.
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
