import { ErrorCodes, KinformerError } from '@kinformer/core';
import { ApiException, KubeConfig, V1MicroTime } from '@kubernetes/client-node';
import type { V1LeaseSpec } from '@kubernetes/client-node';
import {
  leaderElectionRecordToLeaseSpec,
  LeaseLock,
  leaseLockError,
  leaseSpecToLeaderElectionRecord,
} from './leaseLock.js';
import type { LeaderElectionRecord } from './resourceLock.js';
import { leaderElectionRecordKey } from './resourceLock.js';

// client-go: tools/leaderelection/resourcelock/leaselock_test.go (TestLeaseConversion round trip).
// LeaseLock over real HTTP is tested in packages/integration-tests/src/leaderElection.test.ts.

const record: LeaderElectionRecord = {
  holderIdentity: 'pod-a',
  leaseDurationSeconds: 15,
  acquireTime: new Date('2026-01-01T00:00:00.123Z'),
  renewTime: new Date('2026-01-01T00:00:10.456Z'),
  leaderTransitions: 4,
  strategy: 'OldestEmulationVersion',
  preferredHolder: 'pod-b',
};

describe('Lease spec conversion', () => {
  test('record → spec → record is the identity, with strategy and preferredHolder', () => {
    expect(leaseSpecToLeaderElectionRecord(leaderElectionRecordToLeaseSpec(record))).toEqual(record);
  });

  test('times are written as MicroTime: microsecond RFC 3339 on the wire', () => {
    const spec = leaderElectionRecordToLeaseSpec(record);
    expect(spec.acquireTime).toBeInstanceOf(V1MicroTime);
    expect(JSON.parse(JSON.stringify(spec))).toEqual({
      holderIdentity: 'pod-a',
      leaseDurationSeconds: 15,
      leaseTransitions: 4,
      acquireTime: '2026-01-01T00:00:00.123000Z',
      renewTime: '2026-01-01T00:00:10.456000Z',
      strategy: 'OldestEmulationVersion',
      preferredHolder: 'pod-b',
    });
  });

  test('empty strategy/preferredHolder and absent times are not written; an empty holder is', () => {
    const spec = leaderElectionRecordToLeaseSpec({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      leaderTransitions: 0,
      strategy: '',
    });
    expect(JSON.parse(JSON.stringify(spec))).toEqual({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      leaseTransitions: 0,
    });
  });

  test('reads MicroTime strings as client-node 2.x hands them back, and Dates', () => {
    const spec = {
      holderIdentity: 'x',
      leaseDurationSeconds: 30,
      leaseTransitions: 2,
      acquireTime: '2026-01-01T00:00:00.123456Z' as unknown as V1MicroTime,
      renewTime: new V1MicroTime(Date.parse('2026-01-01T00:00:05.5Z')),
    } satisfies V1LeaseSpec;
    expect(leaseSpecToLeaderElectionRecord(spec)).toEqual({
      holderIdentity: 'x',
      leaseDurationSeconds: 30,
      leaderTransitions: 2,
      acquireTime: new Date('2026-01-01T00:00:00.123Z'),
      renewTime: new Date('2026-01-01T00:00:05.500Z'),
    });
  });

  test('missing fields read as empty holder, 0 and absent times; null or unparsable times as absent', () => {
    expect(leaseSpecToLeaderElectionRecord(undefined)).toEqual({
      holderIdentity: '',
      leaseDurationSeconds: 0,
      leaderTransitions: 0,
    });
    const spec = {
      acquireTime: null as unknown as V1MicroTime,
      renewTime: 'yesterday' as unknown as V1MicroTime,
    } satisfies V1LeaseSpec;
    expect(leaseSpecToLeaderElectionRecord(spec)).toEqual({
      holderIdentity: '',
      leaseDurationSeconds: 0,
      leaderTransitions: 0,
    });
  });

  test('leaderElectionRecordKey is equal exactly for equal records', () => {
    const copy: LeaderElectionRecord = { ...record, acquireTime: new Date(record.acquireTime!.getTime()) };
    expect(leaderElectionRecordKey(copy)).toBe(leaderElectionRecordKey(record));
    expect(
      leaderElectionRecordKey({ ...record, renewTime: new Date(record.renewTime!.getTime() + 1) }),
    ).not.toBe(leaderElectionRecordKey(record));
    expect(leaderElectionRecordKey({ ...record, leaderTransitions: 5 })).not.toBe(
      leaderElectionRecordKey(record),
    );
    expect(leaderElectionRecordKey({ ...record, preferredHolder: undefined })).not.toBe(
      leaderElectionRecordKey(record),
    );
  });
});

describe('leaseLockError: client-node errors → KinformerError codes (apiError of @kinformer/client-node)', () => {
  test('409 → ERR_CONFLICT keeping the Status, with details.lock', () => {
    const body = JSON.stringify({
      kind: 'Status',
      status: 'Failure',
      reason: 'Conflict',
      code: 409,
      message: 'modified',
    });
    const err = leaseLockError(new ApiException(409, 'x', body, {}), 'default/le');
    expect(err).toMatchObject({ code: ErrorCodes.CONFLICT, httpStatus: 409, message: 'modified' });
    expect(err.status?.reason).toBe('Conflict');
    expect(err.details).toEqual({ lock: 'default/le' });
  });

  test('an aborted request → ERR_ABORTED; a network failure → ERR_CONNECTION naming the lease; a KinformerError passes through', () => {
    const controller = new AbortController();
    controller.abort();
    const abortErr = Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
    expect(leaseLockError(abortErr, 'default/le', controller.signal).code).toBe(ErrorCodes.ABORTED);
    const conn = leaseLockError(new TypeError('fetch failed'), 'default/le');
    expect(conn).toMatchObject({
      code: ErrorCodes.CONNECTION,
      message: 'request for lease default/le failed: fetch failed',
    });
    const own = new KinformerError(ErrorCodes.TIMEOUT, 'slow');
    expect(leaseLockError(own, 'default/le')).toBe(own);
  });
});

describe('LeaseLock without a server', () => {
  function kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:9', skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kc;
  }

  test('describe() is namespace/name and identity is the given one', () => {
    const lock = new LeaseLock(kubeConfig(), { namespace: 'kube-system', name: 'ctrl', identity: 'pod-a' });
    expect(lock.describe()).toBe('kube-system/ctrl');
    expect(lock.identity).toBe('pod-a');
  });

  test('update before any get or create rejects with ERR_LEADER_ELECTION, without a request', async () => {
    const lock = new LeaseLock(kubeConfig(), { namespace: 'kube-system', name: 'ctrl', identity: 'pod-a' });
    await expect(lock.update(record)).rejects.toMatchObject({
      code: ErrorCodes.LEADER_ELECTION,
      message: 'lease not initialized, call get or create first',
    });
  });

  test('an already aborted signal rejects with ERR_ABORTED without a request', async () => {
    const lock = new LeaseLock(kubeConfig(), { namespace: 'kube-system', name: 'ctrl', identity: 'pod-a' });
    const controller = new AbortController();
    controller.abort();
    await expect(lock.get({ signal: controller.signal })).rejects.toMatchObject({ code: ErrorCodes.ABORTED });
  });
});
