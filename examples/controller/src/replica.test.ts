import { FakeApiServer, FakeClock, flush } from '@kinformer/testing';
import { JITTER_FACTOR } from 'kinformer';
import type { EventsV1Event, V1Lease } from '@kubernetes/client-node';
import { EVENTS_V1_RESOURCE, PodChurn } from './podChurn.js';
import type { ReconcileRecord } from './podsPerNodeController.js';
import { CONTROLLER_NAME } from './podsPerNodeController.js';
import { Replica } from './replica.js';
import { NS, preciseClock, waitFor, waitForConvergence } from './testSupport.test.helpers.js';

// The election runs on a FakeClock (informers, reconciles and HTTP on real time): takeover timing is
// asserted in fake milliseconds, exactly, never against the wall clock. The record's
// leaseDurationSeconds is whole seconds, so 2000 ms.
const LEASE_MS = 2000;
const RENEW_MS = 1500;
const RETRY_MS = 250;
/** The longest acquire wait: retry × (1 + jitter). */
const MAX_RETRY_WAIT_MS = RETRY_MS * (1 + JITTER_FACTOR);

interface Interval extends ReconcileRecord {
  replica: string;
}

let server: FakeApiServer;
let replicas: Replica[] = [];
let churnTimer: NodeJS.Timeout | undefined;
let electionClock: FakeClock;

beforeEach(async () => {
  server = await FakeApiServer.start({ recordRequests: false });
  server.registerResource(EVENTS_V1_RESOURCE);
  electionClock = new FakeClock(Date.parse('2026-12-01T00:00:00Z'));
});

/** Lets every replica's Lease requests finish (bounded), so the election clock moves only between round trips. */
async function settle(): Promise<void> {
  await flush();
  await server.waitFor(() => replicas.every((r) => r.leaseRequestsInFlight === 0), { timeoutMs: 10_000 });
  await flush();
}

/**
 * Moves the election clock on timer by timer, settling in between, until `condition()` holds or `maxMs`
 * of election time passed. Returns the election time at which it held (or `undefined`).
 */
async function driveElection(condition: () => boolean, maxMs: number): Promise<number | undefined> {
  const end = electionClock.now() + maxMs;
  await settle();
  while (!condition()) {
    const next = electionClock.nextTimerAt();
    if (next === undefined || next > end) {
      await electionClock.tick(end - electionClock.now());
      await settle();
      return condition() ? electionClock.now() : undefined;
    }
    await electionClock.tick(next - electionClock.now());
    await settle();
  }
  return electionClock.now();
}

afterEach(async () => {
  clearInterval(churnTimer);
  await Promise.all(replicas.map((r) => r.stop()));
  replicas = [];
  await server.close();
});

function startReplicas(intervals: Interval[]): [Replica, Replica] {
  for (const identity of ['replica-a', 'replica-b']) {
    replicas.push(
      new Replica({
        kubeConfig: server.kubeConfig(),
        identity,
        namespace: NS,
        leaseDurationMs: LEASE_MS,
        renewDeadlineMs: RENEW_MS,
        retryPeriodMs: RETRY_MS,
        clock: preciseClock,
        electionClock,
        electionRandom: () => 0.5,
        controller: {
          workers: 3,
          clock: preciseClock,
          hooks: { afterReconcile: (record) => intervals.push({ ...record, replica: identity }) },
        },
      }),
    );
  }
  for (const r of replicas) r.start();
  return [replicas[0]!, replicas[1]!];
}

function overlaps(
  a: { startedAt: number; endedAt: number },
  b: { startedAt: number; endedAt: number },
): boolean {
  return a.startedAt < b.endedAt && b.startedAt < a.endedAt;
}

describe('two replicas on one Lease', () => {
  it('one leads; when it crashes the other takes over within the lease duration, and no key is ever reconciled by both at once', async () => {
    const churn = new PodChurn(server, { nodes: 6 });
    churn.seed(60);
    const intervals: Interval[] = [];
    const both = startReplicas(intervals);

    // Exactly one leads and reconciles.
    expect(await driveElection(() => both.some((r) => r.isLeading()), 10 * RETRY_MS)).toBeDefined();
    const leader = both.find((r) => r.isLeading())!;
    const follower = both.find((r) => r !== leader)!;
    churnTimer = setInterval(() => churn.step(3), 50);
    await waitFor(() => intervals.length >= 20, 'the leader to reconcile');
    expect(
      await driveElection(() => follower.elector.getLeader() === leader.identity, 4 * MAX_RETRY_WAIT_MS),
    ).toBeDefined();
    expect(leader.elector.isLeader()).toBe(true);
    expect(follower.elector.isLeader()).toBe(false);
    expect(follower.isLeading()).toBe(false);
    expect(follower.terms).toEqual([]);
    expect(intervals.every((i) => i.replica === leader.identity)).toBe(true);
    expect(server.get<V1Lease>('leases.coordination.k8s.io', CONTROLLER_NAME, NS).spec?.holderIdentity).toBe(
      leader.identity,
    );

    // Crash the leader: no release, its Lease just stops being renewed. It renewed every RETRY_MS of
    // election time, so its last renewal was at most RETRY_MS before the crash.
    const killedAt = electionClock.now();
    await leader.kill();
    expect(leader.isLeading()).toBe(false);
    expect(server.get<V1Lease>('leases.coordination.k8s.io', CONTROLLER_NAME, NS).spec?.holderIdentity).toBe(
      leader.identity,
    );

    // The follower respects the lease the leader last renewed: no takeover before it could have expired …
    expect(await driveElection(() => follower.isLeading(), LEASE_MS - RETRY_MS - 1)).toBeUndefined();
    // … and takes over once it has (within the lease plus two of its jittered retries), in election time.
    const takenOverAt = await driveElection(() => follower.isLeading(), 2 * MAX_RETRY_WAIT_MS + RETRY_MS + 1);
    expect(takenOverAt).toBeDefined();
    expect(takenOverAt! - killedAt).toBeLessThanOrEqual(LEASE_MS + 2 * MAX_RETRY_WAIT_MS);
    await waitFor(
      () => intervals.some((i) => i.replica === follower.identity),
      'the new leader to reconcile',
    );

    // It carries on: churn, then convergence.
    const reconciledBefore = intervals.length;
    await waitFor(
      () => intervals.length >= reconciledBefore + 10,
      'the new leader to keep up with the churn',
    );
    clearInterval(churnTimer);
    await waitForConvergence(server);
    await follower.stop();

    // Leadership terms never overlap: the old leader's controller stopped before the new one started.
    const oldTerm = leader.terms[0]!;
    const newTerm = follower.terms[0]!;
    expect(leader.terms).toHaveLength(1);
    expect(follower.terms).toHaveLength(1);
    expect(oldTerm.stoppedAt).toBeDefined();
    expect(newTerm.stoppedAt).toBeDefined();
    expect(oldTerm.stoppedAt!).toBeLessThan(newTerm.startedAt);

    // Every reconcile ran inside its replica's term …
    const a = intervals.filter((i) => i.replica === leader.identity);
    const b = intervals.filter((i) => i.replica === follower.identity);
    expect(a.length).toBeGreaterThan(0);
    expect(b.length).toBeGreaterThan(0);
    for (const i of a) expect(i.startedAt >= oldTerm.startedAt && i.endedAt <= oldTerm.stoppedAt!).toBe(true);
    for (const i of b) expect(i.startedAt >= newTerm.startedAt && i.endedAt <= newTerm.stoppedAt!).toBe(true);
    // … and no key was reconciled by both replicas at the same time.
    const clashes = a.flatMap((x) =>
      b
        .filter((y) => y.node === x.node && overlaps(x, y))
        .map((y) => `${x.node}: ${x.startedAt}–${x.endedAt} / ${y.startedAt}–${y.endedAt}`),
    );
    expect(clashes).toEqual([]);
    expect(new Set(b.map((i) => i.node)).size).toBeGreaterThan(1);
  });

  it('a graceful stop releases the Lease, so the other replica takes over at its next retry instead of after the lease duration', async () => {
    new PodChurn(server, { nodes: 3 }).seed(20);
    const intervals: Interval[] = [];
    const both = startReplicas(intervals);
    expect(await driveElection(() => both.some((r) => r.isLeading()), 10 * RETRY_MS)).toBeDefined();
    const leader = both.find((r) => r.isLeading())!;
    const follower = both.find((r) => r !== leader)!;
    await waitForConvergence(server);
    expect(
      await driveElection(() => follower.elector.getLeader() === leader.identity, 4 * MAX_RETRY_WAIT_MS),
    ).toBeDefined();

    const stoppedAt = electionClock.now();
    await leader.stop();
    expect(server.get<V1Lease>('leases.coordination.k8s.io', CONTROLLER_NAME, NS).spec?.holderIdentity).toBe(
      '',
    );
    // The Lease lock recorded the leader's term as Events about the Lease (client-go's RecordEvent).
    const leaseEvents = server
      .list<EventsV1Event>('events.events.k8s.io', NS)
      .filter((e) => e.regarding?.kind === 'Lease')
      .map((e) => `${e.reason} ${e.note}`);
    expect(leaseEvents).toEqual(
      expect.arrayContaining([
        `LeaderElection ${leader.identity} became leader`,
        `LeaderElection ${leader.identity} stopped leading`,
      ]),
    );
    // The released Lease is taken at the follower's next retry: well within one lease duration.
    const takenOverAt = await driveElection(() => follower.isLeading(), MAX_RETRY_WAIT_MS);
    expect(takenOverAt).toBeDefined();
    expect(takenOverAt! - stoppedAt).toBeLessThanOrEqual(MAX_RETRY_WAIT_MS);
    expect(leader.terms[0]!.stoppedAt!).toBeLessThan(follower.terms[0]!.startedAt);

    server.create('pods', {
      metadata: { name: 'late', namespace: 'default' },
      spec: { nodeName: 'node-0', containers: [] },
    });
    await waitForConvergence(server);
  });
});
