/**
 * `pnpm bench:profile`: a CPU profile of kinformer's hot path. Runs the kinformer contender (sync of
 * 10k pods, then a burst of 100k MODIFIED events, then a relist) under `--cpu-prof`, and writes to
 * docs/performance.md where its self time goes, by component and by function.
 */
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineLine, replaceSection } from './report.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const pods = Number(process.argv[2] ?? 10_000);
const events = Number(process.argv[3] ?? 100_000);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function component(url: string, fn: string): string {
  if (fn === '(garbage collector)') return 'garbage collection';
  if (fn === '(idle)' || fn === '(program)') return fn;
  if (fn === 'parse' && url === '') return 'JSON.parse';
  const m = /\/packages\/([a-z-]+)\/(?:dist|src)\//.exec(url);
  if (m) return `@kinformer/${m[1]}`;
  if (url.includes('@kubernetes/client-node')) return '@kubernetes/client-node';
  if (url.includes('/bench/')) return 'benchmark harness';
  if (url.startsWith('node:') || url === '') return 'Node.js runtime (streams, sockets, buffers)';
  return 'other dependencies';
}

async function post(url: string): Promise<void> {
  await (await fetch(url, { method: 'POST' })).text();
}

async function main(): Promise<void> {
  const server = fork(path.join(here, 'server.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve) =>
    server.once('message', (m: { url: string }) => resolve(m.url)),
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kinformer-prof-'));
  try {
    await post(`${url}/_bench/reset?pods=${pods}`);
    await post(`${url}/_bench/prepare?events=${events}`);
    const child = fork(path.join(here, 'contender.js'), ['kinformer', url, String(pods), String(events)], {
      execArgv: ['--expose-gc', '--cpu-prof', `--cpu-prof-dir=${dir}`],
      env: { ...process.env, NODE_ENV: 'production' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await new Promise((resolve) => child.on('exit', resolve));
  } finally {
    server.kill();
  }
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('no profile written');
  const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byComponent = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const c = component(n.callFrame.url, n.callFrame.functionName);
    if (c === '(idle)') continue;
    total += us;
    byComponent.set(c, (byComponent.get(c) ?? 0) + us);
    const short = n.callFrame.url.replace(/^.*\/(packages|node_modules)\//, '').replace(/^file:\/\//, '');
    const fname =
      `${n.callFrame.functionName || '(anonymous)'} ${short ? `(${short}:${n.callFrame.lineNumber + 1})` : ''}`.trim();
    byFunction.set(fname, (byFunction.get(fname) ?? 0) + us);
  }
  const pct = (us: number): string => `${((us / total) * 100).toFixed(1)} %`;
  const rows = (m: Map<string, number>, n: number): string[] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => `| ${k} | ${(us / 1000).toFixed(0)} | ${pct(us)} |`);
  const text = [
    `CPU profile of the kinformer contender (${machineLine()}): sync of ${pods} pods, ${events} watch events, one relist; busy time only (idle excluded), ${(total / 1000).toFixed(0)} ms in all.`,
    '',
    '| component | self ms | share |',
    '|---|---:|---:|',
    ...rows(byComponent, 12),
    '',
    '| function | self ms | share |',
    '|---|---:|---:|',
    ...rows(byFunction, 15),
    '',
    'V8 counts the time of `JSON.parse` (a builtin) as self time of the function that calls it: `parse` in',
    "client-node's `watchEventStream.js` (one call per watch event) and `list` in `createListWatch.js` (one per",
    'list page). Module compilation is start-up cost that every contender pays.',
  ].join('\n');
  console.log(text);
  if (!process.argv.includes('--no-write')) replaceSection('profile', text);
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
