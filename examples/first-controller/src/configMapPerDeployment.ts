import type { V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { kinds, predicates, setControllerReference } from 'kinformer';
import type { Manager } from 'kinformer';

/** Deployments with this label get a ConfigMap `<name>-info` that says what they run. */
export const LABEL = 'example.com/info';

/** The ConfigMap a Deployment should have. */
export function desiredConfigMap(d: V1Deployment): V1ConfigMap {
  const cm: V1ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `${d.metadata!.name}-info`, namespace: d.metadata!.namespace! },
    data: {
      replicas: String(d.spec?.replicas ?? 1),
      images: (d.spec?.template.spec?.containers ?? []).map((c) => c.image ?? '').join(','),
    },
  };
  return setControllerReference(d, cm, kinds.deployments);
}

/** Registers the controller on `mgr`: a ConfigMap per labelled Deployment, kept in step with it. */
export function addConfigMapController(mgr: Manager): void {
  mgr
    .controller('configmap-per-deployment')
    .for(kinds.deployments, { predicates: [predicates.labelSelector(LABEL)] })
    .owns(kinds.configMaps)
    .concurrency(2)
    .reconcile(async ({ object: d, client, signal }) => {
      if (d === undefined || d.metadata?.deletionTimestamp) return; // the garbage collector deletes the ConfigMap
      // Server-side apply: create or update in one request, owning only the fields we set.
      await client.apply(kinds.configMaps, desiredConfigMap(d), { force: true, signal });
    });
}
