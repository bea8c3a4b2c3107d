/**
 * A pods informer with a custom `byNode` index: which pods run on a node, answered from the cache in
 * one lookup instead of a scan — and kept up to date by the informer as pods change.
 *
 * Shows `informer.addIndexers`, `indexer.byIndex` / `indexKeys` / `listIndexFuncValues`, a namespace
 * lister with a label selector, and (on the embedded server) the index following a pod that moves to
 * another node.
 */
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { FakeApiServer } from '@kinformer/testing';
import { metaNamespaceKeyFunc, SharedInformerFactory } from 'kinformer';
import type { IndexFunc, SharedIndexInformer } from 'kinformer';

/** The name of our index. */
export const BY_NODE = 'byNode';

/**
 * The index function: a pod is indexed under the node it is scheduled to. A pod not scheduled yet
 * returns `[]` and so is in no bucket. Index functions must be pure and fast: they run on every write.
 */
export const podsByNode: IndexFunc<V1Pod> = (pod) => (pod.spec?.nodeName ? [pod.spec.nodeName] : []);

/** Options of {@link runIndexerByNode}. */
export interface IndexerByNodeOptions {
  /** Read this cluster instead of the embedded FakeApiServer (read-only: nothing is moved). */
  kubeConfig?: KubeConfig;
  /** The namespace the namespace lister reads. Default `shop` (embedded) / `kube-system` (cluster). */
  namespace?: string;
  /** The label selector of the namespace lister. Default `tier=frontend` (embedded) / none (cluster). */
  selector?: string;
  /** Where the output lines go. Default `console.log`. */
  log?: (line: string) => void;
}

/** What {@link runIndexerByNode} found. */
export interface IndexerByNodeResult {
  /** `listIndexFuncValues(BY_NODE)`: every node with at least one pod, sorted. */
  nodes: string[];
  /** `byIndex(BY_NODE, node)`: the keys (`namespace/name`) of the pods on each node, sorted. */
  podsByNode: Record<string, string[]>;
  /** `lister.namespace(namespace).list(selector)`: the names of the pods selected, sorted. */
  selected: string[];
  /** Embedded server only: a pod moved from one node to another, and the index followed. */
  move?: {
    key: string;
    from: string;
    to: string;
    /** Inside `onUpdate`, the index already had the pod under its new node (the cache is written first). */
    indexedInHandler: boolean;
    /** `byIndex` of both nodes after the move. */
    after: Record<string, string[]>;
  };
}

/** The embedded server's pods: two namespaces, three nodes, and one pod not scheduled yet. */
export const SEED_PODS: readonly V1Pod[] = [
  pod('shop', 'web-1', 'node-a', { app: 'web', tier: 'frontend' }),
  pod('shop', 'web-2', 'node-b', { app: 'web', tier: 'frontend' }),
  pod('shop', 'cart-1', 'node-a', { app: 'cart', tier: 'backend' }),
  pod('shop', 'db-0', 'node-c', { app: 'db', tier: 'backend' }),
  pod('search', 'web-1', 'node-b', { app: 'search-web', tier: 'frontend' }),
  pod('search', 'indexer-0', 'node-c', { app: 'indexer', tier: 'backend' }),
  pod('search', 'indexer-1', undefined, { app: 'indexer', tier: 'backend' }),
];

function pod(
  namespace: string,
  name: string,
  nodeName: string | undefined,
  labels: Record<string, string>,
): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace, name, labels },
    spec: {
      ...(nodeName === undefined ? {} : { nodeName }),
      containers: [{ name: 'main', image: `example.com/${labels.app ?? name}:1` }],
    },
  };
}

/**
 * Runs the example: syncs a pods informer with the `byNode` index, prints and returns what the
 * index and the lister answer, then (embedded server only) moves a pod to another node and shows
 * the index following. Stops everything it started before it resolves.
 */
export async function runIndexerByNode(options: IndexerByNodeOptions = {}): Promise<IndexerByNodeResult> {
  const log = options.log ?? console.log;
  const embedded = options.kubeConfig === undefined;
  const server = embedded ? await FakeApiServer.start() : undefined;
  if (server) server.createMany('pods', SEED_PODS);
  const kubeConfig = options.kubeConfig ?? server!.kubeConfig();
  const namespace = options.namespace ?? (embedded ? 'shop' : 'kube-system');
  const selector = options.selector ?? (embedded ? 'tier=frontend' : '');

  const factory = new SharedInformerFactory(kubeConfig);
  const stop = new AbortController();
  try {
    // 1. Ask the factory for the pods informer and give it our index (before or after start).
    const { informer, lister } = factory.core.v1.pods();
    informer.addIndexers({ [BY_NODE]: podsByNode });

    factory.start(stop.signal);
    await factory.waitForCacheSync(stop.signal);
    log(`synced ${informer.getStore().size()} pods`);

    // 2. Query the index. `indexer` is read-only: only the informer writes its cache.
    const indexer = informer.getIndexer();
    const nodes = indexer.listIndexFuncValues(BY_NODE).sort();
    const podsPerNode: Record<string, string[]> = {};
    for (const node of nodes) {
      // byIndex returns the cached objects (never mutate them); indexKeys only their keys.
      podsPerNode[node] = indexer.byIndex(BY_NODE, node).map(metaNamespaceKeyFunc).sort();
      log(`${node}: ${podsPerNode[node].join(', ')}`);
    }
    const first = nodes[0];
    if (first !== undefined)
      log(`indexKeys(${BY_NODE}, ${first}) = ${indexer.indexKeys(BY_NODE, first).sort().join(', ')}`);

    // 3. A namespace lister with a label selector: uses the factory's `namespace` index, no full scan.
    const selected = lister
      .namespace(namespace)
      .list(selector)
      .map((p) => p.metadata?.name ?? '')
      .sort();
    log(`pods in ${namespace}${selector ? ` with ${selector}` : ''}: ${selected.join(', ') || '(none)'}`);

    const result: IndexerByNodeResult = { nodes, podsByNode: podsPerNode, selected };
    if (server) result.move = await movePod(server, informer, 'shop/web-1', 'node-c', log);
    return result;
  } finally {
    stop.abort();
    await factory.shutdown();
    await server?.close();
  }
}

/**
 * Moves pod `key` to node `to` on the embedded server and waits (at most 5 s) for the informer's
 * update. On a real cluster `spec.nodeName` of a running pod cannot change (a rescheduled pod is a
 * new pod), but the index follows any update the same way.
 */
async function movePod(
  server: FakeApiServer,
  informer: SharedIndexInformer<V1Pod>,
  key: string,
  to: string,
  log: (line: string) => void,
): Promise<NonNullable<IndexerByNodeResult['move']>> {
  const indexer = informer.getIndexer();
  const from = indexer.getByKey(key)?.spec?.nodeName ?? '';
  let indexedInHandler = false;
  let seen = false;
  const registration = informer.on('update', (oldPod, newPod) => {
    if (metaNamespaceKeyFunc(newPod) !== key || oldPod.spec?.nodeName === newPod.spec?.nodeName) return;
    // The cache (and so every index) is written before handlers are told.
    indexedInHandler = indexer.indexKeys(BY_NODE, to).includes(key);
    log(`onUpdate: ${key} moved ${oldPod.spec?.nodeName ?? '-'} → ${newPod.spec?.nodeName ?? '-'}`);
    seen = true;
  });
  server.patch('pods', key, { spec: { nodeName: to } });
  try {
    await server.waitFor(() => seen); // at most 5 s
  } finally {
    registration.remove();
  }
  const after = {
    [from]: indexer.byIndex(BY_NODE, from).map(metaNamespaceKeyFunc).sort(),
    [to]: indexer.byIndex(BY_NODE, to).map(metaNamespaceKeyFunc).sort(),
  };
  log(`after the move: ${from}: ${after[from]!.join(', ') || '(none)'}; ${to}: ${after[to]!.join(', ')}`);
  return { key, from, to, indexedInHandler, after };
}
