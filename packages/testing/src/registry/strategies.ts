import {
  deploymentStrategy,
  daemonSetStrategy,
  replicaSetStrategy,
  statefulSetStrategy,
} from './apps/workloads.js';
import { jobStrategy } from './batch/job.js';
import { leaseStrategy } from './coordination/lease.js';
import { eventStrategy } from './core/event.js';
import { namespaceStrategy } from './core/namespace.js';
import { nodeStrategy } from './core/node.js';
import { podStrategy } from './core/pod.js';
import { replicationControllerStrategy } from './core/replicationController.js';
import { secretStrategy } from './core/secret.js';
import { serviceStrategy } from './core/service.js';
import { customResourceStrategy } from './customResource.js';
import { validateCrd } from './crd.js';
import { selectableFieldSet } from './fieldSets.js';
import type { ResourceStrategy, StrategyKey, StrategySource } from './strategy.js';

/**
 * Which {@link ResourceStrategy} a type has: the built-in kinds by group/resource, custom resources
 * apiextensions-apiserver's (`customResource.ts`), every other kind the generic defaults. A server
 * has one {@link Strategies} (its registry's): a strategy with state of its own (the services'
 * cluster-IP allocator) belongs to one server, as the REST storage of one kube-apiserver does.
 */

const GENERIC: ResourceStrategy = {};

/** The strategies of one server: built-ins shared where stateless, per server where not. */
export class Strategies implements StrategySource {
  readonly #builtin: Readonly<Record<string, ResourceStrategy>> = {
    '/pods': podStrategy,
    '/namespaces': namespaceStrategy,
    '/services': serviceStrategy(),
    '/nodes': nodeStrategy,
    '/secrets': secretStrategy,
    '/events': eventStrategy,
    '/replicationcontrollers': replicationControllerStrategy,
    'apps/deployments': deploymentStrategy,
    'apps/replicasets': replicaSetStrategy,
    'apps/statefulsets': statefulSetStrategy,
    'apps/daemonsets': daemonSetStrategy,
    'batch/jobs': jobStrategy,
    'coordination.k8s.io/leases': leaseStrategy,
    // apiextensions-apiserver `pkg/registry/customresourcedefinition/strategy.go` `Validate`.
    'apiextensions.k8s.io/customresourcedefinitions': { validate: validateCrd },
  };

  /** The strategy of a type, resolved once when the type is registered. */
  of(key: StrategyKey): ResourceStrategy {
    if (key.customResource) return customResourceStrategy(key.selectableFields, key.statusSubresource);
    const builtin = this.#builtin[`${key.group}/${key.resource}`] ?? GENERIC;
    return key.selectableFields.length === 0
      ? builtin
      : { ...builtin, fieldSet: selectableFieldSet(key.selectableFields) };
  }
}
