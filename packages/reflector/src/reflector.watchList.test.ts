import {
  createLogger,
  ErrorCodes,
  ExponentialBackoff,
  KinformerError,
  type KubeObject,
} from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import type { ReflectorStore } from './listerWatcher.js';
import { Reflector, type ReflectorOptions } from './reflector.js';
import { podList, harnessWith } from './reflector.test.helpers.js';
import { pod as basePod, status } from '@kinformer/test-tools';
import { FakeListerWatcher, type FakeListerWatcherOptions } from './testing.js';

// client-go reflector_watchlist_test.go (§10.2) and the watch-list half of TestReflectorListAndWatch.

type Pod = KubeObject;

const pod = (name: string, resourceVersion: string): Pod => basePod(name, resourceVersion, 'ns');

const expired = (): KinformerError =>
  KinformerError.fromStatus(status(410, 'Expired', 'too old resource version: 1 (5)'));

class RecordingStore implements ReflectorStore<Pod> {
  readonly ops: string[] = [];
  readonly replaces: Array<{ names: string[]; resourceVersion: string }> = [];
  add(obj: Pod): void {
    this.ops.push(`add ${String(obj.metadata?.name)}@${String(obj.metadata?.resourceVersion)}`);
  }
  update(obj: Pod): void {
    this.ops.push(`update ${String(obj.metadata?.name)}@${String(obj.metadata?.resourceVersion)}`);
  }
  delete(obj: Pod): void {
    this.ops.push(`delete ${String(obj.metadata?.name)}@${String(obj.metadata?.resourceVersion)}`);
  }
  replace(items: Pod[], resourceVersion: string): void {
    const names = items.map((p) => `${String(p.metadata?.name)}@${String(p.metadata?.resourceVersion)}`);
    this.ops.push(`replace [${names.join(',')}]@${resourceVersion}`);
    this.replaces.push({ names, resourceVersion });
  }
  resync(): void {
    this.ops.push('resync');
  }
}

/** The reflector harness of `reflector.test.helpers.ts` with the streaming list on and this store. */
function harness(
  options: Partial<ReflectorOptions<Pod>> = {},
  lwOptions: FakeListerWatcherOptions<Pod> = {},
) {
  const clock = new FakeClock(5_000_000);
  const backoff = new ExponentialBackoff({ clock, random: () => 0 });
  const h = harnessWith(new RecordingStore(), { clock, backoff, useWatchList: true, ...options }, lwOptions);
  return { ...h, start: (): void => void h.start() };
}

/** A {@link harness} whose run started, and the streaming list it opened first. */
async function streaming(options: Partial<ReflectorOptions<Pod>> = {}) {
  const h = harness(options);
  h.start();
  return { h, w: await h.lw.nextWatch() };
}

const STREAMING = {
  allowWatchBookmarks: true,
  sendInitialEvents: true,
  resourceVersionMatch: 'NotOlderThan',
  timeoutSeconds: 300,
};

describe('Reflector: streaming list (client-go reflector_watchlist_test.go)', () => {
  it('builds the initial state from one streaming watch from RV "" and keeps that stream open, without any LIST', async () => {
    // TestReflectorListAndWatch (a) + TestWatchList "synced after the bookmark"
    const { h, w } = await streaming();
    expect(w.options).toEqual({ resourceVersion: '', ...STREAMING });
    w.add(pod('a', '5')).add(pod('b', '6'));
    await h.lw.waitFor(() => w.pending === 0, 'initial events consumed');
    expect(h.store.ops).toEqual([]); // not synced without the end bookmark
    expect(h.reflector.lastSyncResourceVersion()).toBe('');
    expect(h.reflector.isWatching()).toBe(false);

    w.bookmark('10', { initialEventsEnd: true });
    await h.lw.waitFor(() => h.store.ops.length === 1, 'replace');
    expect(h.store.ops).toEqual(['replace [a@5,b@6]@10']);
    expect(h.reflector.lastSyncResourceVersion()).toBe('10');

    w.modify(pod('a', '11')).add(pod('c', '12'));
    await h.lw.waitFor(() => h.store.ops.length === 3, 'watch events');
    expect(h.store.ops.slice(1)).toEqual(['update a@11', 'add c@12']);
    expect(h.reflector.lastSyncResourceVersion()).toBe('12');
    expect(h.reflector.isWatching()).toBe(true);
    expect(h.lw.listCalls).toEqual([]);
    expect(h.lw.watchCalls).toHaveLength(1);
    expect(h.reflector.stats()).toMatchObject({ lists: 0, watchLists: 1, watchStarts: 0 });
    await h.stop();
    expect(w.stopped).toBe(true);
  });

  it('is off by default, off when the ListerWatcher does not support it, on otherwise', async () => {
    // TestNewReflectorWithDisablementWatchList
    const off = harness({ useWatchList: false });
    const unsupported = harness({}, { watchListSupported: false });
    const supported = harness();
    const byDefault = new Reflector(new FakeListerWatcher(), new RecordingStore());
    expect(byDefault.usesWatchList()).toBe(false);
    expect(off.reflector.usesWatchList()).toBe(false);
    expect(unsupported.reflector.usesWatchList()).toBe(false);
    expect(supported.reflector.usesWatchList()).toBe(true);
    for (const h of [off, unsupported, supported]) {
      h.lw.enqueueList(podList('1'));
      h.start();
      await h.lw.waitFor(() => h.lw.calls.length > 0, 'first request');
    }
    expect(off.lw.calls[0]?.verb).toBe('list');
    expect(unsupported.lw.calls[0]?.verb).toBe('list');
    expect(supported.lw.calls[0]?.verb).toBe('watch');
    for (const h of [off, unsupported, supported]) await h.stop();
  });

  it('records the RV only from the annotated bookmark, whose value must be "true"', async () => {
    // TestWatchListResourceVersion + TestWatchList "bookmark annotation value must be true"
    const { h, w } = await streaming();
    w.add(pod('a', '5')).bookmark('7').bookmark('8', { annotationValue: 'false' });
    await h.lw.waitFor(() => w.pending === 0, 'events consumed');
    expect(h.store.replaces).toEqual([]);
    expect(h.reflector.lastSyncResourceVersion()).toBe('');
    w.bookmark('9', { initialEventsEnd: true });
    await h.lw.waitFor(() => h.store.replaces.length === 1, 'replace');
    expect(h.store.replaces[0]).toEqual({ names: ['a@5'], resourceVersion: '9' });
    await h.stop();
  });

  it('applies updates and deletes that arrive during the initial stream', async () => {
    // TestWatchList "updates/deletes during streaming applied"
    const { h, w } = await streaming();
    w.add(pod('a', '5'))
      .add(pod('b', '6'))
      .modify(pod('a', '7'))
      .delete(pod('b', '8'))
      .add(pod('c', '9'))
      .bookmark('10', { initialEventsEnd: true });
    await h.lw.waitFor(() => h.store.replaces.length === 1, 'replace');
    expect(h.store.replaces[0]).toEqual({ names: ['a@7', 'c@9'], resourceVersion: '10' });
    await h.stop();
  });

  it.each([
    [
      'an Invalid answer up front (old servers)',
      KinformerError.fromStatus(status(422, 'Invalid', 'sendInitialEvents is forbidden')),
    ],
    ['any other error up front', new KinformerError(ErrorCodes.BAD_RESPONSE, 'dummy error')],
  ])('falls back to LIST RV="0" limit 500, then WATCH, on %s', async (_name, error) => {
    // TestWatchList "any watch-list error falls back to LIST"
    const h = harness();
    h.lw.enqueueWatch(error);
    h.lw.enqueueList(podList('3', [pod('a', '2')]));
    h.start();
    await h.lw.waitFor(() => h.lw.watchCalls.length === 2, 'plain watch');
    expect(h.lw.calls.map((c) => c.verb)).toEqual(['watch', 'list', 'watch']);
    expect(h.lw.listCalls).toEqual([{ resourceVersion: '0', limit: 500 }]);
    expect(h.lw.watchCalls[1]).toEqual({
      resourceVersion: '3',
      allowWatchBookmarks: true,
      timeoutSeconds: 300,
    });
    expect(h.store.ops).toEqual(['replace [a@2]@3']);
    expect(h.handled).toEqual([]);
    expect(h.backoff.delays).toEqual([]); // the fallback happens in the same cycle
    await h.stop();
  });

  it('falls back to LIST when the streaming list fails mid-stream or closes at once', async () => {
    const h = harness();
    h.lw.enqueueWatch({
      events: [{ type: 'ADDED', object: pod('a', '1') }],
      then: KinformerError.fromStatus(
        status(500, 'InternalError', 'storage feature RequestWatchProgress is disabled'),
      ),
    });
    h.lw.enqueueList(podList('3'));
    h.start();
    await h.lw.waitFor(() => h.lw.watchCalls.length === 2, 'plain watch');
    expect(h.lw.calls.map((c) => c.verb)).toEqual(['watch', 'list', 'watch']);
    await h.stop();

    const short = harness();
    short.lw.enqueueWatch({ then: 'close' }); // very short: less than a second, no events
    short.lw.enqueueList(podList('3'));
    short.start();
    await short.lw.waitFor(() => short.lw.watchCalls.length === 2, 'plain watch');
    expect(short.lw.calls.map((c) => c.verb)).toEqual(['watch', 'list', 'watch']);
    await short.stop();
  });

  it('retries a streaming list refused with 429 after a backoff, without a LIST', async () => {
    // TestWatchList "429 retried"
    const h = harness();
    h.lw.enqueueWatch(
      KinformerError.fromStatus(status(429, 'TooManyRequests', 'storage is (re)initializing')),
    );
    h.start();
    await h.backoffCalls(1);
    await h.clock.tick(h.backoff.delays[0]);
    const w = await h.lw.nextWatch();
    expect(w.options).toEqual({ resourceVersion: '', ...STREAMING });
    expect(h.lw.listCalls).toEqual([]);
    await h.stop();
  });

  it('retries a streaming list whose connection failed after a backoff, without a LIST, and reports the failure to the handler', async () => {
    // Retried like a 429 (client-go), but not silently (kinformer): the handler sees each failure.
    const refused = new KinformerError(ErrorCodes.CONNECTION, 'connect ECONNREFUSED 127.0.0.1:6443');
    const h = harness();
    h.lw.enqueueWatch(refused);
    h.start();
    await h.backoffCalls(1);
    expect(h.handled).toEqual([refused]);
    await h.clock.tick(h.backoff.delays[0]);
    const w = await h.lw.nextWatch();
    expect(w.options).toEqual({ resourceVersion: '', ...STREAMING });
    expect(h.lw.listCalls).toEqual([]);
    expect(h.handled).toHaveLength(1);
    await h.stop();
  });

  it('starts a new streaming list when the stream ends before the bookmark', async () => {
    // TestWatchList "watcher stopped before sync ⇒ a new watch-list request"
    const { h, w: w1 } = await streaming();
    w1.add(pod('stale', '4')).close();
    const w2 = await h.lw.nextWatch();
    expect(w2.options).toEqual({ resourceVersion: '', ...STREAMING });
    w2.add(pod('fresh', '5')).bookmark('6', { initialEventsEnd: true });
    await h.lw.waitFor(() => h.store.replaces.length === 1, 'replace');
    expect(h.store.replaces[0]).toEqual({ names: ['fresh@5'], resourceVersion: '6' });
    expect(h.lw.listCalls).toEqual([]);
    await h.stop();
  });

  it('re-watches with a plain watch from the last RV when the stream closes after the sync', async () => {
    // TestWatchList "stopped after sync ⇒ plain watch from the last RV"
    const { h, w: w1 } = await streaming();
    w1.add(pod('a', '5')).bookmark('10', { initialEventsEnd: true }).add(pod('b', '11')).close();
    const w2 = await h.lw.nextWatch();
    expect(w2.options).toEqual({ resourceVersion: '11', allowWatchBookmarks: true, timeoutSeconds: 300 });
    expect(h.lw.listCalls).toEqual([]);
    expect(h.reflector.stats()).toMatchObject({ watchLists: 1, watchStarts: 1, watchRestarts: 1 });
    await h.stop();
  });

  it('relists with a new streaming list from the last RV after a 410 on the synced stream, and from "" if that RV expired', async () => {
    // TestWatchList "expired watch after sync"
    const { h, w: w1 } = await streaming();
    w1.add(pod('a', '5'))
      .bookmark('10', { initialEventsEnd: true })
      .error(status(410, 'Expired', 'too old resource version: 10 (20)'));
    await h.backoffCalls(1);
    h.lw.enqueueWatch(expired());
    await h.clock.tick(h.backoff.delays[0]);
    const w2 = await h.lw.nextWatch();
    expect(h.lw.watchCalls.map((o) => o.resourceVersion)).toEqual(['', '10', '']);
    expect(w2.options).toEqual({ resourceVersion: '', ...STREAMING });
    expect(h.backoff.delays).toHaveLength(1); // the retry at "" is immediate
    expect(h.reflector.stats()).toMatchObject({ expired410: 2, watchLists: 3, relists: 2 });
    w2.bookmark('30', { initialEventsEnd: true });
    await h.lw.waitFor(() => h.store.replaces.length === 2, 'second replace');
    expect(h.store.replaces[1]).toEqual({ names: [], resourceVersion: '30' });
    await h.stop();
  });

  it('restarts a streaming list that stalls', async () => {
    const { h, w: w1 } = await streaming({ stallMarginMs: 1000 });
    w1.add(pod('a', '5'));
    await h.clock.tick(301_000);
    const w2 = await h.lw.nextWatch();
    expect(w1.stopped).toBe(true);
    expect(w2.options.sendInitialEvents).toBe(true);
    expect(h.reflector.stats().stalls).toBe(1);
    await h.stop();
  });

  it('warns every 10 s while the end bookmark is missing, and never in plain watch mode', async () => {
    // TestInitialEventsEndBookmarkTicker
    const lines: Array<{ level: number; msg: string }> = [];
    const logger = createLogger({
      level: 'warn',
      destination: {
        write: (s: string) => {
          lines.push(JSON.parse(s) as { level: number; msg: string });
        },
      },
    });
    const { h, w } = await streaming({ logger });
    await h.clock.tick(10_000);
    expect(lines.map((l) => l.msg)).toEqual([
      'awaiting the bookmark that ends the initial events stream; no events received yet',
    ]);
    w.add(pod('a', '1'));
    await h.lw.waitFor(() => w.pending === 0, 'event consumed');
    await h.clock.tick(10_000);
    expect(lines).toHaveLength(2);
    expect(lines[1]?.msg).toBe('the bookmark that ends the initial events stream has not arrived');
    w.bookmark('2', { initialEventsEnd: true });
    await h.lw.waitFor(() => h.store.replaces.length === 1, 'replace');
    await h.clock.tick(60_000);
    expect(lines).toHaveLength(2);
    await h.stop();

    lines.length = 0;
    const plain = harness({ logger, useWatchList: false });
    plain.lw.enqueueList(podList('1'));
    plain.start();
    await plain.lw.nextWatch();
    await plain.clock.tick(60_000);
    expect(lines).toEqual([]);
    await plain.stop();
  });

  it('resolves when aborted during the initial stream', async () => {
    const { h, w } = await streaming();
    w.add(pod('a', '1'));
    await h.stop();
    expect(w.stopped).toBe(true);
    expect(h.store.ops).toEqual([]);
  });
});

describe('Reflector: streaming list recovery (kinformer)', () => {
  it('does not count initial events as progress: a streaming list that keeps failing backs off further each time', async () => {
    const h = harness();
    const throttled = (): KinformerError =>
      KinformerError.fromStatus(status(429, 'TooManyRequests', 'storage is (re)initializing'));
    for (let i = 0; i < 3; i++)
      h.lw.enqueueWatch({ events: [{ type: 'ADDED', object: pod('a', '5') }], then: throttled() });
    h.start();
    await h.waitOutBackoffs(3);
    // Before: every retry waited the first step again, since the re-sent initial ADDED reset the backoff.
    expect(h.backoff.delays).toEqual([800, 1600, 3200]);
    await h.stop();
  });

  it('closes a handed-over stream when the run stops before it is watched', async () => {
    const { h, w } = await streaming();
    const replace = h.store.replace.bind(h.store);
    h.store.replace = (items, rv) => {
      replace(items, rv);
      h.abort(); // the run stops between the streaming list and its watch
    };
    w.add(pod('a', '5')).bookmark('10', { initialEventsEnd: true });
    await h.lw.waitFor(() => h.store.ops.length === 1, 'replace');
    await h.stop(); // no timer (the stream's stall timer) and no abort listener left behind
    expect(w.stopped).toBe(true);
  });
});
