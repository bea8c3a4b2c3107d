import {
  deploymentStrategy,
  daemonSetStrategy,
  replicaSetStrategy,
  statefulSetStrategy,
} from './apps/workloads.js';
import { jobStrategy } from './batch/job.js';
import { leaseStrategy } from './coordination/lease.js';
import { namespaceStrategy } from './core/namespace.js';
import { podStrategy } from './core/pod.js';
import { serviceStrategy } from './core/service.js';
import { setDefault } from './defaulting.js';
import type { ResourceStrategy } from './strategy.js';

/**
 * Which {@link ResourceStrategy} a type has: the built-in kinds by group/resource, custom resources
 * apiextensions-apiserver's (`pkg/registry/customresource/strategy.go`, `status_strategy.go`), every
 * other kind the generic defaults.
 */

const BUILTIN: Readonly<Record<string, ResourceStrategy>> = {
  '/pods': podStrategy,
  '/namespaces': namespaceStrategy,
  '/services': serviceStrategy,
  // nodeStrategy.PrepareForCreate keeps the status the kubelet registers with.
  '/nodes': { prepareForCreate: (obj) => obj },
  // SetDefaults_Secret.
  '/secrets': { defaults: (obj) => setDefault(obj, 'type', 'Opaque') },
  'apps/deployments': deploymentStrategy,
  'apps/replicasets': replicaSetStrategy,
  'apps/statefulsets': statefulSetStrategy,
  'apps/daemonsets': daemonSetStrategy,
  'batch/jobs': jobStrategy,
  'coordination.k8s.io/leases': leaseStrategy,
};

/**
 * Custom resources: `PrepareForCreate` drops the status (`delete(customResource, "status")`), and a
 * `status` write keeps all metadata (`status_strategy.go` copies the old object and sets only
 * status). Defaults and pruning come from the CRD's schema (`admission.ts`).
 */
const CUSTOM_RESOURCE: ResourceStrategy = {
  prepareForCreate: (obj) => {
    const { status: _dropped, ...rest } = obj;
    return rest;
  },
  statusKeepsMeta: 'all',
};

const GENERIC: ResourceStrategy = {};

/** The strategy of a type. */
export function strategyOf(type: {
  readonly group: string;
  readonly resource: string;
  readonly customResource: boolean;
}): ResourceStrategy {
  if (type.customResource) return CUSTOM_RESOURCE;
  return BUILTIN[`${type.group}/${type.resource}`] ?? GENERIC;
}
