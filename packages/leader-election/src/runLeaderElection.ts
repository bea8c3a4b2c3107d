import type { KubeConfig } from '@kubernetes/client-node';
import { LeaderElector } from './leaderElector.js';
import type { LeaderCallbacks, LeaderElectorOptions } from './leaderElector.js';
import { LeaseLock } from './leaseLock.js';
import type { LeaseLockOptions } from './leaseLock.js';

/**
 * Options of {@link runLeaderElection}: where the Lease is, who we are, the callbacks, and any
 * {@link LeaderElectorOptions} other than `lock`, `callbacks` and `name` (logs name the Lease).
 */
export interface RunLeaderElectionOptions
  extends LeaseLockOptions, LeaderCallbacks, Omit<LeaderElectorOptions, 'lock' | 'callbacks' | 'name'> {}

/**
 * Leader election on the Lease `namespace/name` in one call (client-go's `RunOrDie` with a
 * `LeaseLock`): builds a {@link LeaseLock} and a {@link LeaderElector} and runs it until `signal`
 * aborts or leadership is lost. Throws `ERR_INVALID_OPTION` (synchronously, before any request) for
 * invalid options; otherwise settles as {@link LeaderElector.run} does.
 *
 * @example
 * await runLeaderElection(kubeConfig, {
 *   namespace: 'kube-system', name: 'my-controller', identity: process.env.POD_NAME!,
 *   onStartedLeading: (signal) => controller.run(signal),
 *   onStoppedLeading: () => process.exit(0),
 * }, signal);
 */
export function runLeaderElection(
  kubeConfig: KubeConfig,
  options: RunLeaderElectionOptions,
  signal: AbortSignal,
): Promise<void> {
  const { namespace, name, identity, onStartedLeading, onStoppedLeading, onNewLeader, ...electorOptions } =
    options;
  const lock = new LeaseLock(kubeConfig, { namespace, name, identity });
  const callbacks: LeaderCallbacks = {
    onStartedLeading,
    onStoppedLeading,
    ...(onNewLeader === undefined ? {} : { onNewLeader }),
  };
  const elector = new LeaderElector({ ...electorOptions, lock, callbacks });
  return elector.run(signal);
}
