import { isDeletedFinalStateUnknown, isKinformerError, KinformerError, ErrorCodes } from '@kinformer/core';
import type { Clock, DeletedFinalStateUnknown, KubeObject, Logger } from '@kinformer/core';
import type { EventRecorder } from '@kinformer/events';
import type { ResourceEventHandlerRegistration, SharedIndexInformer } from '@kinformer/informer';
import type { RateLimiter } from '@kinformer/workqueue';
import { kindString } from './kinds.js';
import type { Kind } from './kinds.js';
import type { RuntimeMetrics } from './metrics.js';
import { passes } from './predicates.js';
import type { Predicate } from './predicates.js';
import { PRIORITY_LOW, PRIORITY_NORMAL, ReconcileQueue } from './reconcileQueue.js';
import type { ReconcileContext, ReconcileHook, ReconcileResult, Reconciler } from './reconcileContext.js';
import type { RuntimeClient } from './runtimeClient.js';
import { isTerminalError } from './terminalError.js';

/** One source of keys: an informer, how its objects map to keys, and its predicates. */
export interface KeySource {
  /** For reasons and logs: `deployments.v1.apps`, `configmaps.v1 (owned)`. */
  readonly label: string;
  readonly informer: SharedIndexInformer<KubeObject>;
  /** The keys an object maps to (the primary: its own key). */
  readonly keys: (obj: KubeObject) => Iterable<string>;
  readonly predicates: readonly Predicate[];
}

/**
 * A reconcile let through by {@link ControllerDeps.admit}: its signal aborts the run (a range lost),
 * `done` ends it.
 */
export interface Admission {
  readonly signal: AbortSignal;
  done(): void;
}

/** What the Manager gives a controller. */
export interface ControllerDeps<T extends KubeObject> {
  readonly name: string;
  /** The primary kind and how to read its objects (through the writes overlay); absent: keys only. */
  readonly primary:
    { kind: Kind<T>; read: (key: string) => T | undefined | Promise<T | undefined> } | undefined;
  readonly sources: readonly KeySource[];
  readonly reconciler: Reconciler<T>;
  readonly concurrency: number;
  readonly reconcileTimeoutMs: number | undefined;
  readonly rateLimiter: RateLimiter<string>;
  readonly hook: ReconcileHook | undefined;
  /**
   * Hash sharding: whether this replica may reconcile `key` (its object `object`) now; `undefined`
   * skips the key (it is another replica's). Absent: every key runs.
   */
  readonly admit?: ((key: string, object: T | undefined) => Admission | undefined) | undefined;
  readonly client: RuntimeClient;
  readonly recorder: EventRecorder;
  readonly metrics: RuntimeMetrics | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** Counters of a {@link ManagedController} (a snapshot). */
export interface ControllerStats {
  /** Runs started. */
  reconciles: number;
  succeeded: number;
  /** Runs that threw (terminal ones included). */
  failed: number;
  terminal: number;
  /** Runs ended by shutdown or lost leadership. */
  aborted: number;
  /** Keys ready now / waiting out a delay / being reconciled. */
  queued: number;
  waiting: number;
  active: number;
}

/**
 * A controller the Manager runs: event handlers that turn events into keys, a
 * {@link ReconcileQueue}, and `concurrency` workers calling the reconciler. Built by
 * `mgr.controller(name)…reconcile(fn)`; started and stopped by the Manager.
 */
export class ManagedController<T extends KubeObject = KubeObject> {
  readonly name: string;
  readonly #deps: ControllerDeps<T>;
  readonly #queue: ReconcileQueue;
  readonly #registrations: ResourceEventHandlerRegistration[] = [];
  readonly #counts = { reconciles: 0, succeeded: 0, failed: 0, terminal: 0, aborted: 0 };
  #active = 0;
  #workers: Promise<void>[] = [];
  #stop: AbortController | undefined;
  #unfinishedTimer: { cancel(): void } | undefined;

  constructor(deps: ControllerDeps<T>) {
    this.name = deps.name;
    this.#deps = deps;
    this.#queue = new ReconcileQueue({
      name: deps.name,
      clock: deps.clock,
      ...(deps.metrics?.workqueue === undefined ? {} : { metrics: deps.metrics.workqueue }),
    });
  }

  /** The queue (for tests, and the sharding seam). */
  get queue(): ReconcileQueue {
    return this.#queue;
  }

  /**
   * Registers the event handlers: from now on events become keys (objects already cached arrive as
   * adds of the initial list, at low priority). Workers start with {@link startWorkers}.
   */
  watch(): void {
    if (this.#registrations.length > 0) return;
    for (const source of this.#deps.sources) this.#registrations.push(this.attach(source));
  }

  /** True once every source's handler has seen the initial list. */
  hasSynced(): boolean {
    return this.#registrations.length > 0 && this.#registrations.every((r) => r.hasSynced());
  }

  /** The `hasSynced` of every handler registration (event-waking; empty before {@link watch}). */
  syncedFns(): Array<() => boolean> {
    return this.#registrations.map((r) => r.hasSynced);
  }

  /** The informers this controller reads (for readiness). */
  informers(): SharedIndexInformer<KubeObject>[] {
    return this.#deps.sources.map((s) => s.informer);
  }

  /** Starts the workers; they stop when `signal` aborts (then in-flight runs see their signal abort). */
  startWorkers(signal: AbortSignal): void {
    if (this.#stop !== undefined) return;
    const stop = new AbortController();
    this.#stop = stop;
    const onAbort = (): void => stop.abort(signal.reason);
    if (signal.aborted) stop.abort(signal.reason);
    else signal.addEventListener('abort', onAbort, { once: true });
    stop.signal.addEventListener('abort', () => {
      signal.removeEventListener('abort', onAbort);
      this.#queue.shutdown();
    });
    this.#deps.metrics?.maxConcurrentReconciles(this.name, this.#deps.concurrency);
    this.#deps.metrics?.activeWorkers(this.name, 0);
    this.#tickUnfinished();
    for (let i = 0; i < this.#deps.concurrency; i++) this.#workers.push(this.#worker(stop.signal));
  }

  /** Resolves when every worker has returned (after the signal given to {@link startWorkers} aborted). */
  async stopped(): Promise<void> {
    await Promise.all(this.#workers);
  }

  /** Unregisters the handlers and shuts the queue down. */
  close(): void {
    this.#queue.shutdown();
    this.#unfinishedTimer?.cancel();
    for (const r of this.#registrations.splice(0)) r.remove();
  }

  stats(): ControllerStats {
    return {
      ...this.#counts,
      queued: this.#queue.length(),
      waiting: this.#queue.waitingLength(),
      active: this.#active,
    };
  }

  /**
   * Registers one more source's event handlers (hash sharding: the informer of a range just
   * acquired). Remove the registration to detach it; it is not part of {@link hasSynced}.
   *
   * @internal The Manager's hook; `KeySource` is not public.
   */
  attach(source: KeySource): ResourceEventHandlerRegistration {
    const queue = this.#queue;
    const keysOf = (obj: KubeObject): Iterable<string> => {
      try {
        return source.keys(obj);
      } catch (err) {
        this.#deps.logger.error({ err, source: source.label }, 'mapping an object to keys failed');
        return [];
      }
    };
    const enqueue = (keys: Iterable<string>, priority: number, what: string): void => {
      for (const key of keys) queue.add(key, { priority, reason: `${source.label} ${what}` });
    };
    const allow = (event: Parameters<typeof passes>[1]): boolean => {
      for (const p of source.predicates) if (!passes(p, event)) return false;
      return true;
    };
    return source.informer.addEventHandler(
      {
        onAdd: (obj, isInInitialList) => {
          if (!allow({ type: 'create', obj })) return;
          enqueue(keysOf(obj), isInInitialList ? PRIORITY_LOW : PRIORITY_NORMAL, 'Added');
        },
        onUpdate: (oldObj, newObj) => {
          if (!allow({ type: 'update', oldObj, newObj })) return;
          const resync = oldObj.metadata?.resourceVersion === newObj.metadata?.resourceVersion;
          const priority = resync ? PRIORITY_LOW : PRIORITY_NORMAL;
          // A mapping that changed (an owner or a node that moved) must hear about both sides; a key
          // both map to is queued once.
          const keys = new Set(keysOf(newObj));
          if (oldObj !== newObj) for (const k of keysOf(oldObj)) keys.add(k);
          enqueue(keys, priority, resync ? 'Resync' : 'Updated');
        },
        onDelete: (obj: KubeObject | DeletedFinalStateUnknown<KubeObject>) => {
          const last = isDeletedFinalStateUnknown(obj) ? obj.obj : obj;
          if (!allow({ type: 'delete', obj: last })) return;
          enqueue(keysOf(last), PRIORITY_NORMAL, 'Deleted');
        },
      },
      { name: `${this.name}:${source.label}` },
    );
  }

  #tickUnfinished(): void {
    if (this.#deps.metrics?.workqueue === undefined) return;
    this.#unfinishedTimer = this.#deps.clock.setTimeout(() => {
      if (this.#queue.isShutdown()) return;
      this.#queue.updateUnfinishedWork();
      this.#tickUnfinished();
    }, 500);
  }

  async #worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const item = await this.#queue.get();
      if (item === undefined) return;
      this.#active++;
      this.#deps.metrics?.activeWorkers(this.name, this.#active);
      try {
        await this.#reconcileOne(item.key, item.reasons, signal);
      } finally {
        this.#active--;
        this.#deps.metrics?.activeWorkers(this.name, this.#active);
        this.#queue.done(item.key);
      }
    }
  }

  async #reconcileOne(key: string, reasons: string[], stopSignal: AbortSignal): Promise<void> {
    const deps = this.#deps;
    let object: T | undefined;
    try {
      // From the cache, or from the API server for a kind whose cache policy is `uncached`.
      object = await deps.primary?.read(key);
    } catch (err) {
      this.#counts.failed++;
      const delay = deps.rateLimiter.when(key);
      deps.logger.error({ err, key, retryInMs: delay }, 'reading the object failed; retrying');
      this.#queue.add(key, { afterMs: delay, reason: 'retry' });
      return;
    }
    const admission = deps.admit?.(key, object);
    if (deps.admit !== undefined && admission === undefined) return;
    try {
      await this.#run(key, reasons, object, stopSignal, admission?.signal);
    } finally {
      admission?.done();
    }
  }

  async #run(
    key: string,
    reasons: string[],
    object: T | undefined,
    stopSignal: AbortSignal,
    rangeSignal: AbortSignal | undefined,
  ): Promise<void> {
    const deps = this.#deps;
    const run = new AbortController();
    const onStop = (): void => run.abort(stopSignal.reason);
    stopSignal.addEventListener('abort', onStop, { once: true });
    const onLost = (): void => run.abort(rangeSignal?.reason);
    if (rangeSignal?.aborted === true) onLost();
    else rangeSignal?.addEventListener('abort', onLost, { once: true });
    const timeoutMs = deps.reconcileTimeoutMs;
    const timer =
      timeoutMs === undefined
        ? undefined
        : deps.clock.setTimeout(
            () =>
              run.abort(
                new KinformerError(
                  ErrorCodes.RECONCILE_TIMEOUT,
                  `reconcile of ${key} took longer than ${timeoutMs} ms`,
                ),
              ),
            timeoutMs,
          );
    const slash = key.indexOf('/');
    const namespace = slash < 0 ? undefined : key.slice(0, slash);
    const name = slash < 0 ? key : key.slice(slash + 1);
    const log = deps.logger.child({ key });
    const ctx: ReconcileContext<T> = {
      key,
      namespace,
      name,
      object,
      reasons,
      retries: deps.rateLimiter.numRequeues(key),
      signal: run.signal,
      log,
      recorder: deps.recorder,
      client: deps.client,
      controller: this.name,
    };
    this.#counts.reconciles++;
    const started = deps.clock.now();
    let result: ReconcileResult;
    let failure: unknown;
    let failed = false;
    try {
      const call = (): Promise<ReconcileResult> => Promise.resolve(deps.reconciler(ctx));
      result = await (deps.hook === undefined ? call() : deps.hook(ctx, call));
      if (run.signal.aborted && isKinformerError(run.signal.reason, ErrorCodes.RECONCILE_TIMEOUT)) {
        failed = true;
        failure = run.signal.reason;
      }
    } catch (err) {
      failed = true;
      failure = err;
    } finally {
      timer?.cancel();
      stopSignal.removeEventListener('abort', onStop);
      rangeSignal?.removeEventListener('abort', onLost);
    }
    deps.metrics?.reconcileTime(this.name, (deps.clock.now() - started) / 1000);

    if (failed && (stopSignal.aborted || rangeSignal?.aborted === true)) {
      // Shutdown, lost leadership or a lost range: not a failure of the key; the next owner reconciles it.
      this.#counts.aborted++;
      log.debug({ err: failure }, 'reconcile aborted');
      return;
    }
    if (failed) {
      this.#counts.failed++;
      deps.metrics?.reconcileErrors(this.name);
      deps.metrics?.reconcileTotal(this.name, 'error');
      if (isTerminalError(failure)) {
        this.#counts.terminal++;
        deps.metrics?.terminalReconcileErrors(this.name);
        deps.rateLimiter.forget(key);
        log.error({ err: failure }, 'reconcile failed for good (terminal error): not retried');
        return;
      }
      const delay = deps.rateLimiter.when(key);
      log.error({ err: failure, retries: ctx.retries + 1, retryInMs: delay }, 'reconcile failed; retrying');
      this.#queue.add(key, { afterMs: delay, reason: 'retry' });
      return;
    }
    this.#counts.succeeded++;
    deps.rateLimiter.forget(key);
    const after = result?.requeueAfterMs;
    if (after !== undefined && after > 0 && Number.isFinite(after)) {
      deps.metrics?.reconcileTotal(this.name, 'requeue_after');
      this.#queue.add(key, { afterMs: after, reason: 'requeueAfter' });
    } else {
      deps.metrics?.reconcileTotal(this.name, 'success');
    }
  }
}

/** The key of an object: `namespace/name`, or `name` when it has no namespace. */
export function objectKey(obj: KubeObject): string {
  const ns = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  return ns ? `${ns}/${name}` : name;
}

/** For labels: `deployments.v1.apps`. */
export function sourceLabel(kind: Kind, suffix?: string): string {
  return suffix === undefined ? kindString(kind) : `${kindString(kind)} (${suffix})`;
}
