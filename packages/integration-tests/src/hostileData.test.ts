import { createListWatch } from '@kinformer/client-node';
import { ErrorCodes } from '@kinformer/core';
import { MAX_OBJECT_DEPTH } from '@kinformer/core/internal';
import { SharedIndexInformer, waitForCacheSync } from '@kinformer/informer';
import type { FakeApiServer } from '@kinformer/testing';
import {
  captureLogs,
  LEVEL,
  RecordingBackoff,
  waitFor,
  type CapturedLogs,
  serverPod,
} from '@kinformer/test-tools';
import type { TamperingProxy } from './tamperingProxy.test.helpers.js';
import { startProxy } from './tamperingProxy.test.helpers.js';
import {
  cacheVersions,
  disposeAll,
  serverVersions,
  track,
  type Pod,
  PODS,
  startServer,
} from './testSupport.test.helpers.js';

// Hostile data from the server, end to end through a SharedIndexInformer (objects frozen, the
// default outside production): an object nested 100 000 levels deep, resourceVersions that are not
// strings, and a malformed Secret line. The TamperingProxy writes the raw lines into the open watch;
// the FakeApiServer behind it keeps serving the truth, so after each fault the cache must equal the
// server again. (issue 16, items 3, 4 and 7.)

afterEach(disposeAll);

interface Setup {
  server: FakeApiServer;
  proxy: TamperingProxy;
  logs: CapturedLogs;
  informer: SharedIndexInformer<Pod>;
}

async function setup(): Promise<Setup> {
  const server = await startServer();
  const proxy = await startProxy(server);
  server.create('pods', serverPod('a'));
  server.create('pods', serverPod('b'));
  const logs = captureLogs('debug');
  const informer = new SharedIndexInformer<Pod>(
    createListWatch<Pod>(proxy.kubeConfig(), PODS, { logger: logs.logger }),
    { name: 'pods.v1', logger: logs.logger, reflectorOptions: { backoff: new RecordingBackoff(1) } },
  );
  const stop = new AbortController();
  const run = informer.run(stop.signal);
  track(stop, async (s) => {
    s.abort();
    await run;
  });
  expect(await waitForCacheSync(AbortSignal.timeout(10_000), informer.hasSynced)).toBe(true);
  await waitFor(() => proxy.openWatchCount() === 1);
  return { server, proxy, logs, informer };
}

const lists = (proxy: TamperingProxy): number => proxy.requests.filter((r) => r.verb === 'list').length;

async function expectCacheToMatch(s: Setup): Promise<void> {
  await waitFor(
    () => JSON.stringify(cacheVersions(s.informer.getStore())) === JSON.stringify(serverVersions(s.server)),
    { describe: () => ({ cache: cacheVersions(s.informer.getStore()), server: serverVersions(s.server) }) },
  );
}

/** `depth` levels of `{"a":…}`. */
const nested = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('an object nested 100 000 levels deep', () => {
  test('fails the watch with ERR_OBJECT_TOO_DEEP, logged once with its key, and the informer relists: never a silent gap', async () => {
    const s = await setup();
    const listsBefore = lists(s.proxy);
    const line = `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"deep","namespace":"default","resourceVersion":"99"},"spec":${nested(100_000)}}}`;
    expect(s.proxy.injectIntoOpenWatches([line])).toBe(1);
    s.server.create('pods', serverPod('c'));
    await waitFor(() => lists(s.proxy) > listsBefore, { describe: () => s.logs.raw });
    await expectCacheToMatch(s);

    const tooDeep = s.logs.lines.filter(
      (l) =>
        l.level >= LEVEL.warn &&
        (l.code === ErrorCodes.OBJECT_TOO_DEEP || l.err?.code === ErrorCodes.OBJECT_TOO_DEEP),
    );
    expect(tooDeep).toHaveLength(1);
    expect(tooDeep[0]?.err).toMatchObject({ details: { key: 'default/deep', maxDepth: MAX_OBJECT_DEPTH } });
    // Before: freezing overflowed the stack, and the event was "skipped" while the cache said synced.
    expect(s.logs.text()).not.toContain('Maximum call stack size exceeded');
    expect(s.logs.text()).not.toContain('could not apply a change to the cache');
    expect(s.informer.hasSynced()).toBe(true);
    expect(s.informer.getStore().getByKey('default/deep')).toBeUndefined(); // not on the server either
  });
});

describe('a resourceVersion that is not a string', () => {
  test.each([
    ['a number', '100'],
    ['null', 'null'],
    ['raw 1e309 (Infinity once parsed)', '1e309'],
  ])(
    'in a watch event (%s): ERR_BAD_RESOURCE_VERSION, relist, never stored, never sent back as a number',
    async (_name, raw) => {
      const s = await setup();
      const listsBefore = lists(s.proxy);
      const line = `{"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"default","resourceVersion":${raw}}}}`;
      expect(s.proxy.injectIntoOpenWatches([line])).toBe(1);
      await waitFor(() => lists(s.proxy) > listsBefore, { describe: () => s.logs.raw });
      s.server.create('pods', serverPod('c'));
      await expectCacheToMatch(s);

      expect(
        s.logs.lines.some((l) => l.level >= LEVEL.warn && l.err?.code === ErrorCodes.BAD_RESOURCE_VERSION),
      ).toBe(true);
      for (const obj of s.informer.getStore().list())
        expect(typeof obj.metadata.resourceVersion).toBe('string');
      for (const r of s.proxy.requests) {
        const rv = new URL(r.url, 'http://x').searchParams.get('resourceVersion');
        if (rv !== null) expect(rv).toMatch(/^\d*$/);
      }
    },
  );
});

describe('a malformed line carrying a Secret', () => {
  test("its data values never reach a log line: the warning describes the line's shape", async () => {
    const s = await setup();
    const value = 'c3VwZXItc2VjcmV0LXZhbHVlLTFmMmU='; // base64 of a made-up secret
    // Short metadata, then the data; the line is cut so it is not valid JSON.
    const line = `{"type":"ADDED","object":{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"},"data":{"password":"${value}"}`;
    expect(s.proxy.injectIntoOpenWatches([line])).toBe(1);
    await waitFor(() =>
      s.logs.lines.some((l) => l.level >= LEVEL.warn && l.err?.code === ErrorCodes.MALFORMED_WATCH_EVENT),
    );
    s.server.create('pods', serverPod('c'));
    await expectCacheToMatch(s);
    expect(s.logs.text()).not.toContain(value);
    expect(s.logs.text()).not.toContain('c3VwZXIt');
  });
});
