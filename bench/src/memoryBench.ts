/**
 * `pnpm bench:memory`: what a cache of realistic pods costs in heap, side by side — the raw JSON
 * bytes, `@kubernetes/client-node`'s informer (its `ListWatch`, what `makeInformer` builds), and
 * kinformer's Manager with each cache policy — plus a Secret bomb: 5,000 Secrets of 32 KB in a
 * namespace the operator does not manage.
 *
 * Each contender runs in its own `node --expose-gc` process (NODE_ENV=production) against an
 * in-process ListerWatcher that hands out a fresh decode of the list body (client-node's
 * `ListDecoder`, as `createListWatch` decodes the wire; client-node's own informer gets a
 * `JSON.parse` of it, as its client does), so
 * the figure is the cache alone: heap after GC once synced, minus heap after GC before starting.
 * Usage: `node --expose-gc bench/dist/memoryBench.js [pods=10000]`.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '@kinformer/core';
import { ListDecoder } from '@kinformer/client-node/internal';
import type { ListerWatcherFactory } from '@kinformer/informer';
import { kinds, Manager, project } from '@kinformer/runtime';
import type { ManagerOptions } from '@kinformer/runtime';
import type { V1Pod } from '@kubernetes/client-node';
import { ListWatch } from '@kubernetes/client-node';
import type { Watch } from '@kubernetes/client-node';
import { benchKubeConfig } from './benchKubeConfig.js';
import { gcHeap } from './heap.js';
import { makeRealisticPod } from './realisticPods.js';

const SECRETS = 5000;
const SECRET_BYTES = 32 * 1024;

/** The scenarios, each in its own process. */
const SCENARIOS = [
  'client-node',
  'full',
  'full-interned',
  'defaults',
  'no-intern',
  'metadata-only',
  'projection',
  'secret-bomb',
  'secret-bomb-unscoped',
] as const;
type Scenario = (typeof SCENARIOS)[number];

interface ChildResult {
  scenario: Scenario;
  heapBytes: number;
  objects: number;
  /** From start to synced (the list handed over at once, no network). */
  syncMs: number;
  /** Secret bomb: reading an unconfigured kind threw ERR_KIND_NOT_CACHED and started no informer. */
  typedError?: boolean;
}

function secret(i: number, namespace: string, bytes: number): KubeObject & { data: Record<string, string> } {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `s-${i}`, namespace, uid: `uid-${namespace}-${i}`, resourceVersion: String(i + 1) },
    data: { blob: Buffer.alloc(Math.floor((bytes * 3) / 4), i % 251).toString('base64') },
  };
}

/** The JSON text of a list's items, made before the heap baseline and kept alive past the measure. */
function text(items: Array<() => unknown>): string {
  return `[${items.map((f) => JSON.stringify(f())).join(',')}]`;
}

function podText(n: number, metadataOnly: boolean): string {
  return text(
    Array.from({ length: n }, (_, i) => () => {
      const pod = makeRealisticPod(i, i + 1);
      return metadataOnly
        ? { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: pod.metadata }
        : pod;
    }),
  );
}

/** The list texts a scenario's informers ask for (only those, to keep the process small). */
interface Fixture {
  pods?: string;
  podsMetadata?: string;
  secretsOps?: string;
  secretsAll?: string;
}

function fixture(scenario: Scenario, pods: number): Fixture {
  if (scenario === 'secret-bomb' || scenario === 'secret-bomb-unscoped') {
    const ops = Array.from({ length: 10 }, (_, i) => () => secret(i, 'ops', 1024));
    const bomb = Array.from({ length: SECRETS }, (_, i) => () => secret(i, 'tenant', SECRET_BYTES));
    return scenario === 'secret-bomb' ? { secretsOps: text(ops) } : { secretsAll: text([...ops, ...bomb]) };
  }
  return scenario === 'metadata-only'
    ? { podsMetadata: podText(pods, true) }
    : { pods: podText(pods, false) };
}

/**
 * Serves the fixture: each LIST is a fresh decode of its text (objects as the wire gives
 * them, nothing shared); a Secret LIST of a namespace other than `ops` or all is empty. Records
 * what it was asked for.
 */
function listerWatchers(f: Fixture, asked: string[]): ListerWatcherFactory {
  return (gvr, request) => ({
    list: () => {
      asked.push(`${gvr.resource}?namespace=${request.namespace}`);
      const source =
        gvr.resource === 'pods'
          ? request.metadataOnly
            ? f.podsMetadata
            : f.pods
          : gvr.resource === 'secrets'
            ? request.namespace === 'ops'
              ? f.secretsOps
              : request.namespace === ''
                ? f.secretsAll
                : undefined
            : undefined;
      // Decoded as createListWatch decodes a LIST body (client-node's ListDecoder), fed in 64 KB chunks.
      const body = Buffer.from(
        `{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":"1"},"items":${source ?? '[]'}}`,
      );
      const decoder = new ListDecoder<KubeObject>();
      for (let at = 0; at < body.length; at += 65_536) decoder.write(body.subarray(at, at + 65_536));
      return Promise.resolve(decoder.end());
    },
    // A watch that stays open, silent, until the informer stops.
    watch: (_options, context) =>
      Promise.resolve({
        [Symbol.asyncIterator]: () => ({
          next: () =>
            new Promise<IteratorResult<never>>((resolve) =>
              context.signal.addEventListener('abort', () => resolve({ done: true, value: undefined }), {
                once: true,
              }),
            ),
        }),
      }),
  });
}

async function child(scenario: Scenario, pods: number): Promise<ChildResult> {
  const asked: string[] = [];
  const f = fixture(scenario, pods);
  if (scenario === 'client-node') {
    const noWatch = { watch: () => Promise.resolve(new AbortController()) } as unknown as Watch;
    const before = gcHeap();
    const t0 = performance.now();
    const informer = new ListWatch<V1Pod>(
      '/api/v1/pods',
      noWatch,
      () =>
        Promise.resolve({
          apiVersion: 'v1',
          kind: 'PodList',
          metadata: {},
          items: JSON.parse(f.pods!) as V1Pod[],
        }),
      false,
    );
    await informer.start();
    const syncMs = performance.now() - t0;
    const heapBytes = gcHeap() - before;
    const objects = informer.list().length;
    await informer.stop();
    if (f.pods === undefined) throw new Error('unreachable: keeps the fixture alive past the measure');
    return { scenario, heapBytes, objects, syncMs };
  }
  const base: ManagerOptions = {
    listerWatcherFactory: listerWatchers(f, asked),
    recorder: { event: () => {} },
  };
  const byScenario: Record<Exclude<Scenario, 'client-node'>, ManagerOptions> = {
    full: { stripManagedFields: false, cache: { internStrings: false } },
    'full-interned': { stripManagedFields: false },
    defaults: {},
    'no-intern': { cache: { internStrings: false } },
    'metadata-only': { cache: { byKind: [{ kind: kinds.pods, metadataOnly: true }] } },
    projection: {
      // Five fields: the identity three every projection keeps, and two the controller reads.
      cache: {
        byKind: [{ kind: kinds.pods, transform: project<V1Pod>()(['spec.nodeName', 'status.phase']) }],
      },
    },
    'secret-bomb': { cache: { byKind: [{ kind: kinds.secrets, namespaces: ['ops'] }] } },
    'secret-bomb-unscoped': {},
  };
  const mgr = new Manager(benchKubeConfig('http://127.0.0.1:9'), { ...base, ...byScenario[scenario] });
  const bomb = scenario === 'secret-bomb' || scenario === 'secret-bomb-unscoped';
  const { lister } = bomb ? mgr.informer(kinds.secrets) : mgr.informer(kinds.pods);
  const stop = new AbortController();
  const before = gcHeap();
  const t0 = performance.now();
  const running = mgr.start(stop.signal);
  const sync = mgr.readyChecks()[1]!;
  while (sync.check() !== undefined) await new Promise((r) => setTimeout(r, 5));
  const syncMs = performance.now() - t0;
  const heapBytes = gcHeap() - before;
  const objects = lister.list().length;
  let typedError: boolean | undefined;
  if (bomb) {
    try {
      mgr.get(kinds.configMaps, 'default/x');
      typedError = false;
    } catch (err) {
      typedError =
        (err as { code?: string }).code === 'ERR_KIND_NOT_CACHED' &&
        !asked.some((a) => a.startsWith('configmaps'));
    }
  }
  stop.abort();
  await running;
  if (
    f.pods === undefined &&
    f.podsMetadata === undefined &&
    f.secretsAll === undefined &&
    f.secretsOps === undefined
  )
    throw new Error('unreachable: keeps the fixture alive past the measure');
  return { scenario, heapBytes, objects, syncMs, ...(typedError === undefined ? {} : { typedError }) };
}

function runChild(scenario: Scenario, pods: number): Promise<ChildResult> {
  const proc = fork(fileURLToPath(import.meta.url), ['child', scenario, String(pods)], {
    execArgv: ['--expose-gc', '--max-old-space-size=8192'],
    env: { ...process.env, NODE_ENV: 'production', KINFORMER_LOG_LEVEL: 'error' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    proc.once('message', (m) => resolve(m as ChildResult));
    proc.once('exit', (code) => {
      if (code !== 0) reject(new Error(`${scenario} exited ${code}`));
    });
  });
}

const mb = (b: number): string => `${(b / 1048576).toFixed(1)} MB`;

async function main(): Promise<void> {
  const pods = Number(process.argv[2] ?? 10_000);
  let jsonBytes = 0;
  let managedBytes = 0;
  for (let i = 0; i < pods; i++) {
    const p = makeRealisticPod(i, i + 1);
    jsonBytes += Buffer.byteLength(JSON.stringify(p));
    managedBytes += Buffer.byteLength(JSON.stringify(p.metadata.managedFields));
  }
  const r = new Map<Scenario, ChildResult>();
  for (const s of SCENARIOS) r.set(s, await runChild(s, pods));
  const heap = (s: Scenario): number => r.get(s)!.heapBytes;
  const full = heap('full');
  console.log(
    `\nmemory: ${pods} realistic pods, ${mb(jsonBytes)} of JSON (${(jsonBytes / pods / 1024).toFixed(1)} KB each, ${(managedBytes / pods / 1024).toFixed(1)} KB managedFields); heap after GC, Node ${process.version}; the machine may be shared\n`,
  );
  console.log('| cache | objects | heap | × JSON bytes | × full cache | list to synced |');
  console.log('|---|---:|---:|---:|---:|---:|');
  const row = (label: string, s: Scenario): void => {
    const x = r.get(s)!;
    console.log(
      `| ${label} | ${x.objects} | ${mb(x.heapBytes)} | ${(x.heapBytes / jsonBytes).toFixed(2)} | ${(x.heapBytes / full).toFixed(2)} | ${x.syncMs.toFixed(0)} ms |`,
    );
  };
  console.log(`| raw JSON bytes | ${pods} | ${mb(jsonBytes)} | 1.00 | ${(jsonBytes / full).toFixed(2)} | |`);
  row('@kubernetes/client-node ListWatch (makeInformer)', 'client-node');
  row('kinformer full: no transform (stripManagedFields: false, internStrings: false)', 'full');
  row('kinformer Manager, stripManagedFields: false (strings interned)', 'full-interned');
  row('kinformer Manager defaults (managedFields dropped, strings interned)', 'defaults');
  row('Manager defaults without interning (internStrings: false)', 'no-intern');
  row('metadata-only', 'metadata-only');
  row('5-field projection', 'projection');
  const bomb = r.get('secret-bomb')!;
  const unscoped = r.get('secret-bomb-unscoped')!;
  console.log(
    `\nSecret bomb (${SECRETS} × 32 KB in 'tenant'): scoped to 'ops' ${mb(bomb.heapBytes)} (${bomb.objects} secrets), unscoped ${mb(unscoped.heapBytes)} (${unscoped.objects}); unconfigured kind: ${bomb.typedError === true ? 'ERR_KIND_NOT_CACHED, no informer started' : 'NOT the typed error'}`,
  );
  const goals: Array<[string, boolean, string]> = [
    ['full cache ≤ 1.5× JSON bytes', full <= 1.5 * jsonBytes, (full / jsonBytes).toFixed(2)],
    [
      'full cache, interned ≤ 1.5× JSON bytes',
      heap('full-interned') <= 1.5 * jsonBytes,
      (heap('full-interned') / jsonBytes).toFixed(2),
    ],
    ['Manager defaults ≤ 0.65× full', heap('defaults') <= 0.65 * full, (heap('defaults') / full).toFixed(2)],
    [
      'metadata-only ≤ 0.25× full',
      heap('metadata-only') <= 0.25 * full,
      (heap('metadata-only') / full).toFixed(2),
    ],
    [
      '5-field projection ≤ 0.2× full',
      heap('projection') <= 0.2 * full,
      (heap('projection') / full).toFixed(2),
    ],
    ['Secret bomb grows ≤ 5 MB', bomb.heapBytes <= 5 * 1048576, mb(bomb.heapBytes)],
    ['unconfigured kind: typed error, no informer', bomb.typedError === true, String(bomb.typedError)],
    [
      'interning: ≥ 10 % less heap (defaults vs internStrings: false)',
      heap('defaults') <= 0.9 * heap('no-intern'),
      `${((1 - heap('defaults') / heap('no-intern')) * 100).toFixed(1)} % less`,
    ],
  ];
  console.log('\n| goal | measured | met |\n|---|---:|---|');
  for (const [goal, ok, v] of goals) console.log(`| ${goal} | ${v} | ${ok ? 'yes' : '**no**'} |`);
}

if (process.argv[2] === 'child') {
  const result = await child(process.argv[3] as Scenario, Number(process.argv[4]));
  process.send!(result);
  process.disconnect();
} else {
  await main();
}
