import type { KinformerError } from '@kinformer/core';

/**
 * What a `hasSynced` function can tell a waiter beyond true/false (internal): why it cannot sync,
 * whether it never will, and when to look again. Informers and registrations attach one to their
 * `hasSynced` function under {@link SYNC_SOURCE}, so `waitForCacheSync` wakes on events instead of
 * polling and fails fast instead of hanging.
 */
export interface SyncSource {
  /** A short name for messages (`pods.v1`). */
  readonly name: string;
  /** The error that keeps it from syncing (a list refused with 401/403/404/400), if any. */
  syncError(): KinformerError | undefined;
  /** True when it stopped (or was removed) and so will never sync if it has not. */
  isStopped(): boolean;
  /** Calls `listener` whenever any of the above (or `hasSynced`) may have changed; returns the undo. */
  subscribe(listener: () => void): () => void;
}

/** The property under which a `hasSynced` function carries its {@link SyncSource}. */
export const SYNC_SOURCE: unique symbol = Symbol('kinformer.syncSource');

/** Returns `fn` tagged with `source`. */
export function withSyncSource<F extends () => boolean>(fn: F, source: SyncSource): F {
  Object.defineProperty(fn, SYNC_SOURCE, { value: source, enumerable: false });
  return fn;
}

/** The {@link SyncSource} a `hasSynced` function carries, if any. */
export function syncSourceOf(fn: () => boolean): SyncSource | undefined {
  return (fn as { readonly [SYNC_SOURCE]?: SyncSource })[SYNC_SOURCE];
}
