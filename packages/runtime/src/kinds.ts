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

/** The `@kubernetes/client-node` model of each built-in kind in {@link kinds}. */
export interface BuiltInKindModels {
  pods: V1Pod;
  configMaps: V1ConfigMap;
  secrets: V1Secret;
  services: V1Service;
  serviceAccounts: V1ServiceAccount;
  /** Core `v1` Events. */
  events: CoreV1Event;
  endpoints: V1Endpoints;
  nodes: V1Node;
  namespaces: V1Namespace;
  deployments: V1Deployment;
  replicaSets: V1ReplicaSet;
  statefulSets: V1StatefulSet;
  daemonSets: V1DaemonSet;
  jobs: V1Job;
  cronJobs: V1CronJob;
  ingresses: V1Ingress;
  endpointSlices: V1EndpointSlice;
  leases: V1Lease;
  roles: V1Role;
  roleBindings: V1RoleBinding;
  clusterRoles: V1ClusterRole;
  clusterRoleBindings: V1ClusterRoleBinding;
}

/**
 * One row per built-in kind, all `v1`: its name in {@link kinds} (the resource is that name in
 * lower case), its API group (`core`: the core group, `''`), its `kind`, and `cluster` when it is
 * cluster-scoped.
 */
const BUILT_IN_KINDS = `
  pods                 core                       Pod
  configMaps           core                       ConfigMap
  secrets              core                       Secret
  services             core                       Service
  serviceAccounts      core                       ServiceAccount
  events               core                       Event
  endpoints            core                       Endpoints
  nodes                core                       Node                 cluster
  namespaces           core                       Namespace            cluster
  deployments          apps                       Deployment
  replicaSets          apps                       ReplicaSet
  statefulSets         apps                       StatefulSet
  daemonSets           apps                       DaemonSet
  jobs                 batch                      Job
  cronJobs             batch                      CronJob
  ingresses            networking.k8s.io          Ingress
  endpointSlices       discovery.k8s.io           EndpointSlice
  leases               coordination.k8s.io        Lease
  roles                rbac.authorization.k8s.io  Role
  roleBindings         rbac.authorization.k8s.io  RoleBinding
  clusterRoles         rbac.authorization.k8s.io  ClusterRole          cluster
  clusterRoleBindings  rbac.authorization.k8s.io  ClusterRoleBinding   cluster
`;

function builtInKinds(): Readonly<Record<string, Kind>> {
  const table: Record<string, Kind> = {};
  for (const row of BUILT_IN_KINDS.trim().split('\n')) {
    const [name = '', group = '', kind = '', scope] = row.trim().split(/\s+/);
    table[name] = defineKind({
      group: group === 'core' ? '' : group,
      version: 'v1',
      resource: name.toLowerCase(),
      kind,
      namespaced: scope !== 'cluster',
    });
  }
  return Object.freeze(table);
}

/**
 * The built-in kinds, typed with `@kubernetes/client-node`'s models: what the Manager's builders
 * take, and what the typed informer factory (`factory.core.v1.pods()`) is built from.
 */
export const kinds = builtInKinds() as {
  readonly [N in keyof BuiltInKindModels]: Kind<BuiltInKindModels[N]>;
};
