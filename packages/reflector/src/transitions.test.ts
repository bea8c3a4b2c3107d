import { KinformerError } from '@kinformer/core';
import { flush } from '@kinformer/core/testing';
import type { ReflectorStats } from './reflectorOptions.js';
import {
  connectionRefused,
  expiredError,
  expiredStatus,
  forbidden,
  harness,
  internalStatus,
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

type H = ReturnType<typeof harness>;

interface Row {
  outcome: Outcome;
  phase: PhaseKind;
  /** Sets up the reflector and causes the fault; resolves once the fault happened. */
  cause: (h: H) => Promise<void>;
  next: 'list' | 'watch';
  waitMs: number;
  counter?: keyof ReflectorStats;
  reported: boolean;
  options?: Parameters<typeof harness>[0];
}

function requests(h: H): number {
  return h.lw.listCalls.length + h.lw.watchCalls.length;
}

/** Lists, opens the first watch and lets it deliver one event; then `fault` ends it. */
function afterProgress(
  fault: (w: Awaited<ReturnType<H['lw']['nextWatch']>>) => void,
): (h: H) => Promise<void> {
  return async (h) => {
    h.lw.enqueueList(podList('1'), podList('9'));
    void h.start();
    const w = await h.lw.nextWatch();
    w.add(pod('a', '2'));
    await h.lw.waitFor(() => h.store.ops.length === 2, 'the first event');
    fault(w);
  };
}

/** Lists, then the first watch request fails with `err`. */
function atWatchStart(err: KinformerError): (h: H) => Promise<void> {
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
    outcome: 'start-expired',
    phase: 'watch',
    cause: atWatchStart(expiredError()),
    next: 'list',
    waitMs: 100,
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
    outcome: 'expired',
    phase: 'watch',
    cause: afterProgress((w) => w.error(expiredStatus())),
    next: 'list',
    waitMs: 100,
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

  it('fails and relists exactly where client-go does; waits only on failures', () => {
    for (const t of Object.values(TRANSITIONS)) {
      if (t.next === 'relist') expect(t.wait).toBe('step'); // every return from ListAndWatch waits
      if (t.progress) expect(t.wait).toBe('none');
    }
  });
});
