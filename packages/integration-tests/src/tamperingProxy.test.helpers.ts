import {
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { track } from './testSupport.test.helpers.js';

// An HTTP proxy in front of a FakeApiServer that forwards everything, except what a test tells it
// to break: it can answer the next LIST or WATCH itself (an HTML page from a load balancer, a Status
// the server would never send), cut a LIST body short, write raw lines into the open watch streams
// (a line without metadata, an object of the wrong kind, a resourceVersion that is not a number or
// goes back), or rewrite every list body and watch line. Everything else reaches the real fake server, which keeps serving the truth, so a test can
// check that the client recovers to exactly the server's state.

/** The verb of a collection request, from its query. */
export type ProxyVerb = 'list' | 'watch' | 'other';

/** A request the proxy received, with its headers (to prove credentials were sent). */
export interface ProxiedRequest {
  verb: ProxyVerb;
  /** Path and query, as received. */
  url: string;
  headers: IncomingHttpHeaders;
  /** True when a rule answered it instead of the upstream server. */
  tampered: boolean;
}

/** A complete answer written by the proxy instead of the server. */
export interface CannedResponse {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

/** What to do with the next request of a verb. */
export type ProxyRule =
  /** Answer with this response; the server never sees the request. */
  | { kind: 'respond'; response: CannedResponse }
  /**
   * Forward to the server, but send only the first half of the body; then reset the connection
   * (`reset`) or end the response cleanly without a Content-Length (`end`).
   */
  | { kind: 'truncate'; then: 'reset' | 'end' };

/** Credentials of the proxy's KubeConfig user. */
export interface ProxyUser {
  token?: string;
  username?: string;
  password?: string;
}

interface OpenWatch {
  res: ServerResponse;
  upstream: IncomingMessage | undefined;
  /** Set once the proxy ended the response itself: upstream errors must not destroy it then. */
  ended: boolean;
}

/** The proxy. Start it with {@link TamperingProxy.start}; close it with {@link TamperingProxy.close}. */
export class TamperingProxy {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Every request received, oldest first. */
  readonly requests: ProxiedRequest[] = [];
  /**
   * When set, rewrites every 200 LIST body and every watch line (without its `\n`) the server sends,
   * e.g. to add keys the fake server would not store (`__proto__`) to objects it does serve.
   */
  rewrite: ((text: string, verb: 'list' | 'watch') => string) | undefined;
  readonly #http: Server;
  readonly #upstream: URL;
  readonly #rules: Array<{ verb: ProxyVerb; rule: ProxyRule }> = [];
  readonly #watches = new Set<OpenWatch>();
  readonly #sockets = new Set<Socket>();

  private constructor(http: Server, url: string, upstream: string) {
    this.#http = http;
    this.url = url;
    this.#upstream = new URL(upstream);
  }

  /** Starts a proxy to `upstream` (a FakeApiServer's `url`) on an ephemeral port of 127.0.0.1. */
  static async start(upstream: string): Promise<TamperingProxy> {
    const http = createServer();
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const proxy = new TamperingProxy(
      http,
      `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
      upstream,
    );
    http.on('connection', (socket: Socket) => {
      proxy.#sockets.add(socket);
      socket.on('close', () => proxy.#sockets.delete(socket));
    });
    http.on('request', (req: IncomingMessage, res: ServerResponse) => proxy.#handle(req, res));
    return proxy;
  }

  /** A KubeConfig for the proxy (plain HTTP; a dummy token unless `user` says otherwise). */
  kubeConfig(user: ProxyUser = { token: 'proxy-token' }): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'proxy', server: this.url, skipTLSVerify: true }],
      users: [{ name: 'proxy-user', ...user }],
      contexts: [{ name: 'proxy', cluster: 'proxy', user: 'proxy-user', namespace: 'default' }],
      currentContext: 'proxy',
    });
    return kc;
  }

  /** Applies `rule` to the next request of `verb` (rules of one verb are used in the order added). */
  next(verb: 'list' | 'watch', rule: ProxyRule): void {
    this.#rules.push({ verb, rule });
  }

  /** Rules not used yet. */
  pendingRules(): number {
    return this.#rules.length;
  }

  /** How many watch streams are open through the proxy. */
  openWatchCount(): number {
    return this.#watches.size;
  }

  /**
   * Writes raw `lines` into every open watch stream now (before anything the server sends later),
   * then keeps forwarding or ends the streams cleanly. Returns how many streams got them.
   */
  injectIntoOpenWatches(lines: string[], then: 'continue' | 'end' = 'continue'): number {
    const watches = [...this.#watches];
    for (const w of watches) {
      w.res.write(lines.map((l) => `${l}\n`).join(''));
      if (then === 'end') this.#endWatch(w);
    }
    return watches.length;
  }

  /** Closes every connection and the listening socket. */
  async close(): Promise<void> {
    for (const w of this.#watches) w.upstream?.destroy();
    this.#watches.clear();
    const closed = new Promise<void>((resolve) => this.#http.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    this.#http.closeAllConnections();
    await closed;
  }

  #takeRule(verb: ProxyVerb): ProxyRule | undefined {
    const i = this.#rules.findIndex((r) => r.verb === verb);
    if (i === -1) return undefined;
    const [taken] = this.#rules.splice(i, 1);
    return taken?.rule;
  }

  #endWatch(w: OpenWatch): void {
    w.ended = true;
    this.#watches.delete(w);
    w.upstream?.destroy();
    w.res.end();
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    const query = new URL(url, 'http://proxy').searchParams;
    const verb: ProxyVerb =
      req.method !== 'GET'
        ? 'other'
        : query.get('watch') === 'true'
          ? 'watch'
          : /\/(api|apis)\//.test(url)
            ? 'list'
            : 'other';
    const rule = verb === 'other' ? undefined : this.#takeRule(verb);
    this.requests.push({ verb, url, headers: { ...req.headers }, tampered: rule?.kind === 'respond' });
    if (rule?.kind === 'respond') {
      const body = rule.response.body;
      res.writeHead(rule.response.status, {
        'Content-Length': Buffer.byteLength(body),
        ...rule.response.headers,
      });
      res.end(body);
      return;
    }
    const upstreamReq = request({
      protocol: this.#upstream.protocol,
      hostname: this.#upstream.hostname,
      port: this.#upstream.port,
      method: req.method,
      path: url,
      headers: { ...req.headers, host: this.#upstream.host, connection: 'close' },
      agent: false,
    });
    let ended = false;
    upstreamReq.on('error', () => {
      if (!ended) res.destroy();
    });
    res.on('finish', () => (ended = true));
    res.on('close', () => upstreamReq.destroy());
    req.pipe(upstreamReq);
    upstreamReq.on('response', (upstream) => {
      if (verb === 'watch' && upstream.statusCode === 200) {
        this.#forwardWatch(res, upstream);
      } else if (rule?.kind === 'truncate') {
        this.#forwardTruncated(res, upstream, rule.then);
      } else if (verb === 'list' && upstream.statusCode === 200 && this.rewrite !== undefined) {
        this.#forwardRewritten(res, upstream, this.rewrite);
      } else {
        res.writeHead(upstream.statusCode ?? 502, upstream.headers);
        upstream.pipe(res);
      }
    });
  }

  #forwardTruncated(res: ServerResponse, upstream: IncomingMessage, then: 'reset' | 'end'): void {
    const chunks: Buffer[] = [];
    upstream.on('data', (c: Buffer) => chunks.push(c));
    upstream.on('end', () => {
      const body = Buffer.concat(chunks);
      const half = body.subarray(0, Math.floor(body.length / 2));
      const headers = { ...upstream.headers };
      if (then === 'end') delete headers['content-length'];
      res.writeHead(upstream.statusCode ?? 200, headers);
      if (then === 'end') {
        res.end(half);
      } else {
        res.write(half, () => res.socket?.resetAndDestroy());
      }
    });
  }

  #forwardRewritten(
    res: ServerResponse,
    upstream: IncomingMessage,
    rewrite: (text: string, verb: 'list') => string,
  ): void {
    const chunks: Buffer[] = [];
    upstream.on('data', (c: Buffer) => chunks.push(c));
    upstream.on('end', () => {
      const body = rewrite(Buffer.concat(chunks).toString('utf8'), 'list');
      res.writeHead(200, { ...upstream.headers, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  }

  #forwardWatch(res: ServerResponse, upstream: IncomingMessage): void {
    const headers = { ...upstream.headers };
    delete headers['content-length'];
    res.writeHead(200, headers);
    res.flushHeaders();
    const w: OpenWatch = { res, upstream, ended: false };
    this.#watches.add(w);
    res.on('close', () => this.#watches.delete(w));
    let partial = '';
    upstream.setEncoding('utf8');
    upstream.on('data', (text: string) => {
      if (w.ended) return;
      partial += text;
      let nl = partial.indexOf('\n');
      while (nl !== -1) {
        const line = partial.slice(0, nl);
        res.write(`${this.rewrite === undefined ? line : this.rewrite(line, 'watch')}\n`);
        partial = partial.slice(nl + 1);
        nl = partial.indexOf('\n');
      }
    });
    upstream.on('end', () => {
      if (w.ended) return;
      w.ended = true;
      this.#watches.delete(w);
      res.end(partial);
    });
    // The server dropped the stream abruptly: so does the proxy.
    upstream.on('error', () => {
      if (!w.ended) res.destroy();
    });
    upstream.on('close', () => {
      if (!w.ended && !upstream.complete) res.destroy();
    });
  }
}

/** A watch event line, as the API server writes it. */
export function eventLine(type: string, object: unknown): string {
  return JSON.stringify({ type, object });
}

/** Starts a {@link TamperingProxy} in front of `server` that `disposeAll` closes. */
export async function startProxy(server: { readonly url: string }): Promise<TamperingProxy> {
  return track(await TamperingProxy.start(server.url), (p) => p.close());
}
