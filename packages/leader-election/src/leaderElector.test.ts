import { ErrorCodes, isKinformerError, KinformerError } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import { captureLogs, LeadershipRecorder } from '@kinformer/test-tools';
import type { CapturedLogs, LogLine } from '@kinformer/test-tools';
import { InMemoryLeaseStore } from './inMemoryLock.test.helpers.js';
import type { InMemoryLock } from './inMemoryLock.test.helpers.js';
import { LeaderElector } from './leaderElector.js';
import type { LeaderCallbacks, LeaderElectorOptions } from './leaderElector.js';
import type { LeaderElectionRecord } from './resourceLock.js';

// client-go: tools/leaderelection/leaderelection_test.go (TestTryAcquireOrRenew, TestLeaderElectionConfigValidation,
// TestReleaseLeaseLocks, TestFastPathLeaderElection, TestCheck), driven through `run` with a FakeClock.

const T0 = Date.parse('2026-01-01T00:00:00Z');
const SECOND = 1000;

const captureLogger = (): CapturedLogs => captureLogs('trace');

const errorLines = (lines: LogLine[]): LogLine[] => lines.filter((l) => l.level >= 50);

function heldBy(holderIdentity: string, overrides: Partial<LeaderElectionRecord> = {}): LeaderElectionRecord {
  return {
    holderIdentity,
    leaseDurationSeconds: 15,
    acquireTime: new Date(T0 - 60 * SECOND),
    renewTime: new Date(T0 - 30 * SECOND),
    leaderTransitions: 3,
    ...overrides,
  };
}

/** One candidate on a shared store, with its callbacks recorded (with the fake clock's time). */
class Candidate extends LeadershipRecorder {
  readonly elector: LeaderElector;
  readonly lock: InMemoryLock;
  done: Promise<void> | undefined;
  settled = false;
  failure: unknown;

  constructor(
    readonly clock: FakeClock,
    store: InMemoryLeaseStore,
    readonly identity: string,
    options: Partial<LeaderElectorOptions> = {},
    callbacks: Partial<LeaderCallbacks> = {},
  ) {
    super();
    this.lock = store.lock(identity);
    this.elector = new LeaderElector({
      lock: this.lock,
      clock,
      random: () => 0,
      callbacks: { ...this.recordingCallbacks(() => clock.now()), ...callbacks },
      ...options,
    });
  }

  start(): this {
    this.done = this.elector.run(this.controller.signal).then(
      () => {
        this.settled = true;
      },
      (err: unknown) => {
        this.settled = true;
        this.failure = err;
      },
    );
    return this;
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.clock.tick(0);
    await this.done;
  }
}

function setup(options: Partial<LeaderElectorOptions> = {}, callbacks: Partial<LeaderCallbacks> = {}) {
  const clock = new FakeClock(T0);
  const store = new InMemoryLeaseStore(() => clock.now());
  const { logger, lines } = captureLogger();
  const a = new Candidate(clock, store, 'a', { logger, ...options }, callbacks);
  return { clock, store, a, lines, logger };
}

/** {@link setup}, with `record` in the store if given, and candidate `a` started and through its first attempt. */
async function started(record?: LeaderElectionRecord, options: Partial<LeaderElectorOptions> = {}) {
  const env = setup(options);
  if (record !== undefined) env.store.write(record);
  env.a.start();
  await env.clock.tick(0);
  return env;
}

describe('LeaderElector: validation (TestLeaderElectionConfigValidation / NewLeaderElector)', () => {
  const store = new InMemoryLeaseStore();
  const callbacks: LeaderCallbacks = { onStartedLeading: () => undefined, onStoppedLeading: () => undefined };
  const base: LeaderElectorOptions = { lock: store.lock('a'), callbacks };
  const invalid = (options: Partial<LeaderElectorOptions> | Record<string, unknown>, message: string) => {
    let thrown: unknown;
    try {
      new LeaderElector({ ...base, ...options });
    } catch (err) {
      thrown = err;
    }
    expect(isKinformerError(thrown, ErrorCodes.INVALID_OPTION)).toBe(true);
    expect((thrown as Error).message).toBe(message);
  };

  test('the defaults (15 s / 10 s / 2 s) are valid', () => {
    expect(() => new LeaderElector(base)).not.toThrow();
  });

  test('leaseDuration must be greater than renewDeadline', () => {
    invalid(
      { leaseDurationMs: 10_000, renewDeadlineMs: 10_000 },
      'leaseDuration must be greater than renewDeadline',
    );
  });

  test('renewDeadline must be greater than 1.2 × retryPeriod', () => {
    invalid(
      { renewDeadlineMs: 2_400, retryPeriodMs: 2_000 },
      'renewDeadline must be greater than retryPeriod*JitterFactor',
    );
    expect(() => new LeaderElector({ ...base, renewDeadlineMs: 2_401, retryPeriodMs: 2_000 })).not.toThrow();
  });

  test('every duration must be greater than zero (and a number)', () => {
    invalid(
      { leaseDurationMs: 0, renewDeadlineMs: -2, retryPeriodMs: -10 },
      'leaseDuration must be greater than zero',
    );
    invalid(
      { leaseDurationMs: 15_000, renewDeadlineMs: 0, retryPeriodMs: -1 },
      'renewDeadline must be greater than zero',
    );
    invalid({ retryPeriodMs: 0 }, 'retryPeriod must be greater than zero');
    invalid({ retryPeriodMs: Number.NaN }, 'renewDeadline must be greater than retryPeriod*JitterFactor');
    invalid({ leaseDurationMs: Number.POSITIVE_INFINITY }, 'leaseDuration must be greater than zero');
  });

  test('onStartedLeading and onStoppedLeading are required', () => {
    invalid(
      { callbacks: { onStoppedLeading: () => undefined } },
      'OnStartedLeading callback must not be nil',
    );
    invalid(
      { callbacks: { onStartedLeading: () => undefined } },
      'OnStoppedLeading callback must not be nil',
    );
  });

  test('a lock with a non-empty identity is required', () => {
    invalid({ lock: undefined }, 'Lock must not be nil.');
    invalid({ lock: store.lock('') }, 'Lock identity is empty');
  });
});

describe('LeaderElector: acquiring (TestTryAcquireOrRenew)', () => {
  test('acquires a lease that does not exist by creating it, and starts leading with a live signal', async () => {
    const { store, a } = await started();
    expect(store.record).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: new Date(T0),
      renewTime: new Date(T0),
      leaderTransitions: 0,
    });
    expect(
      store
        .callsOf('a')
        .slice(0, 2)
        .map((c) => [c.op, c.outcome]),
    ).toEqual([
      ['get', 'not-found'],
      ['create', 'ok'],
    ]);
    expect(a.elector.isLeader()).toBe(true);
    expect(a.elector.getLeader()).toBe('a');
    expect(a.leading).toBe(true);
    expect(a.events).toEqual(['leader:a', 'started']);
    await a.stop();
  });

  test('acquires an unled lease (empty holder) at once, counting a transition', async () => {
    const { store, a } = await started(heldBy('', { leaderTransitions: 2 }));
    expect(a.leading).toBe(true);
    expect(store.record).toMatchObject({
      holderIdentity: 'a',
      leaderTransitions: 3,
      acquireTime: new Date(T0),
    });
    await a.stop();
  });

  test('does not acquire a lease held by another until it has seen it unchanged for leaseDuration, then takes over with transitions + 1', async () => {
    const { clock, store, a } = await started(heldBy('b'));
    expect(a.elector.isLeader()).toBe(false);
    expect(a.elector.getLeader()).toBe('b');
    await clock.tick(14 * SECOND); // attempts at +0 … +14 s: observed at +0, valid until +15 s
    expect(a.leading).toBe(false);
    expect(store.record?.holderIdentity).toBe('b');
    await clock.tick(2 * SECOND); // attempt at +16 s: expired
    expect(a.leading).toBe(true);
    expect(store.record).toMatchObject({
      holderIdentity: 'a',
      leaderTransitions: 4,
      acquireTime: new Date(T0 + 16 * SECOND),
    });
    expect(a.events).toEqual(['leader:b', 'leader:a', 'started']);
    await a.stop();
  });

  // The holder's renewTime is the holder's clock: a takeover waits one lease duration (15 s) from when
  // this candidate last saw the record change, whatever time the record says.
  test.each([
    {
      skew: 'far in the past does not allow an early takeover',
      renewTime: '2000-01-01T00:00:00Z',
      early: 14,
    },
    {
      skew: 'far in the future does not prevent a takeover once it stops changing',
      renewTime: '2100-01-01T00:00:00Z',
      early: undefined,
    },
  ])('clock skew: a holder renewTime $skew', async ({ renewTime, early }) => {
    const { clock, store, a } = setup();
    store.write(heldBy('b', { renewTime: new Date(Date.parse(renewTime)) }));
    a.start();
    if (early !== undefined) {
      await clock.tick(early * SECOND);
      expect(a.leading).toBe(false);
    }
    await clock.tick((16 - (early ?? 0)) * SECOND);
    expect(a.leading).toBe(true);
    expect(store.record?.holderIdentity).toBe('a');
    await a.stop();
  });

  test('a holder that keeps renewing is never overthrown: every observed change restarts the wait', async () => {
    const { clock, store, a } = await started(heldBy('b'));
    for (let t = 5; t <= 60; t += 5) {
      await clock.tick(5 * SECOND);
      store.write(heldBy('b', { renewTime: new Date(T0 + t * SECOND) }));
    }
    expect(a.leading).toBe(false);
    expect(a.elector.getLeader()).toBe('b');
    // b's last renewal was written at +60 s, right after a's attempt at +60 s; a sees it at +62 s,
    // so it is valid until +77 s: the attempt at +76 s fails, the one at +78 s takes over.
    await clock.tick(16 * SECOND);
    expect(a.leading).toBe(false);
    await clock.tick(2 * SECOND);
    expect(a.leading).toBe(true);
    expect(a.startedAt).toEqual([T0 + 78 * SECOND]);
    await a.stop();
  });

  test('only a change of the record counts: rewriting the same record does not extend the lease', async () => {
    const { clock, store, a } = setup();
    store.write(heldBy('b'));
    a.start();
    for (let t = 0; t < 16; t += 1) {
      store.write(heldBy('b')); // new version, same content
      await clock.tick(SECOND);
    }
    expect(a.leading).toBe(true);
    expect(store.record?.holderIdentity).toBe('a');
    await a.stop();
  });

  test('the acquire loop retries every retryPeriod × (1 + random × 1.2)', async () => {
    const { clock, store, a } = setup({ random: () => 0.5 });
    store.write(heldBy('b'));
    a.start();
    await clock.tick(10 * SECOND);
    expect(store.callsOf('a', 'get').map((c) => c.at - T0)).toEqual([0, 3200, 6400, 9600]);
    await a.stop();
  });

  test('a 409 on create is a lost race: logged at debug, not as an error, and retried', async () => {
    const { clock, store, a, lines } = setup();
    store.beforeNext('create', () => store.write(heldBy('b', { renewTime: new Date(T0) })));
    a.start();
    await clock.tick(0);
    expect(store.callsOf('a').map((c) => [c.op, c.outcome])).toEqual([
      ['get', 'not-found'],
      ['create', 'conflict'],
    ]);
    expect(a.leading).toBe(false);
    expect(errorLines(lines)).toEqual([]);
    expect(lines.some((l) => l.level === 20 && l.msg.includes('conflict'))).toBe(true);
    await clock.tick(2 * SECOND); // retried: now observes b's lease and waits for it
    expect(store.callsOf('a', 'get')).toHaveLength(2);
    expect(a.elector.getLeader()).toBe('b');
    await a.stop();
  });

  test('an error reading the lock is logged and retried; the candidate acquires once the lock answers again', async () => {
    const { clock, store, a, lines } = setup();
    store.failNext('get', { times: 2 });
    a.start();
    await clock.tick(0);
    expect(a.leading).toBe(false);
    expect(errorLines(lines).map((l) => l.msg)).toEqual(['error retrieving resource lock']);
    await clock.tick(4 * SECOND);
    expect(a.leading).toBe(true);
    await a.stop();
  });

  test('leaseDurationSeconds is written in whole seconds, rounded up', async () => {
    const { clock, store, a } = setup({
      leaseDurationMs: 2_500,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 1_000,
    });
    a.start();
    await clock.tick(0);
    expect(store.record?.leaseDurationSeconds).toBe(3);
    await a.stop();
  });
});

describe('LeaderElector: renewing and losing (TestFastPathLeaderElection, renew)', () => {
  test('the leader renews every retryPeriod on the fast path (update without get), keeping acquireTime and transitions', async () => {
    const { clock, store, a } = await started(heldBy('', { leaderTransitions: 5 }));
    const before = store.calls.length;
    await clock.tick(2 * SECOND);
    const calls = store.calls.slice(before);
    expect(calls.map((c) => [c.op, c.outcome])).toEqual([['update', 'ok']]);
    expect(store.record).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: new Date(T0),
      renewTime: new Date(T0 + 2 * SECOND),
      leaderTransitions: 6,
    });
    await clock.tick(10 * SECOND);
    expect(store.record?.renewTime).toEqual(new Date(T0 + 12 * SECOND));
    expect(store.record?.leaderTransitions).toBe(6);
    expect(a.leading).toBe(true);
    await a.stop();
  });

  test('a 409 on the fast path falls back to get + update and still renews, without an error log', async () => {
    const { clock, store, a, lines } = await started();
    store.touch(); // someone edits the object (a label), not the record
    const before = store.calls.length;
    await clock.tick(2 * SECOND);
    expect(store.calls.slice(before).map((c) => [c.op, c.outcome])).toEqual([
      ['update', 'conflict'],
      ['get', 'ok'],
      ['update', 'ok'],
    ]);
    expect(store.record?.renewTime).toEqual(new Date(T0 + 2 * SECOND));
    expect(a.leading).toBe(true);
    expect(errorLines(lines)).toEqual([]);
    await a.stop();
  });

  test('leadership is lost when renewals fail for renewDeadline: the leader signal aborts, onStoppedLeading is called once, run resolves', async () => {
    const { clock, store, a } = await started(); // acquired and renewed at T0; next renewal round at +2 s
    store.failNext('update', { times: Number.POSITIVE_INFINITY });
    store.failNext('get', { times: Number.POSITIVE_INFINITY });
    await clock.tick(2 * SECOND + 9_999); // round started at +2 s, deadline at +12 s
    expect(a.leading).toBe(true);
    expect(a.settled).toBe(false);
    await clock.tick(1);
    expect(a.leaderSignal?.aborted).toBe(true);
    expect(isKinformerError(a.leaderSignal?.reason, ErrorCodes.LEADER_ELECTION)).toBe(true);
    expect(a.stoppedLeadingAt).toEqual([T0 + 12 * SECOND]);
    await a.done;
    expect(a.settled).toBe(true);
    expect(a.failure).toBeUndefined();
    expect(a.events.filter((e) => e === 'stopped')).toHaveLength(1);
    expect(a.events.at(-1)).toBe('stopped');
    expect(clock.pendingTimers()).toBe(0);
  });

  test('a renewal that hangs is abandoned at renewDeadline and leadership is lost', async () => {
    const { clock, store, a } = await started();
    store.hangNext('update', { times: Number.POSITIVE_INFINITY });
    store.hangNext('get', { times: Number.POSITIVE_INFINITY });
    await clock.tick(2 * SECOND + 9_999);
    expect(a.leading).toBe(true);
    await clock.tick(1);
    expect(a.leading).toBe(false);
    await a.done;
    expect(a.events.filter((e) => e === 'stopped')).toHaveLength(1);
    expect(store.calls.at(-1)?.outcome).toBe('aborted');
    expect(clock.pendingTimers()).toBe(0);
  });

  test('leadership is lost when another candidate takes the lease; onNewLeader reports it and no error is logged', async () => {
    const { clock, store, a, lines } = await started();
    store.write(heldBy('b', { renewTime: new Date(T0 + SECOND), leaderTransitions: 1 }));
    await clock.tick(2 * SECOND); // fast path: 409; slow path: b holds a fresh lease
    expect(a.elector.isLeader()).toBe(false);
    expect(a.elector.getLeader()).toBe('b');
    expect(a.leading).toBe(true); // still within renewDeadline
    await clock.tick(10 * SECOND);
    expect(a.leading).toBe(false);
    await a.done;
    expect(a.events).toEqual(['leader:a', 'started', 'leader:b', 'stopped']);
    expect(store.record?.holderIdentity).toBe('b');
    expect(errorLines(lines)).toEqual([]);
  });
});

describe('LeaderElector: stopping and releasing (TestReleaseLeaseLocks)', () => {
  test('aborting run aborts the leader signal, calls onStoppedLeading once, and leaves the lease held without releaseOnCancel', async () => {
    const { clock, store, a } = setup();
    a.start();
    await clock.tick(4 * SECOND);
    await a.stop();
    expect(a.leaderSignal?.aborted).toBe(true);
    expect(a.events).toEqual(['leader:a', 'started', 'stopped']);
    expect(store.record).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 15 });
    expect(clock.pendingTimers()).toBe(0);
  });

  test('the lock records "became leader" when leadership starts and "stopped leading" when it ends (client-go RecordEvent)', async () => {
    const { a } = await started();
    expect(a.lock.recordedEvents).toEqual(['became leader']);
    await a.stop();
    expect(a.lock.recordedEvents).toEqual(['became leader', 'stopped leading']);
  });

  test('a recorder that throws is logged and changes nothing', async () => {
    const { clock, a, lines } = setup();
    a.lock.recordEvent = () => {
      throw new Error('recorder broke');
    };
    a.start();
    await clock.tick(4 * SECOND);
    expect(a.leading).toBe(true);
    await a.stop();
    expect(a.events).toEqual(['leader:a', 'started', 'stopped']);
    expect(lines.filter((l) => l.msg === 'recording a leader election event failed')).toHaveLength(2);
  });

  test('releaseOnCancel writes an empty holder with leaseDurationSeconds 1, keeping leaderTransitions', async () => {
    const { clock, store, a } = setup({ releaseOnCancel: true });
    store.write(heldBy('', { leaderTransitions: 7 }));
    a.start();
    await clock.tick(3 * SECOND);
    await a.stop();
    expect(store.record).toEqual({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: new Date(T0 + 3 * SECOND),
      renewTime: new Date(T0 + 3 * SECOND),
      leaderTransitions: 8,
    });
    expect(a.elector.isLeader()).toBe(false);
    expect(a.events).toEqual(['leader:a', 'started', 'stopped']);
    expect(clock.pendingTimers()).toBe(0);
  });

  test('release does not overwrite a lease another candidate took meanwhile', async () => {
    const { store, a } = await started(undefined, { releaseOnCancel: true });
    store.write(heldBy('b', { leaderTransitions: 1 }));
    await a.stop();
    expect(store.record?.holderIdentity).toBe('b');
    expect(
      store
        .callsOf('a')
        .slice(-2)
        .map((c) => [c.op, c.outcome]),
    ).toEqual([
      ['update', 'conflict'],
      ['get', 'ok'],
    ]);
  });

  test('release retries after a conflict when the lease still names us', async () => {
    const { store, a } = await started(undefined, { releaseOnCancel: true });
    store.touch();
    await a.stop();
    expect(store.record).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
  });

  test('a candidate that never led does not release, and onStoppedLeading is still called once', async () => {
    const { clock, store, a } = setup({ releaseOnCancel: true });
    store.write(heldBy('b', { renewTime: new Date(T0) }));
    a.start();
    await clock.tick(4 * SECOND);
    const writes = store.callsOf('a').filter((c) => c.op !== 'get');
    await a.stop();
    expect(a.events).toEqual(['leader:b', 'stopped']);
    expect(store.callsOf('a').filter((c) => c.op !== 'get')).toEqual(writes);
    expect(store.record?.holderIdentity).toBe('b');
  });

  test('run with an already aborted signal touches nothing and calls onStoppedLeading once', async () => {
    const { store, a } = setup();
    a.controller.abort();
    a.start();
    await a.done;
    expect(store.calls).toEqual([]);
    expect(a.events).toEqual(['stopped']);
  });

  test('run rejects with ERR_ALREADY_STARTED while it is running, and may run again afterwards', async () => {
    const { clock, a } = setup();
    a.start();
    await expect(a.elector.run(new AbortController().signal)).rejects.toMatchObject({
      code: ErrorCodes.ALREADY_STARTED,
    });
    await a.stop();
    const again = new AbortController();
    const second = a.elector.run(again.signal);
    await clock.tick(0);
    expect(a.elector.isLeader()).toBe(true);
    again.abort();
    await clock.tick(0);
    await second;
  });

  test('a rejected onStartedLeading gives up leadership (released with releaseOnCancel) and run rejects with its error', async () => {
    const boom = new Error('boom');
    const { clock, store, a } = setup(
      { releaseOnCancel: true },
      { onStartedLeading: () => Promise.reject(boom) },
    );
    a.start();
    await clock.tick(0);
    await a.done;
    expect(a.failure).toBe(boom);
    expect(a.events).toEqual(['leader:a', 'stopped']);
    expect(store.record?.holderIdentity).toBe('');
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('LeaderElector: callbacks and health', () => {
  test('onNewLeader is called for each new holder, and a callback that never settles or throws blocks nothing', async () => {
    const seen: string[] = [];
    const { clock, store, a, lines } = setup(
      {},
      {
        onNewLeader: (id) => {
          seen.push(id);
          if (id === 'b') return new Promise<void>(() => undefined);
          throw new Error('observer failed');
        },
      },
    );
    store.write(heldBy('b'));
    a.start();
    await clock.tick(0);
    expect(seen).toEqual(['b']);
    await clock.tick(16 * SECOND);
    expect(seen).toEqual(['b', 'a']);
    expect(a.leading).toBe(true);
    expect(errorLines(lines).map((l) => l.msg)).toEqual(['onNewLeader failed']);
    await a.stop();
  });

  test('check() is healthy while renewing and when not leading, and fails once leaseDuration + tolerance passed without renewal', async () => {
    const { clock, store, a } = setup();
    expect(a.elector.check()).toBeUndefined();
    a.start();
    await clock.tick(6 * SECOND);
    expect(a.elector.check(0)).toBeUndefined();
    store.failNext('update', { times: Number.POSITIVE_INFINITY });
    store.failNext('get', { times: Number.POSITIVE_INFINITY });
    // last renewal at +6 s; renewals fail from +8 s; leadership lost at +18 s, but the record still names us.
    await clock.tick(15 * SECOND);
    expect(a.elector.isLeader()).toBe(true);
    expect(a.elector.check(1_000)).toBeUndefined(); // 15 s since renewal <= 15 s + 1 s
    await clock.tick(1_001);
    const err = a.elector.check(1_000);
    expect(err).toBeInstanceOf(KinformerError);
    expect(err?.code).toBe(ErrorCodes.LEADER_ELECTION);
    expect(err?.message).toBe('failed election to renew leadership on lease default/le');
    await a.done;
  });
});

describe('LeaderElector: two candidates on one lock', () => {
  function pair(options: Partial<LeaderElectorOptions> = {}) {
    const clock = new FakeClock(T0);
    const store = new InMemoryLeaseStore(() => clock.now());
    const { logger, lines } = captureLogger();
    const a = new Candidate(clock, store, 'a', { logger, ...options });
    const b = new Candidate(clock, store, 'b', { logger, ...options });
    return { clock, store, a, b, lines };
  }

  /** Ticks second by second, asserting that at most one candidate is leading at every step. */
  async function tickChecked(clock: FakeClock, seconds: number, candidates: Candidate[]): Promise<void> {
    for (let i = 0; i < seconds; i++) {
      await clock.tick(SECOND);
      expect(candidates.filter((c) => c.leading).length).toBeLessThanOrEqual(1);
    }
  }

  test('exactly one leads; the other keeps observing it', async () => {
    const { clock, store, a, b, lines } = pair();
    a.start();
    b.start();
    await clock.tick(0);
    await tickChecked(clock, 60, [a, b]);
    expect([a, b].filter((c) => c.leading)).toHaveLength(1);
    const [leader, follower] = a.leading ? [a, b] : [b, a];
    expect(follower.elector.getLeader()).toBe(leader.identity);
    expect(store.record?.holderIdentity).toBe(leader.identity);
    expect(
      store.callsOf(follower.identity).filter((c) => c.outcome === 'conflict').length,
    ).toBeGreaterThanOrEqual(1); // lost the create race
    expect(errorLines(lines)).toEqual([]);
    await a.stop();
    await b.stop();
  });

  test('when the leader stops without releasing, the other takes over only after leaseDuration', async () => {
    const { clock, store, a, b } = pair();
    a.start();
    await clock.tick(0);
    b.start();
    await clock.tick(9 * SECOND);
    expect(a.leading).toBe(true);
    const stoppedAt = clock.now();
    await a.stop();
    const lastRenewal = Math.max(
      ...store
        .callsOf('a')
        .filter((c) => c.outcome === 'ok' && c.op !== 'get')
        .map((c) => c.at),
    );
    await tickChecked(clock, 12, [a, b]);
    expect(b.leading).toBe(false);
    await tickChecked(clock, 10, [a, b]);
    expect(b.leading).toBe(true);
    const takeover = b.startedAt[0]!;
    expect(takeover - lastRenewal).toBeGreaterThanOrEqual(15 * SECOND);
    expect(takeover - stoppedAt).toBeLessThanOrEqual(15 * SECOND + 2 * 2 * SECOND);
    expect(store.record).toMatchObject({ holderIdentity: 'b', leaderTransitions: 1 });
    await b.stop();
  });

  test('when the leader releases on cancel, the other takes over at its next retry', async () => {
    const { clock, store, a, b } = pair({ releaseOnCancel: true });
    a.start();
    await clock.tick(0);
    b.start();
    await clock.tick(9 * SECOND);
    const stoppedAt = clock.now();
    await a.stop();
    expect(store.record?.holderIdentity).toBe('');
    await tickChecked(clock, 2, [a, b]);
    expect(b.leading).toBe(true);
    expect(b.startedAt[0]! - stoppedAt).toBeLessThanOrEqual(2 * SECOND);
    expect(store.record).toMatchObject({
      holderIdentity: 'b',
      leaderTransitions: 1,
      leaseDurationSeconds: 15,
    });
    expect(b.events).toEqual(['leader:a', 'leader:b', 'started']); // the empty holder is seen and replaced in one attempt
    await b.stop();
  });
});
