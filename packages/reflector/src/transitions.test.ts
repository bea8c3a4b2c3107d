import { KinformerError } from '@kinformer/core';
import { FakeClock, flush } from '@kinformer/core/testing';
import { reflectorBackoff } from './recovery.js';
import type { ReflectorStats } from './reflectorOptions.js';
import {
  connectionRefused,
  expiredError,
  expiredStatus,
  forbidden,
  harness,
  type Harness,
  type Watch,
  internalStatus,
  outage,
  pod,
  podList,
  status,
  tooManyRequests,
} from './reflector.test.helpers.js';
import { decide, TRANSITIONS, type Outcome, type PhaseKind } from './transitions.js';

// The transition table (transitions.ts), one row per outcome, driven through a real reflector: the fault,
// the request that follows, how long after (fake clock; the default backoff's first step is 100 ms
// without jitter), the counter and whether the watchErrorHandler saw it. Each row also checks that the
// table says the same (`decide`), so the table, the behaviour and docs/reflector.md cannot drift apart.

interface Row {
  outcome: Outcome;
  phase: PhaseKind;
  /** Sets up the reflector and causes the fault; resolves once the fault happened. */
  cause: (h: Harness) => Promise<void>;
  next: 'list' | 'watch';
  waitMs: number;
  counter?: keyof ReflectorStats;
  reported: boolean;
  options?: Parameters<typeof harness>[0];
}

function requests(h: Harness): number {
  return h.lw.listCalls.length + h.lw.watchCalls.length;
}

/** Lists, opens the first watch and lets it deliver one event; then `fault` ends it. */
function afterProgress(fault: (w: Watch) => void): (h: Harness) => Promise<void> {
  return async (h) => {
    const w = await h.startWatching(podList('1'), podList('9'));
    w.add(pod('a', '2'));
    await h.lw.waitFor(() => h.store.ops.length === 2, 'the first event');
    fault(w);
  };
}

/** Holds the answer to the `n`-th watch request until the returned function is called. */
function holdWatch(h: Harness, n: number): () => void {
  let answer = (): void => undefined;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  const watch = h.lw.watch.bind(h.lw);
  h.lw.watch = (options, context) => {
    const result = watch(options, context);
    result.catch(() => undefined);
    return h.lw.watchCalls.length === n ? answered.then(() => result) : result;
  };
  return answer;
}

/** Lists; the first watch request is answered 500 (a streak of failures begins); the rewatch follows its step. */
async function afterA500AtWatchStart(h: Harness, ...rewatch: Parameters<Harness['lw']['enqueueWatch']>) {
  h.lw.enqueueList(podList('1'), podList('9'));
  h.lw.enqueueWatch(KinformerError.fromStatus(internalStatus()), ...rewatch);
  void h.start();
  await h.waitOutBackoffs(1);
  await h.lw.waitFor(() => h.lw.watchCalls.length === 2, 'the rewatch');
}

/** Lists, then the first watch request fails with `err`. */
function atWatchStart(err: KinformerError): (h: Harness) => Promise<void> {
  return async (h) => {
    h.lw.enqueueList(podList('1'), podList('9'));
    h.lw.enqueueWatch(err);
    void h.start();
    await h.lw.waitFor(() => h.lw.watchCalls.length === 1, 'the first watch');
  };
}

const ROWS: Row[] = [
  {
    outcome: 'list-failed',
    phase: 'list',
    cause: async (h) => {
      h.lw.enqueueList(KinformerError.fromStatus(status(503, 'ServiceUnavailable', 'down')), podList('1'));
      void h.start();
      await h.lw.waitFor(() => h.lw.listCalls.length === 1, 'the first list');
    },
    next: 'list',
    waitMs: 100,
    reported: true,
  },
  {
    outcome: 'start-failed',
    phase: 'watch',
    cause: atWatchStart(forbidden()),
    next: 'list',
    waitMs: 100,
    reported: true,
  },
  {
    outcome: 'start-unavailable',
    phase: 'watch',
    cause: atWatchStart(KinformerError.fromStatus(internalStatus())),
    next: 'watch',
    waitMs: 100,
    reported: true,
  },
  {
    outcome: 'start-expired',
    phase: 'watch',
    cause: atWatchStart(expiredError()),
    next: 'list',
    waitMs: 100,
    counter: 'expired410',
    reported: true,
  },
  {
    outcome: 'start-expired-after-progress',
    phase: 'watch',
    cause: async (h) => {
      // The first watch delivers and ends cleanly; the rewatch is answered 410 once the test lets it.
      h.lw.enqueueWatch({}, expiredError());
      const answer = holdWatch(h, 2);
      await afterProgress((w) => w.close())(h);
      await h.lw.waitFor(() => h.lw.watchCalls.length === 2, 'the rewatch');
      answer();
    },
    next: 'list',
    waitMs: 0,
    counter: 'expired410',
    reported: true,
  },
  {
    // The first 410 of a streak of other failures: the server answers again, and the version is gone.
    outcome: 'start-expired-after-outage',
    phase: 'watch',
    cause: async (h) => {
      const answer = holdWatch(h, 2);
      await afterA500AtWatchStart(h, expiredError());
      h.handled.length = 0; // the 500 was reported; so is the 410
      answer();
    },
    next: 'list',
    waitMs: 0,
    counter: 'expired410',
    reported: true,
  },
  {
    outcome: 'start-unreachable',
    phase: 'watch',
    cause: atWatchStart(connectionRefused()),
    next: 'watch',
    waitMs: 100,
    reported: true,
  },
  {
    outcome: 'start-throttled',
    phase: 'watch',
    cause: atWatchStart(tooManyRequests()),
    next: 'watch',
    waitMs: 100,
    reported: false,
  },
  {
    outcome: 'ended',
    phase: 'watch',
    cause: afterProgress((w) => w.close()),
    next: 'watch',
    waitMs: 0,
    reported: false,
  },
  {
    outcome: 'ended',
    phase: 'watch',
    cause: afterProgress((w) => w.breakConnection()),
    next: 'watch',
    waitMs: 0,
    reported: false,
  },
  {
    outcome: 'expired-after-progress',
    phase: 'watch',
    cause: afterProgress((w) => w.error(expiredStatus())),
    next: 'list',
    waitMs: 0,
    counter: 'expired410',
    reported: false,
  },
  {
    outcome: 'expired',
    phase: 'watch',
    cause: async (h) => {
      const w = await h.startWatching(podList('1'), podList('9'));
      w.error(expiredStatus()); // before the watch delivered anything
    },
    next: 'list',
    waitMs: 100,
    counter: 'expired410',
    reported: false,
  },
  {
    outcome: 'expired-after-outage',
    phase: 'watch',
    cause: async (h) => {
      await afterA500AtWatchStart(h);
      const w = await h.lw.nextWatch();
      h.handled.length = 0; // the 500 was reported; the 410 is not
      w.error(expiredStatus()); // before the rewatch delivered anything
    },
    next: 'list',
    waitMs: 0,
    counter: 'expired410',
    reported: false,
  },
  {
    outcome: 'throttled',
    phase: 'watch',
    cause: afterProgress((w) => w.error(tooManyRequests())),
    next: 'watch',
    waitMs: 100,
    reported: false,
  },
  {
    outcome: 'malformed',
    phase: 'watch',
    cause: afterProgress((w) => w.malformed()),
    next: 'watch',
    waitMs: 100,
    counter: 'malformed',
    reported: false,
  },
  {
    outcome: 'internal-retry',
    phase: 'watch',
    cause: afterProgress((w) => w.error(internalStatus())),
    next: 'watch',
    waitMs: 0,
    reported: false,
    options: { maxInternalErrorRetryDurationMs: 10_000 },
  },
  {
    outcome: 'failed',
    phase: 'watch',
    cause: afterProgress((w) => w.error(internalStatus())),
    next: 'list',
    waitMs: 100,
    reported: false,
  },
  {
    outcome: 'very-short',
    phase: 'watch',
    cause: async (h) => {
      h.lw.enqueueList(podList('1'), podList('9'));
      h.lw.enqueueWatch({ then: 'close' });
      void h.start();
      await h.lw.waitFor(() => h.lw.watchCalls.length === 1, 'the first watch');
    },
    next: 'list',
    waitMs: 100,
    counter: 'veryShortWatches',
    reported: false,
  },
];

describe('the transition table, row by row, through a reflector', () => {
  it.each(ROWS.map((r) => [r.outcome, r] as const))('%s', async (_name, row) => {
    const t = decide(row.phase, row.outcome);
    expect({ next: t.next === 'relist' || t.next === 'list' ? 'list' : 'watch', report: t.report }).toEqual({
      next: row.next,
      report: row.reported,
    });
    expect(t.wait).toBe(row.waitMs > 0 ? 'step' : 'none');
    expect(t.counter).toBe(row.counter);

    const h = harness(row.options ?? {});
    await row.cause(h);
    const before = { lists: h.lw.listCalls.length, watches: h.lw.watchCalls.length };
    const start = h.clock.now();
    const n = requests(h);
    for (let i = 0; i < 50 && requests(h) === n; i++) {
      await flush();
      if (requests(h) === n && !(await h.clock.tickToNext())) await flush();
    }
    expect(h.clock.now() - start).toBe(row.waitMs);
    expect(h.lw.listCalls.length - before.lists).toBe(row.next === 'list' ? 1 : 0);
    // After a relist the watch follows at once; after a rewatch no LIST is sent.
    if (row.next === 'watch') expect(h.lw.watchCalls.length - before.watches).toBe(1);
    if (row.counter !== undefined) expect(h.reflector.stats()[row.counter]).toBeGreaterThan(0);
    expect(h.handled.length > 0).toBe(row.reported);
    await h.stop();
  });

  it('has a row for every outcome, and each outcome belongs to one phase', () => {
    for (const [outcome, t] of Object.entries(TRANSITIONS)) {
      expect(decide(t.from, outcome as Outcome)).toBe(t);
      for (const other of ['list', 'stream', 'watch'] as const)
        if (other !== t.from) expect(() => decide(other, outcome as Outcome)).toThrow(/cannot end phase/);
    }
  });

  it('waits one step before every relist but a 410 after progress or an outage, and never after progress', () => {
    for (const [outcome, t] of Object.entries(TRANSITIONS)) {
      // client-go waits before every return to ListAndWatch; kinformer not after a 410 that follows
      // progress, nor after the first 410 that ends a streak of other failures.
      const atOnce = outcome.endsWith('-after-progress') || outcome.endsWith('-after-outage');
      if (t.next === 'relist') expect(t.wait).toBe(atOnce ? 'none' : 'step');
      if (t.progress) expect(t.wait).toBe('none');
    }
  });
});

// How long the cache stays behind after an outage (docs/reflector.md, "Backoff"): the reflector's first
// watch delivered, then the server fails every request for `outageMs`; the time from the end of the
// outage to the next request (the fake server answers at once), without jitter (random 0, the shortest
// waits, so the most requests) and with the longest jitter. The wait limit while a streak is young
// (STORM_RETRY): 150 ms for 12 s, then doubling every 5 s; each wait in [limit, 2·limit), at least the
// server's Retry-After.
const connectionRefusedError = connectionRefused;
const internalError = (): KinformerError => KinformerError.fromStatus(internalStatus());
const unavailable = (): KinformerError =>
  KinformerError.fromStatus(status(503, 'ServiceUnavailable', 'down', { retryAfterSeconds: 1 }));

interface OutageRow {
  fault: string;
  outageMs: number;
  error: () => KinformerError;
  failLists: boolean;
  /** Behind after the outage without jitter, ms. */
  behindMs: number;
  /** Behind after the outage with the longest jitter stays below this: 2 × the limit when it ended. */
  behindBelowMs: number;
  /** LISTs sent during the outage without jitter (the rest are rewatches). */
  lists: number;
}

const OUTAGES: OutageRow[] = [
  {
    fault: 'connection refused, 5 s',
    outageMs: 5_000,
    error: connectionRefusedError,
    failLists: false,
    behindMs: 50,
    behindBelowMs: 300,
    lists: 0,
  },
  {
    fault: 'connection refused, 10 s',
    outageMs: 10_000,
    error: connectionRefusedError,
    failLists: false,
    behindMs: 0,
    behindBelowMs: 300,
    lists: 0,
  },
  {
    fault: 'connection refused, 20 s',
    outageMs: 20_000,
    error: connectionRefusedError,
    failLists: false,
    behindMs: 200,
    behindBelowMs: 1_200,
    lists: 0,
  },
  {
    fault: 'connection refused, 40 s',
    outageMs: 40_000,
    error: connectionRefusedError,
    failLists: false,
    behindMs: 1_800,
    behindBelowMs: 19_200,
    lists: 0,
  },
  {
    fault: '500 on every LIST and WATCH, 10 s',
    outageMs: 10_000,
    error: internalError,
    failLists: true,
    behindMs: 0,
    behindBelowMs: 300,
    lists: 0,
  },
  {
    fault: '500 on every LIST and WATCH, 20 s',
    outageMs: 20_000,
    error: internalError,
    failLists: true,
    behindMs: 200,
    behindBelowMs: 1_200,
    lists: 11,
  },
  {
    fault: '503 with Retry-After: 1, 10 s',
    outageMs: 10_000,
    error: unavailable,
    failLists: true,
    behindMs: 0,
    behindBelowMs: 1,
    lists: 0,
  },
];

describe('how long the cache stays behind after an outage (fake clock)', () => {
  it.each(OUTAGES.map((r) => [r.fault, r] as const))('%s', async (_name, row) => {
    const shortest = await outage({ ...row, random: () => 0 });
    expect(shortest.behindAfterRecovery).toBe(row.behindMs);
    expect(shortest.lists).toBe(row.lists);
    const longest = await outage({ ...row, random: () => 0.999999 });
    expect(longest.behindAfterRecovery).toBeGreaterThanOrEqual(0);
    expect(longest.behindAfterRecovery).toBeLessThan(row.behindBelowMs);
    // No wait is shorter than the server's Retry-After, nor (after the first) than the limit's 150 ms.
    for (const d of shortest.delays.slice(1)) expect(d).toBeGreaterThanOrEqual(150);
  });

  it('a 5xx at watch start rewatches for the first 12 s of a streak; after that LIST and WATCH take turns', async () => {
    const { lists, watches } = await outage({
      outageMs: 20_000,
      error: internalError,
      failLists: true,
      random: () => 0,
    });
    // 12 s of rewatches at 150 ms (81 of them), then 8 s in which each failed watch relists and each
    // failed LIST rewatches.
    expect(watches - lists).toBe(81);
    expect(lists).toBe(11);
  });
});

// How long the cache stays behind when an outage ends in a 410 (docs/reflector.md, "Backoff"): the LIST
// worked, but its watch was refused before it delivered anything, and the outage began; when the server
// answers again, the version it is asked for is gone (its history moved on). The first 410 of that
// streak relists at once (`*-after-outage`): the cache then stays behind only for the wait that was in
// progress when the server recovered. Before, that 410 waited one more step — at the cap after a long
// outage, 30–60 s (bench:freshness fail-all: the cache caught up 36–55 s after the server did).
interface ExpiredOutageRow {
  fault: string;
  outageMs: number;
  error: () => KinformerError;
  failLists: boolean;
  /** Where the first watch after the outage meets the 410. */
  at: 'watch start' | 'stream';
  /** The wait in progress when the server recovered stays below this (2 × the limit then, ms). */
  behindBelowMs: number;
}

const EXPIRED_OUTAGES: ExpiredOutageRow[] = [
  {
    fault: '500 on every LIST and WATCH for 5 minutes, then 410 in the stream',
    outageMs: 300_000,
    error: internalError,
    failLists: true,
    at: 'stream',
    behindBelowMs: 60_000,
  },
  {
    fault: '500 on every LIST and WATCH for 5 minutes, then 410 to the watch request',
    outageMs: 300_000,
    error: internalError,
    failLists: true,
    at: 'watch start',
    behindBelowMs: 60_000,
  },
  {
    fault: 'watches refused for 60 s (LISTs work), then 410 in the stream',
    outageMs: 60_000,
    error: connectionRefusedError,
    failLists: false,
    at: 'stream',
    behindBelowMs: 60_000,
  },
  {
    fault: '503 with Retry-After: 1 on every LIST and WATCH for 10 s, then 410 in the stream',
    outageMs: 10_000,
    error: unavailable,
    failLists: true,
    at: 'stream',
    behindBelowMs: 1_000,
  },
];

describe('how long the cache stays behind when an outage ends in a 410 (fake clock)', () => {
  it.each(EXPIRED_OUTAGES.map((r) => [r.fault, r] as const))('%s: relisted at once', async (_name, row) => {
    for (const random of [() => 0, () => 0.999999]) {
      const clock = new FakeClock(1_000_000);
      let outageEnd = Number.POSITIVE_INFINITY;
      const down = (): boolean => clock.now() < outageEnd;
      // Every LIST during the outage (if it works) sees version 1; after it, version 7 with one new pod.
      const h = harness(
        { clock, backoff: reflectorBackoff(clock, random) },
        { list: () => (down() ? podList('1') : podList('7', [pod('b', '7')])) },
      );
      const { list, watch } = { list: h.lw.list.bind(h.lw), watch: h.lw.watch.bind(h.lw) };
      const sent: Array<{ verb: 'list' | 'watch'; at: number }> = [];
      h.lw.list = (options, context) => {
        if (outageEnd === Number.POSITIVE_INFINITY)
          outageEnd = clock.now() + row.outageMs; // the first LIST works
        else if (down() && row.failLists) return Promise.reject(row.error());
        if (!down()) sent.push({ verb: 'list', at: clock.now() });
        return list(options, context);
      };
      h.lw.watch = (options, context) => {
        if (down()) return Promise.reject(row.error());
        sent.push({ verb: 'watch', at: clock.now() });
        return watch(options, context);
      };
      // The first watch the server answers after the outage is at a version it no longer has.
      h.lw.enqueueWatch(row.at === 'stream' ? { then: expiredError() } : expiredError());
      void h.start();
      while (down()) {
        if (!(await clock.tickToNext())) await flush();
        await flush();
      }
      // The first request after the outage may be the LIST (LIST and WATCH take turns once a streak of
      // 5xx is 12 s old) or the watch; either way the LIST after the watch's 410 goes at once.
      const expiredAt = (): number => sent.findIndex((r) => r.verb === 'watch');
      await h.lw.waitFor(
        () => expiredAt() >= 0 && sent.length > expiredAt() + 1,
        'the request after the 410',
      );
      expect(sent[0]!.at - outageEnd).toBeGreaterThanOrEqual(0);
      expect(sent[0]!.at - outageEnd).toBeLessThan(row.behindBelowMs);
      expect(sent[expiredAt() + 1]).toEqual({ verb: 'list', at: sent[expiredAt()]!.at });
      await h.lw.waitFor(() => h.store.contents().join() === 'b@7', 'the relist');
      expect(clock.now()).toBe(sent[expiredAt()]!.at);
      expect(h.reflector.stats().expired410).toBe(1);
      await h.stop();
    }
  });

  it('a second 410 before any delivery in the same streak waits a step: a server that expires every watch sees the backoff grow', async () => {
    const h = harness();
    h.lw.enqueueList(podList('1'), podList('2'), podList('3'));
    h.lw.enqueueWatch(KinformerError.fromStatus(internalStatus()), expiredError(), expiredError());
    void h.start();
    await h.waitOutBackoffs(1); // the 500's step; then the 410 relists at once
    await h.lw.waitFor(() => h.lw.watchCalls.length === 3, 'the watch after the relist');
    await h.lw.waitFor(() => h.backoff.delays.length === 2, 'the second 410 is a failure');
    expect(h.lw.listCalls).toHaveLength(2); // no LIST before its step
    await h.clock.tick(h.backoff.delays[1]);
    await h.lw.waitFor(() => h.lw.listCalls.length === 3, 'the relist after the step');
    await h.stop();
  });
});
