/**
 * `pnpm bench:shard`: what one replica of a sharded informer costs, side by side with a single
 * replica — heap of the synced cache and bytes received — for KEP-5866 `shardSelector` filtered by
 * the server (`ShardedListAndWatch` on) and by the client (the server ignores it), at N = 3 replicas.
 *
 * The parent runs a FakeApiServer with realistic pods (uids random, as a server assigns them) and,
 * for every contender, a byte-counting TCP proxy; each contender runs in its own
 * `node --expose-gc` process (a Reflector from `createListWatch` into a store) and reports its heap
 * after GC once synced, minus its heap after GC before starting. `@kubernetes/client-node`'s
 * `ListWatch` (unsharded: it has no shard option) and the raw JSON size are the floor and the peer.
 * Usage: `node --expose-gc bench/dist/shardBench.js [pods=20000] [replicas=3]`.
 */
import { fork } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { createListWatch } from '@kinformer/client-node';
import { shardSelectorFromRanges, splitHashSpace, type KubeObject } from '@kinformer/core';
import { Reflector } from '@kinformer/reflector';
import { FakeApiServer } from '@kinformer/testing';
import { ListWatch } from '@kubernetes/client-node';
import { benchKubeConfig } from './benchKubeConfig.js';
import { countingProxy } from './shardCountingProxy.js';
import { gcHeap } from './heap.js';
import { makeRealisticPod } from './realisticPods.js';

type Mode = 'single' | 'server' | 'client' | 'client-node';

interface ChildResult {
  mode: Mode;
  replica: number;
  heapBytes: number;
  objects: number;
  syncMs: number;
  filterMode?: string;
}

async function child(url: string, mode: Mode, replica: number, replicas: number): Promise<void> {
  const resource = { version: 'v1', resource: 'pods' };
  const store = new Map<string, KubeObject>();
  const before = gcHeap();
  const started = performance.now();
  const stop = new AbortController();
  if (mode === 'client-node') {
    const kc = benchKubeConfig(url);
    const { CoreV1Api, Watch: WatchClass } = await import('@kubernetes/client-node');
    const api = kc.makeApiClient(CoreV1Api);
    const lw = new ListWatch('/api/v1/pods', new WatchClass(kc), () => api.listPodForAllNamespaces(), false);
    await lw.start();
    for (;;) {
      if (lw.list().length > 0) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const heap = gcHeap() - before;
    const result: ChildResult = {
      mode,
      replica,
      heapBytes: heap,
      objects: lw.list().length,
      syncMs: performance.now() - started,
    };
    await lw.stop();
    process.send!(result);
    return;
  }
  const range = splitHashSpace(replicas)[replica]!;
  const selector = mode === 'single' ? undefined : shardSelectorFromRanges('object.metadata.uid', [range]);
  let synced = false;
  const reflector = new Reflector(
    createListWatch(benchKubeConfig(url), resource),
    {
      add: (o) => store.set(`${o.metadata?.namespace}/${o.metadata?.name}`, o),
      update: (o) => store.set(`${o.metadata?.namespace}/${o.metadata?.name}`, o),
      delete: (o) => store.delete(`${o.metadata?.namespace}/${o.metadata?.name}`),
      replace: (items) => {
        store.clear();
        for (const o of items) store.set(`${o.metadata?.namespace}/${o.metadata?.name}`, o);
        synced = true;
      },
      resync: () => undefined,
    },
    selector === undefined ? {} : { shardSelector: selector },
  );
  const run = reflector.run(stop.signal);
  while (!synced) await new Promise((r) => setTimeout(r, 5));
  const syncMs = performance.now() - started;
  const filterMode = reflector.stats().shardFilterMode;
  const heap = gcHeap() - before;
  const result: ChildResult = {
    mode,
    replica,
    heapBytes: heap,
    objects: store.size,
    syncMs,
    ...(filterMode === undefined ? {} : { filterMode }),
  };
  stop.abort();
  await run;
  process.send!(result);
}

function runChild(url: string, mode: Mode, replica: number, replicas: number): Promise<ChildResult> {
  const p = fork(fileURLToPath(import.meta.url), ['child', url, mode, String(replica), String(replicas)], {
    execArgv: ['--expose-gc'],
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    p.once('message', (m: ChildResult) => {
      resolve(m);
      p.kill();
    });
    p.once('exit', (code) => reject(new Error(`contender ${mode}/${replica} exited ${code}`)));
  });
}

const mb = (n: number): string => (n / 1024 / 1024).toFixed(1);

async function main(): Promise<void> {
  const pods = Number(process.argv[2] ?? 20_000);
  const replicas = Number(process.argv[3] ?? 3);
  const server = await FakeApiServer.start({ historySize: 100 });
  const objs: KubeObject[] = [];
  for (let i = 0; i < pods; i++) {
    const pod = makeRealisticPod(i, 1) as unknown as KubeObject & { metadata: Record<string, unknown> };
    delete pod.metadata['uid'];
    delete pod.metadata['resourceVersion'];
    objs.push(pod);
  }
  server.createMany('pods', objs);
  objs.length = 0;
  const jsonBytes = Buffer.byteLength(JSON.stringify(server.list('pods')));
  const rows: Array<ChildResult & { bytes: number }> = [];
  const run = async (mode: Mode, replica: number): Promise<void> => {
    server.shardedListAndWatch = mode !== 'client';
    const proxy = await countingProxy(new URL(server.url));
    try {
      const r = await runChild(proxy.url, mode, replica, replicas);
      rows.push({ ...r, bytes: proxy.bytes() });
    } finally {
      proxy.close();
    }
  };
  await run('client-node', 0);
  await run('single', 0);
  for (let i = 0; i < replicas; i++) await run('server', i);
  for (let i = 0; i < replicas; i++) await run('client', i);
  await server.close();

  const single = rows.find((r) => r.mode === 'single')!;
  console.log(
    `shard bench: ${pods} realistic pods (${mb(jsonBytes)} MB of JSON), ${replicas} replicas; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} on ${os.cpus().length} cores (shared with other agents)`,
  );
  console.log(
    '| contender | replica | objects | heap MB | × single | bytes received MB | × single | sync ms | filter |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) {
    console.log(
      `| ${r.mode} | ${r.replica} | ${r.objects} | ${mb(r.heapBytes)} | ${(r.heapBytes / single.heapBytes).toFixed(2)} | ${mb(r.bytes)} | ${(r.bytes / single.bytes).toFixed(2)} | ${r.syncMs.toFixed(0)} | ${r.filterMode ?? '-'} |`,
    );
  }
  const worst = (mode: Mode, f: (r: (typeof rows)[number]) => number): number =>
    Math.max(...rows.filter((r) => r.mode === mode).map(f));
  console.log(
    `goal heap ≤ 0.4× single: server ${(worst('server', (r) => r.heapBytes) / single.heapBytes).toFixed(2)}×, client ${(worst('client', (r) => r.heapBytes) / single.heapBytes).toFixed(2)}×; ` +
      `bytes ≤ 0.4× (server-side only): server ${(worst('server', (r) => r.bytes) / single.bytes).toFixed(2)}×, client ${(worst('client', (r) => r.bytes) / single.bytes).toFixed(2)}× (expected ≈ 1)`,
  );
}

if (process.argv[2] === 'child') {
  void child(process.argv[3]!, process.argv[4] as Mode, Number(process.argv[5]), Number(process.argv[6]));
} else {
  void main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
