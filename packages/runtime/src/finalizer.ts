import type { KubeObject } from '@kinformer/core';
import type { Kind } from './kinds.js';
import type { ReconcileContext, ReconcileResult, Reconciler } from './reconcileContext.js';

/** The two halves of a reconciler that owns something outside the object (see {@link withFinalizer}). */
export interface FinalizerHandlers<T extends KubeObject> {
  /** Makes the world match the object (called while it is not being deleted, finalizer in place). */
  apply(ctx: ReconcileContext<T> & { readonly object: T }): Promise<ReconcileResult> | ReconcileResult;
  /**
   * Releases what `apply` made (called once the object has a `deletionTimestamp`). The finalizer is
   * removed only after it returns; a throw retries it with backoff, and the object stays until then.
   */
  cleanup(ctx: ReconcileContext<T> & { readonly object: T }): Promise<ReconcileResult> | ReconcileResult;
}

/**
 * A reconciler with a finalizer (kube-rs' `finalizer()`, controller-runtime's `finalizer.Finalizers`):
 *
 * - object gone: nothing to do;
 * - being deleted with our finalizer: `cleanup`, then the finalizer is removed (a conditional merge
 *   patch on the object's resourceVersion: a concurrent change gives a 409 and a retry);
 * - being deleted without it: nothing (someone else's finalizer holds the object);
 * - otherwise: the finalizer is added first (same conditional patch), then `apply` runs — so `apply`
 *   never makes anything the finalizer does not guard.
 *
 * `name` is a qualified finalizer name (`example.com/cleanup`).
 */
export function withFinalizer<T extends KubeObject>(
  kind: Kind<T>,
  name: string,
  handlers: FinalizerHandlers<T>,
): Reconciler<T> {
  return async (ctx) => {
    const obj = ctx.object;
    if (obj === undefined) return;
    const finalizers = obj.metadata?.finalizers ?? [];
    const ours = finalizers.includes(name);
    const ref = { namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? ctx.name };
    const rv = obj.metadata?.resourceVersion;
    const withObject = ctx as ReconcileContext<T> & { readonly object: T };
    if (obj.metadata?.deletionTimestamp !== undefined) {
      if (!ours) return;
      const result = await handlers.cleanup(withObject);
      await ctx.client.patch(
        kind,
        ref,
        { metadata: { finalizers: finalizers.filter((f) => f !== name), resourceVersion: rv } },
        { type: 'merge', signal: ctx.signal },
      );
      ctx.log.debug({ finalizer: name }, 'finalizer removed');
      return result;
    }
    if (!ours) {
      const updated = await ctx.client.patch(
        kind,
        ref,
        { metadata: { finalizers: [...finalizers, name], resourceVersion: rv } },
        { type: 'merge', signal: ctx.signal },
      );
      ctx.log.debug({ finalizer: name }, 'finalizer added');
      return handlers.apply({ ...withObject, object: updated });
    }
    return handlers.apply(withObject);
  };
}
