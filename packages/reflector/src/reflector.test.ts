import { getEventListeners } from 'node:events';
import {
  ErrorCodes,
  ExponentialBackoff,
  KinformerError,
  type Backoff,
  type KubeList,
  type Status,
} from '@kinformer/core';
import { FakeClock, flush } from '@kinformer/core/testing';
import { captureLogs } from '@kinformer/test-tools';
import type { ListerWatcher, WatchEvent } from './listerWatcher.js';
import { Reflector } from './reflector.js';
import { isUnsupportedTableObject } from './reflectorErrors.js';
import { defaultWatchErrorHandler } from './watchErrorHandler.js';
import { FakeListerWatcher } from './testing.js';
import {
  capturingLogger,
  connectionRefused,
  expiredError,
  expiredStatus,
  forbidden,
  harness,
  internalStatus,
  pod,
  podList,
  pods,
  RecordingStore,
  rvs,
  status,
  tooManyRequests,
  WARN,
} from './reflector.test.helpers.js';
import type { Harness, Watch, Pod } from './reflector.test.helpers.js';

// ------------------------------------------------------------------------------------------------
// fixtures

// ------------------------------------------------------------------------------------------------
// §10.1 reflector_test.go

/**
 * A reflector over `lists` whose first watch is answered 410 before it delivers anything: it waits
 * one backoff step and relists; resolves once the second watch is sent.
 */
async function relistAfterExpiry(
  options: Parameters<typeof harness>[0],
  ...lists: Parameters<Harness['lw']['enqueueList']>
): Promise<Harness> {
  const h = harness(options);
  h.lw.enqueueList(...lists);
  h.lw.enqueueWatch({ then: expiredError() });
  void h.start();
  await h.backoffCalls(1);
  await h.clock.tick(h.backoff.delays[0]);
  await h.lw.waitFor(() => h.lw.watchCalls.length === 2, 'second watch');
  return h;
}

describe('Reflector: list and watch (client-go reflector_test.go)', () => {
  it('lists at RV "0" with limit 500, watches from the list RV, re-watches from the last event after a clean close', async () => {
    // TestReflectorListAndWatch (b): the list says version 1, so the first watch starts from "1"; the
    // watch is stopped after version 3 and the reflector re-watches from "3".
    const h = harness();
    const w1 = await h.startWatching(podList('1'));
    expect(w1.options).toEqual({ resourceVersion: '1', timeoutSeconds: 300, allowWatchBookmarks: true });
    w1.add(pod('foo', '2')).add(pod('bar', '3')).close();

    const w2 = await h.lw.nextWatch();
    expect(w2.options.resourceVersion).toBe('3');
    expect(w2.options.allowWatchBookmarks).toBe(true);
    w2.add(pod('baz', '4')).add(pod('qux', '5')).add(pod('zoo', '6'));
    await h.lw.waitFor(() => h.reflector.lastSyncResourceVersion() === '6', 'RV 6');

    expect(h.store.ops).toEqual([
      'replace 0@1',
      'add default/foo@2',
      'add default/bar@3',
      'add default/baz@4',
      'add default/qux@5',
      'add default/zoo@6',
    ]);
    expect(h.lw.listCalls).toEqual([{ resourceVersion: '0', limit: 500 }]);
    expect(h.lw.watchCalls).toHaveLength(2);
    expect(h.backoff.delays).toEqual([]); // a clean close re-watches at once
    expect(h.reflector.stats()).toMatchObject({
      lists: 1,
      relists: 0,
      watchStarts: 2,
      watchRestarts: 1,
      events: 5,
    });
    await h.stop();
    expect(w2.stopped).toBe(true);
  });

  it('applies ADDED/MODIFIED/DELETED, skips objects of another type, and records the last event RV', async () => {
    // TestReflectorWatchHandler
    const h = harness({ expectedType: { apiVersion: 'v1', kind: 'Pod' } });
    const w = await h.startWatching(podList('10', [pod('foo', '8'), pod('bar', '9')]));
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'rejected', namespace: 'default', resourceVersion: '11' },
    };
    w.push({ type: 'ADDED', object: service })
      .delete(pod('foo', '12'))
      .modify(pod('bar', '55'))
      .add(pod('baz', '32'));
    await h.lw.waitFor(() => w.pending === 0 && h.store.ops.length === 4, 'events applied');
    expect(h.store.contents()).toEqual(['bar@55', 'baz@32']);
    expect(h.store.items.has('default/rejected')).toBe(false);
    expect(h.reflector.lastSyncResourceVersion()).toBe('32');
    expect(h.reflector.stats()).toMatchObject({ skipped: 1, events: 4, resourceVersionAnomalies: 1 }); // 32 < 55
    await h.stop();
  });

  it('calls updateResourceVersion for every watch event including bookmarks, never for the list', async () => {
    // TestReflectorResourceVersionUpdate
    const h = harness();
    const w = await h.startWatching(podList('10'));
    w.add(pod('a', '10')).modify(pod('a', '20')).bookmark('30').delete(pod('a', '40'));
    await h.lw.waitFor(() => h.store.rvUpdates.length === 4, '4 RV updates');
    expect(h.store.rvUpdates).toEqual(['10', '20', '30', '40']);
    expect(h.store.bookmarks).toEqual(['30']);
    expect(h.store.ops).toEqual([
      'replace 0@10',
      'add default/a@10',
      'update default/a@20',
      'delete default/a@40',
    ]);
    expect(h.reflector.stats()).toMatchObject({ bookmarks: 1, events: 4 });
    await h.stop();
  });

  it('recovers across list errors, watch-start errors and expired watches, relisting from the last RV', async () => {
    // TestReflectorListAndWatchWithErrors
    const h = harness();
    const listError = new KinformerError(ErrorCodes.INTERNAL, 'a list error');
    const watchError = forbidden();
    h.lw.enqueueList(
      podList('1'),
      podList('3', [pod('foo', '2'), pod('bar', '3')]),
      listError,
      podList('5', [pod('bar', '3'), pod('qux', '5')]),
      podList('5', [pod('bar', '3'), pod('qux', '5')]),
      podList('6', [pod('bar', '3'), pod('qux', '5'), pod('baz', '6')]),
    );
    h.lw.enqueueWatch(
      {
        events: [
          { type: 'ADDED', object: pod('foo', '2') },
          { type: 'ADDED', object: pod('bar', '3') },
        ],
        then: expiredError(),
      },
      {
        events: [
          { type: 'DELETED', object: pod('foo', '4') },
          { type: 'ADDED', object: pod('qux', '5') },
        ],
        then: expiredError(),
      },
      watchError,
      { events: [{ type: 'ADDED', object: pod('baz', '6') }], then: expiredError() },
    );
    const snapshots: string[][] = [];
    const list = h.lw.list.bind(h.lw);
    h.lw.list = (options, context) => {
      snapshots.push(h.store.contents());
      return list(options, context);
    };
    void h.start();

    // The two failures wait a step; the 410s, each after the watch delivered, relist at once.
    await h.waitOutBackoffs(2);
    await h.lw.waitFor(() => h.lw.listCalls.length === 6 && h.lw.watchCalls.length === 5, 'sixth list');
    expect(h.backoff.delays).toHaveLength(2);
    // Before each relist the store holds what the previous list + watch produced.
    expect(snapshots).toEqual([
      [],
      ['bar@3', 'foo@2'],
      ['bar@3', 'qux@5'],
      ['bar@3', 'qux@5'],
      ['bar@3', 'qux@5'],
      ['bar@3', 'baz@6', 'qux@5'],
    ]);
    expect(h.store.contents()).toEqual(['bar@3', 'baz@6', 'qux@5']);
    expect(rvs(h.lw.listCalls)).toEqual(['0', '3', '5', '5', '5', '6']);
    expect(h.handled).toEqual([listError, watchError]); // errors during a watch never reach the handler
    expect(h.reflector.stats()).toMatchObject({ lists: 6, relists: 5, expired410: 3 });
    await h.stop();
  });

  it('ends the watch on an in-stream ERROR event and relists after one backoff step', async () => {
    // TestCloseWatchChannelOnError
    const h = harness();
    const w = await h.startWatching(podList('1'), podList('2'));
    w.add(pod('a', '2')).error(status(500, 'InternalError', 'boom'));
    await h.backoffCalls(1);
    expect(w.isFinished).toBe(true);
    expect(h.handled).toEqual([]);
    expect(h.lw.listCalls).toHaveLength(1);
    await h.clock.tick(800);
    await h.lw.waitFor(() => h.lw.watchCalls.length === 2, 'second watch');
    expect(rvs(h.lw.listCalls)).toEqual(['0', '2']);
    expect(h.lw.watchCalls[1]?.resourceVersion).toBe('2');
    await h.stop();
  });

  it('relists (not re-watches) after an expired watch, from the last synced RV, and replaces unsafely deleted objects', async () => {
    // TestReflectorReplacesStoreOnUnsafeDelete
    const h = harness();
    h.lw.enqueueList(
      podList('10', [pod('a', '5'), pod('b', '6'), pod('c', '7')]),
      podList('20', [pod('b', '6'), pod('c', '15')]),
    );
    void h.start();
    const w = await h.lw.nextWatch();
    w.error(expiredStatus());
    await h.backoffCalls(1);
    expect(h.reflector.stats().expired410).toBe(1);
    await h.clock.tick(h.backoff.delays[0]);
    const w2 = await h.lw.nextWatch();
    expect(rvs(h.lw.listCalls)).toEqual(['0', '10']); // not "" — a LIST at an RV is "not older than"
    expect(h.store.contents()).toEqual(['b@6', 'c@15']);
    expect(h.reflector.lastSyncResourceVersion()).toBe('20');
    expect(w2.options.resourceVersion).toBe('20');
    await h.stop();
  });

  it('treats a watch that closes within a second without events as an error and relists after a backoff', async () => {
    // TestReflectorHandleWatchResultChanClosedBefore / ...ClosedAfter
    const h = harness();
    h.lw.enqueueList(podList('1'), podList('1'));
    h.lw.enqueueWatch({ then: 'close' }); // closed before the reflector reads it
    void h.start();
    await h.backoffCalls(1);
    expect(h.reflector.stats().veryShortWatches).toBe(1);
    await h.clock.tick(800);
    const w2 = await h.lw.nextWatch().then(() => h.lw.nextWatch());
    w2.close(); // closed after the reflector started reading it
    await h.backoffCalls(2);
    expect(h.reflector.stats().veryShortWatches).toBe(2);
    expect(h.lw.listCalls).toHaveLength(2);
    expect(h.handled).toEqual([]);
    await h.stop();
  });

  it.each([
    [
      'without relisting when a watch closes cleanly after a second even with no events',
      async (h: Harness, w: Watch) => {
        await h.clock.tick(1000);
        w.close();
      },
      '1',
    ],
    [
      'from the last RV at once when the connection breaks mid-stream',
      (_h: Harness, w: Watch) => void w.add(pod('a', '2')).breakConnection(),
      '2',
    ],
  ])('re-watches %s', async (_name, end, rewatchRV) => {
    const h = harness();
    const w1 = await h.startWatching(podList('1'));
    await end(h, w1);
    const w2 = await h.lw.nextWatch();
    expect(w2.options.resourceVersion).toBe(rewatchRV);
    expect(h.lw.listCalls).toHaveLength(1);
    expect(h.backoff.delays).toEqual([]);
    await h.stop();
  });

  it('relists after a watch that was refused up front with a non-retriable error, reporting it to the handler', async () => {
    const h = harness();
    h.lw.enqueueList(podList('1'), podList('2'));
    h.lw.enqueueWatch(KinformerError.fromStatus(expiredStatus())); // legacy servers answered HTTP 410 up front
    void h.start();
    await h.backoffCalls(1);
    expect(h.handled).toHaveLength(1);
    expect(h.handled[0]).toMatchObject({ code: ErrorCodes.RESOURCE_EXPIRED });
    await h.clock.tick(800);
    await h.lw.nextWatch().then(() => undefined);
    expect(rvs(h.lw.listCalls)).toEqual(['0', '1']);
    await h.stop();
  });
});

describe('Reflector: backoff (client-go reflector_test.go)', () => {
  it('backs off exponentially on connection failures when starting a watch, without relisting', async () => {
    // TestReflectorListAndWatchInitConnBackoff (not capped)
    const h = harness();
    h.lw.enqueueList(podList('1'));
    h.lw.enqueueWatch(
      connectionRefused(),
      connectionRefused(),
      connectionRefused(),
      connectionRefused(),
      connectionRefused(),
    );
    void h.start();
    const started = h.clock.now();
    await h.waitOutBackoffs(5);
    const w = await h.lw.nextWatch();
    // The default backoff doubles from 100 ms, capped at 150 ms (jittered to [150, 300)) for the
    // first 12 s of a streak (STORM_RETRY).
    expect(h.backoff.delays).toEqual([100, 150, 150, 150, 150]);
    expect(h.clock.now() - started).toBe(700);
    expect(w.options.resourceVersion).toBe('1');
    expect(h.lw.listCalls).toHaveLength(1);
    expect(h.lw.watchCalls).toHaveLength(6);
    // Not in client-go: each connection failure also reaches the handler (the cycle goes on).
    expect(h.handled.map((e) => (e as KinformerError).code)).toEqual(Array(5).fill(ErrorCodes.CONNECTION));
    expect(h.reflector.stats()).toMatchObject({ watchStarts: 6, watchRestarts: 5 });
    await h.stop();
  });

  it('logs a relist storm once: the first watch that ends with an error at warn, the repeats at debug', async () => {
    const { logger, lines } = capturingLogger();
    const h = harness({ logger });
    for (let i = 0; i < 4; i++) {
      h.lw.enqueueList(podList(String(i + 1)));
      h.lw.enqueueWatch({ events: [], then: KinformerError.fromStatus(status(403, 'Forbidden', 'no')) });
    }
    void h.start();
    await h.waitOutBackoffs(3);
    await h.backoffCalls(4);
    const relisting = lines.filter((l) => l.msg === 'watch ended with an error; relisting');
    expect(relisting.map((l) => l.level)).toEqual([WARN, 20, 20, 20]);
    await h.stop();
  });

  it('logs an expected, retried fault as one short line without a stack: a very short watch, a failed LIST', async () => {
    // Issue 25: an injected dropped watch printed ~900 characters of JSON with a stack trace.
    const logs = captureLogs('info');
    const h = harness({ logger: logs.logger, watchErrorHandler: defaultWatchErrorHandler });
    h.lw.enqueueList(podList('1'), KinformerError.fromStatus(status(503, 'ServiceUnavailable', 'down')));
    h.lw.enqueueList(podList('2'));
    h.lw.enqueueWatch({ then: 'close' }, { events: [{ type: 'ADDED', object: pod('a', '3') }] });
    void h.start();
    await h.waitOutBackoffs(2);
    await h.lw.waitFor(() => h.store.ops.includes('add default/a@3'), 'the event after recovery');
    const faults = logs.raw.filter(
      (l) => l.includes('ERR_VERY_SHORT_WATCH') || l.includes('ERR_SERVICE_UNAVAILABLE'),
    );
    expect(faults).toHaveLength(2);
    for (const line of faults) {
      expect(line).not.toContain('stack');
      expect(line).not.toContain('"status":{'); // no Status body either
      expect(line.length).toBeLessThan(500);
    }
    expect(logs.lines.find((l) => l.code === ErrorCodes.VERY_SHORT_WATCH)?.err).toMatchObject({
      type: 'KinformerError',
      code: ErrorCodes.VERY_SHORT_WATCH,
    });
    await h.stop();
  });

  it('reports each connection failure at watch start to the handler, logs a repeated one once, then re-watches without relisting', async () => {
    // An exec credential plugin that breaks after the first LIST must not leave the cache silently stale,
    // nor fill the log with the same line on every retry.
    const { logger, lines } = capturingLogger();
    const handled: unknown[] = [];
    const h = harness({
      logger,
      watchErrorHandler: (r, err) => {
        handled.push(err);
        defaultWatchErrorHandler(r, err);
      },
    });
    const pluginFailure = (): KinformerError =>
      new KinformerError(
        ErrorCodes.CONNECTION,
        'could not prepare the request from the KubeConfig (credentials, TLS files or proxy): exec plugin exited with 1',
        { details: { verb: 'watch' } },
      );
    h.lw.enqueueList(podList('1'));
    h.lw.enqueueWatch(pluginFailure(), pluginFailure(), tooManyRequests());
    void h.start();
    await h.backoffCalls(1);
    expect(handled).toHaveLength(1);
    await h.clock.tick(h.backoff.delays[0]);
    await h.backoffCalls(2);
    expect(handled).toHaveLength(2);
    await h.clock.tick(h.backoff.delays[1]);
    await h.backoffCalls(3); // the 429 that follows is retried quietly, as in client-go
    expect(handled).toHaveLength(2);
    await h.clock.tick(h.backoff.delays[2]);
    const w = await h.lw.nextWatch();
    expect(w.options.resourceVersion).toBe('1');
    expect(h.lw.listCalls).toHaveLength(1);
    const loud = lines.filter((l) => l.level >= WARN);
    expect(loud).toEqual([
      expect.objectContaining({ component: 'reflector', code: ErrorCodes.CONNECTION, failures: 1 }),
    ]);
    // The first event after the streak ends it, with one info line.
    w.add(pod('a', '2'));
    await h.lw.waitFor(() => h.store.ops.length === 2, 'the event');
    expect(lines.filter((l) => l.msg.startsWith('recovered'))).toEqual([
      expect.objectContaining({ level: 30, failures: 3 }),
    ]);
    expect(h.reflector.consecutiveFailures()).toBe(0);
    await h.stop();
  });

  it('caps the watch-start backoff and keeps re-watching', async () => {
    // TestReflectorListAndWatchInitConnBackoff (capped: delays flatten at the cap)
    const clock = new FakeClock(0);
    const h = harness({
      backoff: new ExponentialBackoff({ clock, initialMs: 1, capMs: 50, random: () => 0, resetAfterMs: 1e9 }),
      clock,
    });
    h.lw.enqueueList(podList('1'));
    for (let i = 0; i < 40; i++) h.lw.enqueueWatch(connectionRefused());
    void h.start();
    await h.waitOutBackoffs(40);
    await h.lw.nextWatch();
    expect(h.backoff.delays.slice(0, 7)).toEqual([1, 2, 4, 8, 16, 32, 50]);
    expect(Math.max(...h.backoff.delays)).toBe(50);
    expect(h.lw.listCalls).toHaveLength(1);
    await h.stop();
  });

  it('uses a custom backoff instead of the default delays', async () => {
    // TestNewReflectorWithCustomBackoff
    const constant: Backoff = { next: () => 1234, reset: () => undefined };
    const h = harness({ backoff: constant });
    h.lw.enqueueList(new KinformerError(ErrorCodes.INTERNAL, 'list failed'), podList('1'));
    void h.start();
    await h.backoffCalls(1);
    expect(h.backoff.delays).toEqual([1234]);
    await h.clock.tick(1233);
    expect(h.lw.listCalls).toHaveLength(1);
    await h.clock.tick(1);
    await h.lw.waitFor(() => h.lw.listCalls.length === 2, 'second list');
    await h.stop();
  });

  it('backs off on 429 when starting a watch and on a 429 ERROR event, without relisting', async () => {
    // TestBackoffOnTooManyRequests
    const h = harness();
    h.lw.enqueueList(podList('1'));
    h.lw.enqueueWatch(tooManyRequests(), { then: tooManyRequests() });
    void h.start();
    await h.backoffCalls(1);
    await h.clock.tick(h.backoff.delays[0]);
    await h.backoffCalls(2);
    await h.clock.tick(h.backoff.delays[1]);
    await h.lw.waitFor(() => h.lw.watchCalls.length === 3, 'third watch');
    expect(h.backoff.delays).toHaveLength(2);
    expect(h.lw.listCalls).toHaveLength(1);
    await h.stop();
  });

  it('makes exactly one list and five watches for four 429s then success', async () => {
    // TestNoRelistOnTooManyRequests
    const h = harness({ backoff: { next: () => 0, reset: () => undefined } });
    h.lw.enqueueList(podList('1'));
    h.lw.enqueueWatch(tooManyRequests(), tooManyRequests(), tooManyRequests(), tooManyRequests());
    void h.start();
    const w = await h.lw.nextWatch();
    await flush();
    expect(h.lw.listCalls).toHaveLength(1);
    expect(h.lw.watchCalls).toHaveLength(5);
    expect(w.options.resourceVersion).toBe('1');
    await h.stop();
  });

  it("honours a 429's retryAfterSeconds when it is longer than the backoff step", async () => {
    const h = harness();
    h.lw.enqueueList(podList('1'));
    h.lw.enqueueWatch(tooManyRequests(7));
    void h.start();
    await h.backoffCalls(1);
    await h.clock.tick(6999);
    expect(h.lw.watchCalls).toHaveLength(1);
    await h.clock.tick(1);
    await h.lw.nextWatch();
    expect(h.lw.watchCalls).toHaveLength(2);
    expect(h.lw.listCalls).toHaveLength(1);
    await h.stop();
  });

  it('honours Retry-After on a 429 ERROR event in the stream too, and on a failed LIST', async () => {
    const h = harness();
    h.lw.enqueueList(tooManyRequests(5), podList('1'));
    h.lw.enqueueWatch({ then: tooManyRequests(3) });
    void h.start();
    await h.backoffCalls(1); // list 429: 800 ms step, but Retry-After 5 s
    await h.clock.tick(4999);
    expect(h.lw.listCalls).toHaveLength(1);
    await h.clock.tick(1);
    await h.backoffCalls(2); // watch ERROR 429: 1600 ms step, Retry-After 3 s
    await h.clock.tick(2999);
    expect(h.lw.watchCalls).toHaveLength(1);
    await h.clock.tick(1);
    await h.lw.waitFor(() => h.lw.watchCalls.length === 2, 'second watch');
    expect(h.lw.listCalls).toHaveLength(2);
    await h.stop();
  });

  it('grows the backoff between failed LISTs up to the cap, and resets it once a LIST succeeds', async () => {
    const h = harness();
    const failure = new KinformerError(ErrorCodes.SERVICE_UNAVAILABLE, 'apiserver down');
    for (let i = 0; i < 120; i++) h.lw.enqueueList(failure);
    h.lw.enqueueList(podList('1'), podList('3'));
    h.lw.enqueueWatch({ events: [], then: expiredError() });
    void h.start();
    await h.waitOutBackoffs(120);
    // client-go: 800 ms doubling to 30 s, reset only every 2 minutes. Here: 100 ms doubling, at most
    // 150 ms for the first 12 s of the streak, then a limit that doubles every 5 s, up to 30 s.
    expect(h.backoff.delays.slice(0, 120)).toEqual([
      100,
      ...Array<number>(80).fill(150), // until 12 s into the streak
      ...Array<number>(17).fill(300), // until 17 s
      ...Array<number>(9).fill(600), // until 22 s
      ...Array<number>(4).fill(1200),
      ...[2400, 2400, 4800, 4800, 9600],
      ...Array<number>(4).fill(30_000), // from 51.4 s on: the cap
    ]);
    expect(h.handled).toHaveLength(120);
    // The LIST that succeeded was progress: the 410 that ends the next watch waits the first step again.
    await h.backoffCalls(121);
    expect(h.backoff.delays[120]).toBe(100);
    await h.stop();
  });

  it('waits one backoff step between list-and-watch cycles, also when the cycle ended without error', async () => {
    // Run loop (§1.2): every return from ListAndWatch relists after a backoff delay — in kinformer every
    // one but a 410 after the watch delivered something (reflector.freshness.test.ts).
    const h = harness();
    h.lw.enqueueList(podList('1'), podList('2'));
    h.lw.enqueueWatch({ events: [], then: expiredError() });
    void h.start();
    await h.backoffCalls(1);
    expect(h.handled).toEqual([]);
    await h.clock.tick(99);
    expect(h.lw.listCalls).toHaveLength(1);
    await h.clock.tick(1);
    await h.lw.waitFor(() => h.lw.listCalls.length === 2, 'relist');
    await h.stop();
  });
});

describe('Reflector: internal errors (client-go TestRetryInternalError)', () => {
  async function countWatchesBeforeRelist(
    maxInternalErrorRetryDurationMs: number,
    rewindAt?: number,
    errorStatus: () => Status = internalStatus,
  ): Promise<number> {
    const h = harness({ maxInternalErrorRetryDurationMs });
    h.lw.enqueueList(podList('1'));
    let counter = 0;
    const script = (stream: { error(s: Status): unknown }): void => {
      counter++;
      if (counter === rewindAt) h.clock.advance(60_000);
      h.clock.advance(1000);
      stream.error(errorStatus());
    };
    for (let i = 0; i < 60; i++) h.lw.enqueueWatch(script);
    void h.start();
    await h.backoffCalls(1); // the watch loop gave up and returned: relist after backoff
    const watches = h.lw.watchCalls.length;
    await h.stop();
    return watches;
  }

  it('does not retry internal errors by default', async () => {
    expect((await countWatchesBeforeRelist(0)) - 1).toBe(0);
  });

  it('retries internal errors until maxInternalErrorRetryDuration has passed since the first one', async () => {
    expect((await countWatchesBeforeRelist(30_000)) - 1).toBe(31);
  });

  it('starts a new retry window when more than a minute passed since the last internal error', async () => {
    expect((await countWatchesBeforeRelist(30_000, 10)) - 1).toBe(40);
  });

  it.each([
    [
      '500 ServerTimeout',
      'ServerTimeout',
      'The list operation against pods could not be completed at this time, please try again.',
    ],
    ['500 StorageReadError', 'StorageReadError', 'corrupt object'],
  ])('does not count a %s as an internal error: it relists at once', async (_name, reason, message) => {
    // client-go's IsInternalError is false for both (they are known reasons other than InternalError).
    expect((await countWatchesBeforeRelist(30_000, undefined, () => status(500, reason, message))) - 1).toBe(
      0,
    );
  });

  it('counts a 500 without a reason as an internal error, as client-go does', async () => {
    const noReason = (): Status => {
      const s = status(500, '', 'resourceVersion: Invalid value: "abc"');
      delete s.reason;
      return s;
    };
    expect((await countWatchesBeforeRelist(30_000, undefined, noReason)) - 1).toBe(31);
  });
});

describe('Reflector: resync (client-go reflector_test.go)', () => {
  it('calls store.resync() every resyncPeriod while watching', async () => {
    // TestReflectorResyncChan
    const h = harness({ resyncPeriodMs: 1000 });
    h.lw.enqueueList(podList('1'));
    void h.start();
    await h.lw.nextWatch();
    await h.clock.tick(999);
    expect(h.store.resyncs).toBe(0);
    await h.clock.tick(1);
    expect(h.store.resyncs).toBe(1);
    await h.clock.tick(3000);
    expect(h.store.resyncs).toBe(4);
    expect(h.reflector.stats().resyncs).toBe(4);
    await h.stop();
  });

  it('ends the watch on a resync error without reporting it, then relists after a backoff; exactly 2 resyncs', async () => {
    // TestReflectorResync
    const h = harness({ resyncPeriodMs: 1000 });
    h.store.onResync = () => {
      if (h.store.resyncs === 2) throw new Error('expected resync reached');
    };
    const w = await h.startWatching(podList('0'), podList('1'));
    await h.clock.tick(2000);
    await h.backoffCalls(1);
    expect(w.stopped).toBe(true);
    expect(h.store.resyncs).toBe(2);
    expect(h.handled).toEqual([]);
    await h.clock.tick(h.backoff.delays[0]); // no resync runs during the backoff
    expect(h.store.resyncs).toBe(2);
    await h.lw.waitFor(() => h.lw.listCalls.length === 2, 'relist');
    await h.stop();
  });

  it('skips store.resync() when shouldResync says no', async () => {
    let allow = false;
    const h = harness({ resyncPeriodMs: 1000, shouldResync: () => allow });
    h.lw.enqueueList(podList('1'));
    void h.start();
    await h.lw.nextWatch();
    await h.clock.tick(2000);
    expect(h.store.resyncs).toBe(0);
    allow = true;
    await h.clock.tick(1000);
    expect(h.store.resyncs).toBe(1);
    await h.stop();
  });
});

describe('Reflector: LIST pagination and resourceVersions (client-go reflector_test.go)', () => {
  function pagedLister(rv: string, all: Pod[], pageSize: number) {
    return (options: { continue?: string; limit?: number }): KubeList<Pod> => {
      const start = options.continue === undefined ? 0 : Number(options.continue.slice(1));
      const end = options.limit ? Math.min(all.length, start + options.limit) : all.length;
      expect(options.limit ?? 0).toBe(pageSize);
      return podList(rv, all.slice(start, end), end < all.length ? `C${end}` : undefined);
    };
  }

  it('forces limit and continue paging on every list when pageSize is set, even at a specific RV', async () => {
    // TestReflectorWatchListPageSize
    const h = await relistAfterExpiry(
      { pageSize: 4 },
      ...Array.from({ length: 6 }, () => pagedLister('10', pods(0, 10), 4)),
    );
    expect(h.lw.listCalls).toEqual([
      { resourceVersion: '0', limit: 4 },
      { resourceVersion: '', limit: 4, continue: 'C4' },
      { resourceVersion: '', limit: 4, continue: 'C8' },
      { resourceVersion: '10', limit: 4 },
      { resourceVersion: '', limit: 4, continue: 'C4' },
      { resourceVersion: '', limit: 4, continue: 'C8' },
    ]);
    expect(h.store.replaces.map((r) => r.items.length)).toEqual([10, 10]);
    expect(h.reflector.stats().lists).toBe(2); // a paginated list counts once
    await h.stop();
  });

  it('does not paginate a relist at a specific RV, so the watch cache can serve it', async () => {
    // TestReflectorNotPaginatingNotConsistentReads + TestReflectorResyncWithResourceVersion
    const h = await relistAfterExpiry({}, podList('10', pods(0, 4)), podList('11', pods(0, 8)));
    expect(h.lw.listCalls).toEqual([{ resourceVersion: '0', limit: 500 }, { resourceVersion: '10' }]);
    expect(h.store.replaces.map((r) => r.items.length)).toEqual([4, 8]);
    await h.stop();
  });

  it('keeps limit 500 on relists once the RV="0" list came back paginated (watch cache disabled)', async () => {
    // TestReflectorPaginatingNonConsistentReadsIfWatchCacheDisabled
    const h = await relistAfterExpiry(
      {},
      ...Array.from({ length: 4 }, () => pagedLister('10', pods(0, 700), 500)),
    );
    expect(h.lw.listCalls).toEqual([
      { resourceVersion: '0', limit: 500 },
      { resourceVersion: '', limit: 500, continue: 'C500' },
      { resourceVersion: '10', limit: 500 },
      { resourceVersion: '', limit: 500, continue: 'C500' },
    ]);
    expect(h.store.replaces.map((r) => r.items.length)).toEqual([700, 700]);
    await h.stop();
  });

  it('retries a relist at an expired RV immediately with RV ""', async () => {
    // TestReflectorExpiredExactResourceVersion
    const h = await relistAfterExpiry(
      {},
      podList('10', pods(0, 4)),
      KinformerError.fromStatus(
        status(410, 'Expired', 'The resourceVersion for the provided list is too old.'),
      ),
      podList('11', pods(0, 8)),
    );
    expect(rvs(h.lw.listCalls)).toEqual(['0', '10', '']);
    expect(h.lw.listCalls[2]).toEqual({ resourceVersion: '' }); // same page size as the failed list (client-go)
    expect(h.backoff.delays).toHaveLength(1); // no backoff between "10" and ""
    expect(h.store.replaces.map((r) => r.items.length)).toEqual([4, 8]);
    expect(h.reflector.lastSyncResourceVersion()).toBe('11');
    expect(h.reflector.stats()).toMatchObject({ expired410: 2, lists: 3, relists: 2 });
    await h.stop();
  });

  it.each([
    ['400 BadRequest', 400, 'BadRequest', ErrorCodes.BAD_REQUEST],
    ['422 Invalid', 422, 'Invalid', ErrorCodes.INVALID],
  ])(
    'retries a relist at a resourceVersion the server rejects (%s) immediately with RV "" and recovers',
    async (_name, code, reason, errorCode) => {
      // Not in client-go: a non-numeric RV that arrived in the last event before the stream ended
      // would otherwise be asked for on every relist, and refused forever.
      const { logger, lines } = capturingLogger();
      const h = harness({ logger });
      const unparseable = status(500, '', 'resourceVersion: Invalid value: "not-a-number"');
      delete unparseable.reason;
      h.lw.enqueueList(
        podList('10', pods(0, 2)),
        KinformerError.fromStatus(status(code, reason, 'resourceVersion: Invalid value: "not-a-number"')),
        podList('12', pods(0, 3)),
      );
      h.lw.enqueueWatch(
        { events: [{ type: 'MODIFIED', object: pod('pod-0', 'not-a-number') }], then: 'close' },
        KinformerError.fromStatus(unparseable), // the rewatch from "not-a-number": 500, ends the cycle
      );
      void h.start();
      await h.backoffCalls(1);
      expect(h.reflector.lastSyncResourceVersion()).toBe('not-a-number');
      await h.clock.tick(h.backoff.delays[0]);
      await h.lw.waitFor(() => h.lw.watchCalls.length === 3, 'the watch after the relist');
      expect(rvs(h.lw.listCalls)).toEqual(['0', 'not-a-number', '']);
      expect(h.backoff.delays).toHaveLength(1); // no backoff between "not-a-number" and ""
      expect(rvs(h.lw.watchCalls)).toEqual(['10', 'not-a-number', '12']);
      expect(h.reflector.lastSyncResourceVersion()).toBe('12');
      expect(h.store.replaces.map((r) => r.items.length)).toEqual([2, 3]);
      expect(h.handled.map((e) => (e as KinformerError).code)).toEqual([ErrorCodes.INTERNAL]);
      expect(lines.filter((l) => l.level === WARN && l.code === errorCode)).toEqual([
        expect.objectContaining({
          resourceVersion: 'not-a-number',
          msg: 'the server rejected the list resourceVersion; retrying at once with a consistent read',
        }),
      ]);
      await h.stop();
    },
  );

  it('surfaces a 400 to a LIST at "0" (e.g. a rejected selector) without retrying it', async () => {
    const h = harness();
    const badSelector = KinformerError.fromStatus(
      status(400, 'BadRequest', 'unable to parse requirement: found "=", expected: identifier'),
    );
    h.lw.enqueueList(badSelector);
    void h.start();
    await h.backoffCalls(1);
    expect(rvs(h.lw.listCalls)).toEqual(['0']);
    expect(h.handled).toEqual([badSelector]);
    await h.stop();
  });

  it('does one full unpaginated list at the same RV when a continue token expires', async () => {
    // TestReflectorFullListIfExpired
    const all = pods(0, 8);
    const h = await relistAfterExpiry(
      { pageSize: 4 },
      podList('10', all.slice(0, 4)),
      podList('11', all.slice(0, 4), 'C1'),
      KinformerError.fromStatus(
        status(
          410,
          'Expired',
          'The provided continue parameter is too old to display a consistent list result.',
        ),
      ),
      podList('11', all),
    );
    expect(h.lw.listCalls).toEqual([
      { resourceVersion: '0', limit: 4 },
      { resourceVersion: '10', limit: 4 },
      { resourceVersion: '', limit: 4, continue: 'C1' },
      { resourceVersion: '10' },
    ]);
    expect(h.store.replaces.map((r) => r.items.length)).toEqual([4, 8]);
    await h.stop();
  });

  it('retries at once with RV "" on any of the three "too large resource version" formats', async () => {
    // TestReflectorFullListIfTooLarge
    let version = 30;
    const h = harness(
      {},
      {
        list: (options) => {
          switch (options.resourceVersion) {
            case '0': // initial list
              return podList('20');
            case '20': // relist after the initial list
              throw KinformerError.fromStatus(
                status(504, 'Timeout', 'Timeout: too large resource version', {
                  causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
                  retryAfterSeconds: 1,
                }),
              );
            case '30': // api server 1.17.0-1.18.5: no cause reason, only the cause message
              throw KinformerError.fromStatus(
                status(504, 'Timeout', 'Timeout: too large resource version', {
                  causes: [{ message: 'Too large resource version' }],
                  retryAfterSeconds: 1,
                }),
              );
            case '40': // api server before 1.17.0: only the status message
              throw KinformerError.fromStatus(
                status(504, 'Timeout', 'Timeout: Too large resource version', { retryAfterSeconds: 1 }),
              );
            case '': {
              // consistent relist after a "too large" error
              const rv = String(version);
              version += 10;
              return podList(rv);
            }
            default:
              throw new Error(`unexpected list at ${String(options.resourceVersion)}`);
          }
        },
      },
    );
    h.lw.enqueueWatch({ then: expiredError() }, { then: expiredError() }, { then: expiredError() });
    void h.start();
    await h.waitOutBackoffs(3);
    await h.lw.waitFor(() => h.lw.watchCalls.length === 4, 'fourth watch');
    expect(rvs(h.lw.listCalls)).toEqual(['0', '20', '', '30', '', '40', '']);
    expect(h.reflector.lastSyncResourceVersion()).toBe('50');
    expect(h.handled).toEqual([]);
    await h.stop();
  });

  it('hands every item of every page to store.replace in order', async () => {
    // TestReflectorListExtract (in JS the list's backing array is not retained by construction; we
    // assert the store receives all items of all pages, in order)
    const h = harness({ pageSize: 100 });
    h.lw.enqueueList(...Array.from({ length: 5 }, () => pagedLister('500', pods(0, 500), 100)));
    void h.start();
    await h.lw.nextWatch();
    const replaced = h.store.replaces[0]?.items ?? [];
    expect(replaced).toHaveLength(500);
    expect(replaced.map((p) => p.metadata?.name)).toEqual(pods(0, 500).map((p) => p.metadata?.name));
    expect(h.store.replaces[0]?.resourceVersion).toBe('500');
    await h.stop();
  });
});

describe('Reflector: watch timeouts and types (client-go reflector_test.go)', () => {
  async function watchTimeout(random: number, minWatchTimeoutMs?: number): Promise<number | undefined> {
    const h = harness(
      minWatchTimeoutMs === undefined
        ? { random: () => random }
        : { random: () => random, minWatchTimeoutMs },
    );
    const w = await h.startWatching(podList('10'));
    await h.stop();
    return w.options.timeoutSeconds;
  }

  it('asks for timeoutSeconds in [300, 600) by default', async () => {
    // TestWatchTimeout "no timeout"
    expect(await watchTimeout(0)).toBe(300);
    expect(await watchTimeout(0.999)).toBe(599);
  });

  it('ignores a minWatchTimeout below 5 minutes', async () => {
    // TestWatchTimeout "small timeout not honored"
    expect(await watchTimeout(0, 1000)).toBe(300);
    expect(await watchTimeout(0.5, 1000)).toBe(450);
  });

  it('honours a minWatchTimeout above 5 minutes', async () => {
    // TestWatchTimeout "30m timeout"
    expect(await watchTimeout(0, 30 * 60_000)).toBe(1800);
    expect(await watchTimeout(0.999, 30 * 60_000)).toBeLessThan(3600);
  });

  it('describes its type like client-go', () => {
    // TestGetTypeDescriptionFromObject / TestGetExpectedGVKFromObject
    const lw = new FakeListerWatcher<Pod>();
    const store = new RecordingStore();
    expect(new Reflector(lw, store).typeDescription).toBe('<unspecified>');
    const typed = new Reflector(lw, store, { expectedType: { apiVersion: 'mygroup/v1', kind: 'MyKind' } });
    expect(typed.typeDescription).toBe('mygroup/v1, Kind=MyKind');
    expect(typed.name).toBe('mygroup/v1/MyKind');
    expect(new Reflector(lw, store, { name: 'pods' }).name).toBe('pods');
    expect(() => new Reflector(lw, store, { expectedType: { apiVersion: '', kind: 'Pod' } })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
  });

  it('rejects invalid options with ERR_INVALID_OPTION', () => {
    const lw = new FakeListerWatcher<Pod>();
    const store = new RecordingStore();
    for (const bad of [
      { pageSize: 0 },
      { pageSize: 1.5 },
      { resyncPeriodMs: -1 },
      { stallMarginMs: Number.NaN },
    ]) {
      expect(() => new Reflector(lw, store, bad)).toThrow(
        expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
      );
    }
  });

  it('recognises Table objects, rejects a Table list and skips Table watch events', async () => {
    // TestIsUnsupportedTableObject
    expect(isUnsupportedTableObject({ apiVersion: 'meta.k8s.io/v1', kind: 'Table' })).toBe(true);
    expect(isUnsupportedTableObject({ apiVersion: 'meta.k8s.io/v1beta1', kind: 'Table' })).toBe(true);
    expect(isUnsupportedTableObject({ apiVersion: 'v1', kind: 'Pod' })).toBe(false);
    expect(isUnsupportedTableObject({ apiVersion: 'example.com/v1', kind: 'Table' })).toBe(false);

    const h = harness();
    h.lw.enqueueList(
      { apiVersion: 'meta.k8s.io/v1', kind: 'Table', metadata: { resourceVersion: '1' }, items: [] },
      podList('2'),
    );
    void h.start();
    await h.backoffCalls(1);
    expect(h.handled[0]).toMatchObject({ code: ErrorCodes.BAD_RESPONSE });
    expect(h.store.replaces).toHaveLength(0);
    await h.clock.tick(h.backoff.delays[0]);
    const w = await h.lw.nextWatch();
    w.push({
      type: 'ADDED',
      object: { apiVersion: 'meta.k8s.io/v1', kind: 'Table', metadata: { resourceVersion: '3' } },
    }).add(pod('a', '4'));
    await h.lw.waitFor(() => h.reflector.lastSyncResourceVersion() === '4', 'RV 4');
    expect(h.store.ops).toEqual(['replace 0@2', 'add default/a@4']);
    expect(h.reflector.stats().skipped).toBe(1);
    await h.stop();
  });
});

describe('Reflector: stopping (client-go reflector_test.go)', () => {
  it('makes no request when the signal is already aborted', async () => {
    // TestReflectorWatchStoppedBefore / TestReflectorHandleWatchStoppedBefore
    const h = harness();
    h.controller.abort();
    await h.start();
    expect(h.lw.calls).toEqual([]);
    await h.stop();
  });

  it('stops the one watch and resolves when aborted during a watch', async () => {
    // TestRunUntil / TestReflectorWatchStoppedAfter / TestReflectorHandleWatchStoppedAfter / TestReflectorStopWatch
    const h = harness({ resyncPeriodMs: 5000 });
    const w = await h.startWatching(podList('1'));
    w.add(pod('bar', '2'));
    await h.lw.waitFor(() => h.store.ops.length === 2, 'event applied');
    expect(h.reflector.isWatching()).toBe(true);
    await h.stop();
    expect(h.lw.watches).toHaveLength(1);
    expect(w.stopped).toBe(true);
    expect(h.reflector.isWatching()).toBe(false);
  });

  it('resolves when aborted during a hanging list, leaving nothing behind', async () => {
    const h = harness();
    void h.start(); // no scripted list: the fake's LIST hangs until aborted
    await h.lw.waitFor(() => h.lw.listCalls.length === 1, 'list call');
    await h.stop();
    expect(h.store.ops).toEqual([]);
    expect(h.handled).toEqual([]);
  });

  it('resolves only once a list that ignores its signal has settled', async () => {
    const clock = new FakeClock();
    let settle: (() => void) | undefined;
    const slow: ListerWatcher<Pod> = {
      list: () =>
        new Promise((_resolve, reject) => {
          settle = () => reject(new Error('late'));
        }),
      watch: () => new Promise(() => undefined),
    };
    const reflector = new Reflector<Pod>(slow, new RecordingStore(), { clock });
    const controller = new AbortController();
    let resolved = false;
    const done = reflector.run(controller.signal).then(() => {
      resolved = true;
    });
    for (let i = 0; i < 20 && settle === undefined; i++) await flush();
    controller.abort();
    await flush();
    expect(resolved).toBe(false); // the LIST is still open
    settle?.();
    await done;
    expect(clock.pendingTimers()).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('gives up on a list that never settles after a grace period, and says so', async () => {
    const clock = new FakeClock();
    const { logger, lines } = capturingLogger();
    const stubborn: ListerWatcher<Pod> = {
      list: () => new Promise(() => undefined),
      watch: () => new Promise(() => undefined),
    };
    const reflector = new Reflector<Pod>(stubborn, new RecordingStore(), { clock, logger });
    const controller = new AbortController();
    let resolved = false;
    const done = reflector.run(controller.signal).then(() => {
      resolved = true;
    });
    await flush();
    controller.abort();
    await clock.tick(9_999);
    expect(resolved).toBe(false);
    await clock.tick(1);
    await done;
    expect(lines.filter((l) => l.level === WARN).map((l) => l.msg)).toEqual([
      'the ListerWatcher left requests open after their signal aborted; stopping without them',
    ]);
    expect(clock.pendingTimers()).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('resolves at once when aborted during a backoff wait', async () => {
    const h = harness();
    h.lw.enqueueList(new KinformerError(ErrorCodes.INTERNAL, 'nope'));
    void h.start();
    await h.backoffCalls(1);
    expect(h.clock.pendingTimers()).toBe(1);
    await h.stop();
    expect(h.lw.listCalls).toHaveLength(1);
  });

  it('resolves when aborted during the backoff of a watch-start retry', async () => {
    const h = harness();
    h.lw.enqueueList(podList('1'));
    h.lw.enqueueWatch(connectionRefused());
    void h.start();
    await h.backoffCalls(1);
    await h.stop();
    expect(h.lw.watchCalls).toHaveLength(1);
  });

  it('rejects a second concurrent run with ERR_ALREADY_STARTED and can run again after stopping', async () => {
    const h = harness();
    h.lw.enqueueList(podList('5'), podList('6'));
    void h.start();
    await h.lw.nextWatch();
    await expect(h.reflector.run(new AbortController().signal)).rejects.toMatchObject({
      code: ErrorCodes.ALREADY_STARTED,
    });
    await h.stop();

    const again = new AbortController();
    const done = h.reflector.run(again.signal);
    await h.lw.nextWatch();
    expect(rvs(h.lw.listCalls)).toEqual(['0', '5']); // resumes from the last synced version
    again.abort();
    await done;
  });

  it('survives a watch error handler that throws', async () => {
    const h = harness({
      watchErrorHandler: () => {
        throw new Error('handler bug');
      },
    });
    h.lw.enqueueList(new KinformerError(ErrorCodes.INTERNAL, 'nope'), podList('1'));
    void h.start();
    await h.backoffCalls(1);
    await h.clock.tick(h.backoff.delays[0]);
    await h.lw.nextWatch();
    await h.stop();
  });
});

// ------------------------------------------------------------------------------------------------
// behaviour kinformer adds (DESIGN.md "Behaviour we add")

describe('Reflector: stall detection', () => {
  it('aborts a watch that delivers nothing for timeoutSeconds + margin and re-watches from the last RV', async () => {
    const h = harness({ stallMarginMs: 30_000 });
    const w1 = await h.startWatching(podList('1'));
    expect(w1.options.timeoutSeconds).toBe(300);
    w1.add(pod('a', '2'));
    await h.lw.waitFor(() => h.reflector.lastSyncResourceVersion() === '2', 'RV 2');
    expect(h.reflector.lastEventTime()).toBe(h.clock.now());
    await h.clock.tick(329_999);
    expect(w1.stopped).toBe(false);
    await h.clock.tick(1);
    const w2 = await h.lw.nextWatch();
    expect(w1.stopped).toBe(true);
    expect(w2.options.resourceVersion).toBe('2');
    expect(h.lw.listCalls).toHaveLength(1);
    expect(h.reflector.stats()).toMatchObject({ stalls: 1, watchRestarts: 1 });
    await h.stop();
  });

  it('measures the stall from the last event or bookmark, not from the start of the watch', async () => {
    const h = harness({ stallMarginMs: 30_000 });
    const w1 = await h.startWatching(podList('1'));
    await h.clock.tick(200_000);
    w1.bookmark('9');
    await h.lw.waitFor(() => h.reflector.lastSyncResourceVersion() === '9', 'RV 9');
    await h.clock.tick(329_999);
    expect(w1.stopped).toBe(false);
    await h.clock.tick(1);
    const w2 = await h.lw.nextWatch();
    expect(w2.options.resourceVersion).toBe('9');
    expect(h.reflector.stats().stalls).toBe(1);
    await h.stop();
  });

  it('aborts a watch request the server never answers and sends a new one', async () => {
    const inner = new FakeListerWatcher<Pod>();
    inner.enqueueList(podList('1'));
    let hung = 0;
    const signals: AbortSignal[] = [];
    const lw: ListerWatcher<Pod> = {
      list: (o, c) => inner.list(o, c),
      watch: (o, c) => {
        if (hung++ === 0) {
          signals.push(c.signal);
          return new Promise(() => undefined); // never answers, ignores the signal
        }
        return inner.watch(o, c);
      },
    };
    const clock = new FakeClock();
    const reflector = new Reflector<Pod>(lw, new RecordingStore(), {
      clock,
      random: () => 0,
      stallMarginMs: 1000,
    });
    const controller = new AbortController();
    const done = reflector.run(controller.signal);
    await inner.waitFor(() => hung === 1, 'first watch');
    await clock.tick(300_999);
    expect(signals[0]?.aborted).toBe(false);
    await clock.tick(1);
    const w = await inner.nextWatch();
    expect(signals[0]?.aborted).toBe(true);
    expect(w.options.resourceVersion).toBe('1');
    expect(reflector.stats().stalls).toBe(1);
    controller.abort();
    await clock.tick(10_000); // the hung request ignores its signal: run gives up on it after the grace period
    await done;
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('Reflector: malformed watch streams', () => {
  it('ends the watch on a malformed line, counts it, and resumes from the last good RV without relisting', async () => {
    const h = harness();
    const w1 = await h.startWatching(podList('1'));
    w1.add(pod('a', '2')).malformed('{"type":"ADDED","object":{"metadata":');
    await h.backoffCalls(1);
    expect(h.reflector.stats().malformed).toBe(1);
    await h.clock.tick(h.backoff.delays[0]);
    const w2 = await h.lw.nextWatch();
    expect(w2.options.resourceVersion).toBe('2');
    w2.add(pod('b', '3'));
    await h.lw.waitFor(() => h.reflector.lastSyncResourceVersion() === '3', 'RV 3');
    expect(h.store.ops).toEqual(['replace 0@1', 'add default/a@2', 'add default/b@3']);
    expect(h.lw.listCalls).toHaveLength(1);
    expect(h.handled).toEqual([]);
    await h.stop();
  });

  it('handles unknown event types, over-long lines and objects without metadata the same way', async () => {
    const h = harness();
    h.lw.enqueueList(podList('1'));
    // Each watch applies one good event before its bad one, so every rewatch starts from a newer RV.
    h.lw.enqueueWatch(
      {
        events: [{ type: 'ADDED', object: pod('a', '2') }],
        then: new KinformerError(ErrorCodes.UNKNOWN_EVENT_TYPE, 'unknown type "WHATEVER"'),
      },
      {
        events: [{ type: 'ADDED', object: pod('b', '3') }],
        then: new KinformerError(ErrorCodes.WATCH_LINE_TOO_LARGE, 'line longer than 16 MiB'),
      },
      {
        events: [
          { type: 'ADDED', object: pod('c', '4') },
          { type: 'ADDED', object: null as unknown as Pod },
        ],
      },
      {
        events: [
          { type: 'ADDED', object: pod('d', '5') },
          { type: 'SURPRISE' as 'ADDED', object: pod('x', '9') },
        ],
      },
    );
    void h.start();
    await h.waitOutBackoffs(4);
    await h.lw.waitFor(() => h.lw.watches.length === 5, 'the fifth watch');
    expect(rvs(h.lw.watchCalls)).toEqual(['1', '2', '3', '4', '5']);
    expect(h.reflector.stats().malformed).toBe(4);
    expect(h.store.contents()).toEqual(['a@2', 'b@3', 'c@4', 'd@5']);
    expect(h.lw.listCalls).toHaveLength(1);
    expect(h.handled).toEqual([]);
    await h.stop();
  });

  it('relists when the rewatch fails with a bad line again at the same resourceVersion (a line the server always resends)', async () => {
    // Not in client-go. An object whose watch event is longer than the line limit is replayed by every
    // watch from the last good RV; a LIST has no line limit and loads it.
    const { logger, lines } = capturingLogger();
    const h = harness({ logger });
    const tooLong = (): KinformerError =>
      new KinformerError(ErrorCodes.WATCH_LINE_TOO_LARGE, 'watch line longer than 4096 bytes');
    h.lw.enqueueList(podList('1'), podList('7', [pod('a', '2'), pod('big', '6')]));
    h.lw.enqueueWatch(
      { events: [{ type: 'ADDED', object: pod('a', '2') }], then: tooLong() },
      { then: tooLong() }, // the same line again, from RV 2: give up on rewatching
    );
    void h.start();
    await h.backoffCalls(1);
    await h.clock.tick(h.backoff.delays[0]);
    await h.backoffCalls(2); // the run loop's step before the relist
    expect(rvs(h.lw.watchCalls)).toEqual(['1', '2']);
    expect(h.lw.listCalls).toHaveLength(1);
    await h.clock.tick(h.backoff.delays[1]);
    const w3 = await h.lw
      .nextWatch()
      .then(() => h.lw.nextWatch())
      .then(() => h.lw.nextWatch());
    expect(rvs(h.lw.listCalls)).toEqual(['0', '2']); // the relist asks for "not older than" the last good RV
    expect(w3.options.resourceVersion).toBe('7');
    expect(h.store.contents()).toEqual(['a@2', 'big@6']);
    expect(h.reflector.stats()).toMatchObject({ malformed: 2, relists: 1 });
    expect(h.handled).toEqual([]); // errors during a watch never reach the handler
    expect(lines.filter((l) => l.level === WARN).map((l) => [l.code, l.resourceVersion, l.msg])).toEqual([
      [
        ErrorCodes.WATCH_LINE_TOO_LARGE,
        '2',
        'bad watch event; ending this watch and resuming from the last good resourceVersion',
      ],
      [ErrorCodes.WATCH_LINE_TOO_LARGE, '2', 'bad watch event again at the same resourceVersion; relisting'],
    ]);
    await h.stop();
  });

  it('keeps rewatching (no relist) when bad lines recur but the resourceVersion moved in between', async () => {
    const h = harness();
    const malformed = (): KinformerError =>
      new KinformerError(ErrorCodes.MALFORMED_WATCH_EVENT, 'watch line 2 is not valid JSON');
    h.lw.enqueueList(podList('1'));
    h.lw.enqueueWatch(
      { events: [{ type: 'ADDED', object: pod('a', '2') }], then: malformed() },
      { events: [{ type: 'ADDED', object: pod('b', '3') }], then: malformed() },
      { events: [{ type: 'ADDED', object: pod('c', '4') }], then: malformed() },
    );
    void h.start();
    await h.waitOutBackoffs(3);
    await h.lw.waitFor(() => h.lw.watches.length === 4, 'the fourth watch');
    expect(rvs(h.lw.watchCalls)).toEqual(['1', '2', '3', '4']);
    expect(h.lw.listCalls).toHaveLength(1);
    expect(h.reflector.stats()).toMatchObject({ malformed: 3, relists: 0 });
    await h.stop();
  });

  it('accepts an ERROR event yielded (instead of thrown) by a ListerWatcher', async () => {
    const h = harness();
    h.lw.enqueueList(podList('1'), podList('1'));
    h.lw.enqueueWatch({ events: [{ type: 'ERROR' as 'ADDED', object: expiredStatus() as Pod }] });
    void h.start();
    await h.backoffCalls(1);
    expect(h.reflector.stats().expired410).toBe(1);
    await h.stop();
  });
});

describe('Reflector: resourceVersion diagnostics', () => {
  it('counts non-numeric and backwards resourceVersions but still applies the events', async () => {
    const h = harness();
    const w = await h.startWatching(podList('10'));
    w.add(pod('a', 'opaque-rv')).add(pod('b', '20')).add(pod('c', '15'));
    await h.lw.waitFor(() => h.store.ops.length === 4, 'three events');
    expect(h.store.contents()).toEqual(['a@opaque-rv', 'b@20', 'c@15']);
    expect(h.reflector.lastSyncResourceVersion()).toBe('15');
    expect(h.reflector.stats().resourceVersionAnomalies).toBe(2);
    await h.stop();
  });

  it('does not propagate the RV of a watch started from "" until an event other than ADDED', async () => {
    // propagateRVFromStart (§1.6): initial ADDEDs of a watch from "" are not in RV order.
    const h = harness();
    h.lw.enqueueList(podList('')); // a list without RV leaves the last synced version ""
    void h.start();
    const w = await h.lw.nextWatch();
    expect(w.options.resourceVersion).toBe('');
    w.add(pod('a', '30')).add(pod('b', '20'));
    await h.lw.waitFor(() => h.store.ops.length === 3, 'two adds');
    expect(h.reflector.lastSyncResourceVersion()).toBe('');
    expect(h.store.rvUpdates).toEqual([]);
    w.bookmark('40').add(pod('c', '41'));
    await h.lw.waitFor(() => h.store.rvUpdates.length === 2, 'two RV updates');
    expect(h.store.rvUpdates).toEqual(['40', '41']);
    await h.stop();
  });
});

describe('Reflector: review fixes (client-go handleAnyWatch details)', () => {
  it('moves the resourceVersion past an event the store rejected, and applies the next one', async () => {
    // client-go handleAnyWatch: a store error is logged, then setLastSyncResourceVersion runs anyway.
    const h = harness();
    const update = h.store.update.bind(h.store);
    h.store.update = (obj: Pod): void => {
      if (obj.metadata?.name === 'bad') throw new Error('the store is unhappy');
      update(obj);
    };
    const w1 = await h.startWatching(podList('10'));
    w1.modify(pod('bad', '11'));
    await h.lw.waitFor(() => h.reflector.stats().events === 1 && w1.pending === 0, 'the rejected event');
    await flush();
    expect(h.reflector.lastSyncResourceVersion()).toBe('11');
    expect(h.store.rvUpdates).toEqual(['11']);
    w1.modify(pod('good', '12'));
    await h.clock.tick(1000);
    w1.close();
    const w2 = await h.lw.nextWatch();
    expect(w2.options.resourceVersion).toBe('12');
    expect(h.store.ops).toEqual(['replace 0@10', 'update default/good@12']);
    expect(h.lw.listCalls).toHaveLength(1);
    await h.stop();
  });

  it('still moves the resourceVersion when store.bookmark or updateResourceVersion throws', async () => {
    const h = harness();
    h.store.bookmark = (): void => {
      throw new Error('no bookmarks today');
    };
    h.store.updateResourceVersion = (): void => {
      throw new Error('no versions today');
    };
    const w = await h.startWatching(podList('10'));
    w.bookmark('15');
    await h.lw.waitFor(() => h.reflector.stats().bookmarks === 1 && w.pending === 0, 'the bookmark');
    await flush();
    expect(h.reflector.lastSyncResourceVersion()).toBe('15');
    w.add(pod('a', '16'));
    await h.lw.waitFor(() => h.store.ops.length === 2, 'the add after the bookmark');
    expect(h.reflector.lastSyncResourceVersion()).toBe('16');
    await h.stop();
  });

  it('treats a watch whose only events were skipped for their type as very short, and relists after a backoff', async () => {
    // client-go counts only events it handled (eventCount) when deciding on VeryShortWatchError.
    const h = harness({ expectedType: { apiVersion: 'v1', kind: 'Pod' } });
    const w = await h.startWatching(podList('1'), podList('2'));
    w.push({
      type: 'ADDED',
      object: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 's', namespace: 'default', resourceVersion: '2' },
      },
    }).close();
    await h.backoffCalls(1);
    expect(h.reflector.stats()).toMatchObject({ skipped: 1, veryShortWatches: 1 });
    await h.clock.tick(h.backoff.delays[0]);
    await h.lw.waitFor(() => h.lw.listCalls.length === 2, 'the relist');
    await h.stop();
  });

  it('closes a watch stream that a ListerWatcher ignoring its signal hands over after the run was stopped', async () => {
    const clock = new FakeClock();
    let handOver: ((stream: AsyncIterable<WatchEvent<Pod>>) => void) | undefined;
    let returned = 0;
    const lateStream: AsyncIterable<WatchEvent<Pod>> = {
      [Symbol.asyncIterator]: () => ({
        next: () => new Promise(() => undefined),
        return: () => {
          returned++;
          return Promise.resolve({ done: true, value: undefined });
        },
      }),
    };
    const stubborn: ListerWatcher<Pod> = {
      list: () => Promise.resolve(podList('1')),
      watch: () =>
        new Promise((resolve) => {
          handOver = resolve;
        }),
    };
    const reflector = new Reflector<Pod>(stubborn, new RecordingStore(), { clock });
    const controller = new AbortController();
    const done = reflector.run(controller.signal);
    for (let i = 0; i < 50 && handOver === undefined; i++) await flush();
    expect(handOver).toBeDefined();
    controller.abort();
    let resolved = false;
    const stopped = done.then(() => {
      resolved = true;
    });
    await flush();
    expect(resolved).toBe(false); // run waits for the request it sent
    handOver?.(lateStream);
    await stopped;
    await flush();
    expect(returned).toBe(1);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('FakeListerWatcher', () => {
  it('records every call in order with a copy of its options', async () => {
    const lw = new FakeListerWatcher<Pod>();
    lw.enqueueList(podList('1'), new Error('boom'));
    const signal = new AbortController().signal;
    const opts = { resourceVersion: '0', limit: 500 };
    await lw.list(opts, { signal });
    opts.resourceVersion = 'mutated';
    await expect(lw.list({ resourceVersion: '1' }, { signal })).rejects.toThrow('boom');
    const stream = await lw.watch({ resourceVersion: '1' }, { signal });
    expect(stream).toBe(lw.watches[0]);
    expect(lw.calls).toEqual([
      { verb: 'list', options: { resourceVersion: '0', limit: 500 } },
      { verb: 'list', options: { resourceVersion: '1' } },
      { verb: 'watch', options: { resourceVersion: '1' } },
    ]);
  });

  it('serves streams that end cleanly, break, throw, or complete when aborted', async () => {
    const lw = new FakeListerWatcher<Pod>();
    const controller = new AbortController();
    lw.enqueueWatch(
      { events: [{ type: 'ADDED', object: pod('a', '1') }], then: 'close' },
      { then: 'break' },
      { then: expiredError() },
    );
    const collect = async (it: AsyncIterable<WatchEvent<Pod>>): Promise<string[]> => {
      const seen: string[] = [];
      try {
        for await (const e of it) seen.push(`${e.type} ${String(e.object.metadata?.resourceVersion)}`);
        seen.push('end');
      } catch (err) {
        seen.push(`throw ${(err as KinformerError).code}`);
      }
      return seen;
    };
    expect(await collect(await lw.watch({}, { signal: controller.signal }))).toEqual(['ADDED 1', 'end']);
    expect(await collect(await lw.watch({}, { signal: controller.signal }))).toEqual([
      `throw ${ErrorCodes.CONNECTION}`,
    ]);
    expect(await collect(await lw.watch({}, { signal: controller.signal }))).toEqual([
      `throw ${ErrorCodes.RESOURCE_EXPIRED}`,
    ]);
    const open = await lw.watch({}, { signal: controller.signal });
    const pending = collect(open);
    lw.watches[3]?.add(pod('b', '2'));
    await flush();
    controller.abort();
    expect(await pending).toEqual(['ADDED 2', 'end']);
    expect(lw.watches[3]?.stopped).toBe(true);
    lw.watches[3]?.add(pod('c', '3'));
    expect(lw.watches[3]?.dropped).toBe(1);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('rejects an aborted list with ERR_ABORTED and exposes watchListSupported only when set', async () => {
    const lw = new FakeListerWatcher<Pod>({ watchListSupported: false });
    expect(lw.watchListSupported).toBe(false);
    expect(new FakeListerWatcher<Pod>().watchListSupported).toBeUndefined();
    const controller = new AbortController();
    const pending = lw.list({}, { signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: ErrorCodes.ABORTED });
  });

  it('times out nextWatch with a clear message', async () => {
    const lw = new FakeListerWatcher<Pod>({ waitTimeoutMs: 20 });
    await expect(lw.nextWatch()).rejects.toThrow(/timed out after 20 ms waiting for the next watch/);
  });
});
