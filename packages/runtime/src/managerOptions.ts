import type { Clock, KubeObject, Logger } from '@kinformer/core';
import type { EventRecorder } from '@kinformer/events';
import type { ListerWatcherFactory } from '@kinformer/informer';
import type { ResourceLock } from '@kinformer/leader-election';
import type { CacheOptions } from './cachePolicy.js';
import type { ManagerControllerRingOptions } from './controllerRing.js';
import type { ManagerHashShardingOptions } from './hashSharding.js';
import type { RuntimeMetrics } from './metrics.js';
import type { ReconcileHook } from './reconcileContext.js';
import type { ObjectWriter } from './runtimeClient.js';

/** Leader election of a `Manager`: one Lease; controllers run only while this replica holds it. */
export interface ManagerLeaderElectionOptions {
  /** The Lease's namespace. */
  namespace: string;
  /** The Lease's name (usually the operator's name). */
  name: string;
  /** This replica's identity (default: `$POD_NAME`, else the hostname and a random suffix). */
  identity?: string;
  /** Default 15 s. */
  leaseDurationMs?: number;
  /** Default 10 s. */
  renewDeadlineMs?: number;
  /** Default 2 s. */
  retryPeriodMs?: number;
  /**
   * Release the Lease when the Manager stops (after every reconcile has ended), so the next replica
   * leads within about a retry period instead of a lease duration. Default true.
   */
  releaseOnCancel?: boolean;
  /** Campaign on this lock instead of a `LeaseLock` on `namespace/name` (tests, other lock kinds). */
  lock?: ResourceLock;
  /** Called when this replica starts leading (`true`) and when its leader-only controllers have stopped (`false`). */
  onLeadershipChange?: (leading: boolean) => void;
}

/** Options of `Manager`. */
export interface ManagerOptions {
  /** Names the Manager in logs, Events (`reportingController`) and as the default field manager. Default `kinformer-manager`. */
  name?: string;
  /** Cache (and reconcile) only this namespace; default: all namespaces. */
  namespace?: string;
  /** Leader election over a Lease; absent or false: every controller runs at once. */
  leaderElection?: ManagerLeaderElectionOptions | false;
  /**
   * Shard mode (timebertt/kubernetes-controller-sharding's `ControllerRing` protocol): this replica
   * holds its own shard Lease instead of a leader-election Lease, its informers of the ring's kinds
   * select only the objects assigned to it, and drained objects are handed back without reconciling.
   * Excludes `leaderElection`. See `docs/sharding.md`.
   */
  controllerRing?: ManagerControllerRingOptions;
  /**
   * Hash sharding through Leases: the hash space of the primary objects' uids split into
   * `virtualRanges` ranges, each reconciled by one replica at a time (its Lease), balanced over the
   * live replicas, with one informer per owned range and a handoff on every move. Excludes
   * `leaderElection` and `controllerRing`. See the runtime README.
   */
  hashSharding?: ManagerHashShardingOptions;
  /**
   * Start the informers (and queue keys) before this replica leads, so a new leader reconciles
   * within a second of winning instead of after its caches sync (controller-runtime's
   * `EnableWarmup`). Default true; false saves a standby's memory.
   */
  warmup?: boolean;
  /**
   * Serve `/healthz`, `/readyz` (false until every cache synced; `/readyz/informer-sync` says why,
   * e.g. a 403) and, with `metrics`, `/metrics` on this port (0: any free port; see
   * `Manager.probeAddress`). Absent: no server.
   */
  probes?: { port: number; host?: string };
  /** controller-runtime's metrics (`@kinformer/prometheus`'s `controllerRuntimeMetrics()`). */
  metrics?: RuntimeMetrics;
  /** How long a stop waits for reconciles in flight (they see `ctx.signal` abort at once). Default 30 s. */
  gracefulShutdownMs?: number;
  /**
   * Drop `metadata.managedFields` from every cached object (often a third of an object's JSON; a
   * reconcile almost never reads it). Default true; logged once at start.
   */
  stripManagedFields?: boolean;
  /**
   * What to cache of each kind: namespaces, selectors, metadata-only, a transform (a `project`ion),
   * keeping managedFields, or nothing at all (`uncached`: reads go to the API server). See
   * `KindCachePolicy`.
   */
  cache?: CacheOptions;
  /**
   * Reads (`ctx.object`, `mgr.get`) see this Manager's own writes at once, before the informer
   * delivers them (default true; false only to measure what it prevents).
   */
  readYourWrites?: boolean;
  /** Wraps every reconcile of every controller (instrumentation, sharding). */
  reconcileHook?: ReconcileHook;
  /** What `ctx.client` writes through (default: `@kinformer/client-node`'s ObjectClient on the KubeConfig). */
  writer?: ObjectWriter;
  /** The Event recorder of `ctx.recorder` (default: an `ApiEventRecorder` on the KubeConfig). */
  recorder?: EventRecorder;
  /** Builds the ListerWatchers (default: `createListWatch` on the KubeConfig). */
  listerWatcherFactory?: ListerWatcherFactory;
  /** Per-key retry backoff base and cap (default 5 ms → 1,000 s, controller-runtime's). */
  retry?: { baseDelayMs?: number; maxDelayMs?: number };
  clock?: Clock;
  logger?: Logger;
}

/** An index over a kind's cache (from `Manager.index`). */
export interface IndexRef<T extends KubeObject> {
  /** The objects whose index function returned `value`. */
  list(value: string): T[];
  /** Their keys (`namespace/name`): what a `watches` mapping usually returns. */
  keys(value: string): string[];
}
