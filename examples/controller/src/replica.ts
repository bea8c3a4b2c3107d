/**
 * One replica of the controller process: a Manager running the pods-per-node controller while it
 * holds the shared Lease. `kill()` simulates a crash: the Lease can no longer be written (neither
 * renewed nor released), so another replica takes over only after the lease duration.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { ErrorCodes, KinformerError, LeaseLock, Manager } from 'kinformer';
import type { ManagerLeaderElectionOptions, ResourceLock } from 'kinformer';
import { addPodsPerNodeController, CONTROLLER_NAME } from './podsPerNodeController.js';

/** A running replica. */
export interface Replica {
  readonly identity: string;
  readonly manager: Manager;
  /** Settles when the Manager has stopped. */
  readonly done: Promise<void>;
  /** A graceful stop: reconciles end, then the Lease is released. */
  stop(): Promise<void>;
  /** A crash: nothing more is written to the Lease. */
  kill(): Promise<void>;
}

/** Starts a replica named `identity`; its ConfigMaps and the Lease live in `namespace`. */
export function startReplica(
  kubeConfig: KubeConfig,
  options: { identity: string; namespace: string; workers?: number } & Partial<ManagerLeaderElectionOptions>,
): Replica {
  const { identity, namespace, workers = 2, ...election } = options;
  const lease = new LeaseLock(kubeConfig, { namespace, name: CONTROLLER_NAME, identity });
  let dead = false;
  const alive = <T>(op: () => Promise<T>): Promise<T> =>
    dead ? Promise.reject(new KinformerError(ErrorCodes.CONNECTION, `${identity} crashed`)) : op();
  const lock: ResourceLock = {
    identity,
    describe: () => lease.describe(),
    recordEvent: (message) => lease.recordEvent(message),
    get: (o) => alive(() => lease.get(o)),
    create: (record, o) => alive(() => lease.create(record, o)),
    update: (record, o) => alive(() => lease.update(record, o)),
  };
  const manager = new Manager(kubeConfig, {
    name: CONTROLLER_NAME,
    leaderElection: { ...election, namespace, name: CONTROLLER_NAME, identity, lock },
  });
  addPodsPerNodeController(manager, { namespace, workers });
  const stopper = new AbortController();
  const done = manager.start(stopper.signal).catch(() => undefined);
  const stop = async (): Promise<void> => {
    stopper.abort();
    await done;
  };
  return { identity, manager, done, stop, kill: () => ((dead = true), stop()) };
}
