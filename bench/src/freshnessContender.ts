/**
 * One contender of `pnpm bench:freshness`, in its own child process: keeps a cache of
 * `/api/v1/pods` from the server at `url` and reports to the parent over IPC which resourceVersion
 * its handler saw when (`performance.timeOrigin + performance.now()`, comparable across processes),
 * in batches every 20 ms. On `{ type: 'final' }` it answers with its cache (`key → rv`) and exits.
 *
 *   kinformer    SharedIndexInformer over createListWatch, every option at its default
 *   client-node  @kubernetes/client-node makeInformer with its documented restart: `on('error')` → start again after 1 s
 *   floor        a 70-line list/watch loop: backoff 100 ms doubling to 2 s, reset on every event
 */
import { performance } from 'node:perf_hooks';
import { CoreV1Api, makeInformer, type V1Pod } from '@kubernetes/client-node';
import { benchKubeConfig } from './benchKubeConfig.js';
import { createListWatch } from '@kinformer/client-node';
import { SharedIndexInformer } from '@kinformer/informer';
import type { KubeObject } from '@kinformer/core';

type Seen = (obj: KubeObject | undefined) => void;

interface Running {
  cache(): Map<string, string>;
}

function keyOf(obj: KubeObject): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

function runKinformer(url: string, seen: Seen): Running {
  const lw = createListWatch<KubeObject>(benchKubeConfig(url), { version: 'v1', resource: 'pods' });
  const informer = new SharedIndexInformer<KubeObject>(lw, { name: 'pods' });
  informer.addEventHandler({
    onAdd: (o) => seen(o),
    onUpdate: (_old, o) => seen(o),
    onDelete: (o) => seen('obj' in o ? o.obj : o),
  });
  void informer.run(new AbortController().signal);
  return {
    cache: () =>
      new Map(
        informer
          .getStore()
          .list()
          .map((o) => [keyOf(o), o.metadata?.resourceVersion ?? '']),
      ),
  };
}

function runClientNode(url: string, seen: Seen): Running {
  const kc = benchKubeConfig(url);
  const api = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer<V1Pod>(kc, '/api/v1/pods', () => api.listPodForAllNamespaces());
  informer.on('add', (o) => seen(o));
  informer.on('update', (o) => seen(o));
  informer.on('delete', (o) => seen(o));
  // client-node's README: restart the informer when it reports an error.
  informer.on('error', () => {
    setTimeout(() => void informer.start().catch(() => undefined), 1000);
  });
  void informer.start().catch(() => undefined);
  return {
    cache: () =>
      new Map(informer.list().map((o) => [keyOf(o as KubeObject), o.metadata?.resourceVersion ?? ''])),
  };
}

/** The floor: list, then watch from the list's version; relist on 410; back off 100 ms → 2 s, reset on success. */
function runFloor(url: string, seen: Seen): Running {
  const cache = new Map<string, KubeObject>();
  let delay = 100;
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  const loop = async (): Promise<void> => {
    let rv = '';
    for (;;) {
      try {
        if (rv === '') {
          const res = await fetch(`${url}/api/v1/pods`);
          if (!res.ok) throw new Error(`list ${res.status}`);
          const list = (await res.json()) as { metadata: { resourceVersion: string }; items: KubeObject[] };
          cache.clear();
          for (const o of list.items) {
            cache.set(keyOf(o), o);
            seen(o);
          }
          rv = list.metadata.resourceVersion;
          delay = 100;
        }
        const res = await fetch(
          `${url}/api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`,
        );
        if (res.status === 410) rv = '';
        if (!res.ok || res.body === null) throw new Error(`watch ${res.status}`);
        const decoder = new TextDecoder();
        let buf = '';
        for await (const chunk of res.body) {
          buf += decoder.decode(chunk as Uint8Array, { stream: true });
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            const ev = JSON.parse(line) as { type: string; object: KubeObject & { code?: number } };
            if (ev.type === 'ERROR') {
              if (ev.object.code === 410) rv = '';
              throw new Error('watch ERROR');
            }
            rv = ev.object.metadata?.resourceVersion ?? rv;
            delay = 100;
            if (ev.type === 'BOOKMARK') continue;
            if (ev.type === 'DELETED') cache.delete(keyOf(ev.object));
            else cache.set(keyOf(ev.object), ev.object);
            seen(ev.object);
          }
        }
      } catch {
        await sleep(delay);
        delay = Math.min(2000, delay * 2);
      }
    }
  };
  void loop();
  return { cache: () => new Map([...cache].map(([k, o]) => [k, o.metadata?.resourceVersion ?? ''])) };
}

const [name, url] = process.argv.slice(2);
if (name === undefined || url === undefined) throw new Error('usage: freshnessContender <name> <url>');
let batch: number[] = [];
const seen: Seen = (obj) => {
  const rv = Number(obj?.metadata?.resourceVersion);
  if (Number.isFinite(rv)) batch.push(rv, performance.timeOrigin + performance.now());
};
const running =
  name === 'kinformer'
    ? runKinformer(url, seen)
    : name === 'client-node'
      ? runClientNode(url, seen)
      : runFloor(url, seen);
setInterval(() => {
  if (batch.length === 0) return;
  process.send?.({ type: 'seen', batch });
  batch = [];
}, 20).unref();
process.on('message', (m: { type: string }) => {
  if (m.type !== 'final') return;
  process.send?.({ type: 'seen', batch });
  batch = [];
  process.send?.({ type: 'final', cache: [...running.cache()] }, () => process.exit(0));
});
process.on('unhandledRejection', () => undefined); // client-node's informer rejects on some faults
