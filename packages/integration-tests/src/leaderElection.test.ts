import { ErrorCodes, isKinformerError } from '@kinformer/core';
import { FakeClock, flush } from '@kinformer/core/testing';
import { captureLogs, deferred, LeadershipRecorder } from '@kinformer/test-tools';
import type { CapturedLogs } from '@kinformer/test-tools';
import { LeaderElector, LeaseLock, runLeaderElection } from '@kinformer/leader-election';
import type { LeaderElectionRecord, LeaderElectorOptions, ResourceLock } from '@kinformer/leader-election';
import type { LockOperationOptions } from '@kinformer/leader-election/internal';
import { FakeApiServer } from '@kinformer/testing';
import type { V1Lease } from '@kubernetes/client-node';

// @kinformer/leader-election over real HTTP: LeaseLock against FakeApiServer's coordination.k8s.io/v1
// leases (409 on a stale resourceVersion), and LeaderElectors driven by a FakeClock, waiting for the
// HTTP round trips to finish before moving time on.

const LEASES = 'leases.coordination.k8s.io';
const T0 = Date.parse('2026-01-01T00:00:00Z');
const SECOND = 1000;

let server: FakeApiServer | undefined;
const running: AbortController[] = [];

afterEach(async () => {
  for (const c of running.splice(0)) c.abort();
  await server?.close();
  server = undefined;
});

const captureLogger = (): CapturedLogs => captureLogs('debug');

function storedLease(s: FakeApiServer): V1Lease & { spec: Record<string, unknown> } {
  return s.get<V1Lease & { spec: Record<string, unknown> }>(LEASES, 'default/le');
}

function hasLease(s: FakeApiServer): boolean {
  try {
    storedLease(s);
    return true;
  } catch {
    return false;
  }
}

/** A lock that counts its operations in flight (so the test knows when HTTP is done) and can hold a create back. */
class TrackedLock implements ResourceLock {
  inFlight = 0;
  createGate: Promise<void> | undefined;
  readonly #created = deferred();
  readonly #gotten = deferred();

  constructor(readonly inner: ResourceLock) {}

  get identity(): string {
    return this.inner.identity;
  }

  /** Settles after this lock's first create settled. */
  get created(): Promise<void> {
    return this.#created.promise;
  }

  /** Settles after this lock's first get settled. */
  get gotten(): Promise<void> {
    return this.#gotten.promise;
  }

  describe(): string {
    return this.inner.describe();
  }

  get(options?: LockOperationOptions): Promise<LeaderElectionRecord> {
    return this.#track(() => this.inner.get(options), this.#gotten.resolve);
  }

  create(record: LeaderElectionRecord, options?: LockOperationOptions): Promise<void> {
    return this.#track(async () => {
      if (this.createGate !== undefined) await this.createGate;
      await this.inner.create(record, options);
    }, this.#created.resolve);
  }

  update(record: LeaderElectionRecord, options?: LockOperationOptions): Promise<void> {
    return this.#track(
      () => this.inner.update(record, options),
      () => undefined,
    );
  }

  async #track<T>(op: () => Promise<T>, done: () => void): Promise<T> {
    this.inFlight++;
    try {
      return await op();
    } finally {
      this.inFlight--;
      done();
    }
  }
}

/** One candidate: a LeaderElector on its own LeaseLock, with its callbacks recorded. */
class Candidate extends LeadershipRecorder {
  readonly lock: TrackedLock;
  readonly elector: LeaderElector;
  done: Promise<void> | undefined;

  constructor(
    s: FakeApiServer,
    readonly clock: FakeClock,
    identity: string,
    options: Partial<LeaderElectorOptions> = {},
  ) {
    super();
    this.lock = new TrackedLock(
      new LeaseLock(s.kubeConfig(), { namespace: 'default', name: 'le', identity }),
    );
    this.elector = new LeaderElector({
      lock: this.lock,
      clock,
      random: () => 0,
      callbacks: this.recordingCallbacks(() => clock.now()),
      ...options,
    });
    running.push(this.controller);
  }

  start(): this {
    this.done = this.elector.run(this.controller.signal);
    return this;
  }
}

/** Drives a FakeClock timer by timer, letting every candidate's HTTP round trips finish in between. */
class Driver {
  constructor(
    readonly s: FakeApiServer,
    readonly clock: FakeClock,
    readonly candidates: Candidate[],
  ) {}

  async settle(): Promise<void> {
    await flush();
    await this.s.waitFor(() => this.candidates.every((c) => c.lock.inFlight === 0), { timeoutMs: 10_000 });
    await flush();
  }

  async advance(ms: number): Promise<void> {
    const target = this.clock.now() + ms;
    await this.settle();
    for (;;) {
      const next = this.clock.nextTimerAt();
      if (next === undefined || next > target) break;
      await this.clock.tick(next - this.clock.now());
      await this.settle();
    }
    await this.clock.tick(target - this.clock.now());
    await this.settle();
  }

  async stop(candidate: Candidate): Promise<void> {
    candidate.controller.abort();
    await this.clock.tick(0);
    await this.settle();
    await candidate.done;
  }
}

describe('LeaseLock against FakeApiServer', () => {
  const record = (holderIdentity: string, renewMs: number, leaderTransitions = 0): LeaderElectionRecord => ({
    holderIdentity,
    leaseDurationSeconds: 15,
    acquireTime: new Date(T0 + 123),
    renewTime: new Date(T0 + renewMs),
    leaderTransitions,
  });

  test('get/create/update with optimistic concurrency: a stale update and a second create are ERR_CONFLICT', async () => {
    server = await FakeApiServer.start();
    const kc = server.kubeConfig();
    const a = new LeaseLock(kc, { namespace: 'default', name: 'le', identity: 'a' });
    const b = new LeaseLock(kc, { namespace: 'default', name: 'le', identity: 'b' });

    const missing = await a.get().catch((err: unknown) => err);
    expect(missing).toMatchObject({ code: ErrorCodes.NOT_FOUND, httpStatus: 404 });

    await a.create(record('a', 0));
    expect(storedLease(server).spec).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      leaseTransitions: 0,
      acquireTime: '2026-01-01T00:00:00.123000Z',
      renewTime: '2026-01-01T00:00:00.000000Z',
    });
    await expect(b.create(record('b', 0))).rejects.toMatchObject({
      code: ErrorCodes.CONFLICT,
      httpStatus: 409,
    });

    expect(await b.get()).toEqual(record('a', 0));
    await a.update(record('a', 2_000)); // a's resourceVersion is the one from its create
    const stale = await b.update(record('b', 2_000, 1)).catch((err: unknown) => err);
    expect(stale).toMatchObject({ code: ErrorCodes.CONFLICT, httpStatus: 409 });
    expect(isKinformerError(stale) && stale.status?.reason).toBe('Conflict');
    expect(storedLease(server).spec.holderIdentity).toBe('a');

    expect(await b.get()).toEqual(record('a', 2_000));
    await b.update(record('b', 4_000, 1));
    expect(storedLease(server).spec).toMatchObject({
      holderIdentity: 'b',
      leaseTransitions: 1,
      renewTime: '2026-01-01T00:00:04.000000Z',
    });
    const puts = server.requests.filter((r) => r.method === 'PUT').map((r) => r.status);
    expect(puts).toEqual([200, 409, 200]);
  });

  test('a 500 from the server is ERR_INTERNAL with its Status; an aborted request is ERR_ABORTED', async () => {
    server = await FakeApiServer.start();
    const lock = new LeaseLock(server.kubeConfig(), { namespace: 'default', name: 'le', identity: 'a' });
    server.faults.failNext({ status: 500, verbs: ['get'] });
    const failed = await lock.get().catch((err: unknown) => err);
    expect(failed).toMatchObject({ code: ErrorCodes.INTERNAL, httpStatus: 500 });
    expect(isKinformerError(failed) && failed.status?.code).toBe(500);

    const controller = new AbortController();
    const pending = lock.get({ signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: ErrorCodes.ABORTED });
  });
});

describe('LeaderElector over HTTP', () => {
  test('a candidate creates the Lease, renews it every retryPeriod, and the other candidate takes over only after leaseDuration', async () => {
    server = await FakeApiServer.start();
    const clock = new FakeClock(T0);
    const a = new Candidate(server, clock, 'a');
    const b = new Candidate(server, clock, 'b');
    const drive = new Driver(server, clock, [a, b]);

    a.start();
    await drive.settle();
    expect(a.leading).toBe(true);
    expect(storedLease(server).spec).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      leaseTransitions: 0,
      acquireTime: '2026-01-01T00:00:00.000000Z',
      renewTime: '2026-01-01T00:00:00.000000Z',
    });

    b.start();
    await drive.advance(10 * SECOND);
    expect(b.leading).toBe(false);
    expect(b.elector.getLeader()).toBe('a');
    expect(storedLease(server).spec).toMatchObject({
      holderIdentity: 'a',
      renewTime: '2026-01-01T00:00:10.000000Z',
      acquireTime: '2026-01-01T00:00:00.000000Z',
    });

    const stoppedAt = clock.now();
    await drive.stop(a);
    expect(a.events).toEqual(['leader:a', 'started', 'stopped']);
    expect(storedLease(server).spec.holderIdentity).toBe('a'); // not released

    await drive.advance(13 * SECOND);
    expect(b.leading).toBe(false);
    await drive.advance(6 * SECOND);
    expect(b.leading).toBe(true);
    expect(b.startedAt[0]! - stoppedAt).toBeGreaterThanOrEqual(15 * SECOND);
    expect(storedLease(server).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    expect(b.events).toEqual(['leader:a', 'leader:b', 'started']);
  });

  test('with releaseOnCancel the leader releases the Lease on the server and the other candidate takes over at its next retry', async () => {
    server = await FakeApiServer.start();
    const clock = new FakeClock(T0);
    const a = new Candidate(server, clock, 'a', { releaseOnCancel: true });
    const b = new Candidate(server, clock, 'b', { releaseOnCancel: true });
    const drive = new Driver(server, clock, [a, b]);
    a.start();
    await drive.settle();
    b.start();
    await drive.advance(5 * SECOND);
    await drive.stop(a);
    expect(storedLease(server).spec).toMatchObject({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      leaseTransitions: 0,
    });
    const stoppedAt = clock.now();
    await drive.advance(2 * SECOND);
    expect(b.leading).toBe(true);
    expect(b.startedAt[0]! - stoppedAt).toBeLessThanOrEqual(2 * SECOND);
    expect(storedLease(server).spec).toMatchObject({
      holderIdentity: 'b',
      leaseDurationSeconds: 15,
      leaseTransitions: 1,
    });
  });

  test('two candidates racing for an absent Lease: one creates it, the other gets 409 — a lost race, not an error', async () => {
    server = await FakeApiServer.start();
    const clock = new FakeClock(T0);
    const { logger, lines } = captureLogger();
    const a = new Candidate(server, clock, 'a', { logger });
    const b = new Candidate(server, clock, 'b', { logger });
    // Both read "not found" before either creates; a creates first.
    a.lock.createGate = b.lock.gotten;
    b.lock.createGate = a.lock.created;
    const drive = new Driver(server, clock, [a, b]);
    a.start();
    b.start();
    await drive.advance(30 * SECOND);
    expect(a.leading).toBe(true);
    expect(b.leading).toBe(false);
    const posts = server.requests.filter((r) => r.method === 'POST').map((r) => r.status);
    expect(posts).toEqual([201, 409]);
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    expect(lines.some((l) => l.level === 20 && l.msg.includes('conflict'))).toBe(true);
    expect(b.elector.getLeader()).toBe('a');
  });

  test('the leader gives up when the API server fails its renewals for renewDeadline', async () => {
    server = await FakeApiServer.start();
    const clock = new FakeClock(T0);
    const a = new Candidate(server, clock, 'a');
    const drive = new Driver(server, clock, [a]);
    a.start();
    await drive.advance(2 * SECOND); // renewed at +0 and +2 s; next round at +4 s
    const failing = server.faults.failNext({ status: 500, count: 1000, verbs: ['get', 'update'] });
    await drive.advance(2 * SECOND + 9 * SECOND);
    expect(a.leading).toBe(true);
    await drive.advance(SECOND); // +14 s: the round that started at +4 s hits its deadline
    expect(a.leading).toBe(false);
    await a.done;
    expect(a.events).toEqual(['leader:a', 'started', 'stopped']);
    expect(failing.remaining).toBeLessThan(1000);
    failing.cancel();
  });
});

describe('runLeaderElection', () => {
  test('leads on the named Lease and releases it on cancel', async () => {
    server = await FakeApiServer.start();
    const clock = new FakeClock(T0);
    const started: AbortSignal[] = [];
    let stopped = 0;
    const controller = new AbortController();
    running.push(controller);
    const done = runLeaderElection(
      server.kubeConfig(),
      {
        namespace: 'default',
        name: 'le',
        identity: 'me',
        clock,
        releaseOnCancel: true,
        onStartedLeading: (signal) => void started.push(signal),
        onStoppedLeading: () => void stopped++,
      },
      controller.signal,
    );
    await server.waitFor(() => started.length === 1);
    expect(storedLease(server).spec).toMatchObject({ holderIdentity: 'me', leaseDurationSeconds: 15 });
    controller.abort();
    await done;
    expect(started[0]!.aborted).toBe(true);
    expect(stopped).toBe(1);
    expect(storedLease(server).spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
  });

  test('invalid options throw ERR_INVALID_OPTION before any request', async () => {
    server = await FakeApiServer.start();
    expect(() =>
      runLeaderElection(
        server!.kubeConfig(),
        {
          namespace: 'default',
          name: 'le',
          identity: '',
          onStartedLeading: () => undefined,
          onStoppedLeading: () => undefined,
        },
        new AbortController().signal,
      ),
    ).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }));
    expect(hasLease(server)).toBe(false);
    expect(server.requests).toEqual([]);
  });
});
