export type { LeaderElectionRecord, ResourceLock } from './resourceLock.js';
export type { LeaseLockOptions } from './leaseLock.js';
export { LeaseLock } from './leaseLock.js';
export type { LeaderCallbacks, LeaderElectorOptions } from './leaderElector.js';
export { LeaderElector } from './leaderElector.js';
export type { RunLeaderElectionOptions } from './runLeaderElection.js';
export { runLeaderElection } from './runLeaderElection.js';
