import { ErrorCodes, KinformerError } from '@kinformer/core';
import { FakeClock, flush } from '@kinformer/core/testing';
import { BookmarkCadence, reflectorBackoff, reflectorRecovery } from './recovery.js';
import {
  expiredError,
  harness,
  internalStatus,
  outage,
  pod,
  podList,
  tooManyRequests,
} from './reflector.test.helpers.js';
import type { Harness, Watch } from './reflector.test.helpers.js';

// How long the cache stays behind after each kind of fault: the clock time from the fault to the
// next request that brings the write the server made at that moment (a rewatch from the last
// resourceVersion or a relist). The fake ListerWatcher answers at once, so this is the whole delay the
// reflector itself adds. kinformer's rule (docs/reflector.md): the backoff grows only with failures
// that made no progress and resets as soon as a watch delivers something.

type FakeScript = Parameters<Harness['lw']['enqueueWatch']>[0];

function requests(h: Harness): number {
  return h.lw.listCalls.length + h.lw.watchCalls.length;
}

/** Clock ms until the reflector sends its next request, firing timers one by one (bounded). */
async function behindFor(h: Harness, before = requests(h)): Promise<number> {
  const start = h.clock.now();
  for (let step = 0; step < 500; step++) {
    await flush();
    if (requests(h) > before) return h.clock.now() - start;
    if (!(await h.clock.tickToNext())) await flush();
  }
  throw new Error(`no request within ${h.clock.now() - start} ms of clock time`);
}

/** Starts a reflector whose first watch (from the LIST's version 1) is open and has delivered version 2. */
async function watching(h: Harness): Promise<Watch> {
  const w = await h.startWatching(podList('1'));
  w.add(pod('a', '2'));
  await h.lw.waitFor(() => h.store.ops.length === 2, 'the first event');
  return w;
}

describe('Reflector freshness: how long the cache stays behind after each fault', () => {
  // Faults after the watch delivered (up to version 2) that rewatch from there, never relisting.
  it.each([
    [
      'a watch connection that breaks after delivering: resumed at once (0 ms)',
      (w: Watch) => w.breakConnection(),
      0,
    ],
    ['a watch the server ends cleanly: resumed at once (0 ms)', (w: Watch) => w.close(), 0],
    [
      'a malformed line after progress: resumed from the last good version after 100 ms',
      (w: Watch) => w.malformed(),
      100,
    ],
    [
      "429 with Retry-After: waits exactly the server's Retry-After when it is longer than the step",
      (w: Watch) => w.error(tooManyRequests(2)),
      2000,
    ],
  ])('%s', async (_name, fault, behindMs) => {
    const h = harness();
    const w = await watching(h);
    const before = requests(h);
    fault(w);
    expect(await behindFor(h, before)).toBe(behindMs);
    expect(h.lw.watchCalls.at(-1)?.resourceVersion).toBe('2');
    expect(h.lw.listCalls).toHaveLength(1); // a rewatch, never a relist
    await h.stop();
  });

  // A 410 after the watch delivered something since the LIST relists at once (before: one first step,
  // 100–200 ms, as client-go waits one step before every relist); a 410 before the watch delivered
  // anything still waits that step, so a server that expires every watch sees the backoff grow.
  it.each([
    ['after the watch delivered: relisted at once (0 ms, whatever the jitter)', true, 0, 0],
    [
      'before the watch delivered anything: relisted after one first step (100 ms; < 200 ms with jitter)',
      false,
      100,
      200,
    ],
  ])('410 Gone %s', async (_name, delivered, behindMs, belowWithJitterMs) => {
    for (const random of [() => 0, () => 0.999999]) {
      const clock = new FakeClock(1_000_000);
      const h = harness({ clock, backoff: reflectorBackoff(clock, random) });
      const w = await h.startWatching(podList('1'), podList('5', [pod('b', '5')]));
      if (delivered) {
        w.add(pod('a', '2'));
        await h.lw.waitFor(() => h.store.ops.length === 2, 'the first event');
      }
      const before = requests(h);
      w.error(expiredError());
      const behind = await behindFor(h, before);
      if (random() === 0) expect(behind).toBe(behindMs);
      else {
        expect(behind).toBeGreaterThanOrEqual(behindMs);
        expect(behind).toBeLessThanOrEqual(belowWithJitterMs);
      }
      expect(h.lw.listCalls).toHaveLength(2);
      // The relist brings the store up to date without another wait (the fake server answers at once).
      const relistedAt = clock.now();
      await h.lw.waitFor(() => h.store.replaces.length === 2, 'the relist');
      expect(clock.now() - relistedAt).toBe(0);
      expect(h.store.contents()).toEqual(['b@5']);
      expect(h.reflector.stats().expired410).toBe(1);
      await h.stop();
    }
  });

  it('a burst of faults, each after the watch delivered: a 410 waits nothing, the others the first step, none grows', async () => {
    // The issue this fixes: client-go's shared backoff (800 ms → 30 s, reset every 2 min) made each
    // later fault of a burst wait longer, tens of seconds after 10 faults.
    const h = harness({}, {});
    h.lw.enqueueList(podList('1'));
    void h.start();
    const waits: number[] = [];
    for (let i = 0; i < 12; i++) {
      const w = await h.lw.nextWatch();
      w.add(pod(`p${i}`, String(100 + i * 10)));
      await h.lw.waitFor(() => h.reflector.lastSyncResourceVersion() === String(100 + i * 10), 'event');
      const before = requests(h);
      if (i % 3 === 0) {
        h.lw.enqueueList(podList(String(100 + i * 10 + 1)));
        w.error(expiredError());
      } else if (i % 3 === 1) {
        w.malformed();
      } else {
        w.error(tooManyRequests());
      }
      waits.push(await behindFor(h, before));
    }
    expect(waits).toEqual([0, 100, 100, 0, 100, 100, 0, 100, 100, 0, 100, 100]);
    await h.stop();
  });

  it('with full jitter the first step stays under 200 ms', async () => {
    const clock = new FakeClock(1_000_000);
    const h = harness({ clock, backoff: reflectorBackoff(clock, () => 0.999999) });
    const w = await watching(h);
    const before = requests(h);
    w.malformed();
    const behind = await behindFor(h, before);
    expect(behind).toBeGreaterThanOrEqual(100);
    expect(behind).toBeLessThan(200);
    await h.stop();
  });

  it('500 at watch start after a successful LIST: rewatched from the list version after 100 ms', async () => {
    const h = harness();
    h.lw.enqueueList(podList('1'), podList('2'));
    h.lw.enqueueWatch(KinformerError.fromStatus(internalStatus()));
    void h.start();
    await h.lw.waitFor(() => h.lw.watchCalls.length === 1, 'first watch');
    expect(await behindFor(h)).toBe(100);
    expect(h.lw.listCalls).toHaveLength(1);
    expect(h.lw.watchCalls.map((c) => c.resourceVersion)).toEqual(['1', '1']);
    await h.stop();
  });

  it('a stalled watch on a server that has shown its bookmark cadence: restarted three cadences after it went silent', async () => {
    const h = harness();
    const w = await watching(h);
    for (let i = 0; i < 3; i++) {
      await h.clock.tick(1000);
      w.bookmark(String(10 + i));
      await h.lw.waitFor(() => h.store.bookmarks.length === i + 1, 'bookmark');
    }
    expect(h.reflector.bookmarkCadenceMs()).toBe(1000);
    const before = requests(h);
    // The server goes silent (no events, no bookmarks, the socket stays open).
    expect(await behindFor(h, before)).toBe(3000);
    expect(h.reflector.stats().stalls).toBe(1);
    expect(h.lw.watchCalls.at(-1)?.resourceVersion).toBe('12');
    await h.stop();
  });

  it('a stalled watch where no cadence is known: restarted after its timeoutSeconds plus the 30 s margin', async () => {
    const h = harness();
    await watching(h);
    const timeoutSeconds = h.lw.watchCalls[0]?.timeoutSeconds ?? 0;
    expect(timeoutSeconds).toBe(300);
    expect(await behindFor(h)).toBe(330_000);
    await h.stop();
  });

  it('a server restart (every request refused for 10 s): back within one 150 ms step after it answers again', async () => {
    // Before STORM_RETRY the steps doubled through the outage: up to 10 s behind after it ended.
    const { behindAfterRecovery, failures } = await outage({ outageMs: 10_000, random: () => 0 });
    expect(behindAfterRecovery).toBeGreaterThanOrEqual(0);
    expect(behindAfterRecovery).toBeLessThanOrEqual(150);
    expect(failures).toBeGreaterThanOrEqual(60);
  });

  it('a storm (every request fails for 8 s) with full jitter: back less than 300 ms after it ends', async () => {
    const { behindAfterRecovery } = await outage({ outageMs: 8_000, random: () => 0.999999 });
    expect(behindAfterRecovery).toBeLessThan(300);
  });
});

describe('Reflector freshness: protecting a server that keeps failing', () => {
  it('a server that fails every LIST sees the backoff grow to its 30 s cap: 136 requests in 10 minutes, 2 in the second', async () => {
    // Before STORM_RETRY: 28 requests in 10 minutes (100 ms doubling to 30 s). The others are all in
    // the first minute (up to seven a second for the first 12 s, fewer as the limit doubles every 5 s);
    // from the second minute on the server sees what it saw before, one request per 30 s (30–60 s with
    // jitter). Without jitter (random 0) these are the most requests the policy can send.
    const h = harness();
    for (let i = 0; i < 200; i++)
      h.lw.enqueueList(new KinformerError(ErrorCodes.SERVICE_UNAVAILABLE, 'down'));
    const at: number[] = [];
    const lw = h.lw;
    const list = lw.list.bind(lw);
    lw.list = (options, context) => {
      at.push(h.clock.now());
      return list(options, context);
    };
    void h.start();
    await h.lw.waitFor(() => h.lw.listCalls.length === 1, 'first list');
    const start = h.clock.now();
    while (h.clock.now() - start < 600_000) {
      if (!(await h.clock.tickToNext())) await flush();
      await flush();
    }
    expect(h.lw.listCalls).toHaveLength(136);
    expect(at.filter((t) => t - start >= 60_000 && t - start < 120_000)).toHaveLength(2);
    expect(h.backoff.delays.slice(-3)).toEqual([30_000, 30_000, 30_000]);
    await h.stop();
  });

  it('LISTs that work and watches that fail at once do not reset the backoff: no relist storm', async () => {
    const h = harness();
    for (let i = 0; i < 200; i++) {
      h.lw.enqueueList(podList(String(i + 1)));
      h.lw.enqueueWatch(KinformerError.fromStatus(internalStatus()));
    }
    void h.start();
    const start = h.clock.now();
    let listsIn12s = 0;
    for (let i = 1; i <= 120; i++) {
      await h.backoffCalls(i);
      if (h.clock.now() - start <= 12_000) listsIn12s = h.lw.listCalls.length;
      await h.clock.tick(h.backoff.delays[i - 1]);
    }
    // The same growth as a server that fails everything: the cap from 51 s on.
    expect(h.backoff.delays.slice(0, 120)).toEqual([
      100,
      ...Array<number>(80).fill(150),
      ...Array<number>(17).fill(300),
      ...Array<number>(9).fill(600),
      ...Array<number>(4).fill(1200),
      ...[2400, 2400, 4800, 4800, 9600],
      ...Array<number>(4).fill(30_000),
    ]);
    // For the first 12 s a 500 at watch start rewatches from the list's version; after that each one
    // relists, as in client-go (the store is refreshed by every LIST that works).
    expect(listsIn12s).toBe(1);
    expect(h.lw.listCalls.length).toBeGreaterThan(30);
    await h.stop();
  });

  it.each([
    ['answered 410 at once', (): FakeScript => expiredError()],
    ['ended by an ERROR 410 before their first event', (): FakeScript => ({ then: expiredError() })],
  ])(
    'LISTs that work and watches %s: no relist storm, the backoff grows as for failures',
    async (_name, script) => {
      // A 410 relists at once only after progress; a watch that delivered nothing is none.
      const h = harness();
      for (let i = 0; i < 200; i++) {
        h.lw.enqueueList(podList(String(i + 1)));
        h.lw.enqueueWatch(script());
      }
      void h.start();
      await h.waitOutBackoffs(100);
      expect(h.backoff.delays.slice(0, 100)).toEqual([
        100,
        ...Array<number>(80).fill(150),
        ...Array<number>(17).fill(300),
        600,
        600,
      ]);
      expect(h.lw.listCalls.length).toBeLessThanOrEqual(101);
      await h.stop();
    },
  );

  it('watches that close at once without events (very short watches) back off like failures', async () => {
    const h = harness();
    for (let i = 0; i < 6; i++) {
      h.lw.enqueueList(podList(String(i + 1)));
      h.lw.enqueueWatch({ then: 'close' });
    }
    void h.start();
    await h.waitOutBackoffs(5);
    expect(h.backoff.delays.slice(0, 5)).toEqual([100, 150, 150, 150, 150]);
    expect(h.reflector.stats().veryShortWatches).toBeGreaterThanOrEqual(5);
    await h.stop();
  });
});

describe('RecoveryPolicy and BookmarkCadence', () => {
  it('counts failures until progress, then starts again from the first step', async () => {
    const clock = new FakeClock();
    const policy = reflectorRecovery(undefined, clock, () => 0);
    expect([policy.failed(0), policy.failed(0), policy.failed(0)]).toEqual([100, 150, 150]);
    expect(policy.failures()).toBe(3);
    await clock.tick(700);
    expect(policy.watchDelivered()).toEqual({ failures: 3, failingForMs: 700 });
    expect(policy.failures()).toBe(0);
    expect(policy.watchDelivered()).toBeUndefined();
    expect(policy.failed(5000)).toBe(5000); // Retry-After is a floor
    expect(policy.failed(0)).toBe(150);
  });

  it('the default policy keeps one streak: the cap follows the time since its first failure and starts over after progress', async () => {
    const clock = new FakeClock();
    const policy = reflectorRecovery(undefined, clock, () => 0);
    const waitsUntil = async (ms: number): Promise<number[]> => {
      const waits: number[] = [];
      for (const end = clock.now() + ms; clock.now() < end;) {
        const d = policy.failed(0);
        waits.push(d);
        await clock.tick(d);
      }
      return waits;
    };
    const young = await waitsUntil(11_900); // 100 ms, then 150 ms steps: 11.95 s
    expect(young[0]).toBe(100);
    expect(new Set(young.slice(1))).toEqual(new Set([150]));
    expect(policy.streakIsYoung()).toBe(true);
    await clock.tick(100); // 12.05 s into the streak
    expect(policy.streakIsYoung()).toBe(false);
    expect(policy.failed(0)).toBe(300);
    expect(policy.watchDelivered()?.failures).toBe(young.length + 1);
    expect(policy.streakIsYoung()).toBe(true);
    expect([policy.failed(0), policy.failed(0)]).toEqual([100, 150]);
  });

  it('a LIST after a watch that delivered nothing is not progress', () => {
    const clock = new FakeClock();
    const policy = reflectorRecovery(undefined, clock, () => 0);
    expect(policy.listSucceeded()).toBeUndefined();
    policy.failed(0); // the watch failed at once
    policy.cycleEnded();
    expect(policy.listSucceeded()).toBeUndefined();
    expect(policy.failures()).toBe(1);
    expect(policy.failed(0)).toBe(150);
  });

  it('knows no cadence before two gaps, then uses the largest of the last four', () => {
    const cadence = new BookmarkCadence();
    expect(cadence.stallLimitMs(330_000)).toBe(330_000);
    cadence.observe(60_000);
    expect(cadence.cadenceMs()).toBeUndefined();
    cadence.observe(58_000);
    expect(cadence.cadenceMs()).toBe(60_000);
    expect(cadence.stallLimitMs(330_000)).toBe(180_000);
    for (const gap of [1000, 1000, 1000, 1000]) cadence.observe(gap);
    expect(cadence.stallLimitMs(330_000)).toBe(3000);
    expect(cadence.stallLimitMs(2500)).toBe(2500); // never beyond the timeout-based limit
    for (const gap of [10, 10, 10, 10]) cadence.observe(gap);
    expect(cadence.stallLimitMs(330_000)).toBe(1000); // never below 1 s
  });
});
