/**
 * The benchmark's list/watch server, run in its own process so that its CPU does not count against
 * the contenders. It serves `/api/v1/pods` with `limit`/`continue` from pre-serialised pods, keeps
 * watches open, and on command streams a prepared burst of MODIFIED events as fast as each socket
 * drains, or ends every watch with a 410 ERROR so that clients relist.
 *
 * Control endpoints (POST): `/_bench/reset?pods=N`, `/_bench/prepare?events=E`, `/_bench/burst`,
 * `/_bench/expire`. `GET /_bench/stats` answers with request counts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { write } from './httpWrite.js';
import { makePod } from './pods.js';

let rvs: number[] = [];
let json: Array<string | undefined> = [];
let metaJson: Array<string | undefined> = [];
let rev = 0;
let burst: Buffer[] = [];
let burstUpdates: Array<[number, number]> = [];
const watchers = new Set<http.ServerResponse>();
const stats = { lists: 0, watches: 0, listPages: 0 };

function podJson(i: number): string {
  let s = json[i];
  if (s === undefined) {
    s = JSON.stringify(makePod(i, rvs[i] ?? 0));
    json[i] = s;
  }
  return s;
}

/** The pod as PartialObjectMetadata (what `Accept: …;as=PartialObjectMetadataList` asks for). */
function podMetaJson(i: number): string {
  let s = metaJson[i];
  if (s === undefined) {
    s = JSON.stringify({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: makePod(i, rvs[i] ?? 0).metadata,
    });
    metaJson[i] = s;
  }
  return s;
}

/** The only label selector the bench server understands: `tier=frontend|backend` (pod i is frontend iff i % 3 == 0). */
function selected(i: number, selector: string | null): boolean {
  if (!selector) return true;
  if (selector === 'tier=frontend') return i % 3 === 0;
  if (selector === 'tier=backend') return i % 3 !== 0;
  throw new Error(`bench server: unsupported selector ${selector}`);
}

function reset(n: number): void {
  rvs = Array.from({ length: n }, (_, i) => i + 1);
  json = new Array<string | undefined>(n);
  metaJson = new Array<string | undefined>(n);
  for (let i = 0; i < n; i++) podJson(i);
  rev = n;
  burst = [];
  burstUpdates = [];
}

function prepare(events: number): void {
  const n = rvs.length;
  const chunks: Buffer[] = [];
  const updates: Array<[number, number]> = [];
  let parts: string[] = [];
  let size = 0;
  for (let k = 0; k < events; k++) {
    const i = k % n;
    const rv = rev + k + 1;
    updates.push([i, rv]);
    const pod = makePod(i, rv);
    const line = `{"type":"MODIFIED","object":${JSON.stringify({ kind: 'Pod', apiVersion: 'v1', ...pod })}}\n`;
    parts.push(line);
    size += line.length;
    if (size >= 256 * 1024) {
      chunks.push(Buffer.from(parts.join('')));
      parts = [];
      size = 0;
    }
  }
  if (parts.length) chunks.push(Buffer.from(parts.join('')));
  burst = chunks;
  burstUpdates = updates;
}

async function sendBurst(): Promise<void> {
  const targets = [...watchers];
  await Promise.all(
    targets.map(async (res) => {
      for (const chunk of burst) {
        if (res.destroyed) return;
        await write(res, chunk);
      }
    }),
  );
  for (const [i, rv] of burstUpdates) {
    rvs[i] = rv;
    json[i] = undefined;
    metaJson[i] = undefined;
  }
  if (burstUpdates.length) rev = burstUpdates[burstUpdates.length - 1]![1];
  burst = [];
  burstUpdates = [];
}

function expireWatches(): void {
  const line = `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (${rev})","reason":"Expired","code":410}}\n`;
  for (const res of watchers) res.end(line);
  watchers.clear();
}

async function list(req: URL, res: http.ServerResponse, metadataOnly: boolean): Promise<void> {
  stats.listPages++;
  const limit = Number(req.searchParams.get('limit') ?? '0');
  const cont = req.searchParams.get('continue');
  let start = 0;
  let listRv = rev;
  if (cont) {
    const token = JSON.parse(Buffer.from(cont, 'base64url').toString()) as { rv: number; start: number };
    start = token.start;
    listRv = token.rv;
  } else {
    stats.lists++;
  }
  const n = rvs.length;
  const selector = req.searchParams.get('labelSelector');
  // Collect this page's indexes (selectors skip non-matching pods, as the server does).
  const page: number[] = [];
  let end = start;
  while (end < n && (limit <= 0 || page.length < limit)) {
    if (selected(end, selector)) page.push(end);
    end++;
  }
  while (end < n && !selected(end, selector)) end++;
  const meta: Record<string, unknown> = { resourceVersion: String(listRv) };
  if (end < n) {
    meta.continue = Buffer.from(JSON.stringify({ rv: listRv, start: end })).toString('base64url');
    meta.remainingItemCount = n - end;
  }
  res.writeHead(200, { 'Content-Type': 'application/json' });
  const head = metadataOnly
    ? `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1"`
    : `{"kind":"PodList","apiVersion":"v1"`;
  await write(res, `${head},"metadata":${JSON.stringify(meta)},"items":[`);
  let parts: string[] = [];
  let size = 0;
  for (let k = 0; k < page.length; k++) {
    const s = metadataOnly ? podMetaJson(page[k]!) : podJson(page[k]!);
    parts.push(k === 0 ? s : `,${s}`);
    size += s.length;
    if (size >= 256 * 1024) {
      await write(res, parts.join(''));
      parts = [];
      size = 0;
    }
  }
  parts.push(']}');
  res.end(parts.join(''));
}

function watch(res: http.ServerResponse): void {
  stats.watches++;
  res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();
  watchers.add(res);
  res.on('close', () => watchers.delete(res));
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://bench');
  void (async () => {
    if (req.method === 'POST') {
      switch (url.pathname) {
        case '/_bench/reset':
          reset(Number(url.searchParams.get('pods') ?? '1000'));
          break;
        case '/_bench/prepare':
          prepare(Number(url.searchParams.get('events') ?? '0'));
          break;
        case '/_bench/burst':
          await sendBurst();
          break;
        case '/_bench/expire':
          expireWatches();
          break;
        default:
          res.writeHead(404).end();
          return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      return;
    }
    if (url.pathname === '/_bench/stats') {
      res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ ...stats, watchers: watchers.size, rev }));
      return;
    }
    if (url.pathname === '/api/v1/pods') {
      const w = url.searchParams.get('watch');
      if (w === 'true' || w === '1') watch(res);
      else await list(url, res, /as=PartialObjectMetadataList/.test(req.headers.accept ?? ''));
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
  })();
});

server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  if (process.send) process.send({ type: 'listening', url: `http://127.0.0.1:${port}` });
  else console.log(`http://127.0.0.1:${port}`);
});
process.on('disconnect', () => process.exit(0));
