/**
 * `pnpm bench:micro`: the hot path's pieces with 100k realistic pods, measured in one process —
 * JSON.parse of each pod (the cost every event pays anyway), DeltaFIFO and RealFIFO add+pop, Indexer
 * add/update/delete with two indexes, byIndex, and the full pop → index cycle. Reports operations per
 * second, heap per cached object, and the ratio of a pop+index cycle to parsing the object's JSON.
 */
import { performance } from 'node:perf_hooks';
import { ListDecoder } from '@kinformer/client-node/internal';
import { newIndexer, NAMESPACE_INDEX, metaNamespaceIndexFunc, type Indexer } from '@kinformer/cache';
import { DeltaFIFO, RealFIFO, type Queue } from '@kinformer/delta-fifo';
import { makePod, type BenchPod } from './pods.js';
import { replaceSection, machineLine } from './report.js';

const N = Number(process.argv[2] ?? 100_000);
const write = !process.argv.includes('--no-write');

function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) {
    g();
    g();
  }
}

interface Result {
  what: string;
  opsPerSec: number;
  nsPerOp: number;
}
const results: Result[] = [];

function record(what: string, ops: number, ms: number): Result {
  const r = { what, opsPerSec: ops / (ms / 1000), nsPerOp: (ms * 1e6) / ops };
  results.push(r);
  process.stderr.write(`  ${what}: ${r.opsPerSec.toFixed(0)} ops/s (${r.nsPerOp.toFixed(0)} ns/op)\n`);
  return r;
}

function time(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

async function timeAsync(fn: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

const byNode = (p: BenchPod): string[] => [typeof p.spec.nodeName === 'string' ? p.spec.nodeName : ''];

function indexer(): Indexer<BenchPod> {
  return newIndexer<BenchPod>(
    undefined,
    { [NAMESPACE_INDEX]: metaNamespaceIndexFunc, node: byNode },
    { freeze: false },
  );
}

async function drain(q: Queue<BenchPod>, n: number, onItem: (p: BenchPod) => void): Promise<void> {
  for (let i = 0; i < n; i++) {
    await q.pop((deltas) => {
      const d = deltas[deltas.length - 1]!;
      onItem(d.object as BenchPod);
    });
  }
}

async function main(): Promise<void> {
  const texts = Array.from({ length: N }, (_, i) => JSON.stringify(makePod(i, i + 1)));
  const updTexts = Array.from({ length: N }, (_, i) => JSON.stringify(makePod(i, N + i + 1)));

  // Warm up the JIT on a small slice of every path.
  for (let i = 0; i < 2000; i++) JSON.parse(texts[i]!);

  let pods: BenchPod[] = [];
  const parse = record(
    'JSON.parse one pod (~3.7 KB)',
    N,
    time(() => {
      pods = texts.map((t) => JSON.parse(t) as BenchPod);
    }),
  );
  const updates = updTexts.map((t) => JSON.parse(t) as BenchPod);

  // A LIST page of 500 pods as it arrives (64 KiB chunks), 40 pages (20k pods) kept, as a sync keeps
  // them: the time per page includes the GC the kept objects cause.
  const pageOf = (p: number): Buffer[] => {
    const body = Buffer.from(
      `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1","continue":"c"},"items":[${texts.slice(p * 500, p * 500 + 500).join(',')}]}`,
    );
    const chunks: Buffer[] = [];
    for (let i = 0; i < body.length; i += 65536) chunks.push(body.subarray(i, i + 65536));
    return chunks;
  };
  const pages = Array.from({ length: 40 }, (_, p) => pageOf(p));
  const decodePages = (whole: number | undefined): void => {
    const kept: unknown[] = [];
    for (const chunks of pages) {
      const d = new ListDecoder(whole === undefined ? {} : { wholeBodyBytes: whole });
      for (const c of chunks) d.write(c);
      kept.push(d.end());
    }
    found += kept.length;
  };
  let found = 0;
  for (const [what, run] of [
    [
      'LIST page of 500 pods: Buffer.concat + JSON.parse (the floor)',
      () => {
        const kept: unknown[] = [];
        for (const chunks of pages) kept.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        found += kept.length;
      },
    ],
    ['LIST page of 500 pods: ListDecoder, page kept whole (default)', () => decodePages(undefined)],
    ['LIST page of 500 pods: ListDecoder, item by item', () => decodePages(0)],
  ] as const) {
    run(); // warm-up
    gc();
    record(what, pages.length, time(run));
  }

  gc();
  const heap0 = process.memoryUsage().heapUsed;
  const idx = indexer();
  record(
    'Indexer.add (namespace + node index)',
    N,
    time(() => {
      for (const p of pods) idx.add(p);
    }),
  );
  gc();
  const heapPerObject = (process.memoryUsage().heapUsed - heap0) / N;
  record(
    'Indexer.update (index values unchanged)',
    N,
    time(() => {
      for (const p of updates) idx.update(p);
    }),
  );
  record(
    'Indexer.byIndex namespace (5k objects each)',
    200,
    time(() => {
      for (let i = 0; i < 200; i++) found += idx.byIndex(NAMESPACE_INDEX, `ns-${i % 20}`).length;
    }),
  );
  record(
    'Indexer.byIndex node (500 objects each)',
    2000,
    time(() => {
      for (let i = 0; i < 2000; i++) found += idx.byIndex('node', `node-${i % 200}`).length;
    }),
  );
  record(
    'Indexer.getByKey',
    N,
    time(() => {
      for (const p of pods) if (idx.getByKey(`${p.metadata.namespace}/${p.metadata.name}`)) found++;
    }),
  );
  record(
    'Indexer.delete',
    N,
    time(() => {
      for (const p of updates) idx.delete(p);
    }),
  );

  for (const [name, make] of [
    ['DeltaFIFO', () => new DeltaFIFO<BenchPod>()],
    ['RealFIFO', () => new RealFIFO<BenchPod>()],
  ] as const) {
    const q = make();
    const ms = await timeAsync(async () => {
      for (const p of pods) q.add(p);
      await drain(q, N, () => {});
    });
    record(`${name} add+pop`, N, ms);
  }

  let cycle: Result | undefined;
  for (const [name, make] of [
    ['DeltaFIFO', (store: Indexer<BenchPod>) => new DeltaFIFO<BenchPod>({ knownObjects: store })],
    ['RealFIFO', (store: Indexer<BenchPod>) => new RealFIFO<BenchPod>({ knownObjects: store })],
  ] as const) {
    const store = indexer();
    const q = make(store);
    const ms = await timeAsync(async () => {
      for (const p of pods) q.add(p);
      await drain(q, N, (p) => store.update(p));
    });
    const r = record(`${name} add → pop → Indexer.update (full cycle)`, N, ms);
    if (name === 'RealFIFO') cycle = r;
  }

  const ratio = cycle!.nsPerOp / parse.nsPerOp;
  const table = [
    '| operation | ops/s | ns/op |',
    '|---|---:|---:|',
    ...results.map((r) => `| ${r.what} | ${r.opsPerSec.toFixed(0)} | ${r.nsPerOp.toFixed(0)} |`),
    '',
    `Heap per cached object in an Indexer with two indexes: ${(heapPerObject / 1024).toFixed(2)} KiB (index and map overhead only; the objects themselves were already parsed).`,
    '',
    `A full pop+index cycle (RealFIFO) costs **${ratio.toFixed(2)}×** parsing the object's JSON (goal: far less than 1×).`,
  ].join('\n');
  const out = `Measured by \`pnpm bench:micro\` (${machineLine()}) with ${N} pods.\n\n${table}`;
  console.log(out);
  if (write) replaceSection('micro-bench', out);
  if (found < 0) console.log(found);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
