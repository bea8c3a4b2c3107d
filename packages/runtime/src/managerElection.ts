import { ErrorCodes, KinformerError } from '@kinformer/core';
import type { Clock, Logger } from '@kinformer/core';
import { LeaderElector, LeaseLock } from '@kinformer/leader-election';
import type { KubeConfig } from '@kubernetes/client-node';
import { ControllerRing, defaultShardIdentity } from './controllerRing.js';
import type { ManagerLeaderElectionOptions, ManagerOptions } from './managerOptions.js';

/** What the Manager campaigns with: a leader-election Lease, or a shard's own Lease in a ring. */
export interface ManagerElection {
  elector: LeaderElector | undefined;
  ring: ControllerRing | undefined;
}

/**
 * The Manager's elector for `leaderElection`, or for `controllerRing` (a shard Lease is leader
 * election on a Lease of one's own: name = holderIdentity = identity, carrying the ring label).
 */
export function managerElection(
  kubeConfig: KubeConfig | undefined,
  options: ManagerOptions,
  clock: Clock,
  callbacks: {
    onStartedLeading: (signal: AbortSignal, le: ManagerLeaderElectionOptions) => Promise<void>;
    onStoppedLeading: (le: ManagerLeaderElectionOptions) => void;
  },
): ManagerElection {
  let le = options.leaderElection;
  const ringOptions = options.controllerRing;
  let ring: ControllerRing | undefined;
  if (ringOptions !== undefined) {
    if (le)
      throw new KinformerError(
        ErrorCodes.INVALID_OPTION,
        'controllerRing and leaderElection exclude each other: a shard runs under its shard Lease',
      );
    ring = new ControllerRing(ringOptions, ringOptions.identity ?? defaultShardIdentity());
    // The rest (namespace, the Lease timings, onLeadershipChange) carries over as it is.
    const { name: _ring, identity: _identity, kinds: _kinds, ...lease } = ringOptions;
    le = { ...lease, name: ring.identity, identity: ring.identity, releaseOnCancel: true };
  }
  if (!le) return { elector: undefined, ring };
  if (kubeConfig === undefined)
    throw new KinformerError(ErrorCodes.INVALID_OPTION, 'leader election needs a KubeConfig');
  const labels = ring?.leaseLabels();
  const lock =
    le.lock ??
    new LeaseLock(kubeConfig, {
      namespace: le.namespace,
      name: le.name,
      identity: le.identity ?? defaultIdentity(),
      ...(labels === undefined ? {} : { labels }),
    });
  const chosen = le;
  const elector = new LeaderElector({
    lock,
    releaseOnCancel: le.releaseOnCancel ?? true,
    clock,
    ...(le.leaseDurationMs === undefined ? {} : { leaseDurationMs: le.leaseDurationMs }),
    ...(le.renewDeadlineMs === undefined ? {} : { renewDeadlineMs: le.renewDeadlineMs }),
    ...(le.retryPeriodMs === undefined ? {} : { retryPeriodMs: le.retryPeriodMs }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    callbacks: {
      onStartedLeading: (signal) => callbacks.onStartedLeading(signal, chosen),
      onStoppedLeading: () => callbacks.onStoppedLeading(chosen),
    },
  });
  return { elector, ring };
}

/** `$POD_NAME`, else `<hostname>_<random>` (client-go's examples use the hostname plus a UUID). */
function defaultIdentity(): string {
  const pod = process.env['POD_NAME'];
  if (pod) return pod;
  return `${process.env['HOSTNAME'] ?? 'kinformer'}_${Math.random().toString(36).slice(2, 10)}`;
}

/** Runs a user callback; what it throws is logged, not propagated. */
export function safely(fn: () => void, logger: Logger): void {
  try {
    fn();
  } catch (err) {
    logger.error({ err }, 'onLeadershipChange threw');
  }
}
