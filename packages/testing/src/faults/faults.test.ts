import { FakeClock } from '@kinformer/core/testing';
import { FakeApiServer, type InjectedStatus } from '../index.js';
import { serverPod } from '@kinformer/test-tools';
import { decodeToken, request, WatchReader, watchReaders, closeAfterEach } from '../wire.test.helpers.js';

// Fault injection: W10–W12 of the §10 checklist, and every fault of `server.faults`.

let server: FakeApiServer;
const readers = watchReaders();

closeAfterEach(() => server);

async function watch(
  query = `watch=true&resourceVersion=${server.resourceVersion}`,
  path = '/api/v1/namespaces/default/pods',
): Promise<WatchReader> {
  const reader = await WatchReader.open(`${server.url}${path}?${query}`);
  readers.push(reader);
  return reader;
}

describe('W10: cache not ready', () => {
  test('answers 429 TooManyRequests "storage is (re)initializing" with Retry-After, up front', async () => {
    server = await FakeApiServer.start();
    server.faults.failNext({ status: 429, verbs: ['list', 'watch'], count: 2 });
    const list = await request(`${server.url}/api/v1/pods`);
    expect(list.status).toBe(429);
    expect(list.headers.get('retry-after')).toBe('1');
    expect(list.headers.get('content-type')).toBe('application/json');
    expect(list.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"storage is (re)initializing","reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429}\n',
    );
    const w = await request(`${server.url}/api/v1/pods?watch=true`);
    expect(w.status).toBe(429);
    expect((await request(`${server.url}/api/v1/pods`)).status).toBe(200);
  });

  test('retryAfterSeconds sets both the Status detail and the header', async () => {
    server = await FakeApiServer.start();
    server.faults.failNext({ status: 429, retryAfterSeconds: 7 });
    const res = await request(`${server.url}/api/v1/pods`);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.json.details).toEqual({ retryAfterSeconds: 7 });
    expect(res.text.endsWith('"code":429}\n')).toBe(true);
  });
});

describe('W11: API Priority and Fairness rejection', () => {
  test('answers 429 in plain text with Retry-After', async () => {
    server = await FakeApiServer.start();
    server.faults.failNext({ status: 429, plainText: true, verbs: ['watch'] });
    const res = await request(`${server.url}/api/v1/pods?watch=true`);
    expect(res.status).toBe(429);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.text).toBe('Too many requests, please try again later.\n');
  });
});

describe('W12: up-front 410 on watch', () => {
  test('answers HTTP 410 Expired before any stream (legacy servers), then watches work again', async () => {
    server = await FakeApiServer.start();
    server.faults.failNext({ status: 410, verbs: ['watch'] });
    const rv = server.resourceVersion;
    const res = await request(`${server.url}/api/v1/pods?watch=true&resourceVersion=${rv}`);
    expect(res.status).toBe(410);
    expect(res.text).toBe(
      `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: ${rv} (${rv})","reason":"Expired","code":410}\n`,
    );
    const w = await watch();
    expect(w.status).toBe(200);
  });
});

describe('failNext', () => {
  const cases: Array<{ status: InjectedStatus; reason: string; message: string }> = [
    {
      status: 400,
      reason: 'BadRequest',
      message: 'the server rejected our request due to an error in our request',
    },
    { status: 401, reason: 'Unauthorized', message: 'Unauthorized' },
    {
      status: 403,
      reason: 'Forbidden',
      message:
        'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default"',
    },
    { status: 404, reason: 'NotFound', message: 'the server could not find the requested resource' },
    {
      status: 409,
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on pods "": the object has been modified; please apply your changes to the latest version and try again',
    },
    { status: 410, reason: 'Expired', message: 'The resourceVersion for the provided list is too old.' },
    {
      status: 422,
      reason: 'Invalid',
      message: 'Pod "" is invalid: metadata: Invalid value: "injected": injected failure',
    },
    { status: 500, reason: 'InternalError', message: 'Internal error occurred: injected failure' },
    {
      status: 503,
      reason: 'ServiceUnavailable',
      message: 'the request has been made before all known HTTP paths have been installed, please try again',
    },
    {
      status: 504,
      reason: 'Timeout',
      message: 'Timeout: request did not complete within the allotted timeout',
    },
  ];

  test.each(cases)(
    '$status answers the real Status (reason $reason)',
    async ({ status, reason, message }) => {
      server = await FakeApiServer.start();
      server.faults.failNext({ status });
      const res = await request(`${server.url}/api/v1/namespaces/default/pods`);
      expect(res.status).toBe(status);
      expect(res.json).toMatchObject({
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason,
        message,
        code: status,
      });
      expect(res.headers.get('retry-after')).toBe(status === 503 ? '5' : null);
      expect((await request(`${server.url}/api/v1/namespaces/default/pods`)).status).toBe(200);
    },
  );

  test('403 at the cluster scope and 404 on a named object use their own wording', async () => {
    server = await FakeApiServer.start();
    server.faults.failNext({ status: 403, verbs: ['watch'] });
    const forbidden = await request(`${server.url}/apis/apps/v1/deployments?watch=true`);
    expect(forbidden.json.message).toBe(
      'deployments.apps is forbidden: User "system:anonymous" cannot watch resource "deployments" in API group "apps" at the cluster scope',
    );
    expect(forbidden.json.details).toEqual({ group: 'apps', kind: 'deployments' });
    server.faults.failNext({ status: 404, verbs: ['get'] });
    const missing = await request(`${server.url}/api/v1/namespaces/default/configmaps/cm`);
    expect(missing.json.message).toBe('configmaps "cm" not found');
  });

  test('504 can be the too-large-resourceVersion form', async () => {
    server = await FakeApiServer.start();
    server.faults.failNext({ status: 504, tooLargeResourceVersion: true });
    const res = await request(`${server.url}/api/v1/pods?resourceVersion=999`);
    expect(res.status).toBe(504);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.json.message).toBe(
      `Timeout: Too large resource version: 999, current: ${server.resourceVersion}`,
    );
  });

  test('filters by verb and resource, counts down, can be cancelled, and can carry a custom body', async () => {
    server = await FakeApiServer.start();
    const rule = server.faults.failNext({ status: 500, verbs: ['list'], resource: 'configmaps', count: 2 });
    expect((await request(`${server.url}/api/v1/pods`)).status).toBe(200);
    expect((await request(`${server.url}/api/v1/configmaps/x`)).status).toBe(404);
    expect((await request(`${server.url}/api/v1/configmaps`)).status).toBe(500);
    expect(rule.remaining).toBe(1);
    rule.cancel();
    expect((await request(`${server.url}/api/v1/configmaps`)).status).toBe(200);
    server.faults.failNext({ status: 500, message: 'etcd is down' });
    expect((await request(`${server.url}/api/v1/pods`)).json.message).toBe('etcd is down');
    server.faults.failNext({
      status: 409,
      body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Custom', code: 409 },
    });
    expect((await request(`${server.url}/api/v1/pods`)).text).toBe(
      '{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Custom","code":409}\n',
    );
  });

  test('does not apply to discovery unless asked', async () => {
    server = await FakeApiServer.start();
    server.faults.failNext({ status: 503 });
    expect((await request(`${server.url}/api/v1`)).status).toBe(200);
    expect((await request(`${server.url}/api/v1/pods`)).status).toBe(503);
    server.faults.failNext({ status: 503, verbs: ['discovery'] });
    expect((await request(`${server.url}/apis`)).status).toBe(503);
  });
});

describe('dropping and ending watches', () => {
  test('dropWatches destroys the connection: the client sees an error, not a clean end', async () => {
    server = await FakeApiServer.start();
    const w = await watch();
    await server.waitForWatchers(1);
    expect(server.faults.dropWatches()).toBe(1);
    const end = await w.readToEnd();
    expect(end.error).toBeDefined();
    expect(server.openWatchCount()).toBe(0);
  });

  test('endWatches ends streams cleanly, after what was already sent, and filters by resource', async () => {
    server = await FakeApiServer.start();
    const pods = await watch();
    const cms = await watch(
      `watch=true&resourceVersion=${server.resourceVersion}`,
      '/api/v1/namespaces/default/configmaps',
    );
    await server.waitForWatchers(2);
    server.create('pods', serverPod('a'));
    expect(server.faults.endWatches({ resource: 'pods' })).toBe(1);
    const end = await pods.readToEnd();
    expect(end.error).toBeUndefined();
    expect(end.lines).toHaveLength(1);
    expect(cms.ended).toBe(false);
    expect(server.openWatchCount('configmaps')).toBe(1);
  });
});

describe('stalls', () => {
  test('a stalled stream sends nothing and stays open; on release the queued events flow in order', async () => {
    server = await FakeApiServer.start();
    const w = await watch();
    await server.waitForWatchers(1);
    const stall = server.faults.stallWatches();
    server.create('pods', serverPod('a'));
    server.create('pods', serverPod('b'));
    await w.expectQuiet(80);
    expect(w.ended).toBe(false);
    expect(server.openWatchCount()).toBe(1);
    stall.release();
    const events = await w.take(2);
    expect(events.map((e) => e.object.metadata?.name)).toEqual(['a', 'b']);
  });

  test('new watches opened during a stall are stalled too (headers only) until released', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('a'));
    const stall = server.faults.stallWatches({ resource: 'pods' });
    const w = await watch('watch=true&resourceVersion=0');
    expect(w.status).toBe(200);
    await w.expectQuiet(80);
    server.faults.releaseStalls();
    expect((await w.next()).type).toBe('ADDED');
    stall.release();
  });
});

describe('injections into watch streams', () => {
  test('malformed line, unknown event type and null object are sent on open watches, which go on', async () => {
    server = await FakeApiServer.start();
    const w = await watch();
    await server.waitForWatchers(1);
    expect(server.faults.injectIntoWatches('malformed-line')).toBe(1);
    server.faults.injectIntoWatches('unknown-event-type');
    server.faults.injectIntoWatches('null-object');
    server.create('pods', serverPod('after'));
    expect(await w.nextLine()).toBe('{"type":"ADDED","object":{not json}}');
    const unknown = JSON.parse((await w.nextLine())!) as {
      type: string;
      object: { kind: string; metadata: { resourceVersion: string } };
    };
    expect(unknown.type).toBe('SURPRISE');
    expect(unknown.object.kind).toBe('Pod');
    expect(await w.nextLine()).toBe('{"type":"ADDED","object":null}');
    expect((await w.next()).object.metadata?.name).toBe('after');
  });

  test('on a Table watch the injected lines go as they are (no Table transform) and objects are Tables', async () => {
    server = await FakeApiServer.start();
    const w = await WatchReader.open(
      `${server.url}/api/v1/namespaces/default/pods?watch=true&resourceVersion=${server.resourceVersion}`,
      { headers: { Accept: 'application/json;as=Table;g=meta.k8s.io;v=v1' } },
    );
    readers.push(w);
    await server.waitForWatchers(1);
    expect(server.faults.injectIntoWatches('malformed-line')).toBe(1);
    expect(server.faults.injectIntoWatches('null-object')).toBe(1);
    server.create('pods', serverPod('after'));
    expect(await w.nextLine()).toBe('{"type":"ADDED","object":{not json}}');
    expect(await w.nextLine()).toBe('{"type":"ADDED","object":null}');
    const table = JSON.parse((await w.nextLine())!) as {
      type: string;
      object: { kind: string; rows: unknown[] };
    };
    expect(table.type).toBe('ADDED');
    expect(table.object.kind).toBe('Table');
    expect(table.object.rows).toHaveLength(1);
  });

  test('a truncated line is followed by a connection reset', async () => {
    server = await FakeApiServer.start();
    const w = await watch();
    await server.waitForWatchers(1);
    server.faults.injectIntoWatches('truncated-line');
    const end = await w.readToEnd();
    expect(end.lines).toEqual([]);
    expect(end.error).toBeDefined();
    expect(w.partial.startsWith('{"type":"ADDED","object":{"kind":"Pod"')).toBe(true);
  });

  test('an in-stream ERROR ends the stream cleanly; target "next" applies to the next watch only', async () => {
    server = await FakeApiServer.start();
    server.faults.injectIntoWatches(
      {
        error: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'boom',
          reason: 'InternalError',
          code: 500,
        },
      },
      { target: 'next' },
    );
    const first = await watch();
    const end = await first.readToEnd();
    expect(end.error).toBeUndefined();
    expect(end.lines.map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(['ERROR']);
    const second = await watch();
    await second.expectQuiet(50);
  });
});

describe('compaction', () => {
  test('after compact, old watches resume with an in-stream 410 and old continue tokens expire', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('a'));
    server.create('pods', serverPod('b'));
    const rv = server.resourceVersion;
    const page = await request(`${server.url}/api/v1/pods?limit=1`);
    const token = (page.json.metadata as { continue: string }).continue;
    const oldest = server.faults.compact();
    expect(Number(oldest)).toBeGreaterThan(Number(rv));
    const w = await watch(`watch=true&resourceVersion=${rv}`);
    const end = await w.readToEnd();
    expect(JSON.parse(end.lines[0]!)).toMatchObject({
      type: 'ERROR',
      object: { code: 410, message: `too old resource version: ${rv} (${oldest})` },
    });
    const expired = await request(`${server.url}/api/v1/pods?limit=1&continue=${token}`);
    expect(expired.status).toBe(410);
    expect(decodeToken((expired.json.metadata as { continue: string }).continue).rv).toBe(-1);
  });
});

describe('restart', () => {
  test('ends every watch, keeps objects, and the revision keeps increasing; clients can resume', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('a'));
    const rv = server.resourceVersion;
    const w = await watch(`watch=true&resourceVersion=${rv}`);
    await server.waitForWatchers(1);
    await server.faults.restart();
    expect((await w.readToEnd()).lines).toEqual([]);
    expect(server.openWatchCount()).toBe(0);
    expect(server.list('pods')).toHaveLength(1);
    server.create('pods', serverPod('b'));
    expect(Number(server.resourceVersion)).toBeGreaterThan(Number(rv));
    const resumed = await watch(`watch=true&resourceVersion=${rv}`);
    expect((await resumed.next()).object.metadata?.name).toBe('b');
  });

  test('with loseHistory, resuming from an old RV gets 410 so the client must relist', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('a'));
    const rv = server.resourceVersion;
    await server.faults.restart({ loseHistory: true });
    const w = await watch(`watch=true&resourceVersion=${rv}`);
    const end = await w.readToEnd();
    expect(JSON.parse(end.lines[0]!)).toMatchObject({
      type: 'ERROR',
      object: { code: 410, reason: 'Expired' },
    });
    const list = await request(`${server.url}/api/v1/pods`);
    expect((list.json.items as unknown[]).length).toBe(1);
  });
});

describe('failNext with a window (forMs)', () => {
  test('fails the requests that arrive within the window, then expires with its count unspent', async () => {
    const clock = new FakeClock(1_000_000);
    server = await FakeApiServer.start({ clock });
    const rule = server.faults.failNext({ status: 503, verbs: ['list'], count: 3, forMs: 1_000 });
    expect((await request(`${server.url}/api/v1/pods`)).status).toBe(503);
    clock.advance(999);
    expect((await request(`${server.url}/api/v1/pods`)).status).toBe(503);
    expect(rule.remaining).toBe(1);
    clock.advance(1);
    // The window is over: the request a slow client sends later is not failed for it.
    expect((await request(`${server.url}/api/v1/pods`)).status).toBe(200);
    expect(rule.remaining).toBe(0);
    expect(rule.failed).toBe(2);
  });

  test('a window nobody asked in fails nothing; a rule without a window waits for the next request', async () => {
    const clock = new FakeClock(1_000_000);
    server = await FakeApiServer.start({ clock });
    const windowed = server.faults.failNext({ status: 500, verbs: ['list'], forMs: 250 });
    const waiting = server.faults.failNext({ status: 429, verbs: ['list'] });
    clock.advance(60_000);
    expect(windowed.remaining).toBe(0);
    expect(windowed.failed).toBe(0);
    expect((await request(`${server.url}/api/v1/pods`)).status).toBe(429);
    expect(waiting.failed).toBe(1);
    expect((await request(`${server.url}/api/v1/pods`)).status).toBe(200);
  });
});

test('reset clears pending failures and injections and releases stalls', async () => {
  server = await FakeApiServer.start();
  server.faults.failNext({ status: 500, count: 5 });
  server.faults.injectIntoWatches('malformed-line', { target: 'next' });
  server.faults.reset();
  expect((await request(`${server.url}/api/v1/pods`)).status).toBe(200);
  const w = await watch();
  await w.expectQuiet(50);
});
