/**
 * Realistic pods for the benchmarks: about 3 KB of JSON each, with labels, annotations, owner
 * references, managedFields, two containers, volumes, tolerations and status conditions — the shape
 * of a Deployment's pod on a real cluster.
 */
export interface BenchPod {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    [key: string]: unknown;
  };
  spec: Record<string, unknown>;
  status: Record<string, unknown>;
}

const NAMESPACES = 20;
const NODES = 200;

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0').slice(-width);
}

/** The `i`-th benchmark pod at resourceVersion `rv`. Deterministic. */
/** One `managedFields` entry of an Update by `manager` at `time` (on the `subresource`, if given). */
export function managedFieldsEntry(
  manager: string,
  time: string,
  fieldsV1: Record<string, unknown>,
  subresource?: string,
): Record<string, unknown> {
  return {
    manager,
    operation: 'Update',
    apiVersion: 'v1',
    time,
    fieldsType: 'FieldsV1',
    ...(subresource === undefined ? {} : { subresource }),
    fieldsV1,
  };
}

export function makePod(i: number, rv: number): BenchPod {
  const ns = `ns-${i % NAMESPACES}`;
  const app = `app-${i % 500}`;
  const hash = hex(i * 2654435761, 10);
  const uid = `${hex(i, 8)}-${hex(i * 7, 4)}-4${hex(i * 13, 3)}-a${hex(i * 17, 3)}-${hex(i * 31, 12)}`;
  const node = `node-${i % NODES}`;
  const ts = '2026-11-30T08:00:00Z';
  return {
    metadata: {
      name: `${app}-${hash}-${hex(i, 5)}`,
      generateName: `${app}-${hash}-`,
      namespace: ns,
      uid,
      resourceVersion: String(rv),
      creationTimestamp: ts,
      labels: {
        app,
        'pod-template-hash': hash,
        tier: i % 3 === 0 ? 'frontend' : 'backend',
        'app.kubernetes.io/part-of': 'bench',
      },
      annotations: { 'kubectl.kubernetes.io/restartedAt': ts, 'prometheus.io/scrape': 'true' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `${app}-${hash}`,
          uid: `rs-${uid}`,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        managedFieldsEntry('kube-controller-manager', ts, {
          'f:metadata': {
            'f:generateName': {},
            'f:labels': { '.': {}, 'f:app': {}, 'f:pod-template-hash': {} },
            'f:ownerReferences': { '.': {}, [`k:{"uid":"rs-${uid}"}`]: {} },
          },
          'f:spec': {
            'f:containers': {
              'k:{"name":"main"}': {
                '.': {},
                'f:image': {},
                'f:name': {},
                'f:ports': {},
                'f:resources': {},
              },
            },
            'f:dnsPolicy': {},
            'f:restartPolicy': {},
          },
        }),
      ],
    },
    spec: {
      containers: [
        {
          name: 'main',
          image: `registry.example.com/${app}:v1.${i % 10}.0`,
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          env: [
            { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
            { name: 'LOG_LEVEL', value: 'info' },
          ],
          resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
          volumeMounts: [
            {
              name: 'kube-api-access',
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
              readOnly: true,
            },
          ],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
        {
          name: 'sidecar',
          image: 'registry.example.com/proxy:2.4.1',
          args: ['--port=15001', '--admin=15000'],
          resources: { requests: { cpu: '10m', memory: '32Mi' } },
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      volumes: [
        {
          name: 'kube-api-access',
          projected: {
            defaultMode: 420,
            sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }],
          },
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      nodeName: node,
      schedulerName: 'default-scheduler',
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
      priority: 0,
      enableServiceLinks: true,
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: ts },
        { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: ts },
        { type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: ts },
        { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: ts },
      ],
      hostIP: `10.0.${(i % NODES) >> 8}.${i % 256}`,
      podIP: `10.244.${(i >> 8) % 256}.${i % 256}`,
      podIPs: [{ ip: `10.244.${(i >> 8) % 256}.${i % 256}` }],
      startTime: ts,
      qosClass: 'Burstable',
      containerStatuses: [
        {
          name: 'main',
          ready: true,
          restartCount: 0,
          image: `registry.example.com/${app}:v1.${i % 10}.0`,
          imageID: `registry.example.com/${app}@sha256:${hex(i, 16)}`,
          containerID: `containerd://${hex(i * 3, 16)}`,
          started: true,
          state: { running: { startedAt: ts } },
        },
        {
          name: 'sidecar',
          ready: true,
          restartCount: 0,
          image: 'registry.example.com/proxy:2.4.1',
          imageID: 'registry.example.com/proxy@sha256:abcdef',
          containerID: `containerd://${hex(i * 5, 16)}`,
          started: true,
          state: { running: { startedAt: ts } },
        },
      ],
    },
  };
}
