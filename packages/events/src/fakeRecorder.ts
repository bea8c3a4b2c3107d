import { ErrorCodes, KinformerError } from '@kinformer/core';
import type { EventRecorder } from './eventRecorder.js';

/** Options of {@link FakeRecorder}. */
export interface FakeRecorderOptions {
  /** Append ` involvedObject{kind=<kind>,apiVersion=<apiVersion>}` to each line (client-go's `IncludeObject`). */
  includeObject?: boolean;
}

/** Options of {@link FakeRecorder.next}. */
export interface FakeRecorderNextOptions {
  /** Give up after this long (default 5000 ms), rejecting with `ERR_TIMEOUT`. */
  timeoutMs?: number;
  /** Give up when it aborts, rejecting with `ERR_ABORTED`. */
  signal?: AbortSignal;
}

/**
 * An {@link EventRecorder} for tests (client-go's `record.FakeRecorder`): every event becomes the
 * line `"<type> <reason> <note>"`, plus the object with `includeObject` and the annotations as Go
 * prints a map (` map[k:v]`, keys sorted). `events` holds every line in order; `next()` reads them
 * one by one like client-go's `Events` channel, waiting (bounded) for the next one. Nothing is
 * correlated or written.
 */
export class FakeRecorder implements EventRecorder {
  /** Every line recorded, in order. Cleared by nothing: tests read it or `next()` through it. */
  readonly events: string[] = [];
  readonly #includeObject: boolean;
  #read = 0;
  readonly #waiters = new Set<() => void>();

  constructor(options: FakeRecorderOptions = {}) {
    this.#includeObject = options.includeObject ?? false;
  }

  /**
   * Appends the event's line to {@link FakeRecorder.events} (see {@link EventRecorder.event}). Typed by the
   * interface, and bound: `recorder.event` can be passed around.
   */
  readonly event: EventRecorder['event'] = (regarding, type, reason, note, options = {}) => {
    let line = `${type} ${reason} ${note}`;
    if (this.#includeObject)
      line += ` involvedObject{kind=${regarding.kind ?? ''},apiVersion=${regarding.apiVersion ?? ''}}`;
    const annotations = Object.entries(options.annotations ?? {});
    if (annotations.length > 0) {
      annotations.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      line += ` map[${annotations.map(([k, v]) => `${k}:${v}`).join(' ')}]`;
    }
    this.events.push(line);
    for (const wake of [...this.#waiters]) wake();
  };

  /** The next line not read yet by `next()`, waiting for it when there is none. */
  next(options: FakeRecorderNextOptions = {}): Promise<string> {
    const timeoutMs = options.timeoutMs ?? 5000;
    const { signal } = options;
    return new Promise((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#waiters.delete(tryRead);
      };
      const tryRead = (): void => {
        const line = this.events[this.#read];
        if (line === undefined) return;
        this.#read++;
        finish();
        resolve(line);
      };
      const onAbort = (): void => {
        finish();
        reject(
          new KinformerError(ErrorCodes.ABORTED, 'stopped waiting for an event', { cause: signal?.reason }),
        );
      };
      const timer = setTimeout(() => {
        finish();
        reject(new KinformerError(ErrorCodes.TIMEOUT, `no event within ${timeoutMs} ms`));
      }, timeoutMs);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.add(tryRead);
      tryRead();
    });
  }
}
