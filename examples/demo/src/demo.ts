/**
 * The demo behind `pnpm demo`: a SharedInformerFactory with a pods informer, a "by node" index and a
 * handler, watching either the embedded FakeApiServer (seeded with a few thousand pods and kept busy by
 * random churn) or a real cluster. Prints a live line of counters and, against the embedded server, a
 * final check of the cache against the server.
 */
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { FakeApiServer } from '@kinformer/testing';
import { SharedInformerFactory, type SharedIndexInformer } from 'kinformer';

export interface DemoOptions {
  /** Watch this cluster instead of the embedded server (no churn, read-only). */
  kubeConfig?: KubeConfig;
  /** Pods to seed on the embedded server. */
  pods?: number;
  /** How long to run, ms (embedded: churn time; cluster: until then or Ctrl-C). */
  durationMs?: number;
  /** Churn operations per second on the embedded server. */
  churnPerSecond?: number;
  /** Also inject faults (dropped watches, 410s, 429s) while churning. */
  chaos?: boolean;
  /** Where the live line and the summary go. */
  out?: NodeJS.WritableStream;
  /** Whether to redraw one live line (a terminal) or print a line per second. */
  tty?: boolean;
  signal?: AbortSignal;
}

export interface DemoSummary {
  adds: number;
  updates: number;
  deletes: number;
  cacheSize: number;
  /** Against the embedded server: whether every key and resourceVersion in the cache matches it. */
  matchesServer?: boolean;
  mismatches: string[];
  faults: number;
}

const NAMESPACES = ['default', 'shop', 'payments', 'search', 'auth', 'batch', 'data', 'edge', 'ml', 'ops'];
const NODES = 50;

export const BY_NODE = 'byNode';

function podFor(i: number, rand: () => number): V1Pod {
  const app = ['web', 'api', 'worker', 'cache', 'db'][i % 5]!;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${app}-${i.toString(36)}`,
      namespace: NAMESPACES[i % NAMESPACES.length]!,
      labels: { app, tier: i % 3 === 0 ? 'frontend' : 'backend' },
    },
    spec: {
      nodeName: `node-${Math.floor(rand() * NODES)}`,
      containers: [{ name: app, image: `registry.example.com/${app}:1.${i % 7}` }],
    },
    status: { phase: 'Running' },
  };
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function runDemo(options: DemoOptions = {}): Promise<DemoSummary> {
  const out = options.out ?? process.stdout;
  const tty = options.tty ?? Boolean((out as { isTTY?: boolean }).isTTY);
  const durationMs = options.durationMs ?? 20_000;
  const rand = mulberry32(42);
  const stop = new AbortController();
  const onOuterAbort = (): void => stop.abort();
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });

  let server: FakeApiServer | undefined;
  let kubeConfig = options.kubeConfig;
  let nextPod = 0;
  const keys: string[] = [];
  const key = (pod: V1Pod): string => `${pod.metadata!.namespace}/${pod.metadata!.name}`;
  if (!kubeConfig) {
    server = await FakeApiServer.start({ recordRequests: false, bookmarkIntervalMs: 5_000 });
    const pods = options.pods ?? 3000;
    for (; nextPod < pods; nextPod++) keys.push(key(server.create('pods', podFor(nextPod, rand))));
    kubeConfig = server.kubeConfig();
    out.write(
      `embedded FakeApiServer at ${server.url} with ${pods} pods in ${NAMESPACES.length} namespaces on ${NODES} nodes\n`,
    );
  } else {
    out.write(`watching pods on ${kubeConfig.getCurrentCluster()?.server ?? 'the current cluster'}\n`);
  }

  // The informer: one per resource per factory, shared by everyone who asks for it.
  const factory = new SharedInformerFactory(kubeConfig);
  const { informer, lister } = factory.core.v1.pods();
  informer.addIndexers({ [BY_NODE]: (pod: V1Pod) => (pod.spec?.nodeName ? [pod.spec.nodeName] : []) });

  const counts = { adds: 0, updates: 0, deletes: 0 };
  informer.addEventHandler({
    onAdd: () => void counts.adds++,
    onUpdate: () => void counts.updates++,
    onDelete: () => void counts.deletes++,
  });

  factory.start(stop.signal);
  const t0 = Date.now();
  await factory.waitForCacheSync(stop.signal);
  out.write(`cache synced in ${Date.now() - t0} ms: ${informer.getStore().size()} pods\n`);

  // Churn on the embedded server: creates, updates (label and node changes) and deletes.
  let faults = 0;
  let churn: NodeJS.Timeout | undefined;
  if (server) {
    const srv = server;
    const perTick = Math.max(1, Math.round((options.churnPerSecond ?? 400) / 20));
    let tick = 0;
    churn = setInterval(() => {
      tick++;
      for (let k = 0; k < perTick; k++) {
        const r = rand();
        const i = Math.floor(rand() * keys.length);
        if (r < 0.3 || keys.length === 0) {
          keys.push(key(srv.create('pods', podFor(nextPod++, rand))));
        } else if (r < 0.85) {
          srv.patch('pods', keys[i]!, {
            metadata: { labels: { revision: String(tick) } },
            spec: rand() < 0.2 ? { nodeName: `node-${Math.floor(rand() * NODES)}` } : {},
          });
        } else {
          srv.delete('pods', keys[i]!);
          keys[i] = keys[keys.length - 1]!;
          keys.pop();
        }
      }
      if (options.chaos && tick % 40 === 0) {
        // Each fault cuts the open watches; what the informer finds when it comes back differs.
        const which = faults++ % 3;
        if (which === 1) srv.faults.compact(); // history gone: 410 Gone, so it relists
        if (which === 2)
          srv.faults.failNext({ count: 1, status: 429, retryAfterSeconds: 1, verbs: ['watch'] }); // waits, rewatches
        srv.faults.dropWatches();
      }
    }, 50);
  }

  // The live line.
  let last = { at: Date.now(), events: 0 };
  const render = (): string => {
    const events = counts.adds + counts.updates + counts.deletes;
    const now = Date.now();
    const rate = ((events - last.events) * 1000) / Math.max(1, now - last.at);
    last = { at: now, events };
    const busiest = lister
      .list()
      .reduce<Map<string, number>>(
        (m, p) => m.set(p.spec?.nodeName ?? '-', (m.get(p.spec?.nodeName ?? '-') ?? 0) + 1),
        new Map(),
      );
    const top = [...busiest].sort((a, b) => b[1] - a[1])[0];
    return `adds ${counts.adds}  updates ${counts.updates}  deletes ${counts.deletes}  cache ${informer.getStore().size()}  ${rate.toFixed(0)} ev/s  busiest ${top ? `${top[0]} (${informer.getIndexer().byIndex(BY_NODE, top[0]).length})` : '-'}`;
  };
  const live = setInterval(() => out.write(tty ? `\r\x1b[2K${render()}` : `${render()}\n`), tty ? 250 : 1000);

  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, durationMs);
    stop.signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
  if (churn) clearInterval(churn);
  clearInterval(live);
  if (tty) out.write(`\r\x1b[2K${render()}\n`);

  const summary: DemoSummary = { ...counts, cacheSize: informer.getStore().size(), mismatches: [], faults };
  if (server) {
    summary.matchesServer = await settle(server, informer, summary.mismatches);
    out.write(
      summary.matchesServer
        ? `✓ the cache matches the server: ${summary.cacheSize} pods, same keys and resourceVersions (${faults} faults injected)\n`
        : `✗ the cache differs from the server: ${summary.mismatches.slice(0, 5).join('; ')}\n`,
    );
  }
  const r = informer.reflectorStats();
  if (r)
    out.write(
      `reflector: ${r.lists} lists (${r.relists} relists), ${r.watchStarts} watches (${r.watchRestarts} restarts), ${r.expired410} × 410, ${r.events} events, ${r.bookmarks} bookmarks\n`,
    );
  stop.abort();
  options.signal?.removeEventListener('abort', onOuterAbort);
  await factory.shutdown();
  await server?.close();
  out.write(`adds ${counts.adds}, updates ${counts.updates}, deletes ${counts.deletes}\n`);
  return summary;
}

/** Waits (bounded) until the informer has caught up with the server, then compares them. */
async function settle(
  server: FakeApiServer,
  informer: SharedIndexInformer<V1Pod>,
  mismatches: string[],
): Promise<boolean> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    mismatches.length = 0;
    const want = new Map(
      server
        .list<V1Pod>('pods')
        .map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p.metadata.resourceVersion]),
    );
    const store = informer.getStore();
    for (const [key, rv] of want) {
      const got = store.getByKey(key)?.metadata?.resourceVersion;
      if (got !== rv) mismatches.push(`${key}: cache ${got ?? 'missing'}, server ${rv}`);
    }
    for (const key of store.listKeys())
      if (!want.has(key)) mismatches.push(`${key}: in cache, not on server`);
    if (mismatches.length === 0) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}
