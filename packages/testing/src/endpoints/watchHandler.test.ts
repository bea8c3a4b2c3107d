import { FakeClock } from '@kinformer/core/testing';
import { FakeApiServer } from '../index.js';
import { serverPod } from '@kinformer/test-tools';
import { request, WatchReader, type WatchLine, watchReaders, closeAfterEach } from '../wire.test.helpers.js';

// WATCH over real HTTP: the §10 checklist rows W1–W9 of apiserver-protocol.md (W10–W12 are
// faults, in faults.test.ts), plus framing, bookmarks and metadata-only watches.

let server: FakeApiServer;
const readers = watchReaders();

closeAfterEach(() => server);

async function watch(
  query: string,
  init: RequestInit = {},
  path = '/api/v1/namespaces/default/pods',
): Promise<WatchReader> {
  const reader = await WatchReader.open(`${server.url}${path}?${query}`, init);
  readers.push(reader);
  return reader;
}

const rvOf = (e: WatchLine): string => String(e.object.metadata?.resourceVersion);
const nameOf = (e: WatchLine): string => String(e.object.metadata?.name);

describe('W1: watch from the current RV', () => {
  test('streams ADDED, MODIFIED, DELETED as one JSON object per line, chunked, DELETED carrying the delete revision', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('old'));
    const w = await watch(`watch=true&resourceVersion=${server.resourceVersion}`);
    expect(w.status).toBe(200);
    expect(w.headers.get('content-type')).toBe('application/json');
    expect(w.headers.get('transfer-encoding')).toBe('chunked');
    expect(w.headers.get('content-length')).toBeNull();
    await server.waitForWatchers(1);
    await w.expectQuiet(50); // nothing from before the requested RV
    const created = server.create('pods', serverPod('p', { labels: { a: '1' } }));
    const modified = server.patch('pods', 'default/p', { metadata: { labels: { a: '2' } } });
    server.delete('pods', 'default/p');
    const deleteRV = server.resourceVersion;
    const line = await w.nextLine();
    expect(line).toBe(`{"type":"ADDED","object":${JSON.stringify(created)}}`);
    const [mod, marked, del] = await w.take(3);
    expect(mod!.type).toBe('MODIFIED');
    expect(mod!.object).toEqual(modified);
    // A pod DELETE first sets deletionTimestamp (pod strategy: always graceful), then deletes.
    expect(marked!.type).toBe('MODIFIED');
    expect(marked!.object.metadata?.deletionTimestamp).toEqual(expect.any(String));
    expect(del!.type).toBe('DELETED');
    expect(rvOf(del!)).toBe(deleteRV);
    expect(Number(deleteRV)).toBeGreaterThan(Number(modified.metadata?.resourceVersion));
    expect(del!.object.metadata?.labels).toEqual({ a: '2' });
    expect(del!.object).toMatchObject({ kind: 'Pod', apiVersion: 'v1' });
  });

  test('watch=1 and the deprecated /watch/ path are watches too', async () => {
    server = await FakeApiServer.start();
    const a = await watch(`watch=1&resourceVersion=${server.resourceVersion}`);
    const b = await watch(
      `resourceVersion=${server.resourceVersion}`,
      {},
      '/api/v1/watch/namespaces/default/pods',
    );
    await server.waitForWatchers(2);
    server.create('pods', serverPod('x'));
    expect((await a.next()).type).toBe('ADDED');
    expect((await b.next()).type).toBe('ADDED');
    expect(server.requests.map((r) => r.verb)).toEqual(['watch', 'watch']);
  });

  test('resumes from an RV in the history without replaying or skipping events, only for its namespace and type', async () => {
    server = await FakeApiServer.start();
    const start = server.resourceVersion;
    server.create('pods', serverPod('a'));
    server.create('pods', serverPod('other/x'));
    server.create('configmaps', { metadata: { name: 'cm' } });
    server.create('pods', serverPod('b'));
    const w = await watch(`watch=true&resourceVersion=${start}`);
    const events = await w.take(2);
    expect(events.map(nameOf)).toEqual(['a', 'b']);
    await w.expectQuiet(50);
    const cluster = await watch(`watch=true&resourceVersion=${start}`, {}, '/api/v1/pods');
    expect((await cluster.take(3)).map(nameOf)).toEqual(['a', 'x', 'b']);
  });
});

describe('W2: watch from RV 0 or unset', () => {
  test('sends one ADDED per object in key order, then the annotated initial-events-end BOOKMARK', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('ns1/b'));
    server.create('pods', serverPod('ns2/a'));
    server.create('pods', serverPod('ns1/a'));
    const w = await watch('watch=true&resourceVersion=0&allowWatchBookmarks=true', {}, '/api/v1/pods');
    const events = await w.take(4);
    expect(
      events.slice(0, 3).map((e) => `${e.type} ${String(e.object.metadata?.namespace)}/${nameOf(e)}`),
    ).toEqual(['ADDED ns1/a', 'ADDED ns1/b', 'ADDED ns2/a']);
    const bookmark = events[3]!;
    expect(bookmark).toEqual({
      type: 'BOOKMARK',
      object: {
        kind: 'Pod',
        apiVersion: 'v1',
        metadata: {
          resourceVersion: server.resourceVersion,
          annotations: { 'k8s.io/initial-events-end': 'true' },
        },
        spec: { containers: null },
        status: {},
      },
    });
    for (const e of events.slice(0, 3)) expect(Number(rvOf(e))).toBeLessThanOrEqual(Number(rvOf(bookmark)));
    server.create('pods', serverPod('ns1/c'));
    expect(nameOf(await w.next())).toBe('c');
  });

  test('without allowWatchBookmarks there is no end marker, and an unset RV behaves the same', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('a'));
    const w = await watch('watch=true');
    expect(await w.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'a' } } });
    await w.expectQuiet(50);
    server.create('pods', serverPod('b'));
    expect(await w.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'b' } } });
  });

  test('emulating a server without the WatchList gate: initial events and never the end bookmark', async () => {
    server = await FakeApiServer.start({ watchList: false });
    server.create('pods', serverPod('a'));
    const w = await watch('watch=true&resourceVersion=0&allowWatchBookmarks=true');
    expect((await w.next()).type).toBe('ADDED');
    await w.expectQuiet(50);
    const swl = await request(
      `${server.url}/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`,
    );
    expect(swl.status).toBe(422);
    expect(swl.json.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
    );
  });
});

describe('W3: watch from an RV older than the history', () => {
  test('answers 200, one ERROR 410 "too old resource version: X (Y)", then a clean end', async () => {
    server = await FakeApiServer.start({ historySize: 2 });
    const old = server.resourceVersion;
    for (const n of ['a', 'b', 'c', 'd']) server.create('pods', serverPod(n));
    const w = await watch(`watch=true&resourceVersion=${old}`);
    expect(w.status).toBe(200);
    const end = await w.readToEnd();
    expect(end.error).toBeUndefined();
    const oldest = Number(server.resourceVersion) - 2;
    expect(end.lines).toEqual([
      `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: ${old} (${oldest})","reason":"Expired","code":410}}`,
    ]);
    // The oldest resumable RV itself still works.
    const ok = await watch(`watch=true&resourceVersion=${oldest}`);
    expect((await ok.take(2)).map(nameOf)).toEqual(['c', 'd']);
  });
});

describe('W4: timeoutSeconds', () => {
  test('ends the stream cleanly at the deadline, without an ERROR', async () => {
    const clock = new FakeClock(0);
    server = await FakeApiServer.start({ clock });
    const w = await watch(`watch=true&resourceVersion=${server.resourceVersion}&timeoutSeconds=2`);
    await server.waitForWatchers(1);
    clock.advance(1_999);
    await w.expectQuiet(30);
    clock.advance(1);
    const end = await w.readToEnd();
    expect(end).toEqual({ lines: [] });
    await server.waitFor(() => server.openWatchCount() === 0);
  });

  test('sends a bookmark bookmarkBeforeDeadlineMs before the deadline when the RV advanced', async () => {
    const clock = new FakeClock(0);
    server = await FakeApiServer.start({ clock });
    const w = await watch(
      `watch=true&resourceVersion=${server.resourceVersion}&timeoutSeconds=5&allowWatchBookmarks=true`,
    );
    await server.waitForWatchers(1);
    const moved = server.bumpResourceVersion();
    clock.advance(2_999);
    await w.expectQuiet(30);
    clock.advance(1);
    expect(await w.next()).toEqual({
      type: 'BOOKMARK',
      object: {
        kind: 'Pod',
        apiVersion: 'v1',
        metadata: { resourceVersion: moved },
        spec: { containers: null },
        status: {},
      },
    });
    clock.advance(2_000);
    expect(await w.readToEnd()).toEqual({ lines: [] });
  });
});

describe('W5: progress bookmarks', () => {
  test('sends a BOOKMARK with the new RV within the period after the global revision moved, and none while idle', async () => {
    const clock = new FakeClock(0);
    server = await FakeApiServer.start({ clock, bookmarkIntervalMs: 100 });
    server.create('pods', serverPod('a'));
    const w = await watch(`watch=true&resourceVersion=${server.resourceVersion}&allowWatchBookmarks=true`);
    await server.waitForWatchers(1);
    clock.advance(100);
    await w.expectQuiet(30); // idle: the RV did not move
    server.create('configmaps', { metadata: { name: 'elsewhere' } }); // another type moves the global RV
    const rv = server.resourceVersion;
    clock.advance(100);
    const bookmark = await w.next();
    expect(bookmark.type).toBe('BOOKMARK');
    expect(rvOf(bookmark)).toBe(rv);
    clock.advance(100);
    await w.expectQuiet(30); // nothing moved since the last bookmark
    server.create('pods', serverPod('b'));
    clock.advance(100);
    expect((await w.next()).type).toBe('ADDED'); // the event itself, then no bookmark for the same RV
    await w.expectQuiet(30);
  });

  test('a watch without allowWatchBookmarks never gets bookmarks', async () => {
    const clock = new FakeClock(0);
    server = await FakeApiServer.start({ clock, bookmarkIntervalMs: 100 });
    const w = await watch(`watch=true&resourceVersion=${server.resourceVersion}`);
    await server.waitForWatchers(1);
    server.bumpResourceVersion(5);
    clock.advance(500);
    await w.expectQuiet(50);
  });
});

describe('W6: selector transitions', () => {
  test('an object leaving the selector is DELETED (old body, new RV); entering is ADDED; outside is silent', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('p', { labels: { app: 'web' } }));
    const w = await watch(`watch=true&resourceVersion=${server.resourceVersion}&labelSelector=app%3Dweb`);
    await server.waitForWatchers(1);
    const left = server.patch('pods', 'default/p', { metadata: { labels: { app: 'db' } } });
    server.patch('pods', 'default/p', { spec: { nodeName: 'n1' } });
    const entered = server.patch('pods', 'default/p', { metadata: { labels: { app: 'web' } } });
    const still = server.patch('pods', 'default/p', { metadata: { annotations: { x: 'y' } } });
    server.create('pods', serverPod('q', { labels: { app: 'db' } }));
    server.delete('pods', 'default/q');
    const events = await w.take(3);
    expect(events[0]!.type).toBe('DELETED');
    expect(events[0]!.object.metadata?.labels).toEqual({ app: 'web' });
    expect(rvOf(events[0]!)).toBe(left.metadata?.resourceVersion);
    expect(events[1]!).toEqual({ type: 'ADDED', object: entered });
    expect(events[2]!).toEqual({ type: 'MODIFIED', object: still });
    await w.expectQuiet(50);
  });

  test('field selectors transition the same way', async () => {
    server = await FakeApiServer.start();
    const w = await watch(
      `watch=true&resourceVersion=${server.resourceVersion}&fieldSelector=spec.nodeName%3Dn1`,
      {},
      '/api/v1/pods',
    );
    await server.waitForWatchers(1);
    server.create('pods', serverPod('p'));
    server.patch('pods', 'default/p', { spec: { nodeName: 'n1' } });
    server.patch('pods', 'default/p', { spec: { nodeName: 'n2' } });
    const events = await w.take(2);
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
    expect((events[1]!.object as { spec: { nodeName: string } }).spec.nodeName).toBe('n1');
  });
});

describe('W7: sendInitialEvents validation', () => {
  test('sendInitialEvents=true without resourceVersionMatch is 422 up front', async () => {
    server = await FakeApiServer.start();
    const res = await request(`${server.url}/api/v1/pods?watch=true&sendInitialEvents=true`);
    expect(res.status).toBe(422);
    expect(res.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ListOptions.meta.k8s.io \\"\\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"ListOptions","causes":[{"reason":"FieldValueForbidden","message":"Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan","field":"resourceVersionMatch"}]},"code":422}\n',
    );
  });

  test('resourceVersionMatch on a watch needs sendInitialEvents and must be NotOlderThan', async () => {
    server = await FakeApiServer.start();
    const noSend = await request(
      `${server.url}/api/v1/pods?watch=true&resourceVersion=5&resourceVersionMatch=NotOlderThan`,
    );
    expect(noSend.json.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
    );
    const exact = await request(
      `${server.url}/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=Exact`,
    );
    expect(exact.json.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]',
    );
  });

  test('an unparseable watch resourceVersion is a 500 without a reason', async () => {
    server = await FakeApiServer.start();
    const res = await request(`${server.url}/api/v1/pods?watch=true&resourceVersion=abc`);
    expect(res.status).toBe(500);
    expect(res.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"resourceVersion: Invalid value: \\"abc\\": strconv.ParseUint: parsing \\"abc\\": invalid syntax","code":500}\n',
    );
  });
});

describe('W8: streaming list (sendInitialEvents=true)', () => {
  test('sends the initial ADDEDs, the annotated BOOKMARK, then live events', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('b'));
    server.create('pods', serverPod('a'));
    const w = await watch(
      'watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=',
    );
    const initial = await w.take(3);
    expect(initial.map((e) => e.type)).toEqual(['ADDED', 'ADDED', 'BOOKMARK']);
    expect(initial.slice(0, 2).map(nameOf)).toEqual(['a', 'b']);
    expect(initial[2]!.object.metadata).toEqual({
      resourceVersion: server.resourceVersion,
      annotations: { 'k8s.io/initial-events-end': 'true' },
    });
    server.create('pods', serverPod('c'));
    const live = await w.next();
    expect(live.type).toBe('ADDED');
    expect(Number(rvOf(live))).toBeGreaterThan(Number(rvOf(initial[2]!)));
  });

  test('sends the bookmark even with zero initial events, and honours selectors', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('a', { labels: { app: 'db' } }));
    const w = await watch(
      'watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=app%3Dweb',
    );
    expect((await w.next()).type).toBe('BOOKMARK');
  });

  test('for a future RV it waits, then answers an in-stream ERROR 504 after the freshness wait', async () => {
    const clock = new FakeClock(0);
    server = await FakeApiServer.start({ clock });
    const rv = Number(server.resourceVersion) + 10;
    const w = await watch(
      `watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${rv}`,
    );
    expect(w.status).toBe(200);
    await server.waitFor(() => clock.pendingTimers() > 0);
    clock.advance(3_000);
    const end = await w.readToEnd();
    expect(end.lines).toHaveLength(1);
    expect(JSON.parse(end.lines[0]!)).toEqual({
      type: 'ERROR',
      object: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `Timeout: Too large resource version: ${rv}, current: ${server.resourceVersion}`,
        reason: 'Timeout',
        details: {
          causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
          retryAfterSeconds: 1,
        },
        code: 504,
      },
    });
  });

  test('sendInitialEvents=false with NotOlderThan starts after the current revision', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('a'));
    const w = await watch(
      'watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion=0',
    );
    await server.waitForWatchers(1);
    await w.expectQuiet(50);
    server.create('pods', serverPod('b'));
    expect(nameOf(await w.next())).toBe('b');
  });
});

describe('W9: watch from a future RV', () => {
  test('keeps the stream open silently until the revision passes the requested one', async () => {
    server = await FakeApiServer.start();
    const target = Number(server.resourceVersion) + 2;
    const w = await watch(`watch=true&resourceVersion=${target}`);
    expect(w.status).toBe(200);
    await server.waitForWatchers(1);
    server.create('pods', serverPod('a'));
    server.create('pods', serverPod('b'));
    await w.expectQuiet(50);
    expect(w.ended).toBe(false);
    server.create('pods', serverPod('c'));
    const e = await w.next();
    expect(nameOf(e)).toBe('c');
    expect(Number(rvOf(e))).toBe(target + 1);
  });
});

describe('single-object and metadata-only watches', () => {
  /** Once `w` (a watch on pod `one`'s path) is open, creates pods `two` and `one`: `w` sees only `one`. */
  async function expectFollowsOnlyOne(w: Awaited<ReturnType<typeof watch>>): Promise<void> {
    await server.waitForWatchers(1);
    server.create('pods', serverPod('two'));
    server.create('pods', serverPod('one'));
    expect(nameOf(await w.next())).toBe('one');
  }

  test('a watch on a named path follows that one object', async () => {
    server = await FakeApiServer.start();
    const w = await watch(
      `watch=true&resourceVersion=${server.resourceVersion}`,
      {},
      '/api/v1/namespaces/default/pods/one',
    );
    await expectFollowsOnlyOne(w);
  });

  test('a named watch whose fieldSelector does not select that name is 400 (handlers/get.go listOpts)', async () => {
    // kube-apiserver: a selector on a named path must RequiresExactMatch("metadata.name") that
    // name, else NewBadRequest("fieldSelector metadata.name doesn't match requested name").
    server = await FakeApiServer.start();
    const named = `${server.url}/api/v1/namespaces/default/pods/one?watch=true`;
    for (const selector of ['metadata.name%3Dother', 'spec.nodeName%3Dn1', 'metadata.name!%3Done']) {
      const res = await request(`${named}&fieldSelector=${selector}`);
      expect([selector, res.status, res.text]).toEqual([
        selector,
        400,
        `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"fieldSelector metadata.name doesn't match requested name","reason":"BadRequest","code":400}\n`,
      ]);
    }
    const w = await watch(
      `watch=true&resourceVersion=${server.resourceVersion}&fieldSelector=metadata.name%3Done`,
      {},
      '/api/v1/namespaces/default/pods/one',
    );
    expect(w.status).toBe(200);
    await expectFollowsOnlyOne(w);
  });

  test('Accept as=PartialObjectMetadata makes every event object, bookmarks included, PartialObjectMetadata', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('a', { labels: { x: 'y' } }));
    const w = await watch('watch=true&resourceVersion=0&allowWatchBookmarks=true', {
      headers: { Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json' },
    });
    const [added, bookmark] = await w.take(2);
    expect(added!.object).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: server.get('pods', 'default/a').metadata,
    });
    expect(bookmark!.object).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: {
        resourceVersion: server.resourceVersion,
        annotations: { 'k8s.io/initial-events-end': 'true' },
      },
    });
    server.patch('pods', 'default/a', { spec: { nodeName: 'n' } });
    const modified = await w.next();
    expect(modified.type).toBe('MODIFIED');
    expect(Object.keys(modified.object)).toEqual(['kind', 'apiVersion', 'metadata']);
  });

  test('fans one write out to many watchers, each getting the same line', async () => {
    server = await FakeApiServer.start();
    const ws = await Promise.all(
      [1, 2, 3].map(() => watch(`watch=true&resourceVersion=${server.resourceVersion}`)),
    );
    await server.waitForWatchers(3);
    server.create('pods', serverPod('a'));
    const lines = await Promise.all(ws.map((w) => w.nextLine()));
    expect(new Set(lines).size).toBe(1);
  });

  test('closing the client side removes the watcher', async () => {
    server = await FakeApiServer.start();
    const w = await watch(`watch=true&resourceVersion=${server.resourceVersion}`);
    await server.waitForWatchers(1);
    w.close();
    await server.waitFor(() => server.openWatchCount() === 0);
    expect(server.openWatchCount('pods')).toBe(0);
  });
});
