/**
 * `pnpm bench:freshness`: how late each contender's handler sees the server's writes while faults
 * rain, side by side in one run. Three FakeApiServers (one per contender, so that a "fail the next
 * request" fault hits each contender once) get the same 2,000 pods, the same churn (default 200
 * writes/s) and the same seeded faults at the same moments (default one every ~2 s): dropped and
 * ended watches, 410 in the stream, 429 with Retry-After 1 s and 500/503/504 without (see
 * `--retry-after-503`) on every request for 1 s,
 * 3-s stalls, malformed and
 * truncated lines, restarts. Each contender runs in its own process (freshnessContender.ts) and
 * reports the resourceVersions its handler saw. Per contender: per-write lag p50/p90/p99/max, writes
 * over 1 s, settle time after the churn stops, requests per second, and the cache compared with the
 * server at the end.
 *
 * Scenarios (`--scenario faults,storm`, the default, runs both one after the other, each with its
 * own servers and contenders):
 *   faults    a fault every ~2 s (`--fault-interval`)
 *   storm     a fault every ~250 ms, each failing window 1 s long: most retries fail whatever their
 *             timing (issue 25's storm); the goal is kinformer's p50, p99 and settle ≤ the better peer's
 *   fail-all  instead of faults, every LIST and WATCH fails with 500 for the whole run; the table's
 *             req/s is then the request rate over the second half (the backoff's steady state).
 *             `--fail-all` is short for `--scenario fail-all --duration 120s`.
 *
 * Options: --duration 60s  --rate 200  --fault-interval 2s (faults)  --seed 1
 *          --only kinformer,client-node,floor  --json
 *          --retry-after-503 0   the Retry-After (s) of the 503 fault; 0 sends none, as kube-apiserver's
 *                                503s do (1 reproduces the runs before issue 25's third round)
 *          --log DIR   writes, per scenario, what explains a lag: the faults and when they came
 *                      (`<scenario>-faults.jsonl`), each contender's requests with their status and
 *                      the lag of its oldest undelivered write every 100 ms (`<scenario>-<name>.jsonl`),
 *                      and kinformer's debug log (`<scenario>-kinformer.log`)
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { KubeObject, Status } from '@kinformer/core';
import { LagTracker, parseDuration, Prng, type LagSummary } from '@kinformer/soak';
import { FakeApiServer } from '@kinformer/testing';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2).filter((a) => a !== '--');
function opt(name: string, dflt: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : dflt;
}
type Scenario = 'faults' | 'storm' | 'fail-all';
const failAllFlag = args.includes('--fail-all');
const SCENARIOS: readonly string[] = ['faults', 'storm', 'fail-all'];
const scenarios = opt('scenario', failAllFlag ? 'fail-all' : 'faults,storm').split(',');
for (const sc of scenarios) if (!SCENARIOS.includes(sc)) throw new Error(`unknown scenario ${sc}`);
const durationOpt = opt('duration', '');
const rate = Number(opt('rate', '200'));
const faultIntervalOpt = parseDuration(opt('fault-interval', '2s'));
const seed = Number(opt('seed', '1'));
const names = opt('only', 'kinformer,client-node,floor').split(',');
const logDir = opt('log', '');
/**
 * The 503 fault's `Retry-After`. kube-apiserver's 503 Status (`apierrors.NewServiceUnavailable` in
 * `k8s.io/apimachinery/pkg/api/errors/errors.go`) carries no `retryAfterSeconds`; the server asks
 * clients to wait with 429s (`NewTooManyRequests`: API Priority and Fairness, "storage is
 * (re)initializing"; `WithRetryAfter` in `k8s.io/apiserver/pkg/server/filters/with_retry_after.go` while
 * it shuts down). So the 429 fault asks for 1 s and the 503 fault, by default, for nothing.
 */
const retryAfter503 = Number(opt('retry-after-503', '0'));
if (logDir !== '') mkdirSync(logDir, { recursive: true });
/** The storm of issue 25: a fault every ~250 ms. */
const STORM_FAULT_INTERVAL_MS = 250;
const PODS = 2_000;
const TICK_MS = 10;
const STALL_MS = 3_000;
const FAILURE_WINDOW_MS = 1_000;
const PODS_GVR = { version: 'v1', resource: 'pods' } as const;

const FAULTS = [
  'watch-drop',
  'watch-end',
  'watch-410',
  'throttle-429',
  'error-500',
  'error-503',
  'timeout-504',
  'stall',
  'malformed-line',
  'truncated-line',
  'restart',
] as const;
type Fault = (typeof FAULTS)[number];

const now = (): number => performance.timeOrigin + performance.now();

interface Contender {
  name: string;
  server: FakeApiServer;
  child: ChildProcess;
  lag: LagTracker;
  final?: Map<string, string>;
  /** Once the churn stopped: the server's last version and when the churn stopped (`now()`). */
  settle?: { lastRV: number; since: number };
  /**
   * From the end of the churn to the moment the handler saw the server's last version, on the
   * child's own timestamps (as the lag is), not when the parent heard of it: the contender reports in
   * 20-ms batches, and the parent polls every 10 ms.
   */
  settleMs?: number;
  /** `[time, lag of the oldest undelivered write]` every 100 ms, for `--log`. */
  lagSamples: Array<[number, number]>;
}

function expired(server: FakeApiServer): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    code: 410,
    reason: 'Expired',
    message: `too old resource version: 1 (${server.resourceVersion})`,
  };
}

async function inject(server: FakeApiServer, fault: Fault): Promise<void> {
  const f = server.faults;
  switch (fault) {
    case 'watch-drop':
      f.dropWatches();
      return;
    case 'watch-end':
      f.endWatches();
      return;
    case 'watch-410':
      f.injectIntoWatches({ error: expired(server) });
      return;
    case 'throttle-429':
      failFor(server, { status: 429, retryAfterSeconds: 1, verbs: ['list', 'watch'] });
      return;
    case 'error-500':
      failFor(server, { status: 500, verbs: ['list', 'watch'] });
      return;
    case 'error-503':
      failFor(server, { status: 503, retryAfterSeconds: retryAfter503, verbs: ['list', 'watch'] });
      return;
    case 'timeout-504':
      failFor(server, { status: 504, verbs: ['list'] });
      return;
    case 'stall': {
      const handle = f.stallWatches({ includeNew: false });
      setTimeout(() => handle.release(), STALL_MS);
      return;
    }
    case 'malformed-line':
    case 'truncated-line':
      f.injectIntoWatches(fault);
      return;
    case 'restart':
      await f.restart();
      return;
  }
}

/**
 * The server answers every matching request of the next {@link FAILURE_WINDOW_MS} with an error, as
 * a real overloaded or restarting server does for a while — not "the next request, whenever it
 * comes", which would save failures up for a client that rarely lists and spend them on its relists.
 */
function failFor(server: FakeApiServer, options: Parameters<FakeApiServer['faults']['failNext']>[0]): void {
  const handle = server.faults.failNext({ ...options, count: 1_000_000 });
  setTimeout(() => handle.cancel(), FAILURE_WINDOW_MS);
}

function pod(i: number): KubeObject & { spec: unknown } {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${i}`, namespace: `ns-${i % 10}`, labels: { app: `app-${i % 7}` } },
    spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }], nodeName: `node-${i % 50}` },
  };
}

function start(scenario: Scenario, name: string, server: FakeApiServer): Contender {
  const debugLog = logDir !== '' && name === 'kinformer';
  const child = fork(path.join(here, 'freshnessContender.js'), [name, server.url], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      ...(debugLog ? { KINFORMER_LOG_LEVEL: 'debug', KINFORMER_LOG_FORMAT: 'json' } : {}),
    },
    stdio: ['ignore', 'inherit', debugLog ? 'pipe' : 'inherit', 'ipc'],
  });
  if (debugLog) child.stderr?.pipe(createWriteStream(path.join(logDir, `${scenario}-kinformer.log`)));
  const c: Contender = { name, server, child, lag: new LagTracker(), lagSamples: [] };
  child.on('message', (m: { type: string; batch?: number[]; cache?: Array<[string, string]> }) => {
    if (m.type === 'seen' && m.batch !== undefined) {
      for (let i = 0; i < m.batch.length; i += 2) {
        const rv = m.batch[i]!;
        const at = m.batch[i + 1]!;
        c.lag.seen('pods', rv, at);
        if (c.settle !== undefined && c.settleMs === undefined && rv >= c.settle.lastRV)
          c.settleMs = Math.max(0, at - c.settle.since);
      }
    } else if (m.type === 'final' && m.cache !== undefined) {
      c.final = new Map(m.cache);
    }
  });
  return c;
}

function requestCount(server: FakeApiServer): number {
  let n = 0;
  for (const r of server.requests) if (r.verb === 'list' || r.verb === 'watch') n++;
  return n;
}

function staleAtEnd(c: Contender): number {
  const cache = c.final ?? new Map<string, string>();
  let bad = 0;
  const expected = c.server.list(PODS_GVR);
  for (const o of expected) {
    if (cache.get(`${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`) !== o.metadata?.resourceVersion)
      bad++;
  }
  return bad + Math.max(0, cache.size - expected.length);
}

function fmtMs(n: number | undefined): string {
  if (n === undefined) return 'never';
  return n >= 1000 ? `${(n / 1000).toFixed(2)} s` : `${Math.round(n)} ms`;
}

async function main(): Promise<void> {
  for (const scenario of scenarios as Scenario[]) {
    const failAll = scenario === 'fail-all';
    const durationMs = parseDuration(durationOpt === '' ? (failAll ? '120s' : '60s') : durationOpt);
    const faultIntervalMs = scenario === 'storm' ? STORM_FAULT_INTERVAL_MS : faultIntervalOpt;
    await runScenario(scenario, durationMs, faultIntervalMs);
  }
}

async function runScenario(scenario: Scenario, durationMs: number, faultIntervalMs: number): Promise<void> {
  const failAll = scenario === 'fail-all';
  const contenders: Contender[] = [];
  for (const name of names) {
    const server = await FakeApiServer.start({ bookmarkIntervalMs: 1_000 });
    for (let i = 0; i < PODS; i++) server.create(PODS_GVR, pod(i));
    contenders.push(start(scenario, name, server));
  }
  // Wait until every contender saw the initial list.
  const listRV = (c: Contender): number => Number(c.server.resourceVersion);
  const syncDeadline = Date.now() + 60_000;
  while (contenders.some((c) => c.lag.highestSeen('pods') < listRV(c)) && Date.now() < syncDeadline)
    await new Promise((r) => setTimeout(r, 20));

  console.log(
    `\nfreshness bench, scenario ${scenario}: ${names.join(', ')}; ${PODS} pods, ${rate} writes/s, ` +
      `${failAll ? 'every LIST and WATCH failing' : `a fault every ~${faultIntervalMs} ms`}, ${durationMs / 1000} s, seed ${seed}`,
  );
  const prng = new Prng(seed);
  const faultLog: Array<[number, Fault]> = [];
  const faultCounts: Partial<Record<Fault, number>> = {};
  const writesPerTick = (rate * TICK_MS) / 1000;
  let carry = 0;
  let generation = 0;
  const t0 = Date.now();
  if (failAll) {
    for (const c of contenders) {
      c.server.faults.failNext({ status: 500, count: 1e9, verbs: ['list', 'watch'] });
      c.server.faults.dropWatches();
    }
  }
  let halfway: number[] | undefined;
  for (let tick = 1; Date.now() - t0 < durationMs; tick++) {
    if (halfway === undefined && Date.now() - t0 >= durationMs / 2) {
      halfway = contenders.map((c) => requestCount(c.server));
    }
    if (logDir !== '' && tick % 10 === 0) {
      const t = now();
      for (const c of contenders) c.lagSamples.push([t, Math.round(c.lag.currentLagMs(t))]);
    }
    carry += writesPerTick;
    const writes = Math.floor(carry);
    carry -= writes;
    for (let w = 0; w < writes; w++) {
      const i = prng.int(PODS);
      const patch = { metadata: { annotations: { generation: String(++generation) } } };
      for (const c of contenders) {
        c.server.patch(PODS_GVR, `ns-${i % 10}/pod-${i}`, patch);
        c.lag.wrote('pods', Number(c.server.resourceVersion), now());
      }
    }
    if (!failAll && prng.chance(TICK_MS / faultIntervalMs)) {
      const fault = prng.pick(FAULTS);
      faultCounts[fault] = (faultCounts[fault] ?? 0) + 1;
      if (logDir !== '') faultLog.push([now(), fault]);
      await Promise.all(contenders.map((c) => inject(c.server, fault)));
    }
    const wait = t0 + tick * TICK_MS - Date.now();
    await new Promise((r) => setTimeout(r, Math.max(0, wait)));
  }
  const churnMs = Date.now() - t0;
  // Requests sent while the churn (and the faults) ran: not the LIST and WATCH that recover afterwards.
  const atChurnEnd = contenders.map((c) => requestCount(c.server));
  const churnEnd = now();
  for (const c of contenders) {
    c.server.faults.reset();
    const lastRV = Number(c.server.resourceVersion);
    c.settle = { lastRV, since: churnEnd };
    if (c.lag.highestSeen('pods') >= lastRV) c.settleMs = 0;
  }

  // Settle: until each contender's handler reached the server's last version (at most 60 s).
  const settleStart = Date.now();
  while (Date.now() - settleStart < 60_000 && contenders.some((c) => c.settleMs === undefined))
    await new Promise((r) => setTimeout(r, 10));
  await Promise.all(
    contenders.map(
      (c) =>
        new Promise<void>((resolve) => {
          c.child.once('exit', () => resolve());
          c.child.send({ type: 'final' });
        }),
    ),
  );

  console.log(
    `faults: ${Object.entries(faultCounts)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
  );
  const rows = contenders.map((c, i) => ({
    c,
    s: c.lag.summary(),
    rps: failAll
      ? (atChurnEnd[i]! - (halfway?.[i] ?? 0)) / (churnMs / 2000)
      : atChurnEnd[i]! / (churnMs / 1000),
  }));
  const base = rows.find((r) => r.c.name === 'client-node');
  const header = [
    'contender',
    'p50',
    'p90',
    'p99',
    'max',
    '>1 s',
    '>10 s',
    'settle',
    'req/s',
    'stale at end',
    'p99 vs client-node',
  ];
  const table = rows.map(({ c, s, rps }) => [
    c.name,
    fmtMs(s.p50Ms),
    fmtMs(s.p90Ms),
    fmtMs(s.p99Ms),
    fmtMs(s.maxMs),
    String(s.over1s),
    String(s.over10s),
    fmtMs(c.settleMs),
    rps.toFixed(2),
    String(staleAtEnd(c)),
    base === undefined || base.s.p99Ms === 0 ? '-' : `${(s.p99Ms / base.s.p99Ms).toFixed(2)}×`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => `| ${cells.map((x, i) => x.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(header));
  console.log(`| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`);
  for (const r of table) console.log(line(r));
  if (scenario === 'storm') stormVerdict(rows.map(({ c, s }) => ({ name: c.name, s, settleMs: c.settleMs })));
  summaryJson(
    scenario,
    rows.map(({ c, s, rps }) => ({ name: c.name, ...s, settleMs: c.settleMs, requestsPerSecond: rps })),
  );
  if (logDir !== '') writeLogs(scenario, contenders, faultLog);
  for (const c of contenders) await c.server.close();
}

/** `--log`: the faults, and per contender its requests and lag samples, as JSON lines sorted by time. */
function writeLogs(scenario: Scenario, contenders: Contender[], faults: Array<[number, Fault]>): void {
  const lines = (rows: unknown[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
  writeFileSync(
    path.join(logDir, `${scenario}-faults.jsonl`),
    lines(faults.map(([t, fault]) => ({ t: Math.round(t), fault }))),
  );
  for (const c of contenders) {
    const rows: Array<{ t: number } & Record<string, unknown>> = [];
    for (const r of c.server.requests) {
      if (r.verb !== 'list' && r.verb !== 'watch') continue;
      rows.push({
        t: Math.round(r.receivedAt),
        req: r.verb,
        rv: r.query.resourceVersion,
        ...(r.query.continue === undefined ? {} : { continue: true }),
        status: r.status,
      });
    }
    for (const [t, lagMs] of c.lagSamples) rows.push({ t: Math.round(t), lagMs });
    rows.sort((a, b) => a.t - b.t);
    writeFileSync(path.join(logDir, `${scenario}-${c.name}.jsonl`), lines(rows));
  }
}

/** The storm's goal (issue 25): kinformer's p50, p99 and settle at most the better peer's. */
function stormVerdict(rows: Array<{ name: string; s: LagSummary; settleMs: number | undefined }>): void {
  const k = rows.find((r) => r.name === 'kinformer');
  const peers = rows.filter((r) => r.name !== 'kinformer');
  if (k === undefined || peers.length === 0) return;
  const best = (f: (r: (typeof rows)[number]) => number): number => Math.min(...peers.map(f));
  const settle = (r: (typeof rows)[number]): number => r.settleMs ?? Number.POSITIVE_INFINITY;
  const checks: Array<[string, number, number]> = [
    ['p50', k.s.p50Ms, best((r) => r.s.p50Ms)],
    ['p99', k.s.p99Ms, best((r) => r.s.p99Ms)],
    ['settle', settle(k), best(settle)],
  ];
  console.log(
    `storm goal (kinformer ≤ the better peer): ${checks
      .map(([n, mine, peer]) => `${n} ${fmtMs(mine)} vs ${fmtMs(peer)} ${mine <= peer ? 'met' : 'MISSED'}`)
      .join('; ')}`,
  );
}

function summaryJson(
  scenario: Scenario,
  rows: Array<LagSummary & { name: string; settleMs: number | undefined; requestsPerSecond: number }>,
): void {
  if (args.includes('--json')) console.log(JSON.stringify({ scenario, rows }, null, 2));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
