export type { LeaderElectionRecord, LockOperationOptions, ResourceLock } from './resourceLock.js';
export { leaderElectionRecordKey } from './resourceLock.js';
export type { LeaseLockOptions, LockEventRecorder } from './leaseLock.js';
export {
  leaderElectionRecordToLeaseSpec,
  LeaseLock,
  leaseLockError,
  leaseSpecToLeaderElectionRecord,
} from './leaseLock.js';
export type { LeaderCallbacks, LeaderElectorOptions } from './leaderElector.js';
export {
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
  JITTER_FACTOR,
  LeaderElector,
} from './leaderElector.js';
export type { RunLeaderElectionOptions } from './runLeaderElection.js';
export { runLeaderElection } from './runLeaderElection.js';
