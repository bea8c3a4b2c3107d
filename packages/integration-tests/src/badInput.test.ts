import { createListWatch, type ListWatchOptions } from '@kinformer/client-node';
import {
  ErrorCodes,
  isKinformerError,
  KinformerError,
  realClock,
  type ErrorCode,
  type Status,
} from '@kinformer/core';
import type { ListerWatcher, WatchEvent } from '@kinformer/reflector';
import type { ExpectedType } from '@kinformer/reflector/internal';
import type { FakeApiServer } from '@kinformer/testing';
import { type WatchInjection } from '@kinformer/testing';
import type { TamperingProxy } from './tamperingProxy.test.helpers.js';
import { eventLine, type CannedResponse, startProxy } from './tamperingProxy.test.helpers.js';
import {
  captureLogs,
  LEVEL,
  RecordingBackoff,
  waitFor,
  type CapturedLogs,
  type LogLine,
  serverPod,
} from '@kinformer/test-tools';
import {
  cacheKeys,
  disposeAll,
  requestLog,
  startReflector,
  waitForCacheToMatch,
  type Pod,
  type ReflectorHarness,
  PODS,
  startServer,
} from './testSupport.test.helpers.js';

// Bad input from the API server (or whatever answers in its place), end to end: each kind of bad
// line or body yields a typed KinformerError (asserted on the ListerWatcher directly, or through
// the reflector's watchErrorHandler), a log line with its code and context, and recovery by rewatch
// or relist: the cache ends equal to the server's objects, including the events the server sent
// after the bad line (the next watch resumes from the last good resourceVersion and the server
// replays them). Jest fails any test during which a promise rejection goes unhandled, so "never a
// crash" is checked by every test here.
//
// Faults come from the FakeApiServer itself (`server.faults.injectIntoWatches`) or from a
// TamperingProxy in front of it, which can write any raw line or answer a request itself.

afterEach(disposeAll);

const POD_TYPE: ExpectedType = { apiVersion: 'v1', kind: 'Pod' };

interface Setup {
  server: FakeApiServer;
  proxy: TamperingProxy;
  logs: CapturedLogs;
  lw: ListerWatcher<Pod>;
  h: ReflectorHarness<Pod>;
}

/**
 * A server with pods `a` and `b`, a proxy in front of it, and a reflector (logging at debug into
 * `logs`) that has listed and is watching through the proxy.
 */
async function setup(
  options: {
    lw?: ListWatchOptions;
    expectedType?: ExpectedType;
    beforeStart?: (s: Omit<Setup, 'h' | 'lw'>) => void;
    /** Real time with a 10 ms backoff, for scenarios that retry in a loop (instead of spinning). */
    realTime?: boolean;
  } = {},
): Promise<Setup> {
  const server = await startServer();
  const proxy = await startProxy(server);
  server.create('pods', serverPod('a'));
  server.create('pods', serverPod('b'));
  const logs = captureLogs('debug');
  const lw = createListWatch<Pod>(proxy.kubeConfig(), PODS, { ...options.lw, logger: logs.logger });
  options.beforeStart?.({ server, proxy, logs });
  const h = startReflector(lw, {
    logger: logs.logger,
    ...(options.expectedType === undefined ? {} : { reflector: { expectedType: options.expectedType } }),
    ...(options.realTime === true ? { clock: realClock, backoff: new RecordingBackoff(10) } : {}),
  });
  return { server, proxy, logs, lw, h };
}

/** Waits for the reflector's watch to be open through the proxy; returns the list's resourceVersion. */
async function watching(s: Setup): Promise<string> {
  await waitFor(() => s.proxy.openWatchCount() === 1 && s.h.reflector.isWatching(), {
    describe: () => requestLog(s.server),
  });
  return s.h.reflector.lastSyncResourceVersion();
}

/**
 * Once the reflector watches, writes pod `c` and waits until the reflector has it, sends an ADDED
 * event of `object` down the open watch, writes pod `d` and waits until the cache equals the server.
 */
async function injectBetweenGoodEvents(s: Setup, object: unknown): Promise<void> {
  await watching(s);
  const lastGood = createPods(s.server, 'c');
  await waitFor(() => s.h.reflector.lastSyncResourceVersion() === lastGood);
  s.proxy.injectIntoOpenWatches([eventLine('ADDED', object)]);
  createPods(s.server, 'd');
  await waitForCacheToMatch(s.h, s.server);
}

/**
 * Opens a watch on `lw` directly and, once `isOpen()`, creates pod `before` on the server and reads
 * its event; then runs `inject` and reads on. Returns every event yielded and what was thrown.
 */
async function watchDirectly(
  lw: ListerWatcher<Pod>,
  server: FakeApiServer,
  isOpen: () => boolean,
  inject: () => void,
): Promise<{ events: Array<WatchEvent<Pod>>; error: unknown }> {
  const signal = AbortSignal.timeout(3000);
  const stream = await lw.watch(
    { resourceVersion: server.resourceVersion, allowWatchBookmarks: true },
    { signal },
  );
  const iterator = stream[Symbol.asyncIterator]();
  await waitFor(isOpen);
  createPods(server, 'before');
  const events: Array<WatchEvent<Pod>> = [];
  try {
    const first = await iterator.next();
    if (first.done !== true) events.push(first.value);
    inject();
    createPods(server, 'after');
    for (;;) {
      const next = await iterator.next();
      if (next.done === true) break;
      events.push(next.value);
    }
  } catch (error) {
    return { events, error };
  }
  return { events, error: undefined };
}

/** The captured lines at `level` or above whose `code` is `code`. */
function linesWithCode(logs: CapturedLogs, code: ErrorCode, minLevel: number = LEVEL.debug): LogLine[] {
  return logs.lines.filter((l) => l.level >= minLevel && (l.code === code || l.err?.code === code));
}

function expectKinformerError(err: unknown, code: ErrorCode): asserts err is KinformerError {
  expect(err).toBeInstanceOf(KinformerError);
  expect(isKinformerError(err, code)).toBe(true);
}

/** Creates pods on the server and returns the resourceVersion of the last. */
function createPods(server: FakeApiServer, ...names: string[]): string {
  let rv = '';
  for (const name of names) rv = server.create('pods', serverPod(name)).metadata.resourceVersion!;
  return rv;
}

// ------------------------------------------------------------------------------ bad watch lines

interface BadLine {
  /** What the line is. */
  what: string;
  code: ErrorCode;
  /** Makes the open watches send it. */
  inject(s: { server: FakeApiServer; proxy: TamperingProxy }): void;
}

const serverInjection = (injection: WatchInjection) => (s: { server: FakeApiServer }) => {
  expect(s.server.faults.injectIntoWatches(injection)).toBeGreaterThan(0);
};
const proxyLine = (line: string) => (s: { proxy: TamperingProxy }) => {
  expect(s.proxy.injectIntoOpenWatches([line])).toBeGreaterThan(0);
};

const BAD_LINES: BadLine[] = [
  {
    what: 'a line that is not JSON',
    code: ErrorCodes.MALFORMED_WATCH_EVENT,
    inject: serverInjection('malformed-line'),
  },
  {
    what: 'an event whose object is null',
    code: ErrorCodes.MALFORMED_WATCH_EVENT,
    inject: serverInjection('null-object'),
  },
  {
    what: 'an event whose object has no metadata',
    code: ErrorCodes.MALFORMED_WATCH_EVENT,
    inject: proxyLine(eventLine('ADDED', { kind: 'Pod', apiVersion: 'v1', spec: {} })),
  },
  {
    what: 'an event of an unknown type',
    code: ErrorCodes.UNKNOWN_EVENT_TYPE,
    inject: serverInjection('unknown-event-type'),
  },
  {
    what: 'a line longer than maxLineBytes (4 KiB)',
    code: ErrorCodes.WATCH_LINE_TOO_LARGE,
    inject: proxyLine(
      eventLine('ADDED', {
        ...serverPod('huge'),
        metadata: {
          name: 'huge',
          namespace: 'default',
          resourceVersion: '1',
          annotations: { blob: 'x'.repeat(8192) },
        },
      }),
    ),
  },
  {
    what: 'a JSON line that is not an object',
    code: ErrorCodes.MALFORMED_WATCH_EVENT,
    inject: proxyLine('[1,2,3]'),
  },
];

describe.each(BAD_LINES)('a watch stream sends $what', ({ code, inject }) => {
  test('the ListerWatcher yields the events before it, then throws a typed error with context', async () => {
    const server = await startServer();
    const proxy = await startProxy(server);
    const lw = createListWatch<Pod>(proxy.kubeConfig(), PODS, { maxLineBytes: 4096 });
    const { events, error } = await watchDirectly(
      lw,
      server,
      () => proxy.openWatchCount() === 1,
      () => inject({ server, proxy }),
    );

    expectKinformerError(error, code);
    expect(error.details).toMatchObject({ resource: 'pods.v1', verb: 'watch', line: 2 });
    expect(events.map((e) => e.object.metadata?.name)).toEqual(['before']);
  });

  test('the reflector logs it with its code, rewatches from the last good RV and the events after it are not lost', async () => {
    const s = await setup({ lw: { maxLineBytes: 4096 } });
    const listRV = await watching(s);
    const lastGood = createPods(s.server, 'c');
    await waitFor(() => s.h.reflector.lastSyncResourceVersion() === lastGood);
    inject(s);
    createPods(s.server, 'd', 'e'); // sent after the bad line, on the same stream
    await waitForCacheToMatch(s.h, s.server);

    expect(requestLog(s.server)).toEqual([
      'list rv=0 limit=500 → 200',
      `watch rv=${listRV} → 200`,
      `watch rv=${lastGood} → 200`,
    ]);
    expect(s.h.reflector.stats()).toMatchObject({ malformed: 1, relists: 0 });
    expect(s.h.handlerErrors).toEqual([]);
    const [warning] = linesWithCode(s.logs, code, LEVEL.warn);
    expect(warning).toMatchObject({
      component: 'reflector',
      code,
      resourceVersion: lastGood,
      err: { type: 'KinformerError', code },
    });
    expect(warning!.err!.details).toMatchObject({ resource: 'pods.v1', verb: 'watch' });
    expect(cacheKeys(s.h.indexer)).toEqual(['default/a', 'default/b', 'default/c', 'default/d', 'default/e']);
  });
});

describe('a watch stream is cut inside a line', () => {
  test('ERR_CONNECTION from the ListerWatcher; the reflector rewatches at once from the last good RV (no backoff, no relist)', async () => {
    const s = await setup();
    const listRV = await watching(s);
    const lastGood = createPods(s.server, 'c');
    await waitFor(() => s.h.reflector.lastSyncResourceVersion() === lastGood);
    s.server.faults.injectIntoWatches('truncated-line'); // half a line, then a TCP reset
    createPods(s.server, 'd');
    await waitForCacheToMatch(s.h, s.server);

    expect(requestLog(s.server)).toEqual([
      'list rv=0 limit=500 → 200',
      `watch rv=${listRV} → 200`,
      `watch rv=${lastGood} → 200`,
    ]);
    expect(s.h.backoff).toMatchObject({ steps: 0 });
    const [line] = linesWithCode(s.logs, ErrorCodes.CONNECTION);
    expect(line).toMatchObject({
      component: 'client-node',
      resource: 'pods.v1',
      namespace: 'default',
      msg: 'watch failed',
    });

    const direct = await watchDirectly(
      s.lw,
      s.server,
      () => s.server.openWatchCount() === 2,
      () => s.server.faults.injectIntoWatches('truncated-line'),
    );
    expectKinformerError(direct.error, ErrorCodes.CONNECTION);
  });
});

describe('events the reflector cannot store or must not store', () => {
  test.each([
    {
      what: 'an object without a name: the store rejects it (ERR_KEY_FUNC, logged at error), the stream goes on, nothing is lost',
      expectedType: undefined,
      object: { kind: 'Pod', apiVersion: 'v1', metadata: { namespace: 'default', resourceVersion: '999' } },
      stats: { malformed: 0, relists: 0 },
      code: ErrorCodes.KEY_FUNC,
      logged: {
        component: 'reflector',
        type: 'ADDED',
        resourceVersion: '999',
        msg: 'the store rejected a watch event; continuing',
      },
      // a rejected event does not move the RV
      notStored: (s: Setup) => expect(s.h.reflector.lastSyncResourceVersion()).not.toBe('999'),
    },
    {
      what: 'an object of the wrong kind (expectedType Pod): skipped and logged with ERR_UNEXPECTED_TYPE, the stream goes on',
      expectedType: POD_TYPE,
      object: {
        kind: 'ConfigMap',
        apiVersion: 'v1',
        metadata: { name: 'c', namespace: 'default', resourceVersion: '998' },
        data: {},
      },
      stats: { skipped: 1, malformed: 0 },
      code: ErrorCodes.UNEXPECTED_TYPE,
      logged: { component: 'reflector', expected: 'v1, Kind=Pod', apiVersion: 'v1', kind: 'ConfigMap' },
      notStored: (s: Setup) => expect(s.h.indexer.getByKey('default/c')?.kind).not.toBe('ConfigMap'),
    },
  ])('$what', async ({ expectedType, object, stats, code, logged, notStored }) => {
    const s = await setup(expectedType === undefined ? {} : { expectedType });
    await injectBetweenGoodEvents(s, object);

    expect(requestLog(s.server)).toHaveLength(2); // one list, one watch: the stream was never restarted
    expect(s.h.reflector.stats()).toMatchObject(stats);
    const [line] = linesWithCode(s.logs, code, LEVEL.error);
    expect(line).toMatchObject(logged);
    notStored(s);
  });
});

/** Asserts one resourceVersion anomaly, no relist, and the reflector's log line `msg` with its code and `fields`. */
function expectResourceVersionAnomaly(s: Setup, msg: string, fields: Partial<LogLine>): void {
  expect(s.h.reflector.stats()).toMatchObject({ resourceVersionAnomalies: 1, relists: 0 });
  const line = s.logs.lines.find((l) => l.msg === msg);
  expect(line).toMatchObject({ component: 'reflector', code: ErrorCodes.BAD_RESOURCE_VERSION, ...fields });
}

describe('resourceVersions that are not numbers or go back in time', () => {
  test('a non-numeric resourceVersion is accepted as opaque, counted and logged with context; later events set it right', async () => {
    const s = await setup();
    await watching(s);
    const a = s.server.get<Pod>('pods', 'a');
    s.proxy.injectIntoOpenWatches([
      eventLine('MODIFIED', { ...a, metadata: { ...a.metadata, resourceVersion: 'not-a-number' } }),
    ]);
    await waitFor(() => s.h.reflector.lastSyncResourceVersion() === 'not-a-number');
    s.server.patch('pods', 'a', { metadata: { labels: { touched: 'yes' } } });
    await waitForCacheToMatch(s.h, s.server);

    expectResourceVersionAnomaly(s, 'non-numeric resourceVersion; treating it as opaque', {
      level: LEVEL.debug,
      resourceVersion: 'not-a-number',
    });
    expect(requestLog(s.server)).toHaveLength(2);
  });

  // Regression (fixed; was a bug in reflector.ts `list()`): a non-numeric resourceVersion that ends up as lastSyncResourceVersion
  // (here: it is the last event before the stream ends) can never be recovered from. The rewatch
  // from it gets 500 (the server cannot parse it), the watchErrorHandler sees ERR_INTERNAL, and every
  // relist asks for `resourceVersion=not-a-number` and gets 400 BadRequest, forever: only 410 and
  // "too large" make `list()` fall back to a consistent read (RV ""). Proposed fix: treat a 400/422
  // answer to a LIST at a specific resourceVersion (neither "" nor "0") like an expired one: set
  // `rvUnavailable` and retry at once with RV "".
  test('a non-numeric resourceVersion as the last event before the stream ends: the reflector relists with RV "" and recovers', async () => {
    const s = await setup({ realTime: true });
    await watching(s);
    const a = s.server.get<Pod>('pods', 'a');
    s.proxy.injectIntoOpenWatches(
      [eventLine('MODIFIED', { ...a, metadata: { ...a.metadata, resourceVersion: 'not-a-number' } })],
      'end',
    );
    createPods(s.server, 'c');
    await waitForCacheToMatch(s.h, s.server, 'pods', { timeoutMs: 1500 });
    expect(requestLog(s.server).some((r) => r.startsWith('list rv= ') && r.endsWith('→ 200'))).toBe(true);
  });

  test('a resourceVersion that goes back: logged at warn with both versions; the stale object is fixed by the replay from the older RV', async () => {
    const s = await setup();
    await watching(s);
    const old = s.server.get<Pod>('pods', 'a');
    const newer = s.server.patch<Pod>('pods', 'a', { metadata: { labels: { v: '2' } } });
    await waitFor(() => s.h.reflector.lastSyncResourceVersion() === newer.metadata.resourceVersion);
    // A stale replay of `a` (its previous state and RV), then the stream ends.
    s.proxy.injectIntoOpenWatches([eventLine('MODIFIED', old)], 'end');
    await waitFor(() => requestLog(s.server).length === 3);
    await waitForCacheToMatch(s.h, s.server);

    const oldRV = old.metadata.resourceVersion!;
    expectResourceVersionAnomaly(s, 'resourceVersion went backwards', {
      level: LEVEL.warn,
      resourceVersion: oldRV,
      previous: newer.metadata.resourceVersion,
    });
    expect(requestLog(s.server).at(-1)).toBe(`watch rv=${oldRV} → 200`); // the server replays from there
    expect(s.h.indexer.getByKey('default/a')?.metadata.labels).toEqual({ v: '2' });
    // The cache did hold the stale version for a moment: it is logged, not silent, and then repaired.
    expect(s.h.applied.filter((d) => d.key === 'default/a').map((d) => d.resourceVersion)).toEqual([
      oldRV,
      newer.metadata.resourceVersion,
      oldRV,
      newer.metadata.resourceVersion,
    ]);
  });
});

// --------------------------------------------------------------------------- bad response bodies

const HTML_PAGE: CannedResponse = {
  status: 502,
  headers: { 'Content-Type': 'text/html' },
  body: '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n',
};

const UNKNOWN_STATUS: Status = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'the teapot refuses to list pods',
  reason: 'Teapot',
  code: 418,
};

interface BadListAnswer {
  what: string;
  code: ErrorCode;
  rule: Parameters<TamperingProxy['next']>[1];
  /** Extra checks on the error. */
  check(err: KinformerError): void;
}

const BAD_LIST_ANSWERS: BadListAnswer[] = [
  {
    what: 'an HTML error page from a load balancer',
    code: ErrorCodes.BAD_RESPONSE,
    rule: { kind: 'respond', response: HTML_PAGE },
    check: (err) => {
      expect(err.httpStatus).toBe(502);
      expect(err.details?.bodyExcerpt).toEqual(expect.stringContaining('502 Bad Gateway'));
    },
  },
  {
    what: 'a list body cut short by a connection reset',
    code: ErrorCodes.CONNECTION,
    rule: { kind: 'truncate', then: 'reset' },
    check: (err) => expect(err.details).toMatchObject({ verb: 'list' }),
  },
  {
    what: 'a list body that ends cleanly in the middle of the JSON',
    code: ErrorCodes.LIST_TRUNCATED,
    rule: { kind: 'truncate', then: 'end' },
    check: (err) => {
      expect(err.httpStatus).toBe(200);
      expect(err.message).toContain('was cut short');
    },
  },
  {
    what: 'a Status with an unknown code and reason',
    code: ErrorCodes.API_STATUS,
    rule: {
      kind: 'respond',
      response: {
        status: 418,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(UNKNOWN_STATUS),
      },
    },
    check: (err) => {
      expect(err.httpStatus).toBe(418);
      expect(err.status).toMatchObject({ reason: 'Teapot', message: 'the teapot refuses to list pods' });
      expect(err.message).toBe('the teapot refuses to list pods');
    },
  },
];

describe.each(BAD_LIST_ANSWERS)('the LIST is answered with $what', ({ code, rule, check }) => {
  test('the watchErrorHandler gets a typed error, it is logged with its code, and the next list recovers', async () => {
    const s = await setup({ beforeStart: ({ proxy }) => proxy.next('list', rule) });
    await watching(s);
    await waitForCacheToMatch(s.h, s.server);

    expect(s.h.handlerErrorCodes()).toEqual([code]);
    check(s.h.handlerErrors[0] as KinformerError);
    const [line] = linesWithCode(s.logs, code, LEVEL.error);
    expect(line).toMatchObject({
      component: 'reflector',
      msg: 'failed to list and watch; retrying after backoff',
      err: { code },
    });
    expect(s.h.backoff).toMatchObject({ steps: 1 });
    expect(s.proxy.requests.filter((r) => r.verb === 'list')).toHaveLength(2);
  });
});

describe('the WATCH is answered with an HTML error page', () => {
  test('ERR_BAD_RESPONSE reaches the watchErrorHandler and the reflector rewatches from its last RV', async () => {
    const s = await setup();
    await watching(s);
    const lastGood = createPods(s.server, 'c');
    await waitFor(() => s.h.reflector.lastSyncResourceVersion() === lastGood);
    s.proxy.next('watch', { kind: 'respond', response: HTML_PAGE });
    s.server.faults.endWatches();
    await waitFor(() => s.h.handlerErrors.length === 1);
    createPods(s.server, 'd');
    await waitForCacheToMatch(s.h, s.server);

    expect(s.h.handlerErrorCodes()).toEqual([ErrorCodes.BAD_RESPONSE]);
    expect(s.h.handlerErrors[0]).toMatchObject({ httpStatus: 502, details: { verb: 'watch' } });
    // A 5xx early in a streak of failures rewatches (STORM_RETRY): the version is still good.
    expect(requestLog(s.server)).toContain(`watch rv=${lastGood} → 200`);
    expect(s.h.reflector.stats()).toMatchObject({ relists: 0 });
  });
});

describe('an in-stream ERROR with a Status of unknown code and reason', () => {
  const weird: Status = {
    ...UNKNOWN_STATUS,
    message: 'something new went wrong',
    reason: 'SomethingNew',
    code: 599,
  };

  test('the ListerWatcher throws ERR_API_STATUS carrying the Status', async () => {
    const server = await startServer();
    const lw = createListWatch<Pod>(server.kubeConfig(), PODS);
    const { events, error } = await watchDirectly(
      lw,
      server,
      () => server.openWatchCount() === 1,
      () => server.faults.injectIntoWatches({ error: weird }),
    );
    expectKinformerError(error, ErrorCodes.API_STATUS);
    expect(error.status).toEqual(weird);
    expect(error.message).toBe('something new went wrong');
    expect(events).toHaveLength(1);
  });

  test('the reflector logs it at warn with its code and relists', async () => {
    const s = await setup();
    await watching(s);
    const lastGood = createPods(s.server, 'c');
    await waitFor(() => s.h.reflector.lastSyncResourceVersion() === lastGood);
    s.server.faults.injectIntoWatches({ error: weird });
    createPods(s.server, 'd');
    await waitForCacheToMatch(s.h, s.server);

    const [line] = linesWithCode(s.logs, ErrorCodes.API_STATUS, LEVEL.warn);
    expect(line).toMatchObject({
      component: 'reflector',
      msg: 'watch ended with an error; relisting',
      resourceVersion: lastGood,
    });
    expect(requestLog(s.server)).toContain(`list rv=${lastGood} → 200`);
    expect(s.h.handlerErrors).toEqual([]);
  });
});

// ---------------------------------------------------------------- an event that is always too long

// Regression (fixed; was a bug in reflector.ts `watchLoop`, the `isMalformedStreamError` branch): a bad line that the server
// sends again on every rewatch — here an object stored on the server whose event is longer than
// `maxLineBytes` — makes the reflector rewatch from the same resourceVersion forever (one backoff
// step apart, up to 30–60 s): every event after it is never applied, and it never relists, although
// a LIST (which has no line limit) would load the object. Proposed fix: remember the resourceVersion
// at which a malformed-stream error happened; if the next watch fails the same way without the
// resourceVersion having moved, end the cycle (return from `watchLoop`) so the run loop relists.
//
test('an object whose watch event is always longer than maxLineBytes: the reflector relists instead of rewatching forever', async () => {
  const s = await setup({ lw: { maxLineBytes: 4096 }, realTime: true });
  await watching(s);
  const big = serverPod('big');
  big.metadata.annotations = { blob: 'x'.repeat(8192) };
  s.server.create('pods', big);
  createPods(s.server, 'after-big');
  await waitForCacheToMatch(s.h, s.server, 'pods', { timeoutMs: 1500 });
  expect(s.h.reflector.stats().relists).toBeGreaterThanOrEqual(1);
});
