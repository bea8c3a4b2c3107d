import { isKinformerError } from '@kinformer/core';
import type { KubeList, KubeObject } from '@kinformer/core';
import type { ListerWatcher, ListOptions, RequestContext } from '@kinformer/reflector';
import type { WatchEvent, WatchOptions } from '@kinformer/reflector';
import type { ContinueTrap } from './faultScheduler.js';

/** What one informer's ListerWatcher was asked and what it got (the reflector's view of the faults). */
export interface ListWatchCounters {
  /** LIST requests (pages included). */
  listRequests: number;
  /** LIST requests that carried a `continue` token. */
  continuePages: number;
  /** LIST requests from a resourceVersion other than `"0"` with no continue token: relists. */
  relists: number;
  /** LIST requests that failed, by error code. */
  listErrors: Record<string, number>;
  /** WATCH requests (streaming lists included). */
  watchRequests: number;
  /** WATCH requests with `sendInitialEvents=true` (streaming lists, `useWatchList`). */
  streamingLists: number;
  /** WATCH requests refused up front, by error code. */
  watchErrors: Record<string, number>;
  /** Watch streams that ended with an error (in-stream ERROR, bad line, broken connection), by code. */
  streamErrors: Record<string, number>;
  /** Watch streams that ended cleanly. */
  streamEnds: number;
  /** Clock time of the last WATCH request answered 200. */
  lastWatchOpenedAt: number | undefined;
}

function codeOf(err: unknown): string {
  if (isKinformerError(err)) return err.code;
  return err instanceof Error ? err.name : 'unknown';
}

function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

/** One request or stream end, for the trace. */
export interface TraceEntry {
  /** Wall-clock ms. */
  at: number;
  what: string;
}

/** How many trace entries each ListerWatcher keeps (the most recent). */
const TRACE_SIZE = 256;

/**
 * A ListerWatcher decorator that counts requests and failures by error code, and springs the
 * {@link ContinueTrap} before a continuation page is sent. The reflector's own `stats()` are not
 * reachable through a `SharedIndexInformer`, so the soak observes recovery here.
 */
export class CountingListerWatcher<T extends KubeObject> implements ListerWatcher<T> {
  readonly counters: ListWatchCounters = {
    listRequests: 0,
    continuePages: 0,
    relists: 0,
    listErrors: {},
    watchRequests: 0,
    streamingLists: 0,
    watchErrors: {},
    streamErrors: {},
    streamEnds: 0,
    lastWatchOpenedAt: undefined,
  };
  readonly watchListSupported?: boolean;
  readonly #inner: ListerWatcher<T>;
  readonly #trap: ContinueTrap;
  readonly #trace: TraceEntry[] = [];
  #traceNext = 0;

  /**
   * Self-test only: when > 0, every `dropEvery`-th ADDED/MODIFIED/DELETED watch event is silently
   * dropped, as a buggy transport would; the soak must then report mismatches.
   */
  dropEvery = 0;
  /** Events dropped by {@link dropEvery}. */
  dropped = 0;
  #seen = 0;

  constructor(inner: ListerWatcher<T>, trap: ContinueTrap) {
    this.#inner = inner;
    this.#trap = trap;
    if (inner.watchListSupported !== undefined) this.watchListSupported = inner.watchListSupported;
  }

  /** The most recent requests and stream ends, oldest first (for diagnosing a failed run). */
  trace(): TraceEntry[] {
    const n = this.#trace.length;
    if (n < TRACE_SIZE) return this.#trace.slice();
    return [...this.#trace.slice(this.#traceNext), ...this.#trace.slice(0, this.#traceNext)];
  }

  #note(what: string): void {
    const entry = { at: Date.now(), what };
    if (this.#trace.length < TRACE_SIZE) this.#trace.push(entry);
    else this.#trace[this.#traceNext] = entry;
    this.#traceNext = (this.#traceNext + 1) % TRACE_SIZE;
  }

  async list(options: ListOptions, context: RequestContext): Promise<KubeList<T>> {
    const c = this.counters;
    c.listRequests++;
    const page = options.continue !== undefined && options.continue !== '';
    if (page) {
      c.continuePages++;
      this.#trap.beforeContinue();
    } else if (options.resourceVersion !== '0') {
      c.relists++;
    }
    const what = `LIST rv=${JSON.stringify(options.resourceVersion ?? '')}${page ? ' continue' : ''} limit=${options.limit ?? 0}`;
    try {
      const list = await this.#inner.list(options, context);
      this.#note(
        `${what} -> ${list.items.length} items, rv ${list.metadata?.resourceVersion ?? ''}${list.metadata?.continue ? ' +continue' : ''}`,
      );
      return list;
    } catch (err) {
      bump(c.listErrors, codeOf(err));
      this.#note(`${what} -> ${codeOf(err)}`);
      throw err;
    }
  }

  async watch(options: WatchOptions, context: RequestContext): Promise<AsyncIterable<WatchEvent<T>>> {
    const c = this.counters;
    c.watchRequests++;
    if (options.sendInitialEvents === true) c.streamingLists++;
    const what = `WATCH rv=${JSON.stringify(options.resourceVersion ?? '')}${options.sendInitialEvents === true ? ' sendInitialEvents' : ''}`;
    let stream: AsyncIterable<WatchEvent<T>>;
    try {
      stream = await this.#inner.watch(options, context);
    } catch (err) {
      bump(c.watchErrors, codeOf(err));
      this.#note(`${what} -> ${codeOf(err)}`);
      throw err;
    }
    c.lastWatchOpenedAt = Date.now();
    this.#note(`${what} -> open`);
    let events = 0;
    return {
      [Symbol.asyncIterator]: () => {
        const it = stream[Symbol.asyncIterator]();
        const pull = (): Promise<IteratorResult<WatchEvent<T>>> =>
          it.next().then((result) => {
            if (
              this.dropEvery > 0 &&
              result.done !== true &&
              result.value.type !== 'BOOKMARK' &&
              ++this.#seen % this.dropEvery === 0
            ) {
              this.dropped++;
              return pull();
            }
            return result;
          });
        const counted: AsyncIterator<WatchEvent<T>> = {
          next: () =>
            pull().then(
              (result) => {
                if (result.done === true) {
                  if (!context.signal.aborted) c.streamEnds++;
                  this.#note(
                    `${what} ended after ${events} events${context.signal.aborted ? ' (aborted)' : ''}`,
                  );
                } else {
                  events++;
                }
                return result;
              },
              (err: unknown) => {
                if (!context.signal.aborted) bump(c.streamErrors, codeOf(err));
                this.#note(`${what} failed after ${events} events: ${codeOf(err)}`);
                throw err;
              },
            ),
        };
        if (it.return !== undefined) {
          counted.return = (value?: unknown) => {
            this.#note(`${what} closed by the reflector after ${events} events`);
            return it.return!(value);
          };
        }
        return counted;
      },
    };
  }
}
