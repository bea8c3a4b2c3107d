export type { LeaderElectionRecord, ResourceLock } from './resourceLock.js';
export { LeaseLock, type LeaseLockOptions } from './leaseLock.js';
export { type LeaderCallbacks, LeaderElector, type LeaderElectorOptions } from './leaderElector.js';
export { runLeaderElection, type RunLeaderElectionOptions } from './runLeaderElection.js';
