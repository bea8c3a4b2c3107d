import { ErrorCodes, KinformerError } from '@kinformer/core';
import type { LeaderElectionRecord, LockOperationOptions, ResourceLock } from './resourceLock.js';

/** A lock operation. */
export type LockOp = 'get' | 'create' | 'update';

/** One operation a lock performed, as the store saw it. */
export interface LockCall {
  identity: string;
  op: LockOp;
  /** Store time (the test's clock) when the call started. */
  at: number;
  /** The record written (create/update). */
  record?: LeaderElectionRecord;
  outcome?: 'ok' | 'conflict' | 'not-found' | 'error' | 'aborted';
}

interface Fault {
  op: LockOp;
  identity: string | undefined;
  remaining: number;
  act: (signal: AbortSignal | undefined) => Promise<void>;
}

/** Copies a record so that no one shares Date objects or fields with the store. */
export function cloneRecord(record: LeaderElectionRecord): LeaderElectionRecord {
  const copy: LeaderElectionRecord = { ...record };
  if (record.acquireTime !== undefined) copy.acquireTime = new Date(record.acquireTime.getTime());
  if (record.renewTime !== undefined) copy.renewTime = new Date(record.renewTime.getTime());
  return copy;
}

/**
 * The shared state of an in-memory lock: one record with a version, like one Lease on an API server.
 * Each candidate gets its own {@link InMemoryLock} (its own remembered version), so updates race
 * with optimistic concurrency as on a real server. Faults can be injected per operation.
 */
export class InMemoryLeaseStore {
  record: LeaderElectionRecord | undefined;
  version = 0;
  readonly calls: LockCall[] = [];
  readonly #now: () => number;
  #faults: Fault[] = [];

  constructor(now: () => number = () => 0) {
    this.#now = now;
  }

  /** A lock on this store for `identity`. */
  lock(identity: string): InMemoryLock {
    return new InMemoryLock(this, identity);
  }

  /** Someone else writes the record (bumps the version). */
  write(record: LeaderElectionRecord): void {
    this.record = cloneRecord(record);
    this.version++;
  }

  /** Someone changes the object without changing the record (a label edit): only the version moves. */
  touch(): void {
    this.version++;
  }

  /** The next `times` matching operations reject with `error` (default: a 500). */
  failNext(op: LockOp, options: { identity?: string; times?: number; error?: KinformerError } = {}): void {
    const error =
      options.error ?? new KinformerError(ErrorCodes.INTERNAL, 'injected failure', { httpStatus: 500 });
    this.#add(op, options, () => Promise.reject(error));
  }

  /** The next `times` matching operations never answer (they reject only when their signal aborts). */
  hangNext(op: LockOp, options: { identity?: string; times?: number } = {}): void {
    this.#add(
      op,
      options,
      (signal) =>
        new Promise<void>((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(new KinformerError(ErrorCodes.ABORTED, 'aborted')), {
            once: true,
          });
        }),
    );
  }

  /** Runs `fn` right before the next matching operation is applied (to interleave another writer). */
  beforeNext(op: LockOp, fn: () => void, options: { identity?: string } = {}): void {
    this.#add(op, { ...options, times: 1 }, () => {
      fn();
      return Promise.resolve();
    });
  }

  /** Calls made by `identity` (all when absent), optionally of one operation. */
  callsOf(identity?: string, op?: LockOp): LockCall[] {
    return this.calls.filter(
      (c) => (identity === undefined || c.identity === identity) && (op === undefined || c.op === op),
    );
  }

  #add(op: LockOp, options: { identity?: string; times?: number }, act: Fault['act']): void {
    this.#faults.push({ op, identity: options.identity, remaining: options.times ?? 1, act });
  }

  /** @internal Runs the first matching fault, if any. */
  async applyFault(op: LockOp, identity: string, signal: AbortSignal | undefined): Promise<void> {
    const fault = this.#faults.find(
      (f) => f.op === op && (f.identity === undefined || f.identity === identity),
    );
    if (fault === undefined) return;
    fault.remaining--;
    if (fault.remaining <= 0) this.#faults = this.#faults.filter((f) => f !== fault);
    await fault.act(signal);
  }

  /** @internal */
  now(): number {
    return this.#now();
  }
}

/** A {@link ResourceLock} on an {@link InMemoryLeaseStore}. */
export class InMemoryLock implements ResourceLock {
  readonly identity: string;
  /** The messages of `recordEvent`, in order. */
  readonly recordedEvents: string[] = [];
  readonly #store: InMemoryLeaseStore;
  #seenVersion: number | undefined;

  constructor(store: InMemoryLeaseStore, identity: string) {
    this.#store = store;
    this.identity = identity;
  }

  recordEvent(message: string): void {
    this.recordedEvents.push(message);
  }

  async get(options: LockOperationOptions = {}): Promise<LeaderElectionRecord> {
    return this.#run('get', undefined, options, () => {
      const store = this.#store;
      if (store.record === undefined)
        throw new KinformerError(ErrorCodes.NOT_FOUND, 'leases "le" not found', { httpStatus: 404 });
      this.#seenVersion = store.version;
      return cloneRecord(store.record);
    });
  }

  async create(record: LeaderElectionRecord, options: LockOperationOptions = {}): Promise<void> {
    return this.#run('create', record, options, () => {
      const store = this.#store;
      if (store.record !== undefined)
        throw new KinformerError(ErrorCodes.CONFLICT, 'leases "le" already exists', { httpStatus: 409 });
      store.write(record);
      this.#seenVersion = store.version;
    });
  }

  async update(record: LeaderElectionRecord, options: LockOperationOptions = {}): Promise<void> {
    return this.#run('update', record, options, () => {
      const store = this.#store;
      if (this.#seenVersion === undefined)
        throw new KinformerError(
          ErrorCodes.LEADER_ELECTION,
          'lease not initialized, call get or create first',
        );
      if (store.record === undefined)
        throw new KinformerError(ErrorCodes.NOT_FOUND, 'leases "le" not found', { httpStatus: 404 });
      if (this.#seenVersion !== store.version) {
        throw new KinformerError(
          ErrorCodes.CONFLICT,
          'the object has been modified; please apply your changes to the latest version and try again',
          { httpStatus: 409 },
        );
      }
      store.write(record);
      this.#seenVersion = store.version;
    });
  }

  describe(): string {
    return 'default/le';
  }

  async #run<T>(
    op: LockOp,
    record: LeaderElectionRecord | undefined,
    options: LockOperationOptions,
    apply: () => T,
  ): Promise<T> {
    const call: LockCall = { identity: this.identity, op, at: this.#store.now() };
    if (record !== undefined) call.record = cloneRecord(record);
    this.#store.calls.push(call);
    try {
      await Promise.resolve(); // answer asynchronously, like I/O
      await this.#store.applyFault(op, this.identity, options.signal);
      if (options.signal?.aborted) throw new KinformerError(ErrorCodes.ABORTED, 'aborted');
      const result = apply();
      call.outcome = 'ok';
      return result;
    } catch (err) {
      call.outcome = outcomeOf(err);
      throw err;
    }
  }
}

function outcomeOf(err: unknown): NonNullable<LockCall['outcome']> {
  if (!(err instanceof KinformerError)) return 'error';
  if (err.code === ErrorCodes.CONFLICT) return 'conflict';
  if (err.code === ErrorCodes.NOT_FOUND) return 'not-found';
  if (err.code === ErrorCodes.ABORTED) return 'aborted';
  return 'error';
}
