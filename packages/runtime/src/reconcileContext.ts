import type { KubeObject, Logger } from '@kinformer/core';
import type { EventRecorder } from '@kinformer/events';
import type { RuntimeClient } from './runtimeClient.js';

/**
 * What a reconcile gets. The runtime builds one per run; nothing in it outlives the run.
 */
export interface ReconcileContext<T extends KubeObject = KubeObject> {
  /** The key being reconciled: `namespace/name` for a namespaced primary, `name` otherwise. */
  readonly key: string;
  /** The key's namespace (`undefined` for a cluster-scoped key). */
  readonly namespace: string | undefined;
  /** The key's name. */
  readonly name: string;
  /**
   * The primary object as the cache holds it now (read when the run starts, through the writes
   * overlay so the controller's own writes are seen), frozen; `undefined` when it is gone (deleted,
   * or never existed: a key from `watches` may name nothing). Never a stale copy from the event.
   */
  readonly object: T | undefined;
  /**
   * Why this run happened: the events coalesced into it (`'deployments.v1.apps Updated'`,
   * `'configmaps.v1 Deleted (owned)'`, `'requeueAfter'`, `'retry'`). For logs and metrics only: a
   * reconcile must not branch on them (level-triggered, like controller-runtime).
   */
  readonly reasons: readonly string[];
  /** Failed runs of this key since its last success (0 on a first try). */
  readonly retries: number;
  /**
   * Aborts when the run must stop: the Manager shuts down, leadership is lost, or the controller's
   * `reconcileTimeoutMs` passed. Pass it to every request; an aborted run is not retried.
   */
  readonly signal: AbortSignal;
  /** A child logger bound to `{ controller, key }`. */
  readonly log: Logger;
  /** Records Events about objects (reportingController: the Manager's name). */
  readonly recorder: EventRecorder;
  /** Writes (and reads) through the API server; writes are seen by the next reconcile at once. */
  readonly client: RuntimeClient;
  /** The controller's name. */
  readonly controller: string;
}

/** What a reconcile returns: nothing (done) or when to run again although nothing changed. */
export type ReconcileResult = void | undefined | { requeueAfterMs?: number };

/**
 * A reconciler: makes the world match the object named by `ctx.key` and returns. Throw to retry
 * with per-key backoff (5 ms doubling to 1,000 s, reset by a success); throw a `TerminalError` to
 * give up until the object changes.
 */
export type Reconciler<T extends KubeObject = KubeObject> = (
  ctx: ReconcileContext<T>,
) => Promise<ReconcileResult> | ReconcileResult;

/**
 * Wraps every reconcile of every controller (the seam for sharding and instrumentation): call
 * `next()` to run it, or return without calling it to skip the run.
 */
export type ReconcileHook = (
  ctx: ReconcileContext,
  next: () => Promise<ReconcileResult>,
) => Promise<ReconcileResult>;
