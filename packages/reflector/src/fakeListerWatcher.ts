import { type KubeList, type KubeObject } from '@kinformer/core';
import { abortError } from '@kinformer/core/internal';
import { waitFor } from '@kinformer/core/internal';
import { FakeWatchStream } from './fakeWatchStream.js';
import { ABORTED, raceAbort } from './watchStream.js';
import type {
  ListerWatcher,
  ListOptions,
  RequestContext,
  WatchEvent,
  WatchOptions,
} from './listerWatcher.js';

/**
 * What one scripted LIST call answers: a list, an error (the call rejects with it), or a function of
 * the call's options (which may return a promise — one that never settles simulates a hanging request;
 * the fake still rejects it when the request's signal aborts).
 */
export type FakeListResult<T> =
  KubeList<T> | Error | ((options: ListOptions, call: number) => KubeList<T> | Promise<KubeList<T>>);

/**
 * What one scripted WATCH call does: reject with an error (the server refused the watch), serve a
 * stream pre-filled with `events` that then stays `'open'` (default), `'close'`s cleanly, `'break'`s
 * the connection or throws an error; or a function that receives the stream to drive it itself.
 */
export type FakeWatchScript<T extends KubeObject> =
  | Error
  | { events?: Array<WatchEvent<T>>; then?: 'open' | 'close' | 'break' | Error }
  | ((stream: FakeWatchStream<T>, options: WatchOptions) => void);

/** One recorded request. `options` is a copy of what the caller passed. */
export type FakeCall = { verb: 'list'; options: ListOptions } | { verb: 'watch'; options: WatchOptions };

/** Options of {@link FakeListerWatcher}. */
export interface FakeListerWatcherOptions<T> {
  /** Exposed as `watchListSupported`; `false` makes reflectors skip streaming lists. Default: unset (supported). */
  watchListSupported?: boolean;
  /** Answers LIST calls once the scripted results are used up. Default: the call hangs until its signal aborts. */
  list?: (options: ListOptions, call: number) => KubeList<T> | Promise<KubeList<T>>;
  /** How long `nextWatch`/`waitFor` wait (real time) before rejecting. Default 5000 ms. */
  waitTimeoutMs?: number;
}

/**
 * An in-memory {@link ListerWatcher} for tests of reflector-driven code, without HTTP.
 *
 * - LIST calls take the next result queued with {@link enqueueList}, then fall back to the `list`
 *   option; without either they hang until their signal aborts.
 * - WATCH calls take the next script queued with {@link enqueueWatch}; without one they open an empty
 *   stream that the test drives through {@link nextWatch} / {@link watches}.
 * - Every call is recorded in order in {@link calls} (with a copy of its options), so tests can assert
 *   the exact sequence of requests, e.g. list resourceVersions `"0"`, `"20"`, `""`, `"30"`.
 * - Every call honours its `signal`: an aborted LIST rejects with `ERR_ABORTED`; an aborted watch's
 *   stream completes.
 */
export class FakeListerWatcher<T extends KubeObject = KubeObject> implements ListerWatcher<T> {
  readonly watchListSupported?: boolean;
  /** Every request, in order. */
  readonly calls: FakeCall[] = [];
  /** Every stream served, in order (watch calls that rejected have none). */
  readonly watches: Array<FakeWatchStream<T>> = [];

  private readonly listScript: Array<FakeListResult<T>> = [];
  private listHead = 0;
  private readonly watchScript: Array<FakeWatchScript<T>> = [];
  private watchHead = 0;
  private readonly fallbackList:
    ((options: ListOptions, call: number) => KubeList<T> | Promise<KubeList<T>>) | undefined;
  private readonly waitTimeoutMs: number;
  private nextWatchCursor = 0;
  private listCount = 0;
  private readonly waiters = new Set<() => void>();
  /** Wakes {@link waitFor} on every request. */
  private readonly requested = {
    on: (_event: string, listener: () => void): void => void this.waiters.add(listener),
    off: (_event: string, listener: () => void): void => void this.waiters.delete(listener),
  };

  constructor(options: FakeListerWatcherOptions<T> = {}) {
    if (options.watchListSupported !== undefined) this.watchListSupported = options.watchListSupported;
    this.fallbackList = options.list;
    this.waitTimeoutMs = options.waitTimeoutMs ?? 5000;
  }

  /** Queues the answers of the next LIST calls, in order. */
  enqueueList(...results: Array<FakeListResult<T>>): this {
    this.listScript.push(...results);
    return this;
  }

  /** Queues what the next WATCH calls do, in order. */
  enqueueWatch(...scripts: Array<FakeWatchScript<T>>): this {
    this.watchScript.push(...scripts);
    return this;
  }

  /** The options of every LIST call, in order. */
  get listCalls(): ListOptions[] {
    const out: ListOptions[] = [];
    for (const c of this.calls) if (c.verb === 'list') out.push(c.options);
    return out;
  }

  /** The options of every WATCH call, in order (including those that were rejected). */
  get watchCalls(): WatchOptions[] {
    const out: WatchOptions[] = [];
    for (const c of this.calls) if (c.verb === 'watch') out.push(c.options);
    return out;
  }

  /**
   * The next stream not yet handed out by this method (the first call returns the first stream served,
   * and so on), waiting for it to open. Rejects after `waitTimeoutMs` of real time.
   */
  async nextWatch(): Promise<FakeWatchStream<T>> {
    await this.waitFor(() => this.watches.length > this.nextWatchCursor, 'the next watch to open');
    return this.watches[this.nextWatchCursor++] as FakeWatchStream<T>;
  }

  /**
   * Resolves once `condition()` holds, re-checking after every request and every 2 ms of real time
   * (a timer, not a busy loop). Rejects after `waitTimeoutMs` of real time with `description` in the
   * message.
   */
  waitFor(condition: () => boolean, description = 'a condition'): Promise<void> {
    return waitFor(condition, {
      what: description,
      timeoutMs: this.waitTimeoutMs,
      label: 'FakeListerWatcher',
      wakeOn: [{ emitter: this.requested, events: ['request'] }],
    });
  }

  list(options: ListOptions, context: RequestContext): Promise<KubeList<T>> {
    const call = this.listCount++;
    this.record({ verb: 'list', options: { ...options } });
    const { signal } = context;
    if (signal.aborted) return Promise.reject(abortError(signal));
    let answer: Promise<KubeList<T>>;
    const script = this.listHead < this.listScript.length ? this.listScript[this.listHead++] : undefined;
    try {
      if (script === undefined) {
        answer = this.fallbackList
          ? Promise.resolve(this.fallbackList({ ...options }, call))
          : new Promise<never>(() => undefined);
      } else if (script instanceof Error) {
        answer = Promise.reject(script);
      } else if (typeof script === 'function') {
        answer = Promise.resolve(script({ ...options }, call));
      } else {
        answer = Promise.resolve(script);
      }
    } catch (err) {
      answer = Promise.reject(toError(err));
    }
    return raceAbort(answer, signal).then((list) =>
      list === ABORTED ? Promise.reject(abortError(signal)) : list,
    );
  }

  watch(options: WatchOptions, context: RequestContext): Promise<AsyncIterable<WatchEvent<T>>> {
    this.record({ verb: 'watch', options: { ...options } });
    const { signal } = context;
    if (signal.aborted) return Promise.reject(abortError(signal));
    const script = this.watchHead < this.watchScript.length ? this.watchScript[this.watchHead++] : undefined;
    if (script instanceof Error) return Promise.reject(script);
    const stream = new FakeWatchStream<T>(options, signal);
    if (typeof script === 'function') {
      script(stream, { ...options });
    } else if (script !== undefined) {
      for (const event of script.events ?? []) stream.push(event);
      const then = script.then ?? 'open';
      if (then === 'close') stream.close();
      else if (then === 'break') stream.breakConnection();
      else if (then instanceof Error) stream.error(then);
    }
    this.watches.push(stream);
    this.notify();
    return Promise.resolve(stream);
  }

  private record(call: FakeCall): void {
    this.calls.push(call);
    this.notify();
  }

  private notify(): void {
    for (const check of [...this.waiters]) check();
  }
}

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
