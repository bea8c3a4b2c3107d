/**
 * The pods-per-node controller on `@kinformer/runtime`: keys are node names; each reconcile makes
 * the ConfigMap `pods-per-node-<node>` list the pods bound to that node (or deletes it when none is).
 */
import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import { kinds } from 'kinformer';
import type { Manager } from 'kinformer';

/** The label the controller puts on its ConfigMaps, and selects them by. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** The value of {@link MANAGED_BY_LABEL}, the controller's name and the Lease's. */
export const CONTROLLER_NAME = 'pods-per-node-controller';
/** The ConfigMaps' name prefix: node `n1` is summarised in `pods-per-node-n1`. */
export const CONFIGMAP_PREFIX = 'pods-per-node-';

/** The ConfigMap that summarises `node`. */
export function configMapNameFor(node: string): string {
  return CONFIGMAP_PREFIX + node;
}

/** What the ConfigMap of `node` holds: the node, the count, and the pods' `namespace/name` keys, sorted. */
export function desiredConfigMapData(node: string, pods: readonly V1Pod[]): Record<string, string> {
  const keys = pods.map((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`).sort();
  return { node, count: String(keys.length), pods: keys.join('\n') };
}

/** Adds the controller to `mgr`; its ConfigMaps live in `namespace`. */
export function addPodsPerNodeController(
  mgr: Manager,
  options: { namespace: string; workers?: number },
): void {
  const { namespace } = options;
  const nodeOf = (pod: V1Pod): string[] => (pod.spec?.nodeName ? [pod.spec.nodeName] : []);
  const podsByNode = mgr.index(kinds.pods, 'byNode', nodeOf);
  const selector = `${MANAGED_BY_LABEL}=${CONTROLLER_NAME}`;
  mgr
    .controller(CONTROLLER_NAME)
    .watches(kinds.pods, nodeOf) // a pod that moved maps to both nodes (old and new object)
    .watches(kinds.configMaps, (cm) => (cm.data?.['node'] ? [cm.data['node']] : []), {
      namespace,
      labelSelector: selector,
    })
    .concurrency(options.workers ?? 2)
    .reconcile(async ({ key: node, client, recorder, signal }) => {
      const pods = podsByNode.list(node);
      const name = configMapNameFor(node);
      const existing = mgr.get(kinds.configMaps, `${namespace}/${name}`);
      const ref = { apiVersion: 'v1', kind: 'ConfigMap', name, namespace };
      if (pods.length === 0) {
        if (existing === undefined) return;
        const resourceVersion = existing.metadata?.resourceVersion;
        const opts = resourceVersion === undefined ? {} : { preconditions: { resourceVersion } };
        if (await client.delete(kinds.configMaps, { namespace, name }, { ...opts, signal }))
          recorder.event(ref, 'Normal', 'Deleted', `deleted ConfigMap ${name}: node ${node} has no pods`);
        return;
      }
      const data = desiredConfigMapData(node, pods);
      if (existing !== undefined && sameData(existing.data, data)) return;
      const cm: V1ConfigMap = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace, labels: { [MANAGED_BY_LABEL]: CONTROLLER_NAME } },
        data,
      };
      await client.apply(kinds.configMaps, cm, { force: true, signal });
      const verb = existing === undefined ? 'Created' : 'Updated';
      recorder.event(
        ref,
        'Normal',
        verb,
        `${verb.toLowerCase()} ConfigMap ${name}: ${data['count']} pods on ${node}`,
      );
    });
}

function sameData(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>>,
): boolean {
  const keys = Object.keys(b);
  return a !== undefined && Object.keys(a).length === keys.length && keys.every((k) => a[k] === b[k]);
}
