/**
 * The floors: the least work an informer can do. Page the list (`limit=500`), `JSON.parse` each page
 * into a Map, then split the watch stream on newlines in bytes and `JSON.parse` each event into the
 * Map. No queue, no indexes, no handlers' buffers, no error handling beyond a relist on 410. The two
 * floors differ only in transport: `fetch` (the issue's floor) and `node:http` with keep-alive (fetch's
 * web streams cost more than node's streams, so that floor is the stricter one).
 */
import http from 'node:http';
import type { Contender } from './types.js';

interface Pod {
  metadata: { namespace: string; name: string; resourceVersion: string };
}

/** How a floor talks HTTP: a whole body as text, or a body as a stream of byte chunks. */
interface Transport {
  text(url: string, signal: AbortSignal): Promise<string>;
  chunks(url: string, signal: AbortSignal): Promise<AsyncIterable<Uint8Array>>;
  close(): void;
}

const fetchTransport = (): Transport => ({
  text: async (url, signal) => (await fetch(url, { signal })).text(),
  chunks: async (url, signal) => (await fetch(url, { signal })).body as ReadableStream<Uint8Array>,
  close: () => {},
});

function httpTransport(): Transport {
  const agent = new http.Agent({ keepAlive: true });
  const get = (url: string, signal: AbortSignal): Promise<http.IncomingMessage> =>
    new Promise((resolve, reject) => http.get(url, { agent, signal }, resolve).on('error', reject));
  return {
    async text(url, signal) {
      const chunks: Buffer[] = [];
      for await (const chunk of await get(url, signal)) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    chunks: get,
    close: () => agent.destroy(),
  };
}

export const floor = (serverUrl: string): Contender => rawFloor(serverUrl, fetchTransport());
export const floorHttp = (serverUrl: string): Contender => rawFloor(serverUrl, httpTransport());

function rawFloor(serverUrl: string, transport: Transport): Contender {
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
      const page = JSON.parse(await transport.text(`${serverUrl}/api/v1/pods?${q}`, abort.signal)) as {
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
      const body = await transport.chunks(
        `${serverUrl}/api/v1/pods?watch=true&resourceVersion=${rv}`,
        abort.signal,
      );
      let rest: Buffer | undefined;
      let expired = false;
      for await (const value of body) {
        const chunk = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
        const buf = rest ? Buffer.concat([rest, chunk]) : chunk;
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
      transport.close();
      return Promise.resolve();
    },
  };
}
