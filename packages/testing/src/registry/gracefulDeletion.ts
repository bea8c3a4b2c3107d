import type { JsonObject } from '../api/json.js';
import { isEmpty, rfc3339 } from '../storage/storedForm.js';

/**
 * What a DELETE does to an object, decided as kube-apiserver's generic registry does
 * (`registry/rest/delete.go` `BeforeDelete`, `registry/generic/registry/store.go` `Delete`,
 * `updateForGracefulDeletionAndFinalizers`, `markAsDeleting`; a kind's
 * `CheckGracefulDelete`, for pods in `core/pod.ts`).
 */

/** `DeleteOptions` fields the fake honours besides the preconditions. */
export interface DeleteBehaviour {
  /** `gracePeriodSeconds` (negative values count as 1, as the real server does). */
  gracePeriodSeconds?: number;
  /** `propagationPolicy`: what happens to the dependents (default `Background`). */
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  /** `dryRun=All`: work out the deletion, write nothing. */
  dryRun?: boolean;
}

/**
 * - `pending`: a graceful deletion is already under way and may not be shortened: nothing is written;
 * - `delete`: removed now (one DELETED event);
 * - `mark`: `metadata` gets `deletionTimestamp`/`deletionGracePeriodSeconds` (and a generation bump)
 *   in one MODIFIED write; `thenDelete` removes it right after (MODIFIED, then DELETED), otherwise it
 *   stays until its finalizers are gone and, for a grace period > 0, until the kubelet's delete.
 */
export type DeletionPlan =
  | { kind: 'pending' }
  | { kind: 'delete' }
  | { kind: 'mark'; metadata: JsonObject; graceSeconds: number; thenDelete: boolean };

function graceOf(value: unknown): number | undefined {
  if (typeof value !== 'number') return undefined;
  return value < 0 ? 1 : value;
}

function bumpedGeneration(meta: JsonObject): unknown {
  return typeof meta.generation === 'number' && meta.generation > 0 ? meta.generation + 1 : meta.generation;
}

/**
 * Decides what a DELETE of `obj` does at `nowMs`. `gracePeriod` is the kind's `CheckGracefulDelete`
 * (`ResourceStrategy.gracePeriod`, pods), undefined for kinds deleted at once.
 */
export function planDeletion(
  obj: JsonObject & { metadata: JsonObject },
  options: DeleteBehaviour,
  nowMs: number,
  gracePeriod: ((obj: JsonObject, requested: number | undefined) => number) | undefined,
): DeletionPlan {
  const meta = obj.metadata;
  const requested = graceOf(options.gracePeriodSeconds);
  const pendingFinalizers = !isEmpty(meta.finalizers);
  const since = typeof meta.deletionTimestamp === 'string' ? Date.parse(meta.deletionTimestamp) : undefined;
  if (gracePeriod !== undefined) {
    if (since === undefined) {
      const period = gracePeriod(obj, requested);
      return {
        kind: 'mark',
        metadata: {
          ...meta,
          generation: bumpedGeneration(meta),
          deletionTimestamp: rfc3339(nowMs + period * 1000),
          deletionGracePeriodSeconds: period,
        },
        graceSeconds: period,
        thenDelete: !pendingFinalizers && period === 0,
      };
    }
    const current = graceOf(meta.deletionGracePeriodSeconds);
    if (current !== undefined && current !== 0) {
      // Already being deleted gracefully: only a shorter grace period changes anything.
      if (requested === undefined || requested >= current) return { kind: 'pending' };
      let at = since - current * 1000 + requested * 1000;
      let period = requested;
      if (at < nowMs) {
        at = nowMs;
        if (period !== 0) period = 1;
      }
      return {
        kind: 'mark',
        metadata: { ...meta, deletionTimestamp: rfc3339(at), deletionGracePeriodSeconds: period },
        graceSeconds: period,
        thenDelete: !pendingFinalizers && period === 0,
      };
    }
  }
  if (!pendingFinalizers) return { kind: 'delete' };
  // markAsDeleting: a first deletion bumps the generation; the timestamp never moves later.
  const keep = since !== undefined && since <= nowMs;
  return {
    kind: 'mark',
    metadata: {
      ...meta,
      generation: since === undefined ? bumpedGeneration(meta) : meta.generation,
      deletionTimestamp: keep ? meta.deletionTimestamp : rfc3339(nowMs),
      deletionGracePeriodSeconds: 0,
    },
    graceSeconds: 0,
    thenDelete: false,
  };
}

/**
 * `ShouldDeleteDuringUpdate`: an update that leaves no finalizers on an object being deleted with
 * no (or a zero) grace period deletes it.
 */
export function shouldDeleteDuringUpdate(existing: JsonObject, updatedFinalizers: unknown): boolean {
  if (!isEmpty(updatedFinalizers) || existing.deletionTimestamp === undefined) return false;
  const grace = existing.deletionGracePeriodSeconds;
  return grace === undefined || grace === 0;
}
