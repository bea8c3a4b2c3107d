import { defaultPodTemplate } from '../core/pod.js';
import type { JsonObject } from '../../api/json.js';
import { object, setDefault } from '../defaulting.js';
import type { ResourceStrategy } from '../strategy.js';

/**
 * The apps/v1 workloads, as `pkg/registry/apps/{deployment,replicaset,statefulset,daemonset}/strategy.go`
 * and `pkg/apis/apps/v1/defaults.go`: their spec defaults (the pod template defaulted as a pod), and
 * a `status` write keeps the labels (`deploymentStatusStrategy.PrepareForUpdate` and its siblings).
 */

/** A workload's `defaults`: its own spec fields (`own`), then the pod template defaulted as a pod. */
function specDefaults(own: (spec: JsonObject) => void): NonNullable<ResourceStrategy['defaults']> {
  return (obj) => {
    const spec = object(obj, 'spec');
    own(spec);
    defaultPodTemplate(spec);
  };
}

export const deploymentStrategy: ResourceStrategy = {
  defaults: specDefaults((spec) => {
    setDefault(spec, 'replicas', 1);
    const strategy = object(spec, 'strategy');
    setDefault(strategy, 'type', 'RollingUpdate');
    if (strategy.type === 'RollingUpdate') {
      const rolling = object(strategy, 'rollingUpdate');
      setDefault(rolling, 'maxUnavailable', '25%');
      setDefault(rolling, 'maxSurge', '25%');
    }
    setDefault(spec, 'revisionHistoryLimit', 10);
    setDefault(spec, 'progressDeadlineSeconds', 600);
  }),
  statusKeepsMeta: ['labels'],
};

export const replicaSetStrategy: ResourceStrategy = {
  defaults: specDefaults((spec) => setDefault(spec, 'replicas', 1)),
  statusKeepsMeta: ['labels'],
};

export const statefulSetStrategy: ResourceStrategy = {
  defaults: specDefaults((spec) => {
    setDefault(spec, 'replicas', 1);
    setDefault(spec, 'podManagementPolicy', 'OrderedReady');
    const strategy = object(spec, 'updateStrategy');
    setDefault(strategy, 'type', 'RollingUpdate');
    if (strategy.type === 'RollingUpdate') setDefault(object(strategy, 'rollingUpdate'), 'partition', 0);
    setDefault(spec, 'revisionHistoryLimit', 10);
    setDefault(spec, 'persistentVolumeClaimRetentionPolicy', { whenDeleted: 'Retain', whenScaled: 'Retain' });
  }),
  statusKeepsMeta: ['labels'],
};

export const daemonSetStrategy: ResourceStrategy = {
  defaults: specDefaults((spec) => {
    const strategy = object(spec, 'updateStrategy');
    setDefault(strategy, 'type', 'RollingUpdate');
    if (strategy.type === 'RollingUpdate') {
      const rolling = object(strategy, 'rollingUpdate');
      setDefault(rolling, 'maxUnavailable', 1);
      setDefault(rolling, 'maxSurge', 0);
    }
    setDefault(spec, 'revisionHistoryLimit', 10);
  }),
};
