import { fieldSet, metaFields, NOT_SUPPORTED, str, bool } from '../fieldSets.js';
import { rec, type JsonObject } from '../../api/json.js';
import { objects, setDefault, object } from '../defaulting.js';
import type { ResourceStrategy } from '../strategy.js';

/**
 * Everything the fake does differently for pods, as kube-apiserver's pod registry
 * (`pkg/registry/core/pod/strategy.go`) and the pod API defaults (`pkg/apis/core/v1/defaults.go`) do:
 * field selectors (`ToSelectableFields`), defaulting, `PrepareForCreate` (phase Pending and the QOS
 * class), the status split (`podStatusStrategy`), graceful deletion (`CheckGracefulDelete`) and the
 * BOOKMARK object's shape.
 */

const FIELDS = fieldSet(
  [
    'metadata.name',
    'metadata.namespace',
    'spec.nodeName',
    'spec.host',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'spec.hostNetwork',
    'status.phase',
    'status.podIP',
    'status.podIPs',
    'status.nominatedNodeName',
  ],
  NOT_SUPPORTED,
  (obj) => {
    const spec = rec(obj.spec);
    const status = rec(obj.status);
    const ips = Array.isArray(status.podIPs) ? status.podIPs.map((p) => str(rec(p).ip)) : [];
    const out = metaFields(obj, {});
    out['spec.nodeName'] = str(spec.nodeName);
    // Legacy clients send spec.host; the server rewrites it to spec.nodeName.
    out['spec.host'] = out['spec.nodeName'];
    out['spec.restartPolicy'] = str(spec.restartPolicy);
    out['spec.schedulerName'] = str(spec.schedulerName);
    out['spec.serviceAccountName'] = str(spec.serviceAccountName);
    out['spec.hostNetwork'] = bool(spec.hostNetwork);
    out['status.phase'] = str(status.phase);
    out['status.podIP'] = str(status.podIP) || (ips[0] ?? '');
    out['status.podIPs'] = ips.join(',');
    out['status.nominatedNodeName'] = str(status.nominatedNodeName);
    return out;
  },
);

/** `SetDefaults_Container`: pull policy from the image tag, termination message, ports. */
function defaultContainer(c: JsonObject): void {
  if (c.imagePullPolicy === undefined && typeof c.image === 'string') {
    const ref = c.image.split('@')[0]!;
    const tag = /:([^/:]+)$/.exec(ref)?.[1];
    c.imagePullPolicy = c.image.includes('@')
      ? 'IfNotPresent'
      : tag === undefined || tag === 'latest'
        ? 'Always'
        : 'IfNotPresent';
  }
  setDefault(c, 'terminationMessagePath', '/dev/termination-log');
  setDefault(c, 'terminationMessagePolicy', 'File');
  setDefault(c, 'resources', {});
  for (const p of objects(c.ports)) setDefault(p, 'protocol', 'TCP');
}

/** `SetDefaults_PodSpec` (and its containers). */
function defaultPodSpec(spec: JsonObject): void {
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'securityContext', {});
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'schedulerName', 'default-scheduler');
  setDefault(spec, 'enableServiceLinks', true);
  for (const c of [...objects(spec.containers), ...objects(spec.initContainers)]) defaultContainer(c);
}

/** The pod template of a workload (`spec.template.spec`), defaulted as a pod spec. */
export function defaultPodTemplate(spec: JsonObject): void {
  const template = spec.template;
  if (typeof template !== 'object' || template === null) return;
  defaultPodSpec(object(template as JsonObject, 'spec'));
}

/** `qos.GetPodQOS`: BestEffort without requests/limits, Guaranteed when every container's equal. */
function qosClass(spec: JsonObject): string {
  const containers = objects(spec.containers);
  let any = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const resources = (c.resources ?? {}) as JsonObject;
    const requests = (resources.requests ?? {}) as JsonObject;
    const limits = (resources.limits ?? {}) as JsonObject;
    if (Object.keys(requests).length > 0 || Object.keys(limits).length > 0) any = true;
    for (const r of ['cpu', 'memory']) {
      if (limits[r] === undefined || (requests[r] !== undefined && requests[r] !== limits[r]))
        guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** The pod default of `terminationGracePeriodSeconds` (API defaulting). */
const DEFAULT_TERMINATION_GRACE_SECONDS = 30;

function graceOf(value: unknown): number | undefined {
  if (typeof value !== 'number') return undefined;
  return value < 0 ? 1 : value;
}

export const podStrategy: ResourceStrategy = {
  fieldSet: FIELDS,
  defaults: (obj, creating) => {
    const spec = object(obj, 'spec');
    defaultPodSpec(spec);
    if (!creating) return;
    // Priority admission, ServiceAccount admission (without its token volume), DefaultTolerationSeconds.
    setDefault(spec, 'priority', 0);
    setDefault(spec, 'preemptionPolicy', 'PreemptLowerPriority');
    setDefault(spec, 'serviceAccountName', 'default');
    setDefault(spec, 'serviceAccount', spec.serviceAccountName);
    const tolerations = objects(spec.tolerations);
    for (const taint of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
      if (!tolerations.some((t) => t.key === taint))
        tolerations.push({ key: taint, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
    }
    spec.tolerations = tolerations;
    // PrepareForCreate resets the status a client sent (the QOS class is kept by prepareForCreate).
    obj.status = { phase: 'Pending', qosClass: qosClass(spec) };
  },
  prepareForCreate: (obj) => {
    // podStrategy.PrepareForCreate: `pod.Status = api.PodStatus{Phase: api.PodPending, QOSClass: …}`.
    const qos = rec(obj.status).qosClass;
    return { ...obj, status: { phase: 'Pending', ...(typeof qos === 'string' ? { qosClass: qos } : {}) } };
  },
  // podStatusStrategy.PrepareForUpdate keeps the owner references and the deletion timestamp.
  statusKeepsMeta: ['ownerReferences', 'deletionTimestamp'],
  gracePeriod: (pod, requested) => {
    // CheckGracefulDelete: the request's period, else the pod's own, else 30 s; an unscheduled pod,
    // or one that already terminated, is deleted at once.
    const spec = rec(pod.spec);
    const phase = rec(pod.status).phase;
    let period =
      graceOf(requested) ?? graceOf(spec.terminationGracePeriodSeconds) ?? DEFAULT_TERMINATION_GRACE_SECONDS;
    if (typeof spec.nodeName !== 'string' || spec.nodeName === '') period = 0;
    if (phase === 'Failed' || phase === 'Succeeded') period = 0;
    return period;
  },
  bookmarkExtra: { spec: { containers: null }, status: {} },
};
