/**
 * One contender in its own child process (started with --expose-gc). Runs the phases in order and
 * reports to the parent over IPC:
 *   sync   time from start to synced; heap after sync (after GC)
 *   watch  events per second from asking the server for the burst to the last event at the handler
 *   relist peak RSS while a forced 410 makes the contender relist (sampled by a worker thread)
 */
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { clientNode } from './contenders/clientNode.js';
import { floor, floorHttp } from './contenders/rawFloor.js';
import {
  kinformer,
  kinformerMetadata,
  kinformerPaged,
  kinformerNoReuse,
  kinformerSelector,
  kinformerTransform,
} from './contenders/kinformer.js';
import type { ContenderFactory } from './contenders/types.js';

const contenders: Record<string, ContenderFactory> = {
  floor,
  'floor-http': floorHttp,
  'client-node': clientNode,
  kinformer,
  'kinformer (dropManagedFields)': kinformerTransform,
  'kinformer (metadata-only)': kinformerMetadata,
  'kinformer (tier=frontend selector)': kinformerSelector,
  'kinformer (paged relists)': kinformerPaged,
  'kinformer (no list-item reuse)': kinformerNoReuse,
};

export interface ContenderResult {
  name: string;
  pods: number;
  syncMs: number;
  /** CPU time (user + system) of the contender's process from start to synced: less moved by other load than `syncMs`. */
  syncCpuMs: number;
  heapAfterSyncMB: number;
  rssAfterSyncMB: number;
  eventsPerSec: number;
  peakRssDuringRelistMB: number;
  relistMs: number;
}

function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) throw new Error('run with --expose-gc');
  g();
  g();
}

const MB = 1024 * 1024;

async function post(url: string): Promise<void> {
  const res = await fetch(url, { method: 'POST' });
  await res.text();
}

async function main(): Promise<void> {
  const [name, serverUrl, podsArg, eventsArg] = process.argv.slice(2);
  const factory = contenders[name ?? ''];
  if (!factory || !serverUrl)
    throw new Error(`usage: contender <${Object.keys(contenders).join('|')}> <url> <pods> <events>`);
  const pods = Number(podsArg);
  const events = Number(eventsArg);
  const c = factory(serverUrl);

  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await c.start();
  const expected = c.expectedSize?.(pods) ?? pods;
  while (c.size() < expected) await new Promise((r) => setImmediate(r));
  const syncMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const syncCpuMs = (cpu.user + cpu.system) / 1000;
  await new Promise((r) => setTimeout(r, 50));
  gc();
  const heapAfterSyncMB = process.memoryUsage().heapUsed / MB;
  const rssAfterSyncMB = process.memoryUsage.rss() / MB;

  let eventsPerSec = 0;
  if (events > 0) {
    let seen = 0;
    let resolveAll: () => void = () => {};
    const all = new Promise<void>((r) => (resolveAll = r));
    c.onEvent(() => {
      if (++seen === events) resolveAll();
    });
    await new Promise((r) => setTimeout(r, 100)); // the watch is open
    const tb = performance.now();
    await Promise.all([post(`${serverUrl}/_bench/burst`), all]);
    eventsPerSec = events / ((performance.now() - tb) / 1000);
  }

  gc();
  const sampler = new Worker(
    `const { parentPort } = require('node:worker_threads'); let peak = 0;
     const t = setInterval(() => { const r = process.memoryUsage.rss(); if (r > peak) peak = r; }, 1);
     parentPort.on('message', () => { clearInterval(t); parentPort.postMessage(peak); });`,
    { eval: true },
  );
  await new Promise((r) => setTimeout(r, 20));
  const relisted = c.nextRelist();
  const tr = performance.now();
  await post(`${serverUrl}/_bench/expire`);
  await relisted;
  const relistMs = performance.now() - tr;
  const peak = await new Promise<number>((resolve) => {
    sampler.once('message', resolve);
    sampler.postMessage('stop');
  });
  await sampler.terminate();
  await c.stop();

  const result: ContenderResult = {
    name: name!,
    pods,
    syncMs,
    syncCpuMs,
    heapAfterSyncMB,
    rssAfterSyncMB,
    eventsPerSec,
    peakRssDuringRelistMB: peak / MB,
    relistMs,
  };
  process.send?.(result);
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
