/**
 * The floor: the least work an informer can do. Pages the list with fetch, `JSON.parse`s each page
 * into a Map, then splits the watch stream on newlines in bytes and `JSON.parse`s each event into the
 * Map. No queue, no indexes, no handlers' buffers, no error handling beyond a relist on 410.
 */
import type { Contender } from './types.js';

interface Pod {
  metadata: { namespace: string; name: string; resourceVersion: string };
}

export function floor(serverUrl: string): Contender {
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
      const res = await fetch(`${serverUrl}/api/v1/pods?${q}`, { signal: abort.signal });
      const body = JSON.parse(await res.text()) as {
        metadata: { resourceVersion: string; continue?: string };
        items: Pod[];
      };
      for (const p of body.items) next.set(`${p.metadata.namespace}/${p.metadata.name}`, p);
      if (!cont) rv = body.metadata.resourceVersion;
      cont = body.metadata.continue ?? '';
      if (!cont) break;
    }
    cache = next;
  }

  async function watchLoop(): Promise<void> {
    while (!abort.signal.aborted) {
      const res = await fetch(`${serverUrl}/api/v1/pods?watch=true&resourceVersion=${rv}`, {
        signal: abort.signal,
      });
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      let rest: Buffer | undefined;
      let expired = false;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        let buf = rest
          ? Buffer.concat([rest, value])
          : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
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
        buf = Buffer.alloc(0);
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
      return Promise.resolve();
    },
  };
}
