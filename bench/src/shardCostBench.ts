/**
 * `pnpm bench:shard-cost`: what one replica of a hash-sharded Manager (`hashSharding`) costs next to a
 * single unsharded one, on the issue's fixture: 30,000 custom resources (`widgets.example.com`), each
 * the controller owner of 2 ConfigMaps (60,000 owned objects). The controller is
 * `for(widgets).owns(configMaps)`; its reconciler does nothing.
 *
 * The parent runs FakeApiServer; every contender runs in its own `node --expose-gc` process behind a
 * byte-counting TCP proxy and reports its heap after GC once settled (the single replica: synced; the
 * sharded ones: all three members seen, every held range active, unchanged for 3 s), minus its heap
 * after GC before starting. The three sharded replicas start one after another (a joiner takes only
 * its share, as in a rolling start), so the first one listed every range before handing two thirds
 * off: its bytes include that, the last joiner's are the steady-state share. Owned objects are cached
 * by every replica (metadata only): KEP-5866 cannot filter by owner.
 * Usage: `node --expose-gc bench/dist/shardCostBench.js [widgets=30000] [owned-per-widget=2]`.
 */
import { fork } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '@kinformer/core';
import { defineKind, kinds, Manager, setControllerReference } from '@kinformer/runtime';
import type { Kind } from '@kinformer/runtime';
import { FakeApiServer } from '@kinformer/testing';
import { benchKubeConfig } from './benchKubeConfig.js';
import { countingProxy } from './shardCountingProxy.js';
import { gcHeap } from './heap.js';

type Mode = 'single' | 'sharded';

interface ChildResult {
  mode: Mode;
  replica: number;
  heapBytes: number;
  widgets: number;
  owned: number;
  ranges: number;
  settleMs: number;
}

const widgets = defineKind({ group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' });
const NAMESPACES = 30;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function child(
  url: string,
  mode: Mode,
  replica: number,
  total: number,
  perWidget: number,
): Promise<void> {
  const before = gcHeap();
  const started = performance.now();
  const mgr = new Manager(benchKubeConfig(url), {
    name: `cost-${replica}`,
    gracefulShutdownMs: 1_000,
    ...(mode === 'sharded'
      ? { hashSharding: { name: 'cost', namespace: 'default', identity: `r${replica}` } }
      : {}),
  });
  mgr
    .controller('widgets')
    .for(widgets)
    .owns(kinds.configMaps)
    .reconcile(() => undefined);
  const stop = new AbortController();
  const run = mgr.start(stop.signal);
  const synced = (): boolean => mgr.readyChecks()[1]!.check() === undefined;
  let stableSince = 0;
  let last = '';
  for (;;) {
    await sleep(100);
    if (!synced()) continue;
    if (mode === 'single') break;
    const s = mgr.hashShard()!;
    const now = `${s.members.join(',')}|${s.held.join(',')}|${s.active.join(',')}`;
    const settled =
      s.members.length === replica + 1 && s.active.length === s.held.length && s.held.length > 0;
    if (!settled || now !== last) {
      last = now;
      stableSince = performance.now();
      continue;
    }
    if (performance.now() - stableSince > 3_000) break;
  }
  const settleMs = performance.now() - started;
  // Tell the parent; it says when to measure (after the later joiners settled: a replica's share shrinks).
  process.send!({ type: 'settled' });
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  // Settle again (the later joiners took ranges from this one).
  for (let stable = 0; stable < 30;) {
    await sleep(100);
    const s = mgr.hashShard();
    stable = s === undefined || (s.active.length === s.held.length && synced()) ? stable + 1 : 0;
  }
  const heap = gcHeap() - before;
  const result: ChildResult = {
    mode,
    replica,
    heapBytes: heap,
    widgets: countCached(mgr, widgets, total, 1),
    // Owned ConfigMaps sit in a metadata-only informer, unsharded: every replica caches all of them.
    owned: total * perWidget,
    ranges: mgr.hashShard()?.held.length ?? 16,
    settleMs,
  };
  process.send!({ type: 'result', result });
  // Stay until every contender measured: a leave now would hand this replica's ranges to the others.
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  stop.abort();
  await run.catch(() => undefined);
  process.exit(0);
}

/** How many of the fixture's objects the Manager has in its cache (`get` of every key). */
function countCached(mgr: Manager, kind: Kind, n: number, per: number): number {
  let cached = 0;
  for (let i = 0; i < n; i++) {
    const w = Math.floor(i / per);
    const name = kind === widgets ? `widget-${w}` : `widget-${w}-${i % per}`;
    if (mgr.get(kind, `ns-${w % NAMESPACES}/${name}`) !== undefined) cached++;
  }
  return cached;
}

interface Running {
  settled: Promise<void>;
  result: Promise<ChildResult>;
  measure: () => void;
  exit: () => void;
}

function startChild(url: string, mode: Mode, replica: number, total: number, perWidget: number): Running {
  const p = fork(
    fileURLToPath(import.meta.url),
    ['child', url, mode, String(replica), String(total), String(perWidget)],
    {
      execArgv: ['--expose-gc'],
      env: { ...process.env, NODE_ENV: 'production', KINFORMER_LOG_LEVEL: 'error' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  let settle!: () => void;
  let resolve!: (r: ChildResult) => void;
  let reject!: (e: Error) => void;
  const settled = new Promise<void>((r) => (settle = r));
  const result = new Promise<ChildResult>((res, rej) => ((resolve = res), (reject = rej)));
  p.on('message', (m: { type: string; result?: ChildResult }) => {
    if (m.type === 'settled') settle();
    if (m.type === 'result') resolve(m.result!);
  });
  p.once('exit', (code) => reject(new Error(`contender ${mode}/${replica} exited ${code}`)));
  return { settled, result, measure: () => p.send('measure'), exit: () => p.send('exit') };
}

const mb = (n: number): string => (n / 1024 / 1024).toFixed(1);
const load = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 30_000);
  const perWidget = Number(process.argv[3] ?? 2);
  const server = await FakeApiServer.start({ historySize: 100 });
  server.registerResource({ ...widgets, namespaced: true, customResource: true });
  server.createMany(
    widgets,
    Array.from({ length: count }, (_, i) => ({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: {
        name: `widget-${i}`,
        namespace: `ns-${i % NAMESPACES}`,
        labels: { app: 'widgets', tier: i % 2 === 0 ? 'web' : 'worker' },
      },
      spec: {
        replicas: 1 + (i % 5),
        image: `registry.example.com/team-${i % 17}/widget:v1.${i % 100}.0`,
        ports: [{ name: 'http', containerPort: 8080 }],
        config: { logLevel: 'info', featureFlags: ['a', 'b', 'c'], timeoutSeconds: 30 },
      },
      status: {
        observedGeneration: 1,
        conditions: [
          { type: 'Ready', status: 'True', reason: 'AsExpected', lastTransitionTime: '2026-01-01T00:00:00Z' },
        ],
      },
    })) as KubeObject[],
  );
  const owners = server.list<KubeObject>(widgets);
  const owned: KubeObject[] = [];
  for (const w of owners)
    for (let k = 0; k < perWidget; k++)
      owned.push(
        setControllerReference(
          w,
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: {
              name: `${w.metadata.name!}-${k}`,
              namespace: w.metadata.namespace!,
              labels: { app: 'widgets', widget: w.metadata.name! },
            },
            data: { 'config.yaml': `replicas: ${k}\nimage: widget\n`.repeat(4) },
          } as KubeObject,
          widgets,
        ),
      );
  server.createMany('configmaps', owned);
  owned.length = 0;
  console.log(
    `shard cost bench: ${count} widgets (custom resource) + ${count * perWidget} owned ConfigMaps; node ${process.version}, ${os.cpus().length} cores shared with other agents, load ${load()}`,
  );
  const rows: Array<ChildResult & { bytes: number }> = [];
  {
    const proxy = await countingProxy(new URL(server.url));
    const c = startChild(proxy.url, 'single', 0, count, perWidget);
    await c.settled;
    c.measure();
    rows.push({ ...(await c.result), bytes: proxy.bytes() });
    c.exit();
    proxy.close();
  }
  for (const serverSide of [true]) {
    server.shardedListAndWatch = serverSide;
    const proxies = await Promise.all([0, 1, 2].map(() => countingProxy(new URL(server.url))));
    const running: Running[] = [];
    for (let i = 0; i < 3; i++) {
      running.push(startChild(proxies[i]!.url, 'sharded', i, count, perWidget));
      await running[i]!.settled;
    }
    for (const r of running) r.measure();
    const results = await Promise.all(running.map((r) => r.result));
    results.forEach((r, i) => rows.push({ ...r, bytes: proxies[i]!.bytes() }));
    for (const r of running) r.exit();
    for (const p of proxies) p.close();
  }
  await server.close();
  const single = rows[0]!;
  console.log(`load ${load()}`);
  console.log(
    '| contender | ranges | widgets cached | owned cached (metadata) | heap MB | × single | bytes received MB | × single |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows)
    console.log(
      `| ${r.mode === 'single' ? 'single replica (no sharding)' : `sharded r${r.replica} (joined ${r.replica + 1}${['st', 'nd', 'rd'][r.replica]})`} | ${r.ranges} | ${r.widgets} | ${r.owned} | ${mb(r.heapBytes)} | ${(r.heapBytes / single.heapBytes).toFixed(2)} | ${mb(r.bytes)} | ${(r.bytes / single.bytes).toFixed(2)} |`,
    );
}

if (process.argv[2] === 'child') {
  const [url, mode, replica, total, perWidget] = process.argv.slice(3);
  void child(url!, mode as Mode, Number(replica), Number(total), Number(perWidget)).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
} else {
  void main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
