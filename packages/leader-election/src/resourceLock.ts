/**
 * What a leader-election lock stores: client-go's `resourcelock.LeaderElectionRecord`, the content of
 * a `coordination.k8s.io/v1` Lease's `spec`.
 *
 * Times are what the writer's clock said; {@link LeaderElector} never compares them with its own
 * clock, it only notices that they changed.
 */
export interface LeaderElectionRecord {
  /** Who holds the lock; `''` when nobody does (never acquired, or released). */
  holderIdentity: string;
  /** How long, in whole seconds, candidates wait without seeing a change before they take over. */
  leaseDurationSeconds: number;
  /** When the current holder acquired the lock (absent when the Lease has none). */
  acquireTime?: Date | undefined;
  /** When the current holder last renewed the lock (absent when the Lease has none). */
  renewTime?: Date | undefined;
  /** How many times the lock changed hands (the Lease's `leaseTransitions`). */
  leaderTransitions: number;
  /** Coordinated leader election strategy (alpha; the Lease's `spec.strategy`). Kept, never interpreted. */
  strategy?: string | undefined;
  /** Coordinated leader election's preferred holder (alpha). Kept, never interpreted. */
  preferredHolder?: string | undefined;
}

/** Options of one {@link ResourceLock} operation. */
export interface LockOperationOptions {
  /** Aborts the operation (an in-flight HTTP request is cancelled); it then rejects with `ERR_ABORTED`. */
  signal?: AbortSignal;
}

/**
 * A lock a {@link LeaderElector} campaigns for: client-go's `resourcelock.Interface`. Implementations
 * keep the version of the object they last read or wrote, so that {@link ResourceLock.update} is an
 * optimistic-concurrency write: it fails with `ERR_CONFLICT` when anyone wrote the lock since.
 *
 * Errors are `KinformerError`s: `ERR_NOT_FOUND` from `get` when the lock does not exist,
 * `ERR_CONFLICT` from `create` when it already exists and from `update` on a stale version,
 * `ERR_ABORTED` when the signal aborted, anything else for other failures.
 */
export interface ResourceLock {
  /** This candidate's identity, written as `holderIdentity` when it holds the lock. Never empty. */
  readonly identity: string;
  /** Reads the record and remembers the object's version. Rejects with `ERR_NOT_FOUND` when absent. */
  get(options?: LockOperationOptions): Promise<LeaderElectionRecord>;
  /** Creates the lock with `record` and remembers its version. Rejects with `ERR_CONFLICT` when it exists. */
  create(record: LeaderElectionRecord, options?: LockOperationOptions): Promise<void>;
  /**
   * Replaces the record, conditional on the version from the last `get`/`create`/`update`, and
   * remembers the new version. Rejects with `ERR_CONFLICT` when the lock changed since, and with
   * `ERR_LEADER_ELECTION` when neither `get` nor `create` succeeded before.
   */
  update(record: LeaderElectionRecord, options?: LockOperationOptions): Promise<void>;
  /** A human-readable name for logs, e.g. `kube-system/my-controller`. */
  describe(): string;
  /**
   * Records a Kubernetes Event about the lock, e.g. `became leader` (client-go's `RecordEvent`).
   * Optional; the elector calls it when it starts and stops leading. Must not throw.
   */
  recordEvent?(message: string): void;
}

/**
 * A string equal for two records exactly when they hold the same values (times compared to the
 * millisecond). The elector compares records read from the lock with it, as client-go compares the
 * raw record bytes.
 */
export function leaderElectionRecordKey(record: LeaderElectionRecord): string {
  return JSON.stringify([
    record.holderIdentity,
    record.leaseDurationSeconds,
    record.acquireTime?.getTime() ?? null,
    record.renewTime?.getTime() ?? null,
    record.leaderTransitions,
    record.strategy ?? null,
    record.preferredHolder ?? null,
  ]);
}
