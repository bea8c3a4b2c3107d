import { abortError } from '@kinformer/core/internal';

/**
 * The condition variable of a FIFO (internal to this package): `pop` calls {@link Waiters.wait}
 * while the queue is empty; every enqueue and `close` calls {@link Waiters.wakeAll}, and each woken
 * `pop` re-checks the queue (Go's `cond.Broadcast` + loop).
 */
export class Waiters {
  private readonly pending = new Set<() => void>();

  /** True when at least one `pop` is waiting. */
  get waiting(): boolean {
    return this.pending.size > 0;
  }

  /**
   * Resolves at the next {@link Waiters.wakeAll}. Rejects with `ERR_ABORTED` as soon as `signal`
   * aborts (immediately if it already has). The abort listener is removed either way.
   */
  wait(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise<void>((resolve, reject) => {
      const wake = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        this.pending.delete(wake);
        reject(abortError(signal));
      };
      this.pending.add(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Wakes every waiter (no-op when none waits, so enqueues stay O(1)). */
  wakeAll(): void {
    if (this.pending.size === 0) return;
    const woken = [...this.pending];
    this.pending.clear();
    for (const wake of woken) wake();
  }
}
