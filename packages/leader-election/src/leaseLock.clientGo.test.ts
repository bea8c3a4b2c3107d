import { ErrorCodes } from '@kinformer/core';
import { FakeApiServer } from '@kinformer/testing';
import type { V1Lease } from '@kubernetes/client-node';
import { LeaseLock } from './leaseLock.js';
import type { LeaseLockOptions } from './leaseLock.js';
import type { LeaderElectionRecord } from './resourceLock.js';

// Port of client-go tools/leaderelection/resourcelock/leaselock_test.go (v0.36), against
// FakeApiServer's coordination.k8s.io/v1 leases instead of the fake clientset.

const LEASES = 'leases.coordination.k8s.io';
const NS = 'test-namespace';
const NAME = 'test-name';
const IDENTITY = 'test-identity';
const testTime = new Date('2026-12-01T10:00:00.123Z');
const testRecord: LeaderElectionRecord = {
  holderIdentity: IDENTITY,
  leaseDurationSeconds: 15,
  acquireTime: testTime,
  renewTime: testTime,
  leaderTransitions: 1,
  preferredHolder: 'preferred-holder',
  strategy: 'strategy',
};

let server: FakeApiServer;

beforeEach(async () => {
  server = await FakeApiServer.start();
  server.create('namespaces', { metadata: { name: NS } }); // NamespaceLifecycle: writes need it
});

afterEach(async () => {
  await server.close();
});

function newLock(options: Partial<LeaseLockOptions> = {}): LeaseLock {
  return new LeaseLock(server.kubeConfig(), { namespace: NS, name: NAME, identity: IDENTITY, ...options });
}

function storedLabels(): Record<string, string> | undefined {
  return server.get<V1Lease>(LEASES, NAME, NS).metadata?.labels;
}

describe('LeaseLock (client-go leaselock_test.go)', () => {
  test('get of a Lease that does not exist rejects with ERR_NOT_FOUND keeping the NotFound Status', async () => {
    const err = await newLock()
      .get()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toMatchObject({
      code: ErrorCodes.NOT_FOUND,
      httpStatus: 404,
      status: { reason: 'NotFound' },
    });
  });

  test('get after create reads back every field of the record', async () => {
    const lock = newLock();
    await lock.create(testRecord);
    expect(await lock.get()).toEqual(testRecord);
  });

  test('creating a Lease that exists rejects with ERR_CONFLICT (AlreadyExists)', async () => {
    await newLock().create(testRecord);
    const err = await newLock()
      .create(testRecord)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toMatchObject({ code: ErrorCodes.CONFLICT, status: { reason: 'AlreadyExists' } });
  });

  test('update before get or create rejects, without a request', async () => {
    server.clearRequests();
    await expect(newLock().update(testRecord)).rejects.toMatchObject({ code: ErrorCodes.LEADER_ELECTION });
    expect(server.requests).toEqual([]);
  });

  test('recordEvent records "<identity> <message>" about the Lease through the event recorder', async () => {
    const recorded: Array<{
      kind: string;
      name?: string | undefined;
      type: string;
      reason: string;
      note: string;
    }> = [];
    const lock = newLock({
      eventRecorder: {
        event: (regarding, type, reason, note) =>
          void recorded.push({ kind: regarding.kind, name: regarding.metadata.name, type, reason, note }),
      },
    });
    await lock.create(testRecord);
    lock.recordEvent('test event');
    expect(recorded).toEqual([
      { kind: 'Lease', name: NAME, type: 'Normal', reason: 'LeaderElection', note: `${IDENTITY} test event` },
    ]);
  });

  test('recordEvent without a recorder does nothing (and does not throw)', async () => {
    const lock = newLock();
    await lock.create(testRecord);
    expect(() => lock.recordEvent('should not throw')).not.toThrow();
  });

  test('describe is namespace/name', () => {
    expect(newLock().describe()).toBe(`${NS}/${NAME}`);
  });

  test('labels are set on create', async () => {
    await newLock({ labels: { 'custom-key': 'custom-val' } }).create(testRecord);
    expect(storedLabels()).toEqual({ 'custom-key': 'custom-val' });
  });

  test('update with labels succeeds on a Lease that has no labels, and sets them', async () => {
    await newLock().create(testRecord);
    const lock = newLock({ labels: { 'custom-key': 'custom-val' } });
    await lock.get();
    await lock.update({ ...testRecord, leaderTransitions: 2 });
    expect(storedLabels()).toEqual({ 'custom-key': 'custom-val' });
    expect(server.get<V1Lease>(LEASES, NAME, NS).spec?.leaseTransitions).toBe(2);
  });

  test('update without labels succeeds and keeps the labels the Lease has', async () => {
    await newLock({ labels: { 'custom-key': 'custom-val' } }).create(testRecord);
    const lock = newLock();
    await lock.get();
    await lock.update({ ...testRecord, leaderTransitions: 2 });
    expect(storedLabels()).toEqual({ 'custom-key': 'custom-val' });
  });

  test('update writes the lock labels again over changed values, and keeps labels others added', async () => {
    const lock = newLock({ labels: { 'custom-key': 'custom-val' } });
    await lock.create(testRecord);
    // Someone else changes our label and adds one of theirs.
    const lease = server.get<V1Lease>(LEASES, NAME, NS);
    server.update(LEASES, {
      ...lease,
      metadata: {
        ...lease.metadata,
        labels: { 'custom-key': 'new-custom-val', 'custom-key-2': 'custom-val-2' },
      },
    });
    expect(storedLabels()).toEqual({ 'custom-key': 'new-custom-val', 'custom-key-2': 'custom-val-2' });
    await lock.get();
    await lock.update(testRecord);
    expect(storedLabels()).toEqual({ 'custom-key': 'custom-val', 'custom-key-2': 'custom-val-2' });
  });

  test('the labels option is copied: changing the caller’s object later changes nothing', async () => {
    const labels: Record<string, string> = { a: '1' };
    const lock = newLock({ labels });
    labels.a = '2';
    await lock.create(testRecord);
    expect(storedLabels()).toEqual({ a: '1' });
  });
});
