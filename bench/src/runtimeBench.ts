/**
 * `pnpm bench:runtime`: the controller runtime's goals of issue 24, side by side in one run against
 * one in-process FakeApiServer holding 10,000 ConfigMaps.
 *
 * - **Throughput**: a no-op reconciler at concurrency 4; the time from "cache synced" to "every key
 *   reconciled once". Contenders: the runtime's `Manager`; the floor — a kinformer informer feeding a
 *   hand-written `RateLimitingQueue` with 4 workers; client-node's `makeInformer` feeding a plain
 *   array with 4 workers.
 * - **Priority**: the same 10,000 objects in the initial list, a reconcile that takes `--reconcile-ms`
 *   (a timer, default 1 ms) at concurrency 4, and one object changed mid-drain (after 20 % of the
 *   initial keys ran): the latency from that write to the start of its reconcile seeing it. With the
 *   runtime's priorities (initial-list keys low, changes normal), through the Manager and through a
 *   `ReconcileQueue` directly; and without (every add at one priority, the same `ReconcileQueue`).
 *
 * Options: --objects 10000  --rounds 5  --reconcile-ms 1  --no-write (leave docs/performance.md alone)
 */
import { performance } from 'node:perf_hooks';
import { CoreV1Api, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import {
  InformerFactory,
  kinds,
  kubeConfigListerWatchers,
  Manager,
  PRIORITY_LOW,
  PRIORITY_NORMAL,
  RateLimitingQueue,
  ReconcileQueue,
  waitForCacheSync,
} from 'kinformer';
import type { KubeObject, Reconciler } from 'kinformer';
import { FakeApiServer } from '@kinformer/testing';
import { benchKubeConfig } from './benchKubeConfig.js';
import { fmt, machineLine, median, replaceSection } from './report.js';

const args = process.argv.slice(2).filter((a) => a !== '--');
function opt(name: string, dflt: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : dflt;
}
const OBJECTS = Number(opt('objects', '10000'));
const ROUNDS = Number(opt('rounds', '5'));
const RECONCILE_MS = Number(opt('reconcile-ms', '1'));
const WRITE = !args.includes('--no-write');
const CONCURRENCY = 4;
const MID = Math.floor(OBJECTS * 0.2);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const keyOf = (o: KubeObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

interface Throughput {
  /** From "cache synced" to every key reconciled once, ms. */
  drainMs: number;
  /** From start to every key reconciled once, ms. */
  totalMs: number;
}

// ---------------------------------------------------------------------------------------------
// Throughput contenders.

/** A Manager with one controller of CONCURRENCY workers over the server's ConfigMaps. */
function configMapManager(server: FakeApiServer, reconcile: Reconciler<V1ConfigMap>): Manager {
  const mgr = new Manager(server.kubeConfig(), { gracefulShutdownMs: 1_000 });
  mgr.controller('bench').for(kinds.configMaps).concurrency(CONCURRENCY).reconcile(reconcile);
  return mgr;
}

async function managerThroughput(server: FakeApiServer): Promise<Throughput> {
  let done = 0;
  let allAt = 0;
  let resolveAll!: () => void;
  const all = new Promise<void>((resolve) => (resolveAll = resolve));
  const mgr = configMapManager(server, () => {
    if (++done === OBJECTS) {
      allAt = performance.now();
      resolveAll();
    }
  });
  const { informer } = mgr.informer(kinds.configMaps);
  const stop = new AbortController();
  const t0 = performance.now();
  const run = mgr.start(stop.signal);
  await waitForCacheSync(stop.signal, informer.hasSynced);
  const syncedAt = performance.now();
  await all;
  stop.abort();
  await run;
  return { drainMs: allAt - syncedAt, totalMs: allAt - t0 };
}

async function floorThroughput(server: FakeApiServer): Promise<Throughput> {
  const factory = new InformerFactory(kubeConfigListerWatchers(server.kubeConfig()));
  const { informer } = factory.forResource(kinds.configMaps);
  const queue = new RateLimitingQueue<string>();
  informer.addEventHandler({
    onAdd: (o) => queue.add(keyOf(o)),
    onUpdate: (_old, o) => queue.add(keyOf(o)),
    onDelete: () => undefined,
  });
  const stop = new AbortController();
  const t0 = performance.now();
  factory.start(stop.signal);
  await waitForCacheSync(stop.signal, informer.hasSynced);
  const syncedAt = performance.now();
  let done = 0;
  let allAt = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const { item: key, shutdown } = await queue.get();
      if (shutdown) return;
      queue.forget(key);
      queue.done(key);
      if (++done === OBJECTS) {
        allAt = performance.now();
        queue.shutdown();
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  stop.abort();
  await factory.shutdown();
  return { drainMs: allAt - syncedAt, totalMs: allAt - t0 };
}

async function clientNodeThroughput(server: FakeApiServer): Promise<Throughput> {
  const kc = benchKubeConfig(server.url);
  const api = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer<V1ConfigMap>(kc, '/api/v1/configmaps', () =>
    api.listConfigMapForAllNamespaces(),
  );
  const queue: string[] = [];
  const queued = new Set<string>();
  const waiters: Array<() => void> = [];
  const wakeAll = (): void => {
    for (const w of waiters.splice(0)) w();
  };
  const push = (o: V1ConfigMap): void => {
    const key = keyOf(o);
    if (queued.has(key)) return;
    queued.add(key);
    queue.push(key);
    waiters.shift()?.();
  };
  informer.on('add', push);
  informer.on('update', push);
  const t0 = performance.now();
  await informer.start();
  const syncedAt = performance.now();
  let done = 0;
  let allAt = 0;
  let head = 0;
  const worker = async (): Promise<void> => {
    while (done < OBJECTS) {
      if (head >= queue.length) {
        await new Promise<void>((resolve) => waiters.push(resolve));
        continue;
      }
      const key = queue[head++]!;
      queued.delete(key);
      await Promise.resolve(); // the no-op reconcile
      if (++done === OBJECTS) allAt = performance.now();
    }
    wakeAll();
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await informer.stop();
  return { drainMs: allAt - syncedAt, totalMs: allAt - t0 };
}

// ---------------------------------------------------------------------------------------------
// Priority: latency of a change made mid-drain.

/**
 * Changes an object that has not been reconciled yet, at a pseudo-random place in what is left of the
 * queue (the server lists in name order, which is the queue's order); returns its key, rv and time.
 */
function changeOne(
  server: FakeApiServer,
  reconciled: Set<string>,
  round: number,
): { key: string; rv: string; at: number } {
  const left: string[] = [];
  for (let i = 0; i < OBJECTS; i++) if (!reconciled.has(`default/cm-${i}`)) left.push(`cm-${i}`);
  const name = left[(round * 7919 + 4513) % left.length]!;
  const at = performance.now();
  const rv = server.patch(kinds.configMaps, name, { data: { round: String(round) } }).metadata
    .resourceVersion!;
  return { key: `default/${name}`, rv, at };
}

async function managerPriority(server: FakeApiServer, round: number): Promise<number> {
  const reconciled = new Set<string>();
  let target: { key: string; rv: string; at: number } | undefined;
  let latency: number | undefined;
  let resolveSeen!: () => void;
  const seen = new Promise<void>((resolve) => (resolveSeen = resolve));
  const mgr = configMapManager(server, async (ctx) => {
    if (
      target !== undefined &&
      ctx.key === target.key &&
      ctx.object?.metadata?.resourceVersion === target.rv
    ) {
      latency ??= performance.now() - target.at;
      resolveSeen();
    }
    reconciled.add(ctx.key);
    if (reconciled.size === MID && target === undefined) target = changeOne(server, reconciled, round);
    await sleep(RECONCILE_MS);
  });
  const stop = new AbortController();
  const run = mgr.start(stop.signal);
  await seen;
  stop.abort();
  await run;
  return latency!;
}

async function queuePriority(server: FakeApiServer, round: number, withPriority: boolean): Promise<number> {
  const factory = new InformerFactory(kubeConfigListerWatchers(server.kubeConfig()));
  const { informer } = factory.forResource(kinds.configMaps);
  const queue = new ReconcileQueue();
  const low = withPriority ? PRIORITY_LOW : PRIORITY_NORMAL;
  const registration = informer.addEventHandler({
    onAdd: (o, initial) => queue.add(keyOf(o), { priority: initial ? low : PRIORITY_NORMAL }),
    onUpdate: (_old, o) => queue.add(keyOf(o), { priority: PRIORITY_NORMAL }),
    onDelete: (o) => queue.add(keyOf(o as KubeObject), { priority: PRIORITY_NORMAL }),
  });
  const stop = new AbortController();
  factory.start(stop.signal);
  // As the Manager does: workers start once the handler has seen the whole initial list (else the
  // change waits in the handler's buffer behind the initial adds still being delivered).
  await waitForCacheSync(stop.signal, registration.hasSynced);
  const reconciled = new Set<string>();
  let target: { key: string; rv: string; at: number } | undefined;
  let latency: number | undefined;
  const worker = async (): Promise<void> => {
    for (;;) {
      const item = await queue.get();
      if (item === undefined) return;
      const obj = informer.getIndexer().getByKey(item.key);
      if (target !== undefined && item.key === target.key && obj?.metadata?.resourceVersion === target.rv) {
        latency ??= performance.now() - target.at;
        queue.shutdown();
      }
      reconciled.add(item.key);
      if (reconciled.size === MID && target === undefined) target = changeOne(server, reconciled, round);
      await sleep(RECONCILE_MS);
      queue.done(item.key);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  stop.abort();
  await factory.shutdown();
  return latency!;
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const server = await FakeApiServer.start({ recordRequests: false });
  server.createMany(
    kinds.configMaps,
    Array.from({ length: OBJECTS }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${i}`, namespace: 'default', labels: { app: 'bench' } },
      data: { v: String(i) },
    })),
  );
  console.log(
    `runtime bench: ${OBJECTS} ConfigMaps, concurrency ${CONCURRENCY}, ${ROUNDS} rounds; ${machineLine()}`,
  );

  const throughput: Record<string, Throughput[]> = {
    'runtime Manager': [],
    'floor: informer + RateLimitingQueue': [],
    'client-node makeInformer + array': [],
  };
  for (let r = 0; r < ROUNDS; r++) {
    throughput['runtime Manager']!.push(await managerThroughput(server));
    throughput['floor: informer + RateLimitingQueue']!.push(await floorThroughput(server));
    throughput['client-node makeInformer + array']!.push(await clientNodeThroughput(server));
    console.log(
      `throughput round ${r + 1}:`,
      Object.entries(throughput)
        .map(([n, xs]) => `${n} ${fmt(xs.at(-1)!.drainMs)} ms`)
        .join('; '),
    );
  }
  const priority: Record<string, number[]> = {
    'runtime Manager (priority)': [],
    'ReconcileQueue, priority': [],
    'ReconcileQueue, one priority': [],
  };
  for (let r = 0; r < ROUNDS; r++) {
    priority['runtime Manager (priority)']!.push(await managerPriority(server, r));
    priority['ReconcileQueue, priority']!.push(await queuePriority(server, r, true));
    priority['ReconcileQueue, one priority']!.push(await queuePriority(server, r, false));
    console.log(
      `priority round ${r + 1}:`,
      Object.entries(priority)
        .map(([n, xs]) => `${n} ${fmt(xs.at(-1))} ms`)
        .join('; '),
    );
  }
  await server.close();

  const lines: string[] = [];
  lines.push(
    `Measured ${new Date().toISOString().slice(0, 16)}Z; ${machineLine()}; ${OBJECTS} ConfigMaps on an in-process FakeApiServer, concurrency ${CONCURRENCY}, ${ROUNDS} rounds. The machine was shared with other jobs: read the figures as ratios more than absolutes.`,
  );
  lines.push('');
  lines.push('**Throughput** (no-op reconcile): cache synced → every key reconciled once.');
  lines.push('');
  lines.push(
    '| contender | synced → all reconciled, median (ms) | min–max (ms) | start → all, median (ms) |',
  );
  lines.push('| --- | ---: | ---: | ---: |');
  for (const [name, rs] of Object.entries(throughput)) {
    const d = rs.map((x) => x.drainMs);
    lines.push(
      `| ${name} | ${fmt(median(d))} | ${fmt(Math.min(...d))}–${fmt(Math.max(...d))} | ${fmt(median(rs.map((x) => x.totalMs)))} |`,
    );
  }
  lines.push('');
  lines.push(
    `**Priority** (reconcile ${RECONCILE_MS} ms on a timer): one object changed after ${MID} of the initial keys ran; latency from the write to its reconcile.`,
  );
  lines.push('');
  lines.push('| queue | p50 (ms) | p99 (ms) | max (ms) |');
  lines.push('| --- | ---: | ---: | ---: |');
  for (const [name, xs] of Object.entries(priority)) {
    lines.push(
      `| ${name} | ${fmt(percentile(xs, 50))} | ${fmt(percentile(xs, 99))} | ${fmt(Math.max(...xs))} |`,
    );
  }
  const mgrDrain = median(throughput['runtime Manager']!.map((x) => x.drainMs));
  const mgrP99 = percentile(priority['runtime Manager (priority)']!, 99);
  lines.push('');
  lines.push(
    `Goals: throughput ≤ 1,000 ms — ${fmt(mgrDrain)} ms ${mgrDrain <= 1000 ? '✓' : '✗ (missed)'}; priority p99 ≤ 1,000 ms — ${fmt(mgrP99)} ms ${mgrP99 <= 1000 ? '✓' : '✗ (missed)'}.`,
  );
  const body = lines.join('\n');
  console.log(`\n${body}\n`);
  if (WRITE) replaceSection('runtime-bench', body);
}

await main();
