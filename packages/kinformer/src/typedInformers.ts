import type { GroupVersionResource, KubeObject } from '@kinformer/core';
import type { InformerAndLister, ScopeOptions } from '@kinformer/informer';
import type { ExpectedType } from '@kinformer/reflector/internal';
import { kinds } from '@kinformer/runtime';
import type { Kind } from '@kinformer/runtime';

/** An accessor of one typed informer: `factory.core.v1.pods({ namespace: 'default' })`. */
export type TypedInformerAccessor<T extends KubeObject> = (options?: ScopeOptions) => InformerAndLister<T>;

type BuiltIn = keyof typeof kinds;

/** The accessors of the named built-in kinds, each typed by its kind (one table: runtime's `kinds`). */
export type TypedInformers<Names extends BuiltIn> = {
  [P in Names]: TypedInformerAccessor<(typeof kinds)[P] extends Kind<infer T> ? T : never>;
};

/** Which built-in kinds each typed group serves (client-go's `informers.SharedInformerFactory`). */
const GROUPS = {
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
} as const satisfies Record<string, readonly BuiltIn[]>;

type Group = keyof typeof GROUPS;

/** `factory.core.v1` (core `v1` Events are `CoreV1Event`). */
export type CoreV1Informers = TypedInformers<(typeof GROUPS)['core'][number]>;
/** `factory.apps.v1`. */
export type AppsV1Informers = TypedInformers<(typeof GROUPS)['apps'][number]>;
/** `factory.batch.v1`. */
export type BatchV1Informers = TypedInformers<(typeof GROUPS)['batch'][number]>;
/** `factory.networking.v1`. */
export type NetworkingV1Informers = TypedInformers<(typeof GROUPS)['networking'][number]>;
/** `factory.discovery.v1`. */
export type DiscoveryV1Informers = TypedInformers<(typeof GROUPS)['discovery'][number]>;
/** `factory.coordination.v1`. */
export type CoordinationV1Informers = TypedInformers<(typeof GROUPS)['coordination'][number]>;
/** `factory.rbac.v1`. */
export type RbacV1Informers = TypedInformers<(typeof GROUPS)['rbac'][number]>;

/** Every typed group of a factory. */
export type TypedInformerGroups = {
  [G in Group]: { readonly v1: TypedInformers<(typeof GROUPS)[G][number]> };
};

/** How the factory gets (or creates) an informer. @internal */
export type InformerGetter = <T extends KubeObject>(
  gvr: GroupVersionResource,
  expectedType: ExpectedType,
  options: ScopeOptions | undefined,
) => InformerAndLister<T>;

/** Builds the typed accessors over `get` (internal to the factory). @internal */
export function typedInformerGroups(get: InformerGetter): TypedInformerGroups {
  const accessors = (names: readonly BuiltIn[]): Record<string, TypedInformerAccessor<KubeObject>> =>
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
