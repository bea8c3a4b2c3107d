/**
 * The demo behind `pnpm demo`: a SharedInformerFactory with a pods informer, a "by node" index and a
 * handler, watching either the embedded FakeApiServer (seeded with a few thousand pods and kept busy by
 * random churn, with a fault every two seconds) or a real cluster. Prints a live line of counters, the
 * current delivery lag and the last fault and, against the embedded server, a final check of the
 * cache against the server.
 */
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { FakeApiServer } from '@kinformer/testing';
import { prng } from '@kinformer/test-tools';
import {
  DeletedFinalStateUnknown,
  isKinformerError,
  SharedInformerFactory,
  type SharedIndexInformer,
} from 'kinformer';
import { firstLine } from './firstLine.js';
import { DeliveryLag, formatMs } from './deliveryLag.js';

export interface DemoOptions {
  /** Watch this cluster instead of the embedded server (no churn, read-only). */
  kubeConfig?: KubeConfig;
  /** Pods to seed on the embedded server. Default 3000. */
  pods?: number;
  /** How long to run after the first sync, ms (embedded: churn time; cluster: until then or Ctrl-C). Default 20 s. */
  durationMs?: number;
  /** Churn operations per second on the embedded server. Default 400. */
  churnPerSecond?: number;
  /** Also inject faults (dropped watches, 410s, 429s) while churning, one every 2 s. Default true. */
  chaos?: boolean;
  /** Give up when the first sync takes longer, ms. Default 30 s. */
  syncTimeoutMs?: number;
  /** How long the final check waits for the cache to equal the server, ms. Default 10 s. */
  settleTimeoutMs?: number;
  /** Where the live line and the summary go. */
  out?: NodeJS.WritableStream;
  /** Whether to redraw one live line (a terminal) or print a line per second. */
  tty?: boolean;
  /** Ctrl-C: before the first sync it stops at once ("not synced"); later it ends the run early. */
  signal?: AbortSignal;
}

export interface DemoSummary {
  /** Whether the first sync completed (false: interrupted, timed out, or refused by the server). */
  synced: boolean;
  /** Why it did not sync, one line (absent when it synced). */
  notSyncedReason?: string;
  adds: number;
  updates: number;
  deletes: number;
  cacheSize: number;
  /** Against the embedded server: whether every key and resourceVersion in the cache matches it. */
  matchesServer?: boolean;
  /** How long the final check waited until the cache equalled the server (or gave up), ms. */
  settleMs?: number;
  mismatches: string[];
  /** Faults injected, by kind. */
  faults: number;
  faultKinds: Record<string, number>;
  /** Embedded server: delivery lag of the demo's writes, ms (server write → handler). */
  lag?: { writes: number; p50: number; p99: number; max: number };
  /** Whether the run was cut short by the signal. */
  interrupted: boolean;
}

const NAMESPACES = ['default', 'shop', 'payments', 'search', 'auth', 'batch', 'data', 'edge', 'ml', 'ops'];
const NODES = 50;
/** A fault every 2 s of wall time (not every n ticks: on a loaded machine ticks come late). */
const FAULT_EVERY_MS = 2_000;

export const BY_NODE = 'byNode';

/** The faults the demo injects, in turn. */
export const FAULT_KINDS = ['dropped watch', '410 after compaction', '429 Retry-After 1 s'] as const;

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

const podKey = (pod: V1Pod): string => `${pod.metadata!.namespace}/${pod.metadata!.name}`;

/** Resolves after `ms`, or at once when `signal` aborts (also when it already has). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** On a cluster: how old the newest managedFields entry is (second resolution), ms. */
function managedFieldsAge(pod: V1Pod): number | undefined {
  let newest: number | undefined;
  for (const f of pod.metadata?.managedFields ?? []) {
    const t = f.time === undefined ? NaN : new Date(f.time).getTime();
    if (Number.isFinite(t) && (newest === undefined || t > newest)) newest = t;
  }
  return newest === undefined ? undefined : Math.max(0, Date.now() - newest);
}

export async function runDemo(options: DemoOptions = {}): Promise<DemoSummary> {
  const out = options.out ?? process.stdout;
  const tty = options.tty ?? Boolean((out as { isTTY?: boolean }).isTTY);
  const durationMs = options.durationMs ?? 20_000;
  const signal = options.signal ?? new AbortController().signal;
  const rand = prng(42); // seeded: the same churn on every run;
  const stop = new AbortController();
  const summary: DemoSummary = {
    synced: false,
    adds: 0,
    updates: 0,
    deletes: 0,
    cacheSize: 0,
    mismatches: [],
    faults: 0,
    faultKinds: {},
    interrupted: false,
  };

  let server: FakeApiServer | undefined;
  let kubeConfig = options.kubeConfig;
  let nextPod = 0;
  const keys: string[] = [];
  const lag = new DeliveryLag();
  if (!kubeConfig) {
    server = await FakeApiServer.start({ recordRequests: false, bookmarkIntervalMs: 5_000 });
    const pods = options.pods ?? 3000;
    for (; nextPod < pods; nextPod++) keys.push(podKey(server.create('pods', podFor(nextPod, rand))));
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

  // What went wrong last: an injected fault (embedded) or a list/watch error (either).
  let lastFault: { what: string; at: number } | undefined;
  let lastError: { what: string; at: number } | undefined;
  let reportedRetry = false;
  informer.setWatchErrorHandler((_reflector, error) => {
    lastError = { what: firstLine(error), at: Date.now() };
    if (!summary.synced && !reportedRetry) {
      reportedRetry = true;
      out.write(`cannot list pods yet: ${lastError.what} — retrying (Ctrl-C to stop)\n`);
    }
  });

  let clusterLag: { ms: number; at: number } | undefined;
  const noteClusterLag = (pod: V1Pod): void => {
    const ms = managedFieldsAge(pod);
    if (ms !== undefined) clusterLag = { ms, at: Date.now() };
  };
  informer.addEventHandler({
    onAdd: (pod, isInInitialList) => {
      summary.adds++;
      if (server) lag.saw(podKey(pod), pod.metadata?.resourceVersion);
      else if (!isInInitialList) noteClusterLag(pod);
    },
    onUpdate: (_old, pod) => {
      summary.updates++;
      if (server) lag.saw(podKey(pod), pod.metadata?.resourceVersion);
      else noteClusterLag(pod);
    },
    onDelete: (pod) => {
      summary.deletes++;
      if (server) lag.sawDeleted(pod instanceof DeletedFinalStateUnknown ? pod.key : podKey(pod));
    },
  });

  const onAbort = (): void => stop.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  if (signal.aborted) stop.abort();
  try {
    factory.start(stop.signal);

    // Stage 1: the first sync, bounded, interruptible.
    const t0 = Date.now();
    const syncWait = AbortSignal.any([stop.signal, AbortSignal.timeout(options.syncTimeoutMs ?? 30_000)]);
    try {
      await factory.waitForCacheSync(syncWait);
    } catch (err) {
      summary.notSyncedReason = firstLine(isKinformerError(err) && err.cause ? err.cause : err);
    }
    summary.synced = informer.hasSynced();
    if (!summary.synced) {
      summary.interrupted = stop.signal.aborted;
      summary.notSyncedReason ??= stop.signal.aborted
        ? 'interrupted'
        : `no answer after ${formatMs(Date.now() - t0)}${lastError ? `: ${lastError.what}` : ''}`;
      out.write(`✗ not synced (${summary.notSyncedReason})\n`);
      return summary;
    }
    out.write(`cache synced in ${Date.now() - t0} ms: ${informer.getStore().size()} pods\n`);

    // Stage 2: churn (embedded) and the live line, until the duration is up or Ctrl-C.
    const churn = server
      ? startChurn({
          server,
          churnPerSecond: options.churnPerSecond ?? 400,
          chaos: options.chaos ?? true,
          rand,
          keys,
          nextPod: () => nextPod++,
          lag,
          summary,
          onFault: (fault) => (lastFault = fault),
        })
      : undefined;
    let last = { at: Date.now(), events: 0 };
    const render = (): string => {
      const events = summary.adds + summary.updates + summary.deletes;
      const now = Date.now();
      const rate = ((events - last.events) * 1000) / Math.max(1, now - last.at);
      last = { at: now, events };
      const byNode = new Map<string, number>();
      for (const p of lister.list())
        byNode.set(p.spec?.nodeName ?? '-', (byNode.get(p.spec?.nodeName ?? '-') ?? 0) + 1);
      const top = [...byNode].sort((a, b) => b[1] - a[1])[0];
      const busiest = top ? `${top[0]} (${informer.getIndexer().byIndex(BY_NODE, top[0]).length})` : '-';
      const lagText = server
        ? formatMs(lag.current())
        : clusterLag && now - clusterLag.at < 10_000
          ? `~${formatMs(clusterLag.ms)}`
          : '-';
      const fault = server ? lastFault : lastError;
      const faultText = fault ? `${fault.what} ${formatMs(now - fault.at)} ago` : 'none';
      return `adds ${summary.adds}  updates ${summary.updates}  deletes ${summary.deletes}  cache ${informer.getStore().size()}  ${rate.toFixed(0)} ev/s  lag ${lagText}  last fault: ${faultText}  busiest ${busiest}`;
    };
    const live = setInterval(
      () => out.write(tty ? `\r\x1b[2K${render()}` : `${render()}\n`),
      tty ? 250 : 1000,
    );
    await sleep(durationMs, stop.signal);
    summary.interrupted = stop.signal.aborted;
    churn?.stop();
    clearInterval(live);
    if (tty) out.write(`\r\x1b[2K${render()}\n`);

    // Stage 3 (embedded): wait, bounded, until the cache equals the server.
    if (server) {
      const t1 = Date.now();
      summary.matchesServer = await settle(
        server,
        informer,
        summary.mismatches,
        options.settleTimeoutMs ?? 10_000,
      );
      summary.settleMs = Date.now() - t1;
      summary.lag = lag.summary();
      const faults = Object.entries(summary.faultKinds)
        .map(([k, n]) => `${n} × ${k}`)
        .join(', ');
      out.write(
        summary.matchesServer
          ? `✓ the cache matches the server after ${formatMs(summary.settleMs)}: ${informer.getStore().size()} pods, same keys and resourceVersions (${summary.faults} faults injected${faults ? `: ${faults}` : ''})\n`
          : `✗ the cache differs from the server after ${formatMs(summary.settleMs)} (${summary.mismatches.length} differences, ${summary.faults} faults injected): ${summary.mismatches.slice(0, 3).join('; ')}\n`,
      );
      out.write(
        `delivery lag (server write → handler): p50 ${formatMs(summary.lag.p50)}, p99 ${formatMs(summary.lag.p99)}, max ${formatMs(summary.lag.max)} over ${summary.lag.writes} writes\n`,
      );
    }
    const r = informer.reflectorStats();
    if (r)
      out.write(
        `reflector: ${r.lists} lists (${r.relists} relists), ${r.watchStarts} watches (${r.watchRestarts} restarts), ${r.expired410} × 410, ${r.events} events, ${r.bookmarks} bookmarks\n`,
      );
    out.write(`adds ${summary.adds}, updates ${summary.updates}, deletes ${summary.deletes}\n`);
    return summary;
  } finally {
    summary.cacheSize = informer.getStore().size();
    stop.abort();
    signal.removeEventListener('abort', onAbort);
    await factory.shutdown();
    await server?.close();
  }
}

/** Creates, updates (label and node changes) and deletes pods every 50 ms; with chaos, a fault every 2 s. */
function startChurn(o: {
  server: FakeApiServer;
  churnPerSecond: number;
  chaos: boolean;
  rand: () => number;
  /** The keys of the pods on the server (churn picks from them). */
  keys: string[];
  nextPod: () => number;
  lag: DeliveryLag;
  summary: DemoSummary;
  onFault: (fault: { what: string; at: number }) => void;
}): { stop(): void } {
  const { server: srv, rand, keys, lag, summary } = o;
  const perTick = Math.max(1, Math.round(o.churnPerSecond / 20));
  let tick = 0;
  let nextFaultAt = Date.now() + FAULT_EVERY_MS;
  const timer = setInterval(() => {
    tick++;
    for (let k = 0; k < perTick; k++) {
      const r = rand();
      const i = Math.floor(rand() * keys.length);
      if (r < 0.3 || keys.length === 0) {
        const pod = srv.create('pods', podFor(o.nextPod(), rand));
        keys.push(podKey(pod));
        lag.wrote(podKey(pod), pod.metadata.resourceVersion);
      } else if (r < 0.85) {
        const pod = srv.patch<V1Pod>('pods', keys[i]!, {
          metadata: { labels: { revision: String(tick) } },
          spec: rand() < 0.2 ? { nodeName: `node-${Math.floor(rand() * NODES)}` } : {},
        });
        lag.wrote(keys[i]!, pod.metadata.resourceVersion);
      } else {
        const pod = srv.delete<V1Pod>('pods', keys[i]!);
        lag.wrote(keys[i]!, pod.metadata.resourceVersion);
        keys[i] = keys[keys.length - 1]!;
        keys.pop();
      }
    }
    if (o.chaos && Date.now() >= nextFaultAt) {
      nextFaultAt += FAULT_EVERY_MS;
      // Each fault cuts the open watches; what the informer finds when it comes back differs.
      const what = FAULT_KINDS[summary.faults++ % FAULT_KINDS.length]!;
      summary.faultKinds[what] = (summary.faultKinds[what] ?? 0) + 1;
      if (what === '410 after compaction') srv.faults.compact(); // history gone: 410 Gone, so it relists
      if (what === '429 Retry-After 1 s')
        srv.faults.failNext({ count: 1, status: 429, retryAfterSeconds: 1, verbs: ['watch'] }); // waits, rewatches
      srv.faults.dropWatches();
      o.onFault({ what, at: Date.now() });
    }
  }, 50);
  return { stop: () => clearInterval(timer) };
}

/** Waits (bounded, polling every 50 ms) until the informer has caught up with the server, then says whether it did. */
async function settle(
  server: FakeApiServer,
  informer: SharedIndexInformer<V1Pod>,
  mismatches: string[],
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
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
