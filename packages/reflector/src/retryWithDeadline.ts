import type { Clock } from '@kinformer/core';

/**
 * client-go's `RetryWithDeadline` (`retry_with_deadline.go`): decides whether a watch that ended with a
 * retryable error (an internal error) may be retried at once, without relisting.
 *
 * - {@link after} records every watch outcome; only retryable errors count. A retryable error arriving
 *   `minResetPeriodMs` or more after the previous one starts a fresh window.
 * - {@link shouldRetry} is true while less than `maxRetryDurationMs` has passed since the first error of
 *   the window; once the window is exhausted it resets and answers false. `maxRetryDurationMs <= 0`
 *   disables retries altogether (client-go's default).
 */
export class RetryWithDeadline {
  private firstErrorAt: number | undefined;
  private lastErrorAt: number | undefined;

  constructor(
    private readonly maxRetryDurationMs: number,
    private readonly minResetPeriodMs: number,
    private readonly isRetryable: (err: unknown) => boolean,
    private readonly clock: Clock,
  ) {}

  /** Records the outcome of one watch (`undefined` for a clean end). */
  after(err: unknown): void {
    if (err === undefined || !this.isRetryable(err)) return;
    const now = this.clock.now();
    if (this.lastErrorAt === undefined || now - this.lastErrorAt >= this.minResetPeriodMs) this.reset();
    this.firstErrorAt ??= now;
    this.lastErrorAt = now;
  }

  /** True when the last retryable error may be retried immediately. */
  shouldRetry(): boolean {
    if (this.maxRetryDurationMs <= 0) return false;
    if (this.firstErrorAt !== undefined && this.clock.now() - this.firstErrorAt <= this.maxRetryDurationMs)
      return true;
    this.reset();
    return false;
  }

  private reset(): void {
    this.firstErrorAt = undefined;
    this.lastErrorAt = undefined;
  }
}
