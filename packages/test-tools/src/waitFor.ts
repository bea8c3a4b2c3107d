export type { WaitForOptions, WakeSource } from '@kinformer/core/internal';
export { waitFor } from '@kinformer/core/internal';

/**
 * Lets pending promise callbacks and `turns` event-loop turns run (default 5): for asserting that
 * something did NOT happen once the work already queued has run. Not a wait for a condition.
 */
export async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Rejects with an error naming `what` if `promise` has not settled within `timeoutMs` real
 * milliseconds (default 5 000); otherwise settles as it does. For asserting that something which
 * used to hang now finishes, without letting a regression hang the suite.
 */
export async function within<T>(promise: Promise<T>, what: string, timeoutMs = 5_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not settled after ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}
