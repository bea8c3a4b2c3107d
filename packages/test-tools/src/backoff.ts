import type { Backoff } from '@kinformer/core';

/**
 * A {@link Backoff} that records every delay it answers (`delays`) and every reset. It answers
 * `inner`'s delays, or always `inner` ms when given a number (default 0: retry at once).
 */
export class RecordingBackoff implements Backoff {
  /** Every delay answered, in order. */
  readonly delays: number[] = [];
  resets = 0;
  private readonly inner: Backoff;
  constructor(inner: Backoff | number = 0) {
    this.inner = typeof inner === 'number' ? constantBackoff(inner) : inner;
  }
  /** How many delays were asked for. */
  get steps(): number {
    return this.delays.length;
  }
  next(): number {
    const d = this.inner.next();
    this.delays.push(d);
    return d;
  }
  reset(): void {
    this.resets++;
    this.inner.reset();
  }
}

function constantBackoff(delayMs: number): Backoff {
  return { next: (): number => delayMs, reset: (): void => undefined };
}

/** A backoff that never waits (a reflector then retries on the next event-loop turn). */
export const noBackoff: Backoff = constantBackoff(0);
