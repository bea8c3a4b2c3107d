import { createListWatch } from '@kinformer/client-node';
import { ErrorCodes, realClock, type Status } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import type { ListerWatcher } from '@kinformer/reflector';
import { FakeApiServer, type FailNextOptions } from '@kinformer/testing';
import { RecordingBackoff, serverPod, status, waitFor } from '@kinformer/test-tools';
import {
  cacheKeys,
  cacheVersions,
  disposeAll,
  requestLog,
  serverVersions,
  startReflector,
  waitForCacheToMatch,
  type Pod,
  type ReflectorHarness,
  type StartReflectorOptions,
  PODS,
  startServer,
} from './testSupport.test.helpers.js';

// The reflector's failure handling (client-go.md §1.6, §10.1; apiserver-protocol.md §9.1, §10) over
// real HTTP: FakeApiServer ← KubeConfig ← createListWatch ← Reflector → DeltaFIFO/RealFIFO → an
// Indexer. Each scenario injects one fault, then checks that the cache ends equal to the server's
// objects and that the client sent exactly the requests client-go would (which resourceVersion,
// whether it relisted). The reflector runs on a FakeClock with a backoff that retries at once, so
// nothing waits for real time except HTTP; waits that the server asks for (Retry-After) are
// asserted on the fake clock and then ticked through.

afterEach(disposeAll);

const T0 = Date.parse('2026-01-01T00:00:00Z');

function podsOf(server: FakeApiServer): ListerWatcher<Pod> {
  return createListWatch<Pod>(server.kubeConfig(), PODS);
}

/**
 * A server holding the pods `existing` (answering its next requests with `failNext`, if given) and a
 * reflector on a FakeClock (`T0`) started on it.
 */
async function startWithPods(
  existing: readonly string[],
  options: Omit<StartReflectorOptions<Pod>, 'clock'> & { failNext?: FailNextOptions } = {},
): Promise<{ server: FakeApiServer; clock: FakeClock; h: ReflectorHarness<Pod> }> {
  const { failNext, ...reflectorOptions } = options;
  const server = await startServer();
  for (const name of existing) server.create('pods', serverPod(name));
  if (failNext) server.faults.failNext(failNext);
  const clock = new FakeClock(T0);
  const h = startReflector(podsOf(server), { ...reflectorOptions, clock });
  return { server, clock, h };
}

/** {@link startWithPods}, then waits until the reflector watches (from `listRV`). */
async function startWatching(
  existing: readonly string[] = [],
  options: Omit<StartReflectorOptions<Pod>, 'clock'> = {},
): Promise<{ server: FakeApiServer; clock: FakeClock; h: ReflectorHarness<Pod>; listRV: string }> {
  const started = await startWithPods(existing, options);
  await started.server.waitForWatchers(1);
  return { ...started, listRV: started.server.resourceVersion };
}

/** The Status of a watch cache that no longer holds `rv` (§4.6). */
function tooOldStatus(rv: string, oldest: string): Status {
  return status(410, 'Expired', `too old resource version: ${rv} (${oldest})`);
}

/** Creates `names` on the server and waits until the reflector has seen the last one. */
async function createAndSee(
  server: FakeApiServer,
  h: ReflectorHarness<Pod>,
  ...names: string[]
): Promise<string> {
  let rv = '';
  for (const name of names) rv = server.create('pods', serverPod(name)).metadata.resourceVersion!;
  await waitFor(() => h.reflector.lastSyncResourceVersion() === rv, { describe: () => requestLog(server) });
  return rv;
}

/** Creates the pod `name` and waits until the reflector's cache equals the server's objects. */
async function createAndSync(server: FakeApiServer, h: ReflectorHarness<Pod>, name: string): Promise<void> {
  server.create('pods', serverPod(name));
  await waitForCacheToMatch(h, server);
}

/** Asserts the pod requests: the first list (RV "0") and the watch from `listRV`, then `after`. */
function expectRequestsAfterStart(server: FakeApiServer, listRV: string, after: string[]): void {
  expect(requestLog(server)).toEqual(['list rv=0 limit=500 → 200', `watch rv=${listRV} → 200`, ...after]);
}

/** Waits until the server has received `n` list/watch requests for pods. */
async function waitForRequests(server: FakeApiServer, n: number): Promise<void> {
  await waitFor(() => requestLog(server).length >= n, { describe: () => requestLog(server) });
}

/** Waits until the reflector sleeps on the fake clock for exactly `ms` (nothing else is scheduled that soon). */
async function waitForSleep(clock: FakeClock, ms: number, server: FakeApiServer): Promise<void> {
  await waitFor(() => clock.nextTimerAt() === clock.now() + ms, {
    describe: () => ({ next: (clock.nextTimerAt() ?? NaN) - clock.now(), requests: requestLog(server) }),
  });
}

describe.each(['DeltaFIFO', 'RealFIFO'] as const)('list and watch over HTTP (%s)', (queue) => {
  test('five pods arrive, the watch is cut after the 2nd, the reflector rewatches from its RV: all in order, exactly two watches', async () => {
    const { server, h, listRV } = await startWatching([], { queue });
    const p2RV = await createAndSee(server, h, 'p1', 'p2');
    expect(server.faults.dropWatches()).toBe(1);
    for (const name of ['p3', 'p4', 'p5']) server.create('pods', serverPod(name));
    await waitForCacheToMatch(h, server);

    expect(h.applied.map((d) => `${d.type} ${d.key}`)).toEqual([
      'Added default/p1',
      'Added default/p2',
      'Added default/p3',
      'Added default/p4',
      'Added default/p5',
    ]);
    expect(h.applied.map((d) => Number(d.resourceVersion))).toEqual(
      [...h.applied.map((d) => Number(d.resourceVersion))].sort((a, b) => a - b),
    );
    expectRequestsAfterStart(server, listRV, [`watch rv=${p2RV} → 200`]);
    expect(h.reflector.stats()).toMatchObject({
      lists: 1,
      relists: 0,
      watchStarts: 2,
      watchRestarts: 1,
      expired410: 0,
    });
  });

  test('a 410 ERROR event in the stream makes it relist from the last RV; objects deleted meanwhile leave the cache', async () => {
    const { server, h, listRV } = await startWatching(['a', 'b', 'c'], { queue });
    const lastRV = await createAndSee(server, h, 'd');
    expect(server.faults.injectIntoWatches({ error: tooOldStatus(lastRV, String(Number(lastRV) + 5)) })).toBe(
      1,
    );
    // Written after the ERROR: this watch never sends them, only the relist can see them.
    server.delete('pods', 'a');
    server.create('pods', serverPod('e'));
    await waitForRequests(server, 4);
    await waitForCacheToMatch(h, server);

    expectRequestsAfterStart(server, listRV, [
      `list rv=${lastRV} → 200`,
      `watch rv=${server.resourceVersion} → 200`,
    ]);
    expect(h.reflector.stats()).toMatchObject({ lists: 2, relists: 1, expired410: 1 });
    expect(h.handlerErrors).toEqual([]); // errors during a watch never reach the handler (client-go)
    expect(h.applied.filter((d) => d.type === 'Deleted').map((d) => d.key)).toEqual(['default/a']);
    expect(cacheKeys(h.indexer)).toEqual(['default/b', 'default/c', 'default/d', 'default/e']);
  });
});

describe('the watch ends', () => {
  test('a clean end (server timeout) rewatches from the last RV at once, without relisting', async () => {
    const { server, h, listRV } = await startWatching();
    const lastRV = await createAndSee(server, h, 'a', 'b');
    expect(server.faults.endWatches()).toBe(1);
    await server.waitFor(() => server.requests.filter((r) => r.verb === 'watch').length === 2);
    await createAndSync(server, h, 'c');

    expectRequestsAfterStart(server, listRV, [`watch rv=${lastRV} → 200`]);
    expect(h.backoff).toMatchObject({ steps: 0 });
    expect(h.reflector.stats()).toMatchObject({ lists: 1, watchRestarts: 1 });
  });

  test('a watch that ends within a second without any event counts as an error and relists (VeryShortWatchError)', async () => {
    const { server, h, listRV } = await startWatching();
    server.faults.endWatches(); // the fake clock has not moved: the watch "lasted" 0 ms with 0 events
    await waitFor(() => h.reflector.stats().watchStarts === 2);
    await createAndSync(server, h, 'a');

    expectRequestsAfterStart(server, listRV, [`list rv=${listRV} → 200`, `watch rv=${listRV} → 200`]);
    expect(h.reflector.stats()).toMatchObject({ veryShortWatches: 1, relists: 1 });
    expect(h.backoff).toMatchObject({ steps: 1 });
  });

  test('the same idle watch ended after more than a second is a normal end: rewatch, no relist', async () => {
    const { server, clock, h, listRV } = await startWatching();
    await clock.tick(1500);
    server.faults.endWatches();
    await waitFor(() => h.reflector.stats().watchStarts === 2);
    await createAndSync(server, h, 'a');

    expectRequestsAfterStart(server, listRV, [`watch rv=${listRV} → 200`]);
    expect(h.reflector.stats()).toMatchObject({ veryShortWatches: 0, relists: 0 });
  });
});

describe('410: the history is gone', () => {
  test('after a compaction the rewatch gets an in-stream 410 and the reflector relists from its last RV', async () => {
    const { server, h, listRV } = await startWatching();
    const lastRV = await createAndSee(server, h, 'a', 'b');
    const oldest = server.faults.compact();
    expect(Number(oldest)).toBeGreaterThan(Number(lastRV));
    server.faults.endWatches();
    await waitForRequests(server, 5);
    await createAndSync(server, h, 'c');

    expectRequestsAfterStart(server, listRV, [
      `watch rv=${lastRV} → 200`, // 200, then ERROR 410 "too old resource version"
      `list rv=${lastRV} → 200`, // "not older than": the relist never goes back in time
      `watch rv=${oldest} → 200`,
    ]);
    expect(h.reflector.stats()).toMatchObject({ relists: 1, expired410: 1 });
    expect(h.handlerErrors).toEqual([]);
  });

  test('an up-front HTTP 410 on the watch (legacy servers) reaches the watchErrorHandler and relists', async () => {
    const { server, h, listRV } = await startWatching();
    const lastRV = await createAndSee(server, h, 'a');
    server.faults.failNext({ status: 410, verbs: ['watch'] });
    server.faults.endWatches();
    await waitForRequests(server, 5);
    await createAndSync(server, h, 'b');

    expect(h.handlerErrorCodes()).toEqual([ErrorCodes.RESOURCE_EXPIRED]);
    expect(h.handlerErrors[0]).toMatchObject({ httpStatus: 410, status: { reason: 'Expired' } });
    expectRequestsAfterStart(server, listRV, [
      `watch rv=${lastRV} → 410`,
      `list rv=${lastRV} → 200`,
      `watch rv=${lastRV} → 200`,
    ]);
    expect(h.backoff).toMatchObject({ steps: 0 }); // the watch had delivered 'a': the relist goes at once
  });
});

describe('429: the server asks to slow down', () => {
  test('429 JSON with Retry-After on the watch: waits Retry-After, rewatches from the same RV, never relists (TestNoRelistOnTooManyRequests)', async () => {
    const { server, clock, h, listRV } = await startWatching();
    const lastRV = await createAndSee(server, h, 'a');
    server.faults.failNext({ status: 429, verbs: ['watch'], count: 2, retryAfterSeconds: 3 });
    server.faults.endWatches();
    await waitForSleep(clock, 3000, server);
    await clock.tick(3000);
    await waitForSleep(clock, 3000, server);
    await clock.tick(3000);
    await server.waitForWatchers(1);
    await createAndSync(server, h, 'b');

    expectRequestsAfterStart(server, listRV, [
      `watch rv=${lastRV} → 429`,
      `watch rv=${lastRV} → 429`,
      `watch rv=${lastRV} → 200`,
    ]);
    expect(h.handlerErrors).toEqual([]);
    expect(h.reflector.stats()).toMatchObject({ lists: 1, relists: 0, watchStarts: 4 });
  });

  test('the plain-text 429 of API Priority and Fairness is a 429 too: Retry-After honoured, no relist', async () => {
    const { server, clock, h } = await startWatching();
    const lastRV = await createAndSee(server, h, 'a');
    server.faults.failNext({ status: 429, plainText: true, verbs: ['watch'], retryAfterSeconds: 2 });
    server.faults.endWatches();
    await waitForSleep(clock, 2000, server);
    await clock.tick(2000);
    await server.waitForWatchers(1);
    await createAndSync(server, h, 'b');

    expect(requestLog(server).slice(2)).toEqual([`watch rv=${lastRV} → 429`, `watch rv=${lastRV} → 200`]);
    expect(h.reflector.stats()).toMatchObject({ lists: 1, relists: 0 });
  });
});

describe('a failed LIST (5xx, 429)', () => {
  test('500 twice: each goes to the watchErrorHandler, backs off one step, then the list succeeds', async () => {
    const { server, h } = await startWithPods(['a', 'b'], {
      failNext: { status: 500, verbs: ['list'], count: 2 },
    });
    await waitForCacheToMatch(h, server);
    await server.waitForWatchers(1);

    expect(h.handlerErrorCodes()).toEqual([ErrorCodes.INTERNAL, ErrorCodes.INTERNAL]);
    expect(h.handlerErrors[0]).toMatchObject({ httpStatus: 500, status: { reason: 'InternalError' } });
    expect(h.backoff).toMatchObject({ steps: 2 });
    expect(requestLog(server)).toEqual([
      'list rv=0 limit=500 → 500',
      'list rv=0 limit=500 → 500',
      'list rv=0 limit=500 → 200',
      `watch rv=${server.resourceVersion} → 200`,
    ]);
  });

  test.each([
    {
      what: 'a 429 on the LIST goes to the watchErrorHandler and the next list waits Retry-After',
      failNext: { status: 429, verbs: ['list'], retryAfterSeconds: 4 },
      code: ErrorCodes.TOO_MANY_REQUESTS,
      waitMs: 4000,
      backoff: undefined,
    },
    {
      what: '503 with Retry-After: the next list waits max(backoff step, Retry-After), then recovers',
      failNext: { status: 503, verbs: ['list'] }, // retryAfterSeconds 5 by default
      code: ErrorCodes.SERVICE_UNAVAILABLE,
      waitMs: 5000,
      backoff: new RecordingBackoff(800),
    },
  ] satisfies Array<{
    what: string;
    failNext: FailNextOptions;
    code: string;
    waitMs: number;
    backoff?: unknown;
  }>)('$what', async ({ failNext, code, waitMs, backoff }) => {
    const { server, clock, h } = await startWithPods(['a'], { failNext, ...(backoff && { backoff }) });
    await waitForSleep(clock, waitMs, server);
    expect(h.handlerErrorCodes()).toEqual([code]);
    expect(h.handlerErrors[0]).toMatchObject({ retryAfterSeconds: waitMs / 1000 });
    await clock.tick(waitMs - 1);
    const failed = `list rv=0 limit=500 → ${failNext.status}`;
    expect(requestLog(server)).toEqual([failed]);
    await clock.tick(1);
    await waitForCacheToMatch(h, server);
    expect(requestLog(server)).toEqual([
      failed,
      'list rv=0 limit=500 → 200',
      `watch rv=${server.resourceVersion} → 200`,
    ]);
  });
});

describe('pagination', () => {
  test('a continue token that expires during a paginated list gives exactly one full list at the requested RV', async () => {
    const server = await startServer();
    for (const name of ['a', 'b', 'c', 'd', 'e']) server.create('pods', serverPod(name));
    const lw = podsOf(server);
    let compacted = false;
    // Compacts the server's history right after the first page arrives, so the page-2 token is too old.
    const compactingAfterFirstPage: ListerWatcher<Pod> = {
      list: async (options, context) => {
        const page = await lw.list(options, context);
        if (!compacted && page.metadata?.continue) {
          compacted = true;
          server.faults.compact();
        }
        return page;
      },
      watch: (options, context) => lw.watch(options, context),
    };
    // The first list at RV "0" is never paginated (the watch cache ignores limit); a 410 on it makes
    // the reflector retry at once with a consistent, paginated list (RV "").
    server.faults.failNext({ status: 410, verbs: ['list'] });
    const h = startReflector(compactingAfterFirstPage, { reflector: { pageSize: 2 } });
    await waitForCacheToMatch(h, server);
    await server.waitForWatchers(1);

    expect(requestLog(server)).toEqual([
      'list rv=0 limit=2 → 410',
      'list rv= limit=2 → 200',
      'list rv= continue limit=2 → 410',
      'list rv= → 200', // one unpaginated full list at the originally requested RV ("")
      `watch rv=${server.resourceVersion} → 200`,
    ]);
    expect(h.applied.filter((d) => d.type !== 'Deleted')).toHaveLength(5);
    expect(h.handlerErrors).toEqual([]);
  });

  test('a large consistent list is fetched in pages of pageSize and merged', async () => {
    const { server, h } = await startWithPods(['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6'], {
      failNext: { status: 410, verbs: ['list'] },
      reflector: { pageSize: 3 },
    });
    await waitForCacheToMatch(h, server);
    expect(requestLog(server).slice(0, 4)).toEqual([
      'list rv=0 limit=3 → 410',
      'list rv= limit=3 → 200',
      'list rv= continue limit=3 → 200',
      'list rv= continue limit=3 → 200',
    ]);
  });
});

describe('too large resourceVersion', () => {
  test('a relist answered 504 ResourceVersionTooLarge is retried at once with RV "" (consistent read)', async () => {
    const { server, h } = await startWatching(['a']);
    const lastRV = await createAndSee(server, h, 'b');
    server.faults.failNext({ status: 504, tooLargeResourceVersion: true, verbs: ['list'] });
    server.faults.injectIntoWatches({ error: tooOldStatus(lastRV, lastRV) });
    await waitFor(() => requestLog(server).length === 5);
    await createAndSync(server, h, 'c');

    expect(requestLog(server).slice(2)).toEqual([
      `list rv=${lastRV} → 504`,
      'list rv= → 200',
      `watch rv=${lastRV} → 200`,
    ]);
    expect(h.handlerErrors).toEqual([]);
    expect(h.backoff).toMatchObject({ steps: 0 }); // the 410 followed progress and the 504 retry is immediate
  });
});

describe('stall detection', () => {
  test('a watch that delivers nothing for timeoutSeconds + stallMarginMs is aborted and restarted from the same RV; events queued meanwhile arrive', async () => {
    const { server, clock, h, listRV } = await startWatching([], { reflector: { stallMarginMs: 1000 } });
    const stall = server.faults.stallWatches({ includeNew: false });
    server.create('pods', serverPod('a')); // queued on the stalled stream: the client never sees it there
    server.create('pods', serverPod('b'));
    await clock.tick(300_000); // timeoutSeconds is 300 (random() = 0)
    expect(h.reflector.stats().stalls).toBe(0);
    expect(cacheVersions(h.indexer)).toEqual([]);
    await clock.tick(1000);
    await waitForCacheToMatch(h, server);
    stall.release();

    expect(h.reflector.stats()).toMatchObject({ stalls: 1, relists: 0, watchRestarts: 1 });
    expectRequestsAfterStart(server, listRV, [`watch rv=${listRV} → 200`]);
    expect(server.openWatchCount()).toBe(1); // the stalled request was closed
    expect(h.handlerErrors).toEqual([]);
  });
});

describe('API server restart', () => {
  // A restarting API server closes every watch, then answers 429 "storage is (re)initializing" until
  // its watch cache is ready (§7.7). The reflector waits Retry-After on the fake clock: a window in
  // which the test writes objects that the client can only learn about afterwards.
  async function restartWithOutage(
    server: FakeApiServer,
    clock: FakeClock,
    loseHistory: boolean,
    duringOutage: () => void,
  ): Promise<void> {
    server.faults.failNext({ status: 429, verbs: ['watch'], retryAfterSeconds: 1 });
    await server.faults.restart({ loseHistory });
    await waitForSleep(clock, 1000, server);
    duringOutage();
    await clock.tick(1000);
  }

  test('with its history kept: the reflector rewatches from its RV and gets what was written during the outage, no relist', async () => {
    const { server, clock, h } = await startWatching();
    const lastRV = await createAndSee(server, h, 'a', 'b');
    await restartWithOutage(server, clock, false, () => {
      server.create('pods', serverPod('c'));
      server.delete('pods', 'a');
    });
    await waitForCacheToMatch(h, server);

    expect(requestLog(server).slice(2)).toEqual([`watch rv=${lastRV} → 429`, `watch rv=${lastRV} → 200`]);
    expect(h.reflector.stats()).toMatchObject({ relists: 0, expired410: 0 });
    expect(h.applied.map((d) => `${d.type} ${d.key}`).slice(-3)).toEqual([
      'Added default/c',
      'Updated default/a', // a pod DELETE sets deletionTimestamp first
      'Deleted default/a',
    ]);
  });

  test('with its history lost: the rewatch gets 410 and the reflector relists; deletions during the outage reach the cache as tombstones', async () => {
    const { server, clock, h } = await startWatching(['a', 'b']);
    const lastRV = await createAndSee(server, h, 'c');
    await restartWithOutage(server, clock, true, () => {
      server.delete('pods', 'b');
      server.create('pods', serverPod('d'));
    });
    await waitForRequests(server, 6);
    await waitForCacheToMatch(h, server);

    expect(requestLog(server).slice(2)).toEqual([
      `watch rv=${lastRV} → 429`,
      `watch rv=${lastRV} → 200`, // then ERROR 410: the history is gone
      `list rv=${lastRV} → 200`,
      `watch rv=${server.resourceVersion} → 200`,
    ]);
    expect(h.reflector.stats()).toMatchObject({ relists: 1, expired410: 1 });
    expect(cacheKeys(h.indexer)).toEqual(['default/a', 'default/c', 'default/d']);
    const deleted = h.applied.filter((d) => d.type === 'Deleted');
    expect(deleted.map((d) => d.key)).toEqual(['default/b']);
  });

  test('connection refused while the server is down: the LIST backs off and succeeds once a server listens again', async () => {
    const first = await FakeApiServer.start();
    const kubeConfig = first.kubeConfig();
    const port = Number(new URL(first.url).port);
    await first.close();
    // Real time here: a 20 ms backoff between attempts, rather than a busy loop of refused connections.
    const h = startReflector(createListWatch<Pod>(kubeConfig, PODS), {
      clock: realClock,
      backoff: new RecordingBackoff(20),
    });
    await waitFor(() => h.handlerErrors.length >= 2);
    expect(new Set(h.handlerErrorCodes())).toEqual(new Set([ErrorCodes.CONNECTION]));
    const server = await startServer({ port });
    await createAndSync(server, h, 'a');
    expect(requestLog(server)[0]).toBe('list rv=0 limit=500 → 200');
    expect(serverVersions(server)).toEqual(cacheVersions(h.indexer));
  });
});
