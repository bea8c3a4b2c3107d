import { defaultPodTemplate } from '../core/pod.js';
import { object, setDefault } from '../defaulting.js';
import type { ResourceStrategy } from '../strategy.js';

/** Jobs, as `pkg/apis/batch/v1/defaults.go` `SetDefaults_Job` (and the pod template as a pod). */
export const jobStrategy: ResourceStrategy = {
  defaults: (obj) => {
    const spec = object(obj, 'spec');
    setDefault(spec, 'parallelism', 1);
    setDefault(spec, 'completions', 1);
    setDefault(spec, 'backoffLimit', 6);
    setDefault(spec, 'completionMode', 'NonIndexed');
    setDefault(spec, 'suspend', false);
    defaultPodTemplate(spec);
  },
};
