import { ObjectClient } from '@kinformer/client-node';
import { ErrorCodes, KinformerError } from '@kinformer/core';
import { componentLogger, definedProps } from '@kinformer/core/internal';
import type { Clock, KubeObject } from '@kinformer/core';
import { SharedIndexInformer } from '@kinformer/informer';
import type { ListerWatcherFactory } from '@kinformer/informer';
import type { KubeConfig } from '@kubernetes/client-node';
import { andSelectors, informerScope } from './cachePolicy.js';
import type { CachePolicies } from './cachePolicy.js';
import { defaultShardIdentity } from './controllerRing.js';
import { HashSharding, objectClientLeaseStore } from './hashSharding.js';
import type { RangeSelection } from './hashSharding.js';
import { kindString } from './kinds.js';
import type { Kind } from './kinds.js';
import type { ManagerOptions } from './managerOptions.js';

/** What the Manager's hash sharding is built from. */
export interface ManagerShardingDeps {
  /** The Manager's name (field manager, log context). */
  name: string;
  options: ManagerOptions;
  clock: Clock;
  cache: CachePolicies;
  listerWatchers: ListerWatcherFactory;
  /** Read-your-writes: retires the overlay's entries for what `informer` delivers. */
  observeWrites(kind: Kind, informer: SharedIndexInformer<KubeObject>): void;
}

/** The Manager's {@link HashSharding} for `hashSharding`, or `undefined` without that option. */
export function managerHashSharding(
  kubeConfig: KubeConfig | undefined,
  deps: ManagerShardingDeps,
): HashSharding | undefined {
  const options = deps.options;
  const hs = options.hashSharding;
  if (hs === undefined) return undefined;
  if (options.leaderElection || options.controllerRing !== undefined)
    throw new KinformerError(
      ErrorCodes.INVALID_OPTION,
      'hashSharding excludes leaderElection and controllerRing: each range is its own Lease',
    );
  let store = hs.leases;
  if (store === undefined) {
    if (kubeConfig === undefined)
      throw new KinformerError(ErrorCodes.INVALID_OPTION, 'hashSharding needs a KubeConfig or a lease store');
    store = objectClientLeaseStore(
      new ObjectClient(kubeConfig, { fieldManager: deps.name }),
      hs.namespace,
      hs.name,
      deps.listerWatchers,
    );
  }
  return new HashSharding(hs, {
    identity: hs.identity ?? defaultShardIdentity(),
    clock: deps.clock,
    logger: componentLogger(options.logger, { component: 'hash-sharding', manager: deps.name }),
    store,
    rangeInformer: (kind, range, selection) => rangeInformer(deps, kind, range, selection),
    // The interner's table would keep the strings of the range's objects (up to its size).
    rangeStopped: () => deps.cache.forgetInterned(),
  });
}

/** The informer of one hash range of `kind` (its cache policy applies; not started). */
function rangeInformer(
  deps: ManagerShardingDeps,
  kind: Kind,
  range: number,
  selection: RangeSelection,
): SharedIndexInformer<KubeObject> {
  const { options, cache } = deps;
  const owned = selection.owned;
  const scope = informerScope(
    kind,
    cache.of(kind),
    owned === undefined
      ? {}
      : {
          ...owned.scope,
          ...(owned.labelSelector === undefined
            ? {}
            : { labelSelector: andSelectors(owned.scope.labelSelector, owned.labelSelector) }),
          metadataOnly: true,
        },
    options.namespace ?? '',
  );
  const listerWatcher = deps.listerWatchers(kind, {
    namespace: scope.namespace ?? options.namespace ?? '',
    metadataOnly: scope.metadataOnly,
    ...definedProps({ labelSelector: scope.labelSelector, fieldSelector: scope.fieldSelector }),
  });
  const transform = cache.transformOf(kind);
  const informer = new SharedIndexInformer<KubeObject>(listerWatcher, {
    name: `${kindString(kind)}#${owned === undefined ? '' : 'owned-'}range-${range}`,
    clock: deps.clock,
    ...(transform === undefined ? {} : { transform }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(selection.shardSelector === undefined
      ? {}
      : { reflectorOptions: { shardSelector: selection.shardSelector } }),
  });
  if (!scope.metadataOnly) deps.observeWrites(kind, informer);
  return informer;
}
