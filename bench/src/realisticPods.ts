/**
 * The memory benchmark's fixture: pods of about 7 KB of JSON, about 3 KB of it `managedFields` —
 * the shape `kubectl get pod -o json` shows on a real cluster for a Deployment's pod: a
 * kube-controller-manager entry that owns the whole pod template (containers, env, probes, volumes)
 * and a kubelet entry that owns the status (conditions, container statuses, IPs). Built on
 * {@link makePod}, with the env, probes and status a production pod carries. Deterministic.
 */
import { makePod, managedFieldsEntry } from './pods.js';
import type { BenchPod } from './pods.js';

const ENV = [
  'LOG_LEVEL',
  'LOG_FORMAT',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_SERVICE_NAME',
  'GOMAXPROCS',
  'GOMEMLIMIT',
  'DB_HOST',
  'DB_PORT',
  'CACHE_URL',
  'FEATURE_FLAGS',
];

function fieldsOf(names: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { '.': {} };
  for (const n of names) out[`k:{"name":"${n}"}`] = { '.': {}, 'f:name': {}, 'f:value': {} };
  return out;
}

function containerFields(name: string, env: readonly string[]): Record<string, unknown> {
  return {
    [`k:{"name":"${name}"}`]: {
      '.': {},
      'f:args': {},
      'f:env': fieldsOf(env),
      'f:image': {},
      'f:imagePullPolicy': {},
      'f:livenessProbe': {
        '.': {},
        'f:failureThreshold': {},
        'f:httpGet': { '.': {}, 'f:path': {}, 'f:port': {}, 'f:scheme': {} },
        'f:periodSeconds': {},
        'f:successThreshold': {},
        'f:timeoutSeconds': {},
      },
      'f:name': {},
      'f:ports': {
        '.': {},
        'k:{"containerPort":8080,"protocol":"TCP"}': {
          '.': {},
          'f:containerPort': {},
          'f:name': {},
          'f:protocol': {},
        },
      },
      'f:resources': {
        '.': {},
        'f:limits': { '.': {}, 'f:cpu': {}, 'f:memory': {} },
        'f:requests': { '.': {}, 'f:cpu': {}, 'f:memory': {} },
      },
      'f:terminationMessagePath': {},
      'f:terminationMessagePolicy': {},
      'f:volumeMounts': {
        '.': {},
        'k:{"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}': {
          '.': {},
          'f:mountPath': {},
          'f:name': {},
          'f:readOnly': {},
        },
      },
    },
  };
}

/** An HTTP GET probe of `path` on port 8080 every `periodSeconds`, with the API server's defaults. */
function httpProbe(path: string, periodSeconds: number): Record<string, unknown> {
  return {
    httpGet: { path, port: 8080, scheme: 'HTTP' },
    timeoutSeconds: 1,
    periodSeconds,
    successThreshold: 1,
    failureThreshold: 3,
  };
}

/** The `i`-th realistic pod at resourceVersion `rv`. */
export function makeRealisticPod(i: number, rv: number): BenchPod {
  const pod = makePod(i, rv);
  const meta = pod.metadata;
  const ts = String(meta['creationTimestamp']);
  const uid = meta.uid;
  const spec = pod.spec as { containers: Array<Record<string, unknown>> };
  const main = spec.containers[0]!;
  main['env'] = [
    ...((main['env'] as unknown[] | undefined) ?? []),
    ...ENV.map((name, k) => ({
      name,
      value: k === 2 ? 'http://otel-collector.observability.svc.cluster.local:4317' : `value-${(i + k) % 7}`,
    })),
  ];
  main['livenessProbe'] = httpProbe('/healthz', 10);
  main['readinessProbe'] = httpProbe('/readyz', 5);
  meta.managedFields = [
    managedFieldsEntry('kube-controller-manager', ts, {
      'f:metadata': {
        'f:annotations': {
          '.': {},
          'f:kubectl.kubernetes.io/restartedAt': {},
          'f:prometheus.io/scrape': {},
        },
        'f:generateName': {},
        'f:labels': {
          '.': {},
          'f:app': {},
          'f:app.kubernetes.io/part-of': {},
          'f:pod-template-hash': {},
          'f:tier': {},
        },
        'f:ownerReferences': { '.': {}, [`k:{"uid":"rs-${uid}"}`]: {} },
      },
      'f:spec': {
        'f:containers': {
          ...containerFields('main', ['POD_NAME', ...ENV]),
          'k:{"name":"sidecar"}': {
            '.': {},
            'f:args': {},
            'f:image': {},
            'f:name': {},
            'f:resources': { '.': {}, 'f:requests': { '.': {}, 'f:cpu': {}, 'f:memory': {} } },
          },
        },
        'f:dnsPolicy': {},
        'f:enableServiceLinks': {},
        'f:restartPolicy': {},
        'f:schedulerName': {},
        'f:securityContext': {},
        'f:serviceAccount': {},
        'f:serviceAccountName': {},
        'f:terminationGracePeriodSeconds': {},
        'f:volumes': {
          '.': {},
          'k:{"name":"kube-api-access"}': { '.': {}, 'f:name': {}, 'f:projected': {} },
        },
      },
    }),
    managedFieldsEntry(
      'kubelet',
      ts,
      {
        'f:status': {
          'f:conditions': Object.fromEntries(
            ['ContainersReady', 'Initialized', 'PodScheduled', 'Ready'].map((t) => [
              `k:{"type":"${t}"}`,
              { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} },
            ]),
          ),
          'f:containerStatuses': {},
          'f:hostIP': {},
          'f:hostIPs': {},
          'f:phase': {},
          'f:podIP': {},
          'f:podIPs': {
            '.': {},
            [`k:{"ip":"10.${i % 250}.${(i >> 8) % 250}.${i % 200}"}`]: { '.': {}, 'f:ip': {} },
          },
          'f:startTime': {},
        },
      },
      'status',
    ),
  ];
  return pod;
}
