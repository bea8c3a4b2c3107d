import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import type { FakeApiServer } from '@kinformer/testing';
import {
  CONFIGMAP_PREFIX,
  configMapNameFor,
  CONTROLLER_NAME,
  desiredConfigMapData,
  MANAGED_BY_LABEL,
} from './podsPerNodeController.js';

/**
 * Compares, on the server itself, the controller's ConfigMaps in `namespace` with the pods per node
 * and returns every difference (empty: they match): a node with pods but no ConfigMap or a wrong
 * one, a ConfigMap for a node without pods, a ConfigMap without the controller's label.
 */
export function configMapMismatches(server: FakeApiServer, namespace: string): string[] {
  const podsByNode = new Map<string, V1Pod[]>();
  for (const pod of server.list<V1Pod>('pods')) {
    const node = pod.spec?.nodeName;
    if (!node) continue;
    const list = podsByNode.get(node);
    if (list) list.push(pod);
    else podsByNode.set(node, [pod]);
  }
  const configMaps = new Map<string, V1ConfigMap>();
  for (const cm of server.list<V1ConfigMap>('configmaps', namespace)) {
    if (cm.metadata?.name?.startsWith(CONFIGMAP_PREFIX)) configMaps.set(cm.metadata.name, cm);
  }
  const mismatches: string[] = [];
  for (const [node, pods] of podsByNode) {
    const name = configMapNameFor(node);
    const cm = configMaps.get(name);
    configMaps.delete(name);
    const want = desiredConfigMapData(node, pods);
    if (cm === undefined) {
      mismatches.push(`${name}: missing (node has ${pods.length} pods)`);
    } else if (JSON.stringify(sorted(cm.data)) !== JSON.stringify(sorted(want))) {
      mismatches.push(`${name}: count ${cm.data?.count ?? '-'}, want ${want.count}`);
    } else if (cm.metadata?.labels?.[MANAGED_BY_LABEL] !== CONTROLLER_NAME) {
      mismatches.push(`${name}: lacks the label ${MANAGED_BY_LABEL}=${CONTROLLER_NAME}`);
    }
  }
  for (const name of configMaps.keys()) mismatches.push(`${name}: exists, but its node has no pods`);
  return mismatches;
}

function sorted(data: Record<string, string> | undefined): [string, string][] {
  return Object.entries(data ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
