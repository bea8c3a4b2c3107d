import type { GroupVersionResource, KubeObject } from '@kinformer/core';
import type { InformerAndLister, ScopeOptions } from '@kinformer/informer';
import type { ExpectedType } from '@kinformer/reflector/internal';
import { kinds } from '@kinformer/runtime';
import type { Kind } from '@kinformer/runtime';

/** An accessor of one typed informer: `factory.core.v1.pods({ namespace: 'default' })`. */
export type TypedInformerAccessor<T extends KubeObject> = (options?: ScopeOptions) => InformerAndLister<T>;

/** The accessors of the named built-in kinds, each typed by its kind (one table: runtime's `kinds`). */
export type TypedInformers<Names extends keyof typeof kinds> = {
  [P in Names]: TypedInformerAccessor<(typeof kinds)[P] extends Kind<infer T> ? T : never>;
};

/** `factory.core.v1` (core `v1` Events are `CoreV1Event`). */
export type CoreV1Informers = TypedInformers<
  | 'pods'
  | 'services'
  | 'configMaps'
  | 'secrets'
  | 'nodes'
  | 'namespaces'
  | 'events'
  | 'serviceAccounts'
  | 'endpoints'
>;
/** `factory.apps.v1`. */
export type AppsV1Informers = TypedInformers<'deployments' | 'replicaSets' | 'statefulSets' | 'daemonSets'>;
/** `factory.batch.v1`. */
export type BatchV1Informers = TypedInformers<'jobs' | 'cronJobs'>;
/** `factory.networking.v1`. */
export type NetworkingV1Informers = TypedInformers<'ingresses'>;
/** `factory.discovery.v1`. */
export type DiscoveryV1Informers = TypedInformers<'endpointSlices'>;
/** `factory.coordination.v1`. */
export type CoordinationV1Informers = TypedInformers<'leases'>;
/** `factory.rbac.v1`. */
export type RbacV1Informers = TypedInformers<
  'roles' | 'roleBindings' | 'clusterRoles' | 'clusterRoleBindings'
>;

/** Every typed group of a factory (client-go's `informers.SharedInformerFactory`). */
export interface TypedInformerGroups {
  core: { readonly v1: CoreV1Informers };
  apps: { readonly v1: AppsV1Informers };
  batch: { readonly v1: BatchV1Informers };
  networking: { readonly v1: NetworkingV1Informers };
  discovery: { readonly v1: DiscoveryV1Informers };
  coordination: { readonly v1: CoordinationV1Informers };
  rbac: { readonly v1: RbacV1Informers };
}

/** Which built-in kinds each group serves (each name checked against the group's type; the factory test calls every accessor). */
const GROUPS: { [G in keyof TypedInformerGroups]: Array<keyof TypedInformerGroups[G]['v1']> } = {
  core: [
    'pods',
    'services',
    'configMaps',
    'secrets',
    'nodes',
    'namespaces',
    'events',
    'serviceAccounts',
    'endpoints',
  ],
  apps: ['deployments', 'replicaSets', 'statefulSets', 'daemonSets'],
  batch: ['jobs', 'cronJobs'],
  networking: ['ingresses'],
  discovery: ['endpointSlices'],
  coordination: ['leases'],
  rbac: ['roles', 'roleBindings', 'clusterRoles', 'clusterRoleBindings'],
};

/** How the factory gets (or creates) an informer. @internal */
export type InformerGetter = <T extends KubeObject>(
  gvr: GroupVersionResource,
  expectedType: ExpectedType,
  options: ScopeOptions | undefined,
) => InformerAndLister<T>;

/** Builds the typed accessors over `get` (internal to the factory). @internal */
export function typedInformerGroups(get: InformerGetter): TypedInformerGroups {
  const accessors = (
    names: ReadonlyArray<keyof typeof kinds>,
  ): Record<string, TypedInformerAccessor<KubeObject>> =>
    Object.fromEntries(
      names.map((name) => {
        const { group, version, resource, apiVersion, kind }: Kind = kinds[name];
        const gvr = { group, version, resource };
        const accessor: TypedInformerAccessor<KubeObject> = (options) =>
          get(gvr, { apiVersion, kind }, options);
        return [name, accessor];
      }),
    );
  const groups = Object.fromEntries(
    Object.entries(GROUPS).map(([group, names]) => [group, { v1: accessors(names) }]),
  );
  return groups as unknown as TypedInformerGroups;
}
