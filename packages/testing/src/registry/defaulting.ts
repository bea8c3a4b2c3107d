import type { JsonObject } from './fieldSets.js';
import type { ResourceType } from './resourceRegistry.js';

/**
 * API defaulting of the common built-in kinds, as kube-apiserver applies it when it decodes a write
 * (`pkg/apis/core/v1/defaults.go`, `pkg/apis/apps/v1/defaults.go`, `pkg/apis/batch/v1/defaults.go`),
 * plus what a create gets from the strategy and the default admission chain: a pod's
 * `status: {phase: Pending, qosClass}` (`pkg/registry/core/pod/strategy.go` `PrepareForCreate`),
 * `priority: 0` (Priority admission), the two `NoExecute` tolerations (DefaultTolerationSeconds),
 * `serviceAccountName: default` (ServiceAccount admission, without its token volume); a service's
 * cluster IP (`pkg/registry/core/service/ipallocator`, from 10.96.0.0/12); a namespace's
 * `kubernetes` finalizer, `Active` phase and `kubernetes.io/metadata.name` label
 * (`pkg/registry/core/namespace/strategy.go`).
 *
 * Only absent fields are set; a value the client sent is kept. Mutates `obj`.
 */

type Obj = JsonObject;

function object(parent: Obj, key: string): Obj {
  const value = parent[key];
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Obj;
  const created: Obj = {};
  parent[key] = created;
  return created;
}
function objects(value: unknown): Obj[] {
  return Array.isArray(value) ? value.filter((v): v is Obj => typeof v === 'object' && v !== null) : [];
}
function setDefault(target: Obj, key: string, value: unknown): void {
  if (target[key] === undefined || target[key] === null) target[key] = value;
}

/** `SetDefaults_Container`: pull policy from the image tag, termination message, ports. */
function defaultContainer(c: Obj): void {
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
function defaultPodSpec(spec: Obj): void {
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'securityContext', {});
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'schedulerName', 'default-scheduler');
  setDefault(spec, 'enableServiceLinks', true);
  for (const c of [...objects(spec.containers), ...objects(spec.initContainers)]) defaultContainer(c);
}

function defaultTemplate(spec: Obj): void {
  const template = spec.template;
  if (typeof template !== 'object' || template === null) return;
  defaultPodSpec(object(template as Obj, 'spec'));
}

/** `qos.GetPodQOS`: BestEffort without requests/limits, Guaranteed when every container's equal. */
function qosClass(spec: Obj): string {
  const containers = objects(spec.containers);
  let any = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const resources = (c.resources ?? {}) as Obj;
    const requests = (resources.requests ?? {}) as Obj;
    const limits = (resources.limits ?? {}) as Obj;
    if (Object.keys(requests).length > 0 || Object.keys(limits).length > 0) any = true;
    for (const r of ['cpu', 'memory']) {
      if (limits[r] === undefined || (requests[r] !== undefined && requests[r] !== limits[r]))
        guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

let nextServiceIp = 1;

/** Applies defaulting to `obj` (a typed object of `type`) for a create (`creating`) or an update. */
export function applyBuiltinDefaults(type: ResourceType, obj: Obj, creating: boolean): void {
  if (type.customResource) return;
  const key = `${type.group}/${type.resource}`;
  switch (key) {
    case '/pods': {
      const spec = object(obj, 'spec');
      defaultPodSpec(spec);
      if (!creating) return;
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
      // PrepareForCreate resets the status a client sent.
      obj.status = { phase: 'Pending', qosClass: qosClass(spec) };
      return;
    }
    case 'apps/deployments': {
      const spec = object(obj, 'spec');
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
      defaultTemplate(spec);
      return;
    }
    case 'apps/replicasets': {
      const spec = object(obj, 'spec');
      setDefault(spec, 'replicas', 1);
      defaultTemplate(spec);
      return;
    }
    case 'apps/statefulsets': {
      const spec = object(obj, 'spec');
      setDefault(spec, 'replicas', 1);
      setDefault(spec, 'podManagementPolicy', 'OrderedReady');
      const strategy = object(spec, 'updateStrategy');
      setDefault(strategy, 'type', 'RollingUpdate');
      if (strategy.type === 'RollingUpdate') setDefault(object(strategy, 'rollingUpdate'), 'partition', 0);
      setDefault(spec, 'revisionHistoryLimit', 10);
      setDefault(spec, 'persistentVolumeClaimRetentionPolicy', {
        whenDeleted: 'Retain',
        whenScaled: 'Retain',
      });
      defaultTemplate(spec);
      return;
    }
    case 'apps/daemonsets': {
      const spec = object(obj, 'spec');
      const strategy = object(spec, 'updateStrategy');
      setDefault(strategy, 'type', 'RollingUpdate');
      if (strategy.type === 'RollingUpdate') {
        const rolling = object(strategy, 'rollingUpdate');
        setDefault(rolling, 'maxUnavailable', 1);
        setDefault(rolling, 'maxSurge', 0);
      }
      setDefault(spec, 'revisionHistoryLimit', 10);
      defaultTemplate(spec);
      return;
    }
    case 'batch/jobs': {
      const spec = object(obj, 'spec');
      setDefault(spec, 'parallelism', 1);
      setDefault(spec, 'completions', 1);
      setDefault(spec, 'backoffLimit', 6);
      setDefault(spec, 'completionMode', 'NonIndexed');
      setDefault(spec, 'suspend', false);
      defaultTemplate(spec);
      return;
    }
    case '/services': {
      const spec = object(obj, 'spec');
      setDefault(spec, 'type', 'ClusterIP');
      setDefault(spec, 'sessionAffinity', 'None');
      for (const p of objects(spec.ports)) {
        setDefault(p, 'protocol', 'TCP');
        setDefault(p, 'targetPort', p.port);
      }
      if (spec.type === 'ExternalName') return;
      setDefault(spec, 'internalTrafficPolicy', 'Cluster');
      if (!creating) return;
      if (spec.clusterIP === undefined || spec.clusterIP === '') {
        const n = nextServiceIp++;
        spec.clusterIP = `10.96.${Math.floor(n / 254) % 256}.${(n % 254) + 1}`;
      }
      setDefault(spec, 'clusterIPs', [spec.clusterIP]);
      setDefault(spec, 'ipFamilies', ['IPv4']);
      setDefault(spec, 'ipFamilyPolicy', 'SingleStack');
      return;
    }
    case '/secrets':
      setDefault(obj, 'type', 'Opaque');
      return;
    case '/namespaces': {
      const meta = object(obj, 'metadata');
      const labels = object(meta, 'labels');
      if (typeof meta.name === 'string') labels['kubernetes.io/metadata.name'] = meta.name;
      if (!creating) return;
      setDefault(object(obj, 'spec'), 'finalizers', ['kubernetes']);
      obj.status = { phase: 'Active' };
      return;
    }
    default:
      return;
  }
}
