import type { V1ClusterRoleBinding, V1Pod } from '@kubernetes/client-node';
import { type BuiltInKindModels, defineKind, type Kind, kinds, kindString } from './kinds.js';

/** Every name of the models interface, once: the compiler rejects a missing or an extra one. */
const MODEL_NAMES = {
  pods: true,
  configMaps: true,
  secrets: true,
  services: true,
  serviceAccounts: true,
  events: true,
  endpoints: true,
  nodes: true,
  namespaces: true,
  deployments: true,
  replicaSets: true,
  statefulSets: true,
  daemonSets: true,
  jobs: true,
  cronJobs: true,
  ingresses: true,
  endpointSlices: true,
  leases: true,
  roles: true,
  roleBindings: true,
  clusterRoles: true,
  clusterRoleBindings: true,
} as const satisfies Record<keyof BuiltInKindModels, true>;

describe('kinds (the built-in table)', () => {
  it('has one frozen v1 kind per row, its resource the name in lower case', () => {
    expect(Object.keys(kinds)).toHaveLength(22);
    expect(Object.isFrozen(kinds)).toBe(true);
    for (const [name, kind] of Object.entries(kinds)) {
      expect(kind.version).toBe('v1');
      expect(kind.resource).toBe(name.toLowerCase());
      expect(kind.apiVersion).toBe(kind.group === '' ? 'v1' : `${kind.group}/v1`);
      expect(Object.isFrozen(kind)).toBe(true);
    }
    expect(new Set(Object.values(kinds).map((k) => k.kind)).size).toBe(22);
  });

  it('has a row for every name of BuiltInKindModels and none more (the table and the types cannot drift)', () => {
    expect(Object.keys(kinds).sort()).toEqual(Object.keys(MODEL_NAMES).sort());
  });

  it('reads group, kind and scope from each row', () => {
    expect(kinds.pods).toEqual(defineKind({ version: 'v1', resource: 'pods', kind: 'Pod' }));
    expect(kindString(kinds.endpointSlices)).toBe('endpointslices.v1.discovery.k8s.io');
    expect(kinds.endpoints).toMatchObject({ group: '', kind: 'Endpoints', namespaced: true });
    expect(kinds.clusterRoleBindings).toMatchObject({
      group: 'rbac.authorization.k8s.io',
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      namespaced: false,
    });
    const clusterScoped = Object.entries(kinds).filter(([, k]) => !k.namespaced);
    expect(clusterScoped.map(([name]) => name).sort()).toEqual([
      'clusterRoleBindings',
      'clusterRoles',
      'namespaces',
      'nodes',
    ]);
  });

  it('types each kind by its client-node model', () => {
    const pod: Kind<V1Pod> = kinds.pods;
    const binding: Kind<V1ClusterRoleBinding> = kinds.clusterRoleBindings;
    // @ts-expect-error a Pod kind is not a ClusterRoleBinding kind
    const wrong: Kind<V1ClusterRoleBinding> = kinds.configMaps;
    expect([pod, binding, wrong]).toHaveLength(3);
  });
});
