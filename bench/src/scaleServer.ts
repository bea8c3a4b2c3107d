/**
 * The scale benchmark's list/watch server (its own process). It serializes the benchmark pods once,
 * into one Buffer per page of {@link PAGE} pods, and serves `/api/v1/pods` from those Buffers, so
 * the server is never the bottleneck and no string longer than a page is ever built (200k pods are
 * about 750 MB of JSON).
 *
 * Two modes, set by `POST /_bench/reset?pods=N&mode=one|paged`:
 * - `one`: every LIST is answered in one response whatever its `limit` (what kube-apiserver's watch
 *   cache does for `resourceVersion=0` before 1.33, and for lists at a stored resourceVersion);
 * - `paged`: a LIST with `limit` is answered a page of {@link PAGE} pods at a time, with `continue`
 *   and `remainingItemCount`.
 *
 * Watches stay open until `POST /_bench/expire` ends each with a 410 `Expired` ERROR event.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { write } from './httpWrite.js';
import { makePod } from './pods.js';

/** Pods per page (and the `limit` the paged contenders send). */
export const PAGE = 500;

/** `pages[k]` holds pods k·PAGE … (k+1)·PAGE−1 as JSON joined by commas. */
const pages: Buffer[] = [];
let pods = 0;
let mode: 'one' | 'paged' = 'one';
const watchers = new Set<http.ServerResponse>();
const COMMA = Buffer.from(',');

/** Serializes pages up to `n` pods (once; a later smaller reset reuses the first pages). */
function ensurePods(n: number): void {
  for (let k = pages.length; k * PAGE < n; k++) {
    const parts: string[] = [];
    for (let i = k * PAGE; i < (k + 1) * PAGE; i++) parts.push(JSON.stringify(makePod(i, i + 1)));
    pages.push(Buffer.from(parts.join(',')));
  }
}

async function list(url: URL, res: http.ServerResponse): Promise<void> {
  const count = Math.ceil(pods / PAGE);
  const paged = mode === 'paged' && Number(url.searchParams.get('limit') ?? '0') > 0;
  const first = paged ? Number(url.searchParams.get('continue') || '0') : 0;
  const last = paged ? first + 1 : count;
  const meta: Record<string, unknown> = { resourceVersion: String(pods) };
  if (last < count) {
    meta.continue = String(last);
    meta.remainingItemCount = pods - last * PAGE;
  }
  res.writeHead(200, { 'Content-Type': 'application/json' });
  await write(res, `{"kind":"PodList","apiVersion":"v1","metadata":${JSON.stringify(meta)},"items":[`);
  for (let k = first; k < last && !res.destroyed; k++) {
    if (k > first) await write(res, COMMA);
    await write(res, pages[k]!);
  }
  res.end(']}');
}

function expireWatches(): void {
  const line = `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version","reason":"Expired","code":410}}\n`;
  for (const res of watchers) res.end(line);
  watchers.clear();
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://bench');
  if (req.method === 'POST' && url.pathname === '/_bench/reset') {
    pods = Number(url.searchParams.get('pods') ?? '1000');
    mode = url.searchParams.get('mode') === 'paged' ? 'paged' : 'one';
    ensurePods(pods);
    res.writeHead(200).end('{}');
  } else if (req.method === 'POST' && url.pathname === '/_bench/expire') {
    expireWatches();
    res.writeHead(200).end('{}');
  } else if (url.pathname === '/api/v1/pods' && url.searchParams.get('watch') === 'true') {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    watchers.add(res);
    res.on('close', () => watchers.delete(res));
  } else if (url.pathname === '/api/v1/pods') {
    list(url, res).catch(() => res.destroy());
  } else {
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
  }
});

server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ url: `http://127.0.0.1:${port}` });
});
process.on('disconnect', () => process.exit(0));
