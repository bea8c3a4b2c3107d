import type { GroupVersionResource, KubeObject } from '@kinformer/core';
import type {
  CoreV1Event,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1ConfigMap,
  V1CronJob,
  V1DaemonSet,
  V1Deployment,
  V1EndpointSlice,
  V1Endpoints,
  V1Ingress,
  V1Job,
  V1Lease,
  V1Namespace,
  V1Node,
  V1Pod,
  V1ReplicaSet,
  V1Role,
  V1RoleBinding,
  V1Secret,
  V1Service,
  V1ServiceAccount,
  V1StatefulSet,
} from '@kubernetes/client-node';

/**
 * A kind the runtime can watch and write: its resource (for the URL), its `apiVersion` and `kind`
 * (for owner references and type checks) and whether it lives in namespaces. `T` is the object's
 * type; it exists only for the compiler. Built-in kinds are in {@link kinds}; a custom resource is
 * one {@link defineKind} call.
 */
export interface Kind<T extends KubeObject = KubeObject> extends GroupVersionResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  /** `apps/v1`, `v1`, `example.com/v1alpha1`. */
  readonly apiVersion: string;
  /** `Deployment`. */
  readonly kind: string;
  /** False for cluster-scoped kinds (nodes, namespaces, CRDs so declared). */
  readonly namespaced: boolean;
  /** Never set: carries `T` for the compiler. */
  readonly __type?: T;
}

/** Options of {@link defineKind}. */
export interface DefineKindOptions {
  /** `''` (or absent) for the core group. */
  group?: string;
  version: string;
  /** The plural resource name in URLs: `widgets`. */
  resource: string;
  kind: string;
  /** Default true. */
  namespaced?: boolean;
}

/**
 * Describes a kind, usually a custom resource:
 * `const widgets = defineKind<Widget>({ group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' })`.
 */
export function defineKind<T extends KubeObject = KubeObject>(options: DefineKindOptions): Kind<T> {
  const group = options.group ?? '';
  return Object.freeze({
    group,
    version: options.version,
    resource: options.resource,
    kind: options.kind,
    apiVersion: group === '' ? options.version : `${group}/${options.version}`,
    namespaced: options.namespaced ?? true,
  });
}

/** The informer key of a kind: `deployments.v1.apps`, `pods.v1`. */
export function kindString(kind: Kind): string {
  return kind.group === ''
    ? `${kind.resource}.${kind.version}`
    : `${kind.resource}.${kind.version}.${kind.group}`;
}

/** A built-in `v1` kind of `group` (`''`: the core group). */
function builtIn<T extends KubeObject>(
  group: string,
  resource: string,
  kind: string,
  namespaced = true,
): Kind<T> {
  return defineKind<T>({ group, version: 'v1', resource, kind, namespaced });
}

const RBAC = 'rbac.authorization.k8s.io';

/**
 * The built-in kinds, typed with `@kubernetes/client-node`'s models: what the Manager's builders
 * take, and what the typed informer factory (`factory.core.v1.pods()`) is built from.
 */
export const kinds = Object.freeze({
  pods: builtIn<V1Pod>('', 'pods', 'Pod'),
  configMaps: builtIn<V1ConfigMap>('', 'configmaps', 'ConfigMap'),
  secrets: builtIn<V1Secret>('', 'secrets', 'Secret'),
  services: builtIn<V1Service>('', 'services', 'Service'),
  serviceAccounts: builtIn<V1ServiceAccount>('', 'serviceaccounts', 'ServiceAccount'),
  /** Core `v1` Events (`CoreV1Event`). */
  events: builtIn<CoreV1Event>('', 'events', 'Event'),
  endpoints: builtIn<V1Endpoints>('', 'endpoints', 'Endpoints'),
  nodes: builtIn<V1Node>('', 'nodes', 'Node', false),
  namespaces: builtIn<V1Namespace>('', 'namespaces', 'Namespace', false),
  deployments: builtIn<V1Deployment>('apps', 'deployments', 'Deployment'),
  replicaSets: builtIn<V1ReplicaSet>('apps', 'replicasets', 'ReplicaSet'),
  statefulSets: builtIn<V1StatefulSet>('apps', 'statefulsets', 'StatefulSet'),
  daemonSets: builtIn<V1DaemonSet>('apps', 'daemonsets', 'DaemonSet'),
  jobs: builtIn<V1Job>('batch', 'jobs', 'Job'),
  cronJobs: builtIn<V1CronJob>('batch', 'cronjobs', 'CronJob'),
  ingresses: builtIn<V1Ingress>('networking.k8s.io', 'ingresses', 'Ingress'),
  endpointSlices: builtIn<V1EndpointSlice>('discovery.k8s.io', 'endpointslices', 'EndpointSlice'),
  leases: builtIn<V1Lease>('coordination.k8s.io', 'leases', 'Lease'),
  roles: builtIn<V1Role>(RBAC, 'roles', 'Role'),
  roleBindings: builtIn<V1RoleBinding>(RBAC, 'rolebindings', 'RoleBinding'),
  clusterRoles: builtIn<V1ClusterRole>(RBAC, 'clusterroles', 'ClusterRole', false),
  clusterRoleBindings: builtIn<V1ClusterRoleBinding>(
    RBAC,
    'clusterrolebindings',
    'ClusterRoleBinding',
    false,
  ),
});
