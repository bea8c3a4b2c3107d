import type { GroupVersionResource, KubeObject } from '@kinformer/core';
import type {
  V1ConfigMap,
  V1CronJob,
  V1DaemonSet,
  V1Deployment,
  V1Ingress,
  V1Job,
  V1Lease,
  V1Namespace,
  V1Node,
  V1Pod,
  V1ReplicaSet,
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

/** The built-in kinds, typed with `@kubernetes/client-node`'s models. */
export const kinds = Object.freeze({
  pods: defineKind<V1Pod>({ version: 'v1', resource: 'pods', kind: 'Pod' }),
  configMaps: defineKind<V1ConfigMap>({ version: 'v1', resource: 'configmaps', kind: 'ConfigMap' }),
  secrets: defineKind<V1Secret>({ version: 'v1', resource: 'secrets', kind: 'Secret' }),
  services: defineKind<V1Service>({ version: 'v1', resource: 'services', kind: 'Service' }),
  serviceAccounts: defineKind<V1ServiceAccount>({
    version: 'v1',
    resource: 'serviceaccounts',
    kind: 'ServiceAccount',
  }),
  nodes: defineKind<V1Node>({ version: 'v1', resource: 'nodes', kind: 'Node', namespaced: false }),
  namespaces: defineKind<V1Namespace>({
    version: 'v1',
    resource: 'namespaces',
    kind: 'Namespace',
    namespaced: false,
  }),
  deployments: defineKind<V1Deployment>({
    group: 'apps',
    version: 'v1',
    resource: 'deployments',
    kind: 'Deployment',
  }),
  replicaSets: defineKind<V1ReplicaSet>({
    group: 'apps',
    version: 'v1',
    resource: 'replicasets',
    kind: 'ReplicaSet',
  }),
  statefulSets: defineKind<V1StatefulSet>({
    group: 'apps',
    version: 'v1',
    resource: 'statefulsets',
    kind: 'StatefulSet',
  }),
  daemonSets: defineKind<V1DaemonSet>({
    group: 'apps',
    version: 'v1',
    resource: 'daemonsets',
    kind: 'DaemonSet',
  }),
  jobs: defineKind<V1Job>({ group: 'batch', version: 'v1', resource: 'jobs', kind: 'Job' }),
  cronJobs: defineKind<V1CronJob>({ group: 'batch', version: 'v1', resource: 'cronjobs', kind: 'CronJob' }),
  ingresses: defineKind<V1Ingress>({
    group: 'networking.k8s.io',
    version: 'v1',
    resource: 'ingresses',
    kind: 'Ingress',
  }),
  leases: defineKind<V1Lease>({
    group: 'coordination.k8s.io',
    version: 'v1',
    resource: 'leases',
    kind: 'Lease',
  }),
});
