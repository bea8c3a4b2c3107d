import { ErrorCodes, KinformerError, realClock } from '@kinformer/core';
import type { Clock } from '@kinformer/core';
import type { Timer } from '@kinformer/core/internal';
import { syncSourceOf } from './syncSource.js';
import type { SyncSource } from './syncSource.js';

/** client-go's `InformerSynced`: true once a cache (or a handler registration) has synced. */
export type InformerSynced = () => boolean;

/** Options of {@link waitForCacheSync} (the long form of its first argument). */
export interface WaitForCacheSyncOptions {
  /** Gives up (resolving `false`) when aborted. */
  signal: AbortSignal;
  /** Clock for polling plain functions. Default: the real clock. */
  clock?: Clock;
  /** How often plain functions are polled, ms. Default 100 (client-go's). */
  pollIntervalMs?: number;
}

/** How a wait ended (internal). */
export type SyncWaitOutcome = 'synced' | 'aborted' | 'stopped';

/**
 * Waits until every `hasSynced` function returns true (client-go's `WaitForCacheSync`).
 *
 * - Resolves `true` once all are true (checked immediately, then whenever one may have changed).
 * - Resolves `false` when `signal` aborts first, or when an informer (or a removed registration) that
 *   has not synced stopped, since it never will.
 * - Rejects with whatever a `hasSynced` function throws (the informers are not affected).
 * - Rejects with a `KinformerError` `ERR_CACHE_SYNC_FAILED` when an informer that has not synced
 *   cannot sync as things stand, because the server refuses its list (401/403/404/400) or its
 *   certificate cannot be trusted (an unknown CA, a name mismatch, insecure-skip-tls-verify with a
 *   CA): `cause` is that error (`ERR_UNAUTHORIZED`, `ERR_FORBIDDEN`, `ERR_NOT_FOUND`,
 *   `ERR_BAD_REQUEST`, `ERR_TLS`) and `status`/`httpStatus` are copied from it. Retrying cannot fix
 *   these without a change on one side, so a caller waiting with a timeout learns why instead of
 *   getting `false`. The informer itself keeps retrying in the background.
 *
 * The `hasSynced` of a `SharedIndexInformer` and of a handler registration (pass them as they are,
 * they are bound) wake the wait on events; any other function is polled every `pollIntervalMs` on
 * `clock`. Every listener and timer is removed before the promise settles.
 */
export async function waitForCacheSync(
  signal: AbortSignal | WaitForCacheSyncOptions,
  ...hasSynced: InformerSynced[]
): Promise<boolean> {
  const options: WaitForCacheSyncOptions = 'signal' in signal ? signal : { signal };
  return (await awaitSync(hasSynced, options)) === 'synced';
}

/**
 * The engine of {@link waitForCacheSync} (shared with the factory): resolves with how the wait ended,
 * rejects with `ERR_CACHE_SYNC_FAILED` (see there).
 */
export function awaitSync(
  hasSynced: readonly InformerSynced[],
  options: WaitForCacheSyncOptions,
): Promise<SyncWaitOutcome> {
  const { signal } = options;
  const clock = options.clock ?? realClock;
  const pollIntervalMs = options.pollIntervalMs ?? 100;
  const sources: (SyncSource | undefined)[] = hasSynced.map(syncSourceOf);

  return new Promise<SyncWaitOutcome>((resolve, reject) => {
    const undo: (() => void)[] = [];
    let timer: Timer | undefined;
    let settled = false;

    const finish = (settle: () => void): void => {
      settled = true;
      timer?.cancel();
      timer = undefined;
      signal.removeEventListener('abort', check);
      for (const u of undo) u();
      settle();
    };

    // Runs in an abort listener, a timer, or inside an informer (a listener's drain loop, the
    // reflector's error path): it must never throw, so a throwing hasSynced rejects the wait.
    function check(): void {
      if (settled) return;
      try {
        evaluate();
      } catch (err) {
        if (!settled)
          finish(() =>
            reject(err instanceof Error ? err : new Error(`hasSynced threw ${String(err)}`, { cause: err })),
          );
      }
    }

    function evaluate(): void {
      let allSynced = true;
      let stopped = false;
      for (let i = 0; i < hasSynced.length; i++) {
        if (hasSynced[i]!()) continue;
        allSynced = false;
        const source = sources[i];
        if (source === undefined) continue;
        const cause = source.syncError();
        if (cause !== undefined) {
          finish(() => reject(cacheSyncFailed(source.name, cause)));
          return;
        }
        if (source.isStopped()) stopped = true;
      }
      if (allSynced) finish(() => resolve('synced'));
      else if (signal.aborted) finish(() => resolve('aborted'));
      else if (stopped) finish(() => resolve('stopped'));
    }

    const poll = (): void => {
      timer = undefined;
      check();
      if (!settled) timer = clock.setTimeout(poll, pollIntervalMs);
    };

    check();
    if (settled) return;
    signal.addEventListener('abort', check);
    for (const source of sources) if (source !== undefined) undo.push(source.subscribe(check));
    if (sources.includes(undefined)) timer = clock.setTimeout(poll, pollIntervalMs);
  });
}

/** The `ERR_CACHE_SYNC_FAILED` error for an informer that cannot sync because of `cause`. */
export function cacheSyncFailed(name: string, cause: KinformerError): KinformerError {
  return new KinformerError(
    ErrorCodes.CACHE_SYNC_FAILED,
    `${name} cannot sync: ${cause.message} (${cause.code})`,
    {
      cause,
      ...(cause.status === undefined ? {} : { status: cause.status }),
      ...(cause.httpStatus === undefined ? {} : { httpStatus: cause.httpStatus }),
      details: { informer: name, causeCode: cause.code },
    },
  );
}
