import type { GroupVersionResource, KubeObject } from '@kinformer/core';
import type { ExpectedType } from '@kinformer/reflector/internal';
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
import type { InformerAndLister, ScopeOptions } from '@kinformer/informer';

/** An accessor of one typed informer: `factory.core.v1.pods({ namespace: 'default' })`. */
export type TypedInformerAccessor<T extends KubeObject> = (options?: ScopeOptions) => InformerAndLister<T>;

/** `factory.core.v1`. */
export interface CoreV1Informers {
  pods: TypedInformerAccessor<V1Pod>;
  services: TypedInformerAccessor<V1Service>;
  configMaps: TypedInformerAccessor<V1ConfigMap>;
  secrets: TypedInformerAccessor<V1Secret>;
  nodes: TypedInformerAccessor<V1Node>;
  namespaces: TypedInformerAccessor<V1Namespace>;
  /** Core `v1` Events (`CoreV1Event`). */
  events: TypedInformerAccessor<CoreV1Event>;
  serviceAccounts: TypedInformerAccessor<V1ServiceAccount>;
  endpoints: TypedInformerAccessor<V1Endpoints>;
}

/** `factory.apps.v1`. */
export interface AppsV1Informers {
  deployments: TypedInformerAccessor<V1Deployment>;
  replicaSets: TypedInformerAccessor<V1ReplicaSet>;
  statefulSets: TypedInformerAccessor<V1StatefulSet>;
  daemonSets: TypedInformerAccessor<V1DaemonSet>;
}

/** `factory.batch.v1`. */
export interface BatchV1Informers {
  jobs: TypedInformerAccessor<V1Job>;
  cronJobs: TypedInformerAccessor<V1CronJob>;
}

/** `factory.networking.v1`. */
export interface NetworkingV1Informers {
  ingresses: TypedInformerAccessor<V1Ingress>;
}

/** `factory.discovery.v1`. */
export interface DiscoveryV1Informers {
  endpointSlices: TypedInformerAccessor<V1EndpointSlice>;
}

/** `factory.coordination.v1`. */
export interface CoordinationV1Informers {
  leases: TypedInformerAccessor<V1Lease>;
}

/** `factory.rbac.v1`. */
export interface RbacV1Informers {
  roles: TypedInformerAccessor<V1Role>;
  roleBindings: TypedInformerAccessor<V1RoleBinding>;
  clusterRoles: TypedInformerAccessor<V1ClusterRole>;
  clusterRoleBindings: TypedInformerAccessor<V1ClusterRoleBinding>;
}

/** Every typed group of a factory. */
export interface TypedInformerGroups {
  core: { readonly v1: CoreV1Informers };
  apps: { readonly v1: AppsV1Informers };
  batch: { readonly v1: BatchV1Informers };
  networking: { readonly v1: NetworkingV1Informers };
  discovery: { readonly v1: DiscoveryV1Informers };
  coordination: { readonly v1: CoordinationV1Informers };
  rbac: { readonly v1: RbacV1Informers };
}

/** How the factory gets (or creates) an informer. @internal */
export type InformerGetter = <T extends KubeObject>(
  gvr: GroupVersionResource,
  expectedType: ExpectedType,
  options: ScopeOptions | undefined,
) => InformerAndLister<T>;

/** Builds the typed accessors over `get` (internal to the factory). @internal */
export function typedInformerGroups(get: InformerGetter): TypedInformerGroups {
  const accessor =
    <T extends KubeObject>(
      group: string,
      version: string,
      resource: string,
      kind: string,
    ): TypedInformerAccessor<T> =>
    (options) =>
      get<T>(
        { group, version, resource },
        { apiVersion: group === '' ? version : `${group}/${version}`, kind },
        options,
      );
  return {
    core: {
      v1: {
        pods: accessor<V1Pod>('', 'v1', 'pods', 'Pod'),
        services: accessor<V1Service>('', 'v1', 'services', 'Service'),
        configMaps: accessor<V1ConfigMap>('', 'v1', 'configmaps', 'ConfigMap'),
        secrets: accessor<V1Secret>('', 'v1', 'secrets', 'Secret'),
        nodes: accessor<V1Node>('', 'v1', 'nodes', 'Node'),
        namespaces: accessor<V1Namespace>('', 'v1', 'namespaces', 'Namespace'),
        events: accessor<CoreV1Event>('', 'v1', 'events', 'Event'),
        serviceAccounts: accessor<V1ServiceAccount>('', 'v1', 'serviceaccounts', 'ServiceAccount'),
        endpoints: accessor<V1Endpoints>('', 'v1', 'endpoints', 'Endpoints'),
      },
    },
    apps: {
      v1: {
        deployments: accessor<V1Deployment>('apps', 'v1', 'deployments', 'Deployment'),
        replicaSets: accessor<V1ReplicaSet>('apps', 'v1', 'replicasets', 'ReplicaSet'),
        statefulSets: accessor<V1StatefulSet>('apps', 'v1', 'statefulsets', 'StatefulSet'),
        daemonSets: accessor<V1DaemonSet>('apps', 'v1', 'daemonsets', 'DaemonSet'),
      },
    },
    batch: {
      v1: {
        jobs: accessor<V1Job>('batch', 'v1', 'jobs', 'Job'),
        cronJobs: accessor<V1CronJob>('batch', 'v1', 'cronjobs', 'CronJob'),
      },
    },
    networking: {
      v1: { ingresses: accessor<V1Ingress>('networking.k8s.io', 'v1', 'ingresses', 'Ingress') },
    },
    discovery: {
      v1: {
        endpointSlices: accessor<V1EndpointSlice>(
          'discovery.k8s.io',
          'v1',
          'endpointslices',
          'EndpointSlice',
        ),
      },
    },
    coordination: {
      v1: { leases: accessor<V1Lease>('coordination.k8s.io', 'v1', 'leases', 'Lease') },
    },
    rbac: {
      v1: {
        roles: accessor<V1Role>('rbac.authorization.k8s.io', 'v1', 'roles', 'Role'),
        roleBindings: accessor<V1RoleBinding>(
          'rbac.authorization.k8s.io',
          'v1',
          'rolebindings',
          'RoleBinding',
        ),
        clusterRoles: accessor<V1ClusterRole>(
          'rbac.authorization.k8s.io',
          'v1',
          'clusterroles',
          'ClusterRole',
        ),
        clusterRoleBindings: accessor<V1ClusterRoleBinding>(
          'rbac.authorization.k8s.io',
          'v1',
          'clusterrolebindings',
          'ClusterRoleBinding',
        ),
      },
    },
  };
}
