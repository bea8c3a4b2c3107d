import { waitFor as boundedWait } from '@kinformer/core/internal';
import type { WaitForOptions } from '@kinformer/core/internal';

export type { WaitForOptions, WakeSource } from '@kinformer/core/internal';

/** How long the suites' waits allow by default: the tests run on loaded 2-core machines (Jest allows 30 s a test). */
export const TEST_WAIT_MS = 15_000;

/**
 * `@kinformer/core`'s bounded, event-waking `waitFor`, with a default bound of {@link TEST_WAIT_MS}
 * instead of 5 s: it returns as soon as the condition holds, so only a failing test waits longer, and
 * a condition that takes 6 s at load 14 no longer fails a suite that is right.
 */
export function waitFor(
  condition: () => boolean | Promise<boolean>,
  whatOrOptions: string | WaitForOptions = {},
  timeoutMs?: number,
): Promise<void> {
  const options = typeof whatOrOptions === 'string' ? { what: whatOrOptions } : whatOrOptions;
  return boundedWait(condition, { timeoutMs: TEST_WAIT_MS, ...options }, timeoutMs);
}

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
