/**
 * `pnpm bench:informer`: kinformer's SharedIndexInformer vs `@kubernetes/client-node`'s makeInformer
 * vs a raw fetch-and-parse floor, side by side in one run. The list/watch server runs in its own
 * process; each contender runs in a fresh child process per round. Prints a table of medians and
 * ratios and writes it, with a chart, to docs/performance.md.
 *
 * Options: --rounds N (3), --sizes 20000,50000, --events 100000, --only floor,kinformer, --no-write
 *
 * Every change to the list or watch path (client-node's decoders, the reflector's list and relist, the
 * FIFO's and the store's replace) re-runs this (`pnpm bench:informer`; at least `-- --sizes 20000
 * --events 0 --no-levers`) and `pnpm bench:scale`, and updates docs/performance.md with what it
 * measured: see bench/README.md.
 */
import { runContender, startServer } from './children.js';
import type { ContenderResult } from './contender.js';
import { median, updateDoc, type Row } from './report.js';

const args = process.argv.slice(2);
function opt(name: string, dflt: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : dflt;
}
const rounds = Number(opt('rounds', '3'));
const sizes = opt('sizes', '20000,50000').split(',').map(Number);
const events = Number(opt('events', '100000'));
const names = opt('only', 'floor,floor-http,client-node,kinformer').split(',');
/** Memory levers, measured at the largest size (sync, heap and relist; no watch burst). */
const LEVERS = [
  'kinformer (dropManagedFields)',
  'kinformer (metadata-only)',
  'kinformer (tier=frontend selector)',
  'kinformer (paged relists)',
];
const levers = !args.includes('--no-levers') && names.includes('kinformer');

async function post(url: string): Promise<void> {
  await (await fetch(url, { method: 'POST' })).text();
}

async function main(): Promise<void> {
  const { child: server, url } = await startServer();
  const rows: Row[] = [];
  try {
    for (const pods of sizes) {
      // Events are measured at the smallest size only: the burst is the same either way.
      const evs = pods === Math.min(...sizes) ? events : 0;
      const results = new Map<string, ContenderResult[]>();
      for (let r = 0; r < rounds; r++) {
        // Rotate the order each round so no contender always runs first.
        const here = levers && pods === Math.max(...sizes) ? [...names, ...LEVERS] : names;
        const order = here.map((_, i) => here[(i + r) % here.length]!);
        for (const name of order) {
          const contenderEvents = LEVERS.includes(name) ? 0 : evs;
          await post(`${url}/_bench/reset?pods=${pods}`);
          if (contenderEvents) await post(`${url}/_bench/prepare?events=${contenderEvents}`);
          const res = await runContender(name, url, pods, contenderEvents);
          process.stderr.write(
            `  ${name} pods=${pods} round=${r + 1}: sync ${res.syncMs.toFixed(0)} ms (CPU ${res.syncCpuMs.toFixed(0)} ms), heap ${res.heapAfterSyncMB.toFixed(1)} MB, ${res.eventsPerSec.toFixed(0)} ev/s, relist peak RSS ${res.peakRssDuringRelistMB.toFixed(0)} MB\n`,
          );
          results.set(name, [...(results.get(name) ?? []), res]);
        }
      }
      for (const [name, rs] of results) {
        rows.push({
          name,
          pods,
          syncMs: median(rs.map((x) => x.syncMs)),
          syncCpuMs: median(rs.map((x) => x.syncCpuMs)),
          heapAfterSyncMB: median(rs.map((x) => x.heapAfterSyncMB)),
          rssAfterSyncMB: median(rs.map((x) => x.rssAfterSyncMB)),
          eventsPerSec: evs && !LEVERS.includes(name) ? median(rs.map((x) => x.eventsPerSec)) : undefined,
          peakRssDuringRelistMB: median(rs.map((x) => x.peakRssDuringRelistMB)),
        });
      }
    }
  } finally {
    server.kill();
  }
  const text = updateDoc(rows, { rounds, events, write: !args.includes('--no-write') });
  console.log(text);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
