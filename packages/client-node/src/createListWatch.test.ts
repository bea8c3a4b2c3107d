import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import { Socket, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { createLogger, ErrorCodes, KinformerError, type LabelSelector } from '@kinformer/core';
import { type ListerWatcher, type WatchEvent } from '@kinformer/reflector';
import { listAllPages } from '@kinformer/reflector/internal';
import { KubeConfig, type User } from '@kubernetes/client-node';
import { collect, pod, settle, waitFor, within } from '@kinformer/test-tools';
import { createListWatch } from './createListWatch.js';
import { IDLE_CONNECTION_TIMEOUT_MS, keepAliveAgentFor } from './httpRequest.js';
import { expectBadThirdLine } from './badLine.test.helpers.js';

const TOKEN = 'secret-token-do-not-leak';

interface Recorded {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** A tiny `node:http` API server: records every request and lets each test answer as it likes. */
class TestServer {
  readonly requests: Recorded[] = [];
  /** Server-side request `close` events, i.e. the server saw the request/connection end. */
  closedRequests = 0;
  /** Connections accepted since the start. */
  connectionCount = 0;
  handler: Handler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}\n');
  };
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: http.Server) {
    server.on('connection', (socket: Socket) => {
      this.connectionCount++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://x');
      this.requests.push({
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
      });
      res.on('close', () => this.closedRequests++);
      void this.handler(req, res);
    });
  }

  static async start(): Promise<TestServer> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new TestServer(server);
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Connections the server still has open. */
  openConnections(): number {
    return this.sockets.size;
  }

  kubeConfig(user: Partial<User> = { token: TOKEN }, server = this.url): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromClusterAndUser({ name: 'test', server, skipTLSVerify: true }, { name: 'tester', ...user });
    return kc;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A handler that answers 200 with `body` in chunks of `size` bytes, yielding to the event loop now and then. */
function inChunks(body: Buffer, size: number): Handler {
  return async (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    for (let o = 0; o < body.length; o += size) {
      res.write(body.subarray(o, o + size));
      if (o % (size * 100) === 0) await new Promise((r) => setImmediate(r));
    }
    res.end();
  };
}

async function rejection(p: Promise<unknown>): Promise<KinformerError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(KinformerError);
    return err as KinformerError;
  }
  throw new Error('expected a rejection');
}

const line = (type: string, object: unknown): string => `${JSON.stringify({ type, object })}\n`;
const status = (
  code: number,
  reason: string | undefined,
  message: string,
  details?: Record<string, unknown>,
): string =>
  JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    ...(reason === undefined ? {} : { reason }),
    ...(details === undefined ? {} : { details }),
    code,
  });

/** Starts a watch response and returns a writer the test drives. */
function streaming(server: TestServer): Promise<ServerResponse> {
  return new Promise((resolve) => {
    server.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      resolve(res);
    };
  });
}

let server: TestServer;
const ctx = (): { signal: AbortSignal } => ({ signal: new AbortController().signal });

beforeEach(async () => {
  server = await TestServer.start();
});

afterEach(async () => {
  await server.close();
});

describe('createListWatch: requests', () => {
  it.each([
    [
      'core, one namespace',
      { version: 'v1', resource: 'pods', namespace: 'default' },
      '/api/v1/namespaces/default/pods',
    ],
    ['core, all namespaces', { version: 'v1', resource: 'pods' }, '/api/v1/pods'],
    ['core, cluster-scoped', { group: '', version: 'v1', resource: 'nodes' }, '/api/v1/nodes'],
    [
      'group, one namespace',
      { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'kube-system' },
      '/apis/apps/v1/namespaces/kube-system/deployments',
    ],
    [
      'group, all namespaces',
      { group: 'apps', version: 'v1', resource: 'deployments' },
      '/apis/apps/v1/deployments',
    ],
    [
      'CRD',
      { group: 'stable.example.com', version: 'v1beta1', resource: 'crontabs', namespace: 'ns-1' },
      '/apis/stable.example.com/v1beta1/namespaces/ns-1/crontabs',
    ],
  ])('lists and watches %s at the right path', async (_name, resource, path) => {
    const lw = createListWatch(server.kubeConfig(), resource);
    await lw.list({}, ctx());
    server.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end();
    };
    await collect(await lw.watch({}, ctx()));
    expect(server.requests.map((r) => [r.method, r.path])).toEqual([
      ['GET', path],
      ['GET', path],
    ]);
  });

  it('puts a path prefix of the cluster server URL in front of the API path', async () => {
    const lw = createListWatch(server.kubeConfig({ token: TOKEN }, `${server.url}/k8s/clusters/c-1/`), {
      version: 'v1',
      resource: 'pods',
    });
    await lw.list({}, ctx());
    expect(server.requests[0]?.path).toBe('/k8s/clusters/c-1/api/v1/pods');
  });

  it('sends exactly the list query parameters, selectors included', async () => {
    const lw = createListWatch(
      server.kubeConfig(),
      { version: 'v1', resource: 'pods' },
      {
        labelSelector: 'app=web,tier in (a,b)',
        fieldSelector: 'spec.nodeName=node-1',
      },
    );
    await lw.list(
      {
        limit: 500,
        continue: 'tok/en=',
        resourceVersion: '123',
        resourceVersionMatch: 'NotOlderThan',
        timeoutSeconds: 30,
      },
      ctx(),
    );
    await lw.list({ resourceVersion: '', limit: 0 }, ctx());
    expect(server.requests[0]?.query).toEqual({
      continue: 'tok/en=',
      fieldSelector: 'spec.nodeName=node-1',
      labelSelector: 'app=web,tier in (a,b)',
      limit: '500',
      resourceVersion: '123',
      resourceVersionMatch: 'NotOlderThan',
      timeoutSeconds: '30',
    });
    expect(server.requests[1]?.query).toEqual({
      fieldSelector: 'spec.nodeName=node-1',
      labelSelector: 'app=web,tier in (a,b)',
    });
  });

  it('sends exactly the watch query parameters', async () => {
    const selector = { toString: () => 'app=web' } as LabelSelector;
    const lw = createListWatch(
      server.kubeConfig(),
      { group: 'apps', version: 'v1', resource: 'deployments' },
      { labelSelector: selector },
    );
    server.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end();
    };
    await collect(
      await lw.watch({ resourceVersion: '77', allowWatchBookmarks: true, timeoutSeconds: 312 }, ctx()),
    );
    await collect(
      await lw.watch(
        {
          resourceVersion: '',
          resourceVersionMatch: 'NotOlderThan',
          sendInitialEvents: true,
          allowWatchBookmarks: true,
        },
        ctx(),
      ),
    );
    await collect(
      await lw.watch(
        {
          resourceVersion: '0',
          resourceVersionMatch: 'NotOlderThan',
          sendInitialEvents: false,
          allowWatchBookmarks: false,
        },
        ctx(),
      ),
    );
    expect(server.requests.map((r) => r.query)).toEqual([
      {
        watch: 'true',
        resourceVersion: '77',
        allowWatchBookmarks: 'true',
        timeoutSeconds: '312',
        labelSelector: 'app=web',
      },
      {
        watch: 'true',
        resourceVersionMatch: 'NotOlderThan',
        sendInitialEvents: 'true',
        allowWatchBookmarks: 'true',
        labelSelector: 'app=web',
      },
      {
        watch: 'true',
        resourceVersion: '0',
        resourceVersionMatch: 'NotOlderThan',
        sendInitialEvents: 'false',
        labelSelector: 'app=web',
      },
    ]);
  });

  it("sends the KubeConfig's bearer token as Authorization: Bearer, and Accept: application/json", async () => {
    const lw = createListWatch(server.kubeConfig({ token: TOKEN }), { version: 'v1', resource: 'pods' });
    await lw.list({}, ctx());
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(server.requests[0]?.headers.accept).toBe('application/json');
    expect(server.requests[0]?.headers['user-agent']).toMatch(/kinformer/);
  });

  it("sends the KubeConfig's basic auth and impersonation", async () => {
    const lw = createListWatch(
      server.kubeConfig({ username: 'alice', password: 'pw', impersonateUser: 'bob' }),
      { version: 'v1', resource: 'pods' },
    );
    await lw.list({}, ctx());
    expect(server.requests[0]?.headers.authorization).toBe(
      `Basic ${Buffer.from('alice:pw').toString('base64')}`,
    );
    expect(server.requests[0]?.headers['impersonate-user']).toBe('bob');
  });

  it("runs the KubeConfig's exec credential plugin and sends its token", async () => {
    const credential = JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: 'exec-token' },
    });
    const exec = {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: process.execPath,
      args: ['-e', `process.stdout.write(${JSON.stringify(credential)})`],
    };
    const lw = createListWatch(server.kubeConfig({ exec }), { version: 'v1', resource: 'pods' });
    await lw.list({}, ctx());
    expect(server.requests[0]?.headers.authorization).toBe('Bearer exec-token');
  });

  it('rejects with ERR_CREDENTIALS naming the plugin and its exit code (not its stderr) when the exec plugin fails, without sending a request', async () => {
    const exec = {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: process.execPath,
      args: ['-e', 'process.stderr.write("no credentials"); process.exit(1)'],
    };
    const lw = createListWatch(server.kubeConfig({ exec }), { version: 'v1', resource: 'pods' });
    const err = await rejection(lw.list({}, ctx()));
    expect(err.code).toBe(ErrorCodes.CREDENTIALS);
    expect(err.message).toBe(`exec plugin ${JSON.stringify(process.execPath)} failed with exit code 1`);
    expect(err.message).not.toContain('no credentials');
    expect(server.requests).toHaveLength(0);
  });

  it('reads the token from a token file, as in-cluster config does', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kinformer-'));
    const tokenFile = join(dir, 'token');
    await writeFile(tokenFile, 'file-token');
    try {
      const lw = createListWatch(
        server.kubeConfig({ authProvider: { name: 'tokenFile', config: { tokenFile } } }),
        { version: 'v1', resource: 'pods' },
      );
      await lw.list({}, ctx());
      expect(server.requests[0]?.headers.authorization).toBe('Bearer file-token');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('asks for PartialObjectMetadata(List) when metadataOnly is set', async () => {
    const lw = createListWatch(
      server.kubeConfig(),
      { version: 'v1', resource: 'pods' },
      { metadataOnly: true },
    );
    await lw.list({}, ctx());
    server.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end();
    };
    await collect(await lw.watch({}, ctx()));
    expect(server.requests.map((r) => r.headers.accept)).toEqual([
      'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
      'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
    ]);
  });

  it('rejects an invalid resource, maxLineBytes or maxListItemBytes with ERR_INVALID_OPTION', () => {
    const kc = server.kubeConfig();
    expect(() => createListWatch(kc, { version: '', resource: 'pods' })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
    expect(() => createListWatch(kc, { version: 'v1', resource: 'pods/status' })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
    expect(() => createListWatch(kc, { version: 'v1', resource: 'pods', namespace: '../x' })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
    expect(() => createListWatch(kc, { version: 'v1', resource: 'pods' }, { maxLineBytes: 0 })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
    expect(() => createListWatch(kc, { version: 'v1', resource: 'pods' }, { maxListItemBytes: 1.5 })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
  });

  it('leaves watchListSupported undefined', () => {
    expect(
      createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' }).watchListSupported,
    ).toBeUndefined();
  });
});

describe('createListWatch: list', () => {
  it('returns the parsed list, decoded from a body that arrives in many chunks with multi-byte characters', async () => {
    const list = {
      kind: 'PodList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '42', continue: 'next' },
      items: Array.from({ length: 50 }, (_, i) => ({
        metadata: { name: `pod-${i}-ü✓😀`, resourceVersion: String(i) },
      })),
    };
    const body = Buffer.from(`${JSON.stringify(list)}\n`);
    server.handler = inChunks(body, 7);
    const got = await createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' }).list(
      { limit: 50 },
      ctx(),
    );
    expect(got).toEqual(list);
  });

  it('turns items: null into an empty array', async () => {
    server.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"kind":"PodList","metadata":{"resourceVersion":"9"},"items":null}');
    };
    const got = await createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' }).list(
      {},
      ctx(),
    );
    expect(got).toEqual({ kind: 'PodList', metadata: { resourceVersion: '9' }, items: [] });
  });

  it.each([
    [
      'a JSON body that ends before the list',
      '{"kind":"PodList","metadata":{"resourceVersion":"9"},"items":[{"metadata":',
      ErrorCodes.LIST_TRUNCATED,
    ],
    ['a non-JSON 200 body', '<html><body>login</body></html>', ErrorCodes.BAD_RESPONSE],
    ['a JSON body that is not a list', '{"kind":"Pod","metadata":{"name":"x"}}', ErrorCodes.BAD_RESPONSE],
  ])('rejects %s with its code and an excerpt', async (_name, body, code) => {
    server.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    const err = await rejection(
      createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' }).list({}, ctx()),
    );
    expect(err.code).toBe(code);
    expect(err.httpStatus).toBe(200);
    // The excerpt stops where the items begin (never an object's values).
    const items = body.indexOf('"items":[');
    const shown = items < 0 ? body.slice(0, 200) : `${body.slice(0, items + '"items":['.length)}…`;
    expect(err.details).toMatchObject({ resource: 'pods.v1', verb: 'list', bodyExcerpt: shown });
  });

  it('decodes a pretty-printed list with metadata after the items, streamed in small chunks', async () => {
    const list = {
      items: Array.from({ length: 20 }, (_, i) => ({
        metadata: { name: `pod-${i}`, annotations: { a: '"}]\\[{"', b: 'ü😀' } },
      })),
      metadata: { resourceVersion: '7', remainingItemCount: 0 },
      kind: 'PodList',
      apiVersion: 'v1',
    };
    const body = Buffer.from(JSON.stringify(list, null, 2));
    server.handler = inChunks(body, 13);
    const got = await createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' }).list(
      {},
      ctx(),
    );
    expect(got).toEqual(list);
  });

  it('rejects an item longer than maxListItemBytes with ERR_LIST_ITEM_TOO_LARGE and closes the request before the body ends', async () => {
    let ended = false;
    server.handler = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"');
      // Far more than the limit, then keep the response open: only the client can end it.
      for (let k = 0; k < 8 && !res.destroyed; k++) {
        res.write('x'.repeat(16 * 1024));
        await new Promise((r) => setImmediate(r));
      }
      res.on('close', () => (ended = true));
    };
    const lw = createListWatch(
      server.kubeConfig(),
      { version: 'v1', resource: 'pods' },
      { maxListItemBytes: 10_000 },
    );
    const err = await rejection(lw.list({}, ctx()));
    expect(err.code).toBe(ErrorCodes.LIST_ITEM_TOO_LARGE);
    expect(err.details).toMatchObject({ resource: 'pods.v1', verb: 'list' });
    await waitFor(() => ended || server.closedRequests > 0, 'the server to see the request closed');
  });

  it('rejects with ERR_CONNECTION when the connection breaks in the middle of the body', async () => {
    server.handler = (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"kind":"PodList","items":[');
      setTimeout(() => req.socket.destroy(), 10);
    };
    const err = await rejection(
      createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' }).list({}, ctx()),
    );
    expect(err.code).toBe(ErrorCodes.CONNECTION);
  });
});

describe('createListWatch: watch', () => {
  it('yields ADDED, MODIFIED, DELETED and BOOKMARK events in order and completes when the server closes cleanly', async () => {
    const bookmark = {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { resourceVersion: '5', annotations: { 'k8s.io/initial-events-end': 'true' } },
    };
    server.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Several events in one chunk, with an empty line between.
      res.end(
        line('ADDED', pod('a', '2')) +
          line('MODIFIED', pod('a', '3')) +
          '\n' +
          line('DELETED', pod('a', '4')) +
          line('BOOKMARK', bookmark),
      );
    };
    const lw = createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' });
    const { events, error } = await collect(await lw.watch({ allowWatchBookmarks: true }, ctx()));
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'ADDED', object: pod('a', '2') },
      { type: 'MODIFIED', object: pod('a', '3') },
      { type: 'DELETED', object: pod('a', '4') },
      { type: 'BOOKMARK', object: bookmark },
    ]);
  });

  it('decodes the same events when the server sends them one byte at a time, splitting UTF-8 characters', async () => {
    const expected: Array<WatchEvent<ReturnType<typeof pod>>> = [
      { type: 'ADDED', object: pod('ä-✓-😀', '2') },
      { type: 'MODIFIED', object: pod('漢字', '3') },
    ];
    const body = Buffer.from(expected.map((e) => line(e.type, e.object)).join(''));
    server.handler = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < body.length; i++) {
        res.write(body.subarray(i, i + 1));
        await new Promise((r) => setImmediate(r));
      }
      res.end();
    };
    const { events, error } = await collect(
      await createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' }).watch({}, ctx()),
    );
    expect(error).toBeUndefined();
    expect(events).toEqual(expected);
  });

  it('resolves as soon as the server answered 200, before any event', async () => {
    const response = streaming(server);
    const lw = createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' });
    const stream = await lw.watch({}, ctx());
    const res = await response;
    const it = stream[Symbol.asyncIterator]();
    const next = it.next();
    res.write(line('ADDED', pod('a', '1')));
    expect(await next).toEqual({ value: { type: 'ADDED', object: pod('a', '1') }, done: false });
    res.end();
    expect(await it.next()).toEqual({ value: undefined, done: true });
  });

  it('throws the in-stream ERROR event as a KinformerError with the Status, after the events before it', async () => {
    const expired = status(410, 'Expired', 'too old resource version: 1 (20)');
    server.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(line('ADDED', pod('a', '2')) + `{"type":"ERROR","object":${expired}}\n`);
    };
    const { events, error } = await collect(
      await createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' }).watch({}, ctx()),
    );
    expect(events).toHaveLength(1);
    expect(error).toBeInstanceOf(KinformerError);
    expect(error).toMatchObject({
      code: ErrorCodes.RESOURCE_EXPIRED,
      httpStatus: 410,
      status: JSON.parse(expired),
      details: { resource: 'pods.v1', line: 2 },
    });
  });

  it.each([
    ['a malformed line', 'not json at all\n', ErrorCodes.MALFORMED_WATCH_EVENT],
    ['a null object', line('ADDED', null), ErrorCodes.MALFORMED_WATCH_EVENT],
    ['an object without metadata', line('MODIFIED', { kind: 'Pod' }), ErrorCodes.MALFORMED_WATCH_EVENT],
    ['an unknown event type', line('UPSERTED', pod('b', '3')), ErrorCodes.UNKNOWN_EVENT_TYPE],
    [
      'an over-long line',
      line('ADDED', { metadata: { name: 'x'.repeat(1000) } }),
      ErrorCodes.WATCH_LINE_TOO_LARGE,
    ],
  ])(
    'throws for %s only after every good event before it, and closes the connection',
    async (_name, bad, code) => {
      server.handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        // The stream stays open after the bad line: the client must close it.
        res.write(
          line('ADDED', pod('a', '2')) +
            line('MODIFIED', pod('a', '3')) +
            bad +
            line('DELETED', pod('a', '4')),
        );
      };
      const lw = createListWatch(
        server.kubeConfig({ token: TOKEN }),
        { version: 'v1', resource: 'pods' },
        { maxLineBytes: 500 },
      );
      const { events, error } = await collect(await lw.watch({}, ctx()));
      expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED']);
      const err = expectBadThirdLine(error, code);
      expect(JSON.stringify(err.details)).not.toContain(TOKEN);
      await waitFor(
        () => server.closedRequests === 1 && server.openConnections() === 0,
        'the server to see the connection closed',
      );
    },
  );

  it('throws ERR_CONNECTION for a truncated last line with a connection reset, after the good events', async () => {
    const response = streaming(server);
    const stream = await createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' }).watch(
      {},
      ctx(),
    );
    const res = await response;
    res.write(line('ADDED', pod('a', '2')) + line('MODIFIED', pod('a', '3')));
    const it = stream[Symbol.asyncIterator]();
    expect((await it.next()).value).toMatchObject({ type: 'ADDED' });
    expect((await it.next()).value).toMatchObject({ type: 'MODIFIED' });
    // The truncated line is flushed to the socket before the reset.
    await new Promise((r) => res.write('{"type":"DELETED","object":{"metadata":{"name":"a","resourceVer', r));
    await settle();
    res.socket?.resetAndDestroy();
    const err = await rejection(it.next());
    expect(err.code).toBe(ErrorCodes.CONNECTION);
    expect(err.details).toMatchObject({ resource: 'pods.v1', verb: 'watch' });
    expect(await it.next()).toEqual({ value: undefined, done: true });
  });

  it('throws ERR_CONNECTION when the server closes the socket mid-stream without ending the body', async () => {
    server.handler = (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(line('ADDED', pod('a', '2')) + '{"type":"MODIFIED","obj', () => req.socket.destroy());
    };
    const { events, error } = await collect(
      await createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' }).watch({}, ctx()),
    );
    expect(events).toHaveLength(1);
    expect(error).toMatchObject({ code: ErrorCodes.CONNECTION });
  });

  it('closes the request when the consumer breaks out of the loop', async () => {
    const response = streaming(server);
    const stream = await createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' }).watch(
      {},
      ctx(),
    );
    const res = await response;
    res.write(line('ADDED', pod('a', '1')) + line('ADDED', pod('b', '1')));
    const seen: string[] = [];
    for await (const e of stream) {
      seen.push(e.object.metadata?.name ?? '');
      break;
    }
    expect(seen).toEqual(['a']);
    await waitFor(
      () => server.closedRequests === 1 && server.openConnections() === 0,
      'the server to see the connection closed',
    );
  });

  it('completes normally when the signal aborts during the watch, with no open sockets', async () => {
    const response = streaming(server);
    const controller = new AbortController();
    const stream = await createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' }).watch(
      {},
      { signal: controller.signal },
    );
    const res = await response;
    res.write(line('ADDED', pod('a', '1')));
    const it = stream[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    const pending = it.next();
    controller.abort();
    expect(await pending).toEqual({ value: undefined, done: true });
    await waitFor(
      () => server.openConnections() === 0 && server.closedRequests === 1,
      'the server to see the connection closed',
    );
    await waitFor(() => !process.getActiveResourcesInfo().includes('TCPSocketWrap'), 'no open TCP sockets');
  });
});

describe('createListWatch: connections', () => {
  const page = (rv: string, names: string[], cont?: string): string =>
    JSON.stringify({
      kind: 'PodList',
      apiVersion: 'v1',
      metadata: cont === undefined ? { resourceVersion: rv } : { resourceVersion: rv, continue: cont },
      items: names.map((n) => pod(n, rv)),
    });

  it('sends every page of a paginated list over one kept-alive connection', async () => {
    // client-node's agent does not keep connections alive; without a keep-alive twin every page paid a
    // TCP (and TLS) handshake: 10 pages of 500 pods took ~2.5× as long on loopback.
    server.handler = (req, res) => {
      const cont = new URL(req.url ?? '/', 'http://x').searchParams.get('continue');
      const n = cont === null ? 0 : Number(cont);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(page('7', [`pod-${n}`], n < 4 ? String(n + 1) : undefined));
    };
    const lw = createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' });
    const names: string[] = [];
    let cont: string | undefined;
    do {
      const got = await lw.list(cont === undefined ? { limit: 1 } : { limit: 1, continue: cont }, ctx());
      for (const item of got.items) names.push(String(item.metadata?.name));
      cont = got.metadata?.continue;
    } while (cont !== undefined);
    expect(names).toEqual(['pod-0', 'pod-1', 'pod-2', 'pod-3', 'pod-4']);
    expect(server.requests).toHaveLength(5);
    expect(server.connectionCount).toBe(1);
  });

  it("announces a page's continue token before its items, so the pager asks for the next page while this one arrives", async () => {
    // Page 0 sends its metadata, then holds its items until page 1 has been asked for (at most 5 s).
    let askedForPage1: () => void = () => {};
    const page1Asked = new Promise<void>((resolve) => (askedForPage1 = resolve));
    const order: string[] = [];
    server.handler = async (req, res) => {
      const cont = new URL(req.url ?? '/', 'http://x').searchParams.get('continue');
      res.writeHead(200, { 'content-type': 'application/json' });
      if (cont === null) {
        const body = page('7', ['pod-0'], '1');
        const at = body.indexOf('"items"');
        res.write(body.slice(0, at));
        await within(page1Asked, 'page 1 asked for while page 0 arrives').catch(() => {});
        order.push('page 0 ends');
        res.end(body.slice(at));
      } else {
        order.push('page 1 asked');
        askedForPage1();
        res.end(page('7', ['pod-1']));
      }
    };
    const lw = createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' });
    const { list, requests } = await listAllPages(
      (o, c) => lw.list(o, c),
      {},
      {
        signal: new AbortController().signal,
        pageSize: 1,
      },
    );
    expect(list.items.map((p) => p.metadata?.name)).toEqual(['pod-0', 'pod-1']);
    expect(requests).toBe(2);
    expect(order).toEqual(['page 1 asked', 'page 0 ends']);
  });

  it('gives every watch its own connection, never a pooled one', async () => {
    server.handler = (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url?.includes('watch=true') ? line('ADDED', pod('a', '2')) : page('1', []));
    };
    const lw = createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' });
    await lw.list({}, ctx());
    await collect(await lw.watch({ resourceVersion: '1' }, ctx()));
    await collect(await lw.watch({ resourceVersion: '2' }, ctx()));
    expect(server.connectionCount).toBe(3);
  });

  it('sends a list again on a fresh connection when the server closed the reused idle one', async () => {
    const seen = new Set<Socket>();
    server.handler = (req, res) => {
      if (seen.has(req.socket)) {
        // The server gave up on this idle connection just as it was reused: no answer at all.
        req.socket.destroy();
        return;
      }
      seen.add(req.socket);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(page(String(seen.size), []));
    };
    const lw = createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' });
    expect((await lw.list({}, ctx())).metadata?.resourceVersion).toBe('1');
    expect((await lw.list({}, ctx())).metadata?.resourceVersion).toBe('2');
    expect(server.requests).toHaveLength(3);
    expect(server.connectionCount).toBe(2);
  });

  it('does not retry a fresh connection that the server resets', async () => {
    server.handler = (req) => {
      req.socket.resetAndDestroy();
    };
    const lw = createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' });
    expect((await rejection(lw.list({}, ctx()))).code).toBe(ErrorCodes.CONNECTION);
    expect(server.requests).toHaveLength(1);
  });

  it('does not reuse a connection whose error body was cut short', async () => {
    server.handler = (_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('x'.repeat(200 * 1024));
    };
    const lw = createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' });
    expect((await rejection(lw.list({}, ctx()))).code).toBe(ErrorCodes.INTERNAL);
    expect((await rejection(lw.list({}, ctx()))).code).toBe(ErrorCodes.INTERNAL);
    expect(server.connectionCount).toBe(2);
  });

  it('turns on TCP keepalive (30 s, as client-go) for lists and watches, so a half-open connection cannot hang a request', async () => {
    const calls: Array<[boolean | undefined, number | undefined]> = [];
    const original = Socket.prototype.setKeepAlive;
    Socket.prototype.setKeepAlive = function (this: Socket, enable?: boolean, delay?: number): Socket {
      calls.push([enable, delay]);
      return original.call(this, enable, delay);
    } as typeof original;
    try {
      const lw = createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' });
      await lw.list({}, ctx());
      expect(calls).toContainEqual([true, 30_000]);
      calls.length = 0;
      server.handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end();
      };
      await collect(await lw.watch({}, ctx()));
      expect(calls).toContainEqual([true, 30_000]);
    } finally {
      Socket.prototype.setKeepAlive = original;
    }
  });
});

describe('keepAliveAgentFor', () => {
  it('gives a plain agent without keep-alive one cached keep-alive twin with the same TLS options, and leaves other agents alone', () => {
    const plain = new https.Agent({ ca: 'the-ca', servername: 'api.example' });
    const twin = keepAliveAgentFor(plain) as https.Agent & {
      keepAlive: boolean;
      options: https.AgentOptions;
    };
    expect(twin).toBeInstanceOf(https.Agent);
    expect(twin).not.toBe(plain);
    expect(twin.keepAlive).toBe(true);
    expect(twin.options).toMatchObject({
      ca: 'the-ca',
      servername: 'api.example',
      timeout: IDLE_CONNECTION_TIMEOUT_MS,
    });
    expect(keepAliveAgentFor(plain)).toBe(twin);
    const alreadyAlive = new http.Agent({ keepAlive: true });
    expect(keepAliveAgentFor(alreadyAlive)).toBe(alreadyAlive);
    class ProxyAgent extends https.Agent {}
    const proxy = new ProxyAgent();
    expect(keepAliveAgentFor(proxy)).toBe(proxy);
    expect(keepAliveAgentFor(undefined)).toBeUndefined();
    for (const a of [plain, twin, alreadyAlive, proxy]) a.destroy();
  });
});

describe('createListWatch: aborts and connection failures', () => {
  it('rejects a list with ERR_ABORTED when the signal aborts before the answer, with no open sockets', async () => {
    server.handler = () => {
      // Never answers.
    };
    const controller = new AbortController();
    const p = createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' }).list(
      {},
      { signal: controller.signal },
    );
    await waitFor(() => server.requests.length === 1, 'the request');
    controller.abort();
    expect((await rejection(p)).code).toBe(ErrorCodes.ABORTED);
    await waitFor(() => server.openConnections() === 0, 'the server to see the connection closed');
    await waitFor(() => !process.getActiveResourcesInfo().includes('TCPSocketWrap'), 'no open TCP sockets');
  });

  it('rejects a list with ERR_ABORTED when the signal aborts while the body streams, with no open sockets', async () => {
    let flushed = false;
    server.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"kind":"PodList","items":[', () => (flushed = true));
    };
    const controller = new AbortController();
    const lw = createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' });
    const p = lw.list({}, { signal: controller.signal });
    await waitFor(() => flushed, 'the start of the body to be sent');
    await settle();
    controller.abort();
    expect((await rejection(p)).code).toBe(ErrorCodes.ABORTED);
    await waitFor(
      () => server.openConnections() === 0 && server.closedRequests === 1,
      'the server to see the connection closed',
    );
  });

  it('rejects a watch with ERR_ABORTED when the signal aborts before the server answered', async () => {
    server.handler = () => {
      // Never answers.
    };
    const controller = new AbortController();
    const p = createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' }).watch(
      {},
      { signal: controller.signal },
    );
    await waitFor(() => server.requests.length === 1, 'the request');
    controller.abort();
    expect((await rejection(p)).code).toBe(ErrorCodes.ABORTED);
    await waitFor(() => server.openConnections() === 0, 'the server to see the connection closed');
  });

  it('sends nothing when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const lw = createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' });
    expect((await rejection(lw.list({}, { signal: controller.signal }))).code).toBe(ErrorCodes.ABORTED);
    expect((await rejection(lw.watch({}, { signal: controller.signal }))).code).toBe(ErrorCodes.ABORTED);
    expect(server.requests).toHaveLength(0);
  });

  it('rejects with ERR_INVALID_OPTION when the server URL does not parse, without printing its user:password', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://kinformer:hunter2-pa55@[::1', skipTLSVerify: true }],
      users: [{ name: 'u', token: TOKEN }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const err = await rejection(createListWatch(kc, { version: 'v1', resource: 'pods' }).list({}, ctx()));
    expect(err.code).toBe(ErrorCodes.INVALID_OPTION);
    expect(err.message).toBe('the current cluster\'s server is not a URL: "http://***@[::1"');
    expect(err.cause).toBeInstanceOf(TypeError);
    expect(err.cause).toMatchObject({ code: 'ERR_INVALID_URL' });
    expect(err.cause).not.toHaveProperty('input');
    for (const text of [inspect(err, { depth: 10 }), JSON.stringify(err), err.stack ?? ''])
      expect(text).not.toContain('hunter2');
    expect(server.requests).toHaveLength(0);
  });

  it('rejects with ERR_CONNECTION when the proxy URL does not parse, without printing its user:password', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: 'c',
          server: server.url,
          proxyUrl: 'http://proxy-user:hunter2-pa55@[::1',
          skipTLSVerify: true,
        },
      ],
      users: [{ name: 'u', token: TOKEN }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const err = await rejection(createListWatch(kc, { version: 'v1', resource: 'pods' }).list({}, ctx()));
    expect(err.code).toBe(ErrorCodes.CONNECTION);
    expect(err.cause).toBeInstanceOf(Error);
    expect(err.cause).not.toHaveProperty('input');
    for (const text of [inspect(err, { depth: 10 }), JSON.stringify(err), err.stack ?? ''])
      expect(text).not.toContain('hunter2');
    expect(server.requests).toHaveLength(0);
  });

  it('rejects with ERR_CONNECTION and the cause when the connection is refused', async () => {
    const kc = server.kubeConfig();
    await server.close();
    const lw = createListWatch(kc, { version: 'v1', resource: 'pods' });
    const listErr = await rejection(lw.list({}, ctx()));
    expect(listErr.code).toBe(ErrorCodes.CONNECTION);
    expect(listErr.cause).toMatchObject({ code: 'ECONNREFUSED' });
    expect(listErr.details).toMatchObject({ resource: 'pods.v1', verb: 'list', errno: 'ECONNREFUSED' });
    const watchErr = await rejection(lw.watch({}, ctx()));
    expect(watchErr.code).toBe(ErrorCodes.CONNECTION);
    server = await TestServer.start(); // for afterEach
  });

  it('rejects with ERR_CONNECTION when the server resets the connection before answering', async () => {
    server.handler = (req) => {
      req.socket.resetAndDestroy();
    };
    const lw = createListWatch(server.kubeConfig(), { version: 'v1', resource: 'pods' });
    const err = await rejection(lw.list({}, ctx()));
    expect(err.code).toBe(ErrorCodes.CONNECTION);
    expect(err.cause).toMatchObject({ code: 'ECONNRESET' });
    expect((await rejection(lw.watch({}, ctx()))).code).toBe(ErrorCodes.CONNECTION);
  });

  it('rejects with ERR_INVALID_OPTION when the KubeConfig has no current cluster', async () => {
    const lw = createListWatch(new KubeConfig(), { version: 'v1', resource: 'pods' });
    expect((await rejection(lw.list({}, ctx()))).code).toBe(ErrorCodes.INVALID_OPTION);
  });
});

describe.each(['list', 'watch'] as const)('createListWatch: HTTP errors on %s', (verb) => {
  const cases: Array<{
    name: string;
    code: number;
    headers?: Record<string, string>;
    body: string;
    expected: string;
    retryAfterSeconds?: number;
    hasStatus: boolean;
  }> = [
    {
      name: '401 Status',
      code: 401,
      body: status(401, 'Unauthorized', 'Unauthorized'),
      expected: ErrorCodes.UNAUTHORIZED,
      hasStatus: true,
    },
    {
      name: '403 Status',
      code: 403,
      body: status(
        403,
        'Forbidden',
        'pods is forbidden: User "system:anonymous" cannot list resource "pods"',
        { kind: 'pods' },
      ),
      expected: ErrorCodes.FORBIDDEN,
      hasStatus: true,
    },
    {
      name: '404 Status',
      code: 404,
      body: status(404, 'NotFound', 'the server could not find the requested resource'),
      expected: ErrorCodes.NOT_FOUND,
      hasStatus: true,
    },
    {
      name: '404 plain-text page not found',
      code: 404,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: '404 page not found\n',
      expected: ErrorCodes.NOT_FOUND,
      hasStatus: false,
    },
    {
      name: '410 Expired Status',
      code: 410,
      body: status(410, 'Expired', 'The resourceVersion for the provided list is too old.'),
      expected: ErrorCodes.RESOURCE_EXPIRED,
      hasStatus: true,
    },
    {
      name: '429 Status with Retry-After',
      code: 429,
      headers: { 'retry-after': '3' },
      body: status(429, 'TooManyRequests', 'storage is (re)initializing', { retryAfterSeconds: 3 }),
      expected: ErrorCodes.TOO_MANY_REQUESTS,
      retryAfterSeconds: 3,
      hasStatus: true,
    },
    {
      name: '429 plain text from priority-and-fairness with Retry-After',
      code: 429,
      headers: {
        'content-type': 'text/plain; charset=utf-8',
        'x-content-type-options': 'nosniff',
        'retry-after': '7',
      },
      body: 'Too many requests, please try again later.\n',
      expected: ErrorCodes.TOO_MANY_REQUESTS,
      retryAfterSeconds: 7,
      hasStatus: false,
    },
    {
      name: '500 InternalError Status',
      code: 500,
      body: status(500, 'InternalError', 'Internal error occurred: boom'),
      expected: ErrorCodes.INTERNAL,
      hasStatus: true,
    },
    {
      name: '500 Status without reason',
      code: 500,
      body: status(500, undefined, 'resourceVersion: Invalid value: "abc"'),
      expected: ErrorCodes.INTERNAL,
      hasStatus: true,
    },
    {
      name: '503 Status with Retry-After',
      code: 503,
      headers: { 'retry-after': '5' },
      body: status(
        503,
        'ServiceUnavailable',
        'the request has been made before all known HTTP paths have been installed',
        { retryAfterSeconds: 5 },
      ),
      expected: ErrorCodes.SERVICE_UNAVAILABLE,
      retryAfterSeconds: 5,
      hasStatus: true,
    },
    {
      name: '504 too large resource version',
      code: 504,
      headers: { 'retry-after': '1' },
      body: status(504, 'Timeout', 'Timeout: Too large resource version: 20000, current: 12345', {
        causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
        retryAfterSeconds: 1,
      }),
      expected: ErrorCodes.RESOURCE_VERSION_TOO_LARGE,
      retryAfterSeconds: 1,
      hasStatus: true,
    },
    {
      name: '504 Timeout Status',
      code: 504,
      body: status(504, 'Timeout', 'Timeout: request did not complete within the allotted timeout'),
      expected: ErrorCodes.TIMEOUT,
      hasStatus: true,
    },
    {
      name: '502 HTML page from a proxy',
      code: 502,
      headers: { 'content-type': 'text/html' },
      body: '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>',
      expected: ErrorCodes.BAD_RESPONSE,
      hasStatus: false,
    },
  ];

  it.each(cases)(
    '$name → $expected',
    async ({ code, headers, body, expected, retryAfterSeconds, hasStatus }) => {
      server.handler = (_req, res) => {
        res.writeHead(code, { 'content-type': 'application/json', ...headers });
        res.end(body);
      };
      const lw = createListWatch(server.kubeConfig({ token: TOKEN }), { version: 'v1', resource: 'pods' });
      const err = await rejection(verb === 'list' ? lw.list({}, ctx()) : lw.watch({}, ctx()));
      expect(err.code).toBe(expected);
      expect(err.httpStatus).toBe(code);
      expect(err.retryAfterSeconds).toBe(retryAfterSeconds);
      expect(err.details).toMatchObject({ resource: 'pods.v1', verb });
      if (hasStatus) {
        expect(err.status).toEqual(JSON.parse(body));
        expect(err.message).toBe((JSON.parse(body) as { message: string }).message);
      } else {
        expect(err.status).toBeUndefined();
        expect(err.details?.bodyExcerpt).toBe(body.slice(0, 200));
      }
      expect(JSON.stringify(err.details)).not.toContain(TOKEN);
      expect(err.message).not.toContain(TOKEN);
      if (verb === 'watch') {
        await waitFor(() => server.openConnections() === 0, 'the connection to close');
      } else {
        // The error body was read to its end, so the keep-alive connection is clean: the next list reuses it.
        server.handler = (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[]}');
        };
        await lw.list({}, ctx());
        expect(server.requests).toHaveLength(2);
        expect(server.connectionCount).toBe(1);
      }
    },
  );
});

describe('createListWatch: as a ListerWatcher', () => {
  it('lists then watches from the list resourceVersion, as a reflector does', async () => {
    server.handler = (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url?.includes('watch=true')) {
        res.end(line('MODIFIED', pod('a', '8')));
      } else {
        res.end(
          JSON.stringify({
            kind: 'PodList',
            apiVersion: 'v1',
            metadata: { resourceVersion: '7' },
            items: [{ metadata: { name: 'a', resourceVersion: '6' } }],
          }),
        );
      }
    };
    const lw: ListerWatcher = createListWatch(server.kubeConfig(), {
      version: 'v1',
      resource: 'pods',
      namespace: 'default',
    });
    const list = await lw.list({ resourceVersion: '0', limit: 500 }, ctx());
    const rv = list.metadata?.resourceVersion ?? '';
    const { events } = await collect(
      await lw.watch({ resourceVersion: rv, allowWatchBookmarks: true }, ctx()),
    );
    expect(rv).toBe('7');
    expect(events).toEqual([{ type: 'MODIFIED', object: pod('a', '8') }]);
    expect(server.requests[1]?.query).toEqual({
      watch: 'true',
      resourceVersion: '7',
      allowWatchBookmarks: 'true',
    });
  });
});

describe('createListWatch: logging', () => {
  it('logs requests and outcomes at debug level under its component, never the token', async () => {
    const lines: string[] = [];
    const logger = createLogger({
      level: 'debug',
      destination: { write: (l: string) => void lines.push(l) },
    });
    server.handler = (req, res) => {
      if (req.url?.includes('watch=true')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(line('ADDED', pod('a', '2')) + 'garbage\n');
      } else {
        res.writeHead(403, { 'content-type': 'application/json' });
        res.end(status(403, 'Forbidden', 'nope'));
      }
    };
    const lw = createListWatch(
      server.kubeConfig({ token: TOKEN }),
      { version: 'v1', resource: 'pods', namespace: 'ns' },
      { logger },
    );
    await rejection(lw.list({}, ctx()));
    const { error } = await collect(await lw.watch({}, ctx()));
    expect(error).toMatchObject({ code: ErrorCodes.MALFORMED_WATCH_EVENT });
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.map((r) => r.msg)).toEqual(['list', 'list failed', 'watch', 'watch failed']);
    for (const r of records)
      expect(r).toMatchObject({ component: 'client-node', resource: 'pods.v1', namespace: 'ns' });
    expect(records[3]).toMatchObject({
      outcome: 'failed',
      events: 1,
      lines: 2,
      code: ErrorCodes.MALFORMED_WATCH_EVENT,
    });
    expect(lines.join('')).not.toContain(TOKEN);
  });
});
