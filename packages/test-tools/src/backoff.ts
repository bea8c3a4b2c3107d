import type { Backoff } from '@kinformer/core';

/** A {@link Backoff} that always answers `delayMs` (default 0: retry at once) and counts its steps. */
export class RecordingBackoff implements Backoff {
  steps = 0;
  resets = 0;
  constructor(private readonly delayMs = 0) {}
  next(): number {
    this.steps++;
    return this.delayMs;
  }
  reset(): void {
    this.resets++;
  }
}

/** A backoff that never waits (a reflector then retries on the next event-loop turn). */
export const noBackoff: Backoff = { next: (): number => 0, reset: (): void => undefined };
