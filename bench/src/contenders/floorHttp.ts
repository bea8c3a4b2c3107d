/**
 * A second floor on node:http instead of fetch (fetch's web streams cost more than node's own
 * streams): pages the list with a keep-alive agent, one `JSON.parse` per page, then splits the watch
 * stream on newlines in bytes with one `JSON.parse` per event into a Map. No queue, no indexes.
 */
import http from 'node:http';
import type { Contender } from './types.js';

interface Pod {
  metadata: { namespace: string; name: string; resourceVersion: string };
}

function get(agent: http.Agent, url: string, signal: AbortSignal): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, signal }, resolve);
    req.on('error', reject);
  });
}

async function body(res: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function floorHttp(serverUrl: string): Contender {
  const agent = new http.Agent({ keepAlive: true });
  let cache = new Map<string, Pod>();
  let rv = '';
  let onEvent: () => void = () => {};
  let relistWaiter: (() => void) | undefined;
  const abort = new AbortController();

  async function list(): Promise<void> {
    const next = new Map<string, Pod>();
    let cont = '';
    for (;;) {
      const q = cont ? `limit=500&continue=${encodeURIComponent(cont)}` : 'limit=500&resourceVersion=0';
      const page = JSON.parse(
        await body(await get(agent, `${serverUrl}/api/v1/pods?${q}`, abort.signal)),
      ) as {
        metadata: { resourceVersion: string; continue?: string };
        items: Pod[];
      };
      for (const p of page.items) next.set(`${p.metadata.namespace}/${p.metadata.name}`, p);
      if (!cont) rv = page.metadata.resourceVersion;
      cont = page.metadata.continue ?? '';
      if (!cont) break;
    }
    cache = next;
  }

  async function watchLoop(): Promise<void> {
    while (!abort.signal.aborted) {
      const res = await get(agent, `${serverUrl}/api/v1/pods?watch=true&resourceVersion=${rv}`, abort.signal);
      let rest: Buffer | undefined;
      let expired = false;
      for await (const value of res) {
        const buf = rest ? Buffer.concat([rest, value as Buffer]) : (value as Buffer);
        let start = 0;
        for (let nl = buf.indexOf(10, start); nl !== -1; nl = buf.indexOf(10, start)) {
          const ev = JSON.parse(buf.toString('utf8', start, nl)) as {
            type: string;
            object: Pod & { code?: number };
          };
          start = nl + 1;
          if (ev.type === 'ERROR') {
            expired = ev.object.code === 410;
            continue;
          }
          const key = `${ev.object.metadata.namespace}/${ev.object.metadata.name}`;
          if (ev.type === 'DELETED') cache.delete(key);
          else cache.set(key, ev.object);
          rv = ev.object.metadata.resourceVersion;
          onEvent();
        }
        rest = start < buf.length ? buf.subarray(start) : undefined;
      }
      if (expired) {
        await list();
        relistWaiter?.();
        relistWaiter = undefined;
      }
    }
  }

  return {
    async start() {
      await list();
      watchLoop().catch(() => {});
    },
    size: () => cache.size,
    onEvent(cb) {
      onEvent = cb;
    },
    nextRelist() {
      return new Promise((resolve) => {
        relistWaiter = resolve;
      });
    },
    stop() {
      abort.abort();
      agent.destroy();
      return Promise.resolve();
    },
  };
}
