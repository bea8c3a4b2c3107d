/**
 * `pnpm bench:shard-cost`: what one replica of a hash-sharded Manager (`hashSharding`) costs next to a
 * single unsharded one, on the fixture: 30,000 custom resources (`widgets.example.com`), each
 * the controller owner of 2 ConfigMaps (60,000 owned objects). The controller is
 * `for(widgets).owns(configMaps)`; its reconciler does nothing.
 *
 * The parent runs FakeApiServer; every contender runs in its own `node --expose-gc` process behind a
 * byte-counting TCP proxy and reports its heap after GC once settled (the single replica: synced; the
 * sharded ones: all three members seen, every held range active, unchanged for 3 s), minus its heap
 * after GC before starting. The three sharded replicas first start together (a Deployment of 3: each
 * waits out the join window, sees the others and lists only its share). Then each is restarted in
 * turn into the settled ring of three (a rolling restart: a graceful leave, a new process under the
 * same identity behind a fresh proxy): the new process's bytes and heap are a replica's steady-state
 * share. Last, after all three left, they start one after another into the empty ring (each once the
 * previous settled): the first lists every range before handing two thirds off, the second half of
 * its share, and their bytes include that.
 * The owned ConfigMaps carry the range label of their owner (`kinformer.dev/hash-range`, what the
 * Manager's client stamps when the controller creates them), so each replica reads them through one
 * metadata-only informer per range it holds, plus one for owned objects without the label (none here).
 * Usage: `node --expose-gc bench/dist/shardCostBench.js [widgets=30000] [owned-per-widget=2]`;
 * `SHARD_COST_WRITES=<n>` sets the writer's changes a second (default 20), `NO_INTERN=1` turns the
 * Manager's string interner off in every contender.
 */
import { fork } from 'node:child_process';
import os from 'node:os';
import v8 from 'node:v8';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '@kinformer/core';
import {
  defineKind,
  HASH_RANGE_LABEL,
  hashRangeOf,
  kinds,
  Manager,
  setControllerReference,
} from '@kinformer/runtime';
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
  /** Ranges acquired and given up (handed off or lost) since the process started. */
  moves: string;
  /** Of `heapBytes`: V8's compiled code (bytecode, baseline and optimized code: code and trusted spaces). */
  codeBytes: number;
  widgets: number;
  owned: number;
  ranges: number;
  settleMs: number;
}

const widgets = defineKind({ group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' });
const NAMESPACES = 30;
/** Widgets (and as many owned ConfigMaps) changed per second while the contenders run. */
const WRITES_PER_S = Number(process.env.SHARD_COST_WRITES ?? 20);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Ranges this child acquired, and handed off or lost. */
const moves = { acquired: 0, given: 0 };

/** The child's heap after GC before it started its Manager, and the compiled code in it. */
let baseline = 0;
let baselineCode = 0;

/** V8's spaces of compiled code (instruction streams; bytecode and its metadata in the trusted spaces). */
function codeSpaces(): number {
  let n = 0;
  for (const s of v8.getHeapSpaceStatistics())
    if (/^(code|trusted)(_large_object)?_space$/.test(s.space_name)) n += s.space_used_size;
  return n;
}

async function child(
  url: string,
  mode: Mode,
  replica: number,
  total: number,
  perWidget: number,
  members: number,
): Promise<void> {
  baseline = gcHeap();
  baselineCode = codeSpaces();
  const started = performance.now();
  const mgr = new Manager(benchKubeConfig(url), {
    name: `cost-${replica}`,
    gracefulShutdownMs: 1_000,
    ...(process.env.NO_INTERN ? { cache: { internStrings: false } } : {}),
    ...(mode === 'sharded'
      ? {
          hashSharding: {
            name: 'cost',
            namespace: 'default',
            identity: `r${replica}`,
            onRangeChange: (e) => {
              if (e.state === 'acquired') moves.acquired++;
              if (e.state === 'handoff' || e.state === 'lost') moves.given++;
            },
          },
        }
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
    const settled = s.members.length === members && s.active.length === s.held.length && s.held.length > 0;
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
  // The parent says when to measure (after the later joiners settled: a replica's share shrinks),
  // as often as it likes, then to exit.
  while ((await new Promise<unknown>((resolve) => process.once('message', resolve))) === 'measure')
    await measure(mgr, mode, replica, total, perWidget, synced, settleMs);
  stop.abort();
  await run.catch(() => undefined);
  process.exit(0);
}

async function measure(
  mgr: Manager,
  mode: Mode,
  replica: number,
  total: number,
  perWidget: number,
  synced: () => boolean,
  settleMs: number,
): Promise<void> {
  // Settle again (the later joiners took ranges from this one).
  for (let stable = 0; stable < 30;) {
    await sleep(100);
    const s = mgr.hashShard();
    stable = s === undefined || (s.active.length === s.held.length && synced()) ? stable + 1 : 0;
  }
  const heap = gcHeap() - baseline;
  const shard = mgr.hashShard();
  // Owned ConfigMaps: the unsharded metadata-only informer (single), or one per range held plus the
  // one of owned objects without a range label (sharded; `mgr.informer` finds these, it adds none).
  const unsharded = mgr.informer(kinds.configMaps, {
    metadataOnly: true,
    ...(shard === undefined ? {} : { labelSelector: `!${HASH_RANGE_LABEL}` }),
  });
  const result: ChildResult = {
    mode,
    replica,
    heapBytes: heap,
    codeBytes: codeSpaces() - baselineCode,
    moves: `${moves.acquired} / ${moves.given}`,
    widgets: countCached(mgr, widgets, total, 1),
    owned: (shard?.cached.owned ?? 0) + unsharded.informer.getStore().size(),
    ranges: mgr.hashShard()?.held.length ?? 16,
    settleMs,
  };
  process.send!({ type: 'result', result });
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
  /** Measures the contender once settled (again). */
  measure: () => Promise<ChildResult>;
  exit: () => void;
  exited: Promise<void>;
}

function startChild(
  url: string,
  mode: Mode,
  replica: number,
  total: number,
  perWidget: number,
  members = replica + 1,
): Running {
  const p = fork(
    fileURLToPath(import.meta.url),
    ['child', url, mode, String(replica), String(total), String(perWidget), String(members)],
    {
      execArgv: ['--expose-gc'],
      env: { ...process.env, NODE_ENV: 'production', KINFORMER_LOG_LEVEL: 'error' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  let settle!: () => void;
  const settled = new Promise<void>((r) => (settle = r));
  let pending: { resolve: (r: ChildResult) => void; reject: (e: Error) => void } | undefined;
  p.on('message', (m: { type: string; result?: ChildResult }) => {
    if (m.type === 'settled') settle();
    if (m.type === 'result') pending?.resolve(m.result!);
  });
  const exited = new Promise<void>((res) =>
    p.once('exit', (code) => {
      pending?.reject(new Error(`contender ${mode}/${replica} exited ${code}`));
      res();
    }),
  );
  const measure = (): Promise<ChildResult> =>
    new Promise<ChildResult>((resolve, reject) => {
      pending = { resolve, reject };
      p.send('measure');
    });
  return { settled, measure, exit: () => p.send('exit'), exited };
}

type Phase = 'single' | 'together' | 'joined' | 'restarted' | 'steady';

function label(phase: Phase, replica: number): string {
  switch (phase) {
    case 'single':
      return 'single replica (no sharding)';
    case 'together':
      return `sharded r${replica}, the three started together`;
    case 'joined':
      return `sharded r${replica}, one after another into an empty ring (joined ${replica + 1}${['st', 'nd', 'rd'][replica]!})`;
    case 'restarted':
      return `sharded r${replica}, restarted into the settled ring`;
    case 'steady':
      return `sharded r${replica}, after the rolling restart`;
  }
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
  // The default history (10,000 events): with 100, a few dozen Lease renewals compact past the
  // continue token of a LIST that pages slowly under load (a whole relist after a 410 Expired).
  const server = await FakeApiServer.start();
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
              // The owner's range, as the Manager's client stamps it on what the controller creates.
              labels: {
                app: 'widgets',
                widget: w.metadata.name!,
                [HASH_RANGE_LABEL]: String(hashRangeOf(w.metadata.uid!, 16)),
              },
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
  // A live cluster: a writer changes WRITES_PER_S widgets and as many owned ConfigMaps a second
  // throughout, so every contender runs its watch path (without it the single replica would never
  // run it after its LIST, while the sharded ones do for their Leases' renewals).
  let writes = 0;
  const writer = setInterval(() => {
    for (let k = 0; k < WRITES_PER_S / 10; k++) {
      const w = Math.floor(Math.random() * count);
      const ns = `ns-${w % NAMESPACES}`;
      server.patch(widgets, `${ns}/widget-${w}`, { spec: { replicas: 1 + (writes % 5) } });
      server.patch('configmaps', `${ns}/widget-${w}-${writes % perWidget}`, {
        metadata: { annotations: { 'example.com/touched': String(writes) } },
      });
      writes++;
    }
  }, 100);
  const rows: Array<ChildResult & { bytes: number; phase: Phase }> = [];
  {
    const proxy = await countingProxy(new URL(server.url));
    const c = startChild(proxy.url, 'single', 0, count, perWidget);
    await c.settled;
    rows.push({ ...(await c.measure()), bytes: proxy.bytes(), phase: 'single' });
    c.exit();
    await c.exited;
    proxy.close();
  }
  server.shardedListAndWatch = true;
  const proxies = await Promise.all([0, 1, 2].map(() => countingProxy(new URL(server.url))));
  // Started together (a Deployment of 3): each waits out the join window, sees the others' membership
  // Leases and lists only its share.
  const running = [0, 1, 2].map((i) => startChild(proxies[i]!.url, 'sharded', i, count, perWidget, 3));
  await Promise.all(running.map((r) => r.settled));
  const together = await Promise.all(running.map((r) => r.measure()));
  together.forEach((r, i) => rows.push({ ...r, bytes: proxies[i]!.bytes(), phase: 'together' }));
  // A rolling restart of the settled ring: each replica leaves gracefully, a new process takes its
  // identity and (after the others hand them back) its share of the ranges.
  for (let i = 0; i < 3; i++) {
    running[i]!.exit();
    await running[i]!.exited;
    proxies[i]!.close();
    proxies[i] = await countingProxy(new URL(server.url));
    running[i] = startChild(proxies[i]!.url, 'sharded', i, count, perWidget, 3);
    await running[i]!.settled;
    rows.push({ ...(await running[i]!.measure()), bytes: proxies[i]!.bytes(), phase: 'restarted' });
  }
  // All three once the rolling restart is over: the steady state, the replica with the extra range
  // included (its bytes include what the later restarts handed it back and forth).
  const steady = await Promise.all(running.map((r) => r.measure()));
  steady.forEach((r, i) => rows.push({ ...r, bytes: proxies[i]!.bytes(), phase: 'steady' }));
  for (const r of running) r.exit();
  await Promise.all(running.map((r) => r.exited));
  for (const p of proxies) p.close();
  // One after another into an empty ring (each once the previous settled): the first lists every
  // range before handing two thirds off, the second half of its share: their bytes include that.
  const joiners = await Promise.all([0, 1, 2].map(() => countingProxy(new URL(server.url))));
  const oneByOne: Running[] = [];
  for (let i = 0; i < 3; i++) {
    oneByOne.push(startChild(joiners[i]!.url, 'sharded', i, count, perWidget));
    await oneByOne[i]!.settled;
  }
  const joined = await Promise.all(oneByOne.map((r) => r.measure()));
  joined.forEach((r, i) => rows.push({ ...r, bytes: joiners[i]!.bytes(), phase: 'joined' }));
  for (const r of oneByOne) r.exit();
  await Promise.all(oneByOne.map((r) => r.exited));
  for (const p of joiners) p.close();
  clearInterval(writer);
  await server.close();
  const single = rows[0]!;
  console.log(`load ${load()}; ${writes} widgets and ${writes} ConfigMaps changed during the run`);
  console.log(
    '| contender | ranges | acquired / given up | widgets cached | owned cached (metadata) | heap MB | × single | of which compiled code MB | heap without it × single | bytes received MB | × single |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows)
    console.log(
      `| ${label(r.phase, r.replica)} | ${r.ranges} | ${r.mode === 'single' ? '–' : r.moves} | ${r.widgets} | ${r.owned} | ${mb(r.heapBytes)} | ${(r.heapBytes / single.heapBytes).toFixed(2)} | ${mb(r.codeBytes)} | ${((r.heapBytes - r.codeBytes) / (single.heapBytes - single.codeBytes)).toFixed(2)} | ${mb(r.bytes)} | ${(r.bytes / single.bytes).toFixed(2)} |`,
    );
}

if (process.argv[2] === 'child') {
  const [url, mode, replica, total, perWidget, members] = process.argv.slice(3);
  void child(url!, mode as Mode, Number(replica), Number(total), Number(perWidget), Number(members)).catch(
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
} else {
  void main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
