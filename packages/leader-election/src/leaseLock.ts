import { apiError, requestOptions } from '@kinformer/client-node';
import { ErrorCodes, KinformerError } from '@kinformer/core';
import { abortError } from '@kinformer/core/internal';
import { CoordinationV1Api, V1MicroTime } from '@kubernetes/client-node';
import type { ConfigurationOptions, KubeConfig, V1Lease, V1LeaseSpec } from '@kubernetes/client-node';
import type { LeaderElectionRecord, LockOperationOptions, ResourceLock } from './resourceLock.js';

/** Options of {@link LeaseLock}. */
export interface LeaseLockOptions {
  /** Namespace of the Lease. */
  namespace: string;
  /** Name of the Lease. */
  name: string;
  /** This candidate's identity (for example the pod name). Must be unique among candidates and non-empty. */
  identity: string;
  /**
   * Labels to put on the Lease (client-go's `LeaseLock.Labels`): set when the lock creates it, and
   * written again on every update, overwriting only these keys, so labels others put on the Lease
   * stay. A label removed from this map is not removed from the Lease.
   */
  labels?: Readonly<Record<string, string>>;
  /**
   * Where to record the elector's Events about the Lease (client-go's `ResourceLockConfig.EventRecorder`):
   * `Normal LeaderElection "<identity> became leader"` and `"<identity> stopped leading"`. An
   * `EventRecorder` of `@kinformer/events` fits; none by default.
   */
  eventRecorder?: LockEventRecorder;
}

/** What {@link LeaseLock} needs of an event recorder (`@kinformer/events`' `EventRecorder` has it). */
export interface LockEventRecorder {
  event(
    regarding: {
      apiVersion: string;
      kind: string;
      metadata: { name?: string; namespace?: string; uid?: string };
    },
    type: 'Normal',
    reason: string,
    note: string,
  ): void;
}

/**
 * A {@link ResourceLock} on a `coordination.k8s.io/v1` Lease, through `@kubernetes/client-node`'s
 * `CoordinationV1Api` (client-go's `resourcelock.LeaseLock`).
 *
 * The lock remembers the Lease it last read, created or replaced; `update` replaces that Lease with
 * a new `spec`, keeping its `metadata.resourceVersion`, so the API server answers 409 when anyone
 * wrote the Lease since (→ `ERR_CONFLICT`). Not safe for concurrent use by two electors: give each
 * elector its own lock.
 */
export class LeaseLock implements ResourceLock {
  readonly identity: string;
  readonly namespace: string;
  readonly name: string;
  readonly #labels: Readonly<Record<string, string>> | undefined;
  readonly #eventRecorder: LockEventRecorder | undefined;
  readonly #api: CoordinationV1Api;
  #lease: V1Lease | undefined;

  constructor(kubeConfig: KubeConfig, options: LeaseLockOptions) {
    this.identity = options.identity;
    this.namespace = options.namespace;
    this.name = options.name;
    this.#labels = options.labels === undefined ? undefined : { ...options.labels };
    this.#eventRecorder = options.eventRecorder;
    this.#api = kubeConfig.makeApiClient(CoordinationV1Api);
  }

  /** Reads the Lease. Rejects with `ERR_NOT_FOUND` when it does not exist. */
  async get(options: LockOperationOptions = {}): Promise<LeaderElectionRecord> {
    const lease = await this.#call(options.signal, (opts) =>
      this.#api.readNamespacedLease({ name: this.name, namespace: this.namespace }, opts),
    );
    this.#lease = lease;
    return leaseSpecToLeaderElectionRecord(lease.spec);
  }

  /** Creates the Lease, with the lock's `labels`. Rejects with `ERR_CONFLICT` when it already exists. */
  async create(record: LeaderElectionRecord, options: LockOperationOptions = {}): Promise<void> {
    const body: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: this.name,
        namespace: this.namespace,
        ...(this.#labels === undefined ? {} : { labels: { ...this.#labels } }),
      },
      spec: leaderElectionRecordToLeaseSpec(record),
    };
    this.#lease = await this.#call(options.signal, (opts) =>
      this.#api.createNamespacedLease({ namespace: this.namespace, body }, opts),
    );
  }

  /**
   * Replaces the spec of the Lease last read or written, conditional on its resourceVersion, and
   * sets the lock's `labels` on it (other labels stay, as client-go).
   * Rejects with `ERR_CONFLICT` when the Lease changed since, `ERR_LEADER_ELECTION` before any
   * successful `get` or `create`.
   */
  async update(record: LeaderElectionRecord, options: LockOperationOptions = {}): Promise<void> {
    const current = this.#lease;
    if (current === undefined) {
      throw new KinformerError(
        ErrorCodes.LEADER_ELECTION,
        'lease not initialized, call get or create first',
        {
          details: { lock: this.describe() },
        },
      );
    }
    const body: V1Lease = { ...current, spec: leaderElectionRecordToLeaseSpec(record) };
    if (this.#labels !== undefined) {
      body.metadata = { ...current.metadata, labels: { ...current.metadata?.labels, ...this.#labels } };
    }
    this.#lease = await this.#call(options.signal, (opts) =>
      this.#api.replaceNamespacedLease({ name: this.name, namespace: this.namespace, body }, opts),
    );
  }

  /**
   * Records `Normal LeaderElection "<identity> <message>"` about the Lease last read or written
   * (client-go's `RecordEvent`). Does nothing without an `eventRecorder` or before any `get`/`create`.
   */
  recordEvent(message: string): void {
    if (this.#eventRecorder === undefined || this.#lease === undefined) return;
    const { name, namespace, uid } = this.#lease.metadata ?? {};
    const metadata = {
      ...(name === undefined ? {} : { name }),
      ...(namespace === undefined ? {} : { namespace }),
      ...(uid === undefined ? {} : { uid }),
    };
    this.#eventRecorder.event(
      { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata },
      'Normal',
      'LeaderElection',
      `${this.identity} ${message}`,
    );
  }

  /** `namespace/name`. */
  describe(): string {
    return `${this.namespace}/${this.name}`;
  }

  async #call<T>(
    signal: AbortSignal | undefined,
    request: (options: ConfigurationOptions | undefined) => Promise<T>,
  ): Promise<T> {
    if (signal?.aborted) throw abortError(signal);
    try {
      return await request(requestOptions(signal));
    } catch (err) {
      throw leaseLockError(err, this.describe(), signal);
    }
  }
}

/**
 * The `KinformerError` for a failed Lease request: `apiError` of `@kinformer/client-node` (a Status
 * answer through `KinformerError.fromStatus`, so 404 → `ERR_NOT_FOUND` and 409 → `ERR_CONFLICT`
 * keeping the server's Status; other answers by their HTTP code; aborted → `ERR_ABORTED`; network
 * failures → `ERR_CONNECTION`), with `details.lock`. A `KinformerError` passes through.
 */
export function leaseLockError(err: unknown, lock: string, signal?: AbortSignal): KinformerError {
  return apiError(err, { what: `lease ${lock}`, signal, details: { lock } });
}

/**
 * The record in a Lease spec (client-go's `LeaseSpecToLeaderElectionRecord`). Missing fields read as
 * `''`/`0`/absent. Times may be `Date`s or strings: client-node 2.x types MicroTime as a `Date` but
 * hands back the server's string (`2026-01-01T00:00:00.123456Z`); both parse to a `Date` (to the
 * millisecond). An unparsable time reads as absent.
 */
export function leaseSpecToLeaderElectionRecord(spec: V1LeaseSpec | undefined): LeaderElectionRecord {
  const record: LeaderElectionRecord = {
    holderIdentity: spec?.holderIdentity ?? '',
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    leaderTransitions: spec?.leaseTransitions ?? 0,
  };
  const acquireTime = toDate(spec?.acquireTime);
  if (acquireTime !== undefined) record.acquireTime = acquireTime;
  const renewTime = toDate(spec?.renewTime);
  if (renewTime !== undefined) record.renewTime = renewTime;
  if (spec?.strategy) record.strategy = spec.strategy;
  if (spec?.preferredHolder) record.preferredHolder = spec.preferredHolder;
  return record;
}

/**
 * The Lease spec for a record (client-go's `LeaderElectionRecordToLeaseSpec`): times become
 * `V1MicroTime`s (serialised with microseconds); `strategy` and `preferredHolder` are written only
 * when non-empty.
 */
export function leaderElectionRecordToLeaseSpec(record: LeaderElectionRecord): V1LeaseSpec {
  const spec: V1LeaseSpec = {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    leaseTransitions: record.leaderTransitions,
  };
  if (record.acquireTime !== undefined) spec.acquireTime = new V1MicroTime(record.acquireTime.getTime());
  if (record.renewTime !== undefined) spec.renewTime = new V1MicroTime(record.renewTime.getTime());
  if (record.strategy) spec.strategy = record.strategy;
  if (record.preferredHolder) spec.preferredHolder = record.preferredHolder;
  return spec;
}

function toDate(value: Date | string | null | undefined): Date | undefined {
  if (value === undefined || value === null) return undefined;
  const ms = value instanceof Date ? value.getTime() : Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}
