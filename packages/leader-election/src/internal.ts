/**
 * `@kinformer/leader-election/internal`: building blocks the other `@kinformer/*` packages share (constants, decoders,
 * helpers). Not public API: no compatibility promise, not re-exported by `kinformer`.
 */
export { leaderElectionRecordKey, type LockOperationOptions } from './resourceLock.js';
export {
  leaderElectionRecordToLeaseSpec,
  leaseLockError,
  leaseSpecToLeaderElectionRecord,
  type LockEventRecorder,
} from './leaseLock.js';
export {
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
  JITTER_FACTOR,
} from './leaderElector.js';
