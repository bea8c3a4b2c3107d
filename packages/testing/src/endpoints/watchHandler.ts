import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Clock, Status } from '@kinformer/core';
import type { Timer } from '@kinformer/core/internal';
import type { EventView, HistoryEvent } from '../storage/eventHistory.js';
import { namespaceRange } from './listHandler.js';
import {
  parseResourceVersion,
  selectorFilter,
  type EntryFilter,
  type ListOptionsQuery,
} from './listOptions.js';
import type { Representation } from './negotiation.js';
import type { EventSink, ObjectStore, ResourceTable } from '../storage/objectStore.js';
import { tooLargeResourceVersionStatus, tooOldWatchStatus } from '../api/statusErrors.js';
import type { WatchCacheLag } from '../storage/watchCacheLag.js';

/**
 * Something a test can make a watch stream send (see `FakeApiServerFaults.injectIntoWatches`):
 * - `malformed-line`: a line that is not JSON (`{"type":"ADDED","object":{not json}}`); the stream goes on;
 * - `unknown-event-type`: `{"type":"SURPRISE","object":{…}}` with a well-formed object; the stream goes on;
 * - `null-object`: `{"type":"ADDED","object":null}`; the stream goes on;
 * - `truncated-line`: the first half of an event line, then a connection reset;
 * - `{ error: Status }`: an in-stream `ERROR` event with that Status, then a clean end.
 */
export type WatchInjection =
  'malformed-line' | 'unknown-event-type' | 'null-object' | 'truncated-line' | { error: Status };

/** Timing of watch streams. */
export interface WatchTiming {
  clock: Clock;
  /** Period of progress bookmarks (only sent when the revision moved). */
  bookmarkIntervalMs: number;
  /** How long before a `timeoutSeconds` deadline the last bookmark is sent. */
  bookmarkBeforeDeadlineMs: number;
  /** How long a watch-list for a future resourceVersion waits before an ERROR 504. */
  freshnessWaitMs: number;
  /**
   * kube-apiserver's `--min-request-timeout` in ms: a watch without `timeoutSeconds` ends after a
   * random duration in [min, 2·min). 0 = never (the fake's default).
   */
  minRequestTimeoutMs: number;
  /** Random source in [0, 1) for the watch timeout. */
  random: () => number;
  /** The lagging watch cache, when emulated (undefined: every read sees the current state). */
  cache: WatchCacheLag | undefined;
  /** Close watchers whose buffer stays full (undefined = buffer without limit, the fake's default). */
  slowConsumers: SlowConsumerLimit | undefined;
}

/**
 * When kube-apiserver's cacher gives up on a watcher: its input buffer holds `bufferEvents` events
 * and the next event cannot be added within the dispatch budget (`budgetMs`), so the watcher is
 * terminated: buffered events are dropped and the stream ends cleanly, without an ERROR event
 * (`storage/cacher/cache_watcher.go` `add`, `cacher.go` `dispatchEvent`, `time_budget.go`).
 * Bookmarks never count: the cacher only offers them without blocking.
 */
export interface SlowConsumerLimit {
  /** Events queued but not yet written to the socket before the budget starts (real: 10–1000). */
  bufferEvents: number;
  /** How long the buffer may stay over the bound (real: at most 100 ms). Default 100. */
  budgetMs?: number;
}

/** What a watcher needs from its server. */
export interface WatchHost {
  readonly store: ObjectStore;
  readonly timing: WatchTiming;
  /** Called once the stream is open (headers sent). */
  opened(watcher: Watcher): void;
  /** Called once when the stream is gone, whatever ended it. */
  closed(watcher: Watcher): void;
  /** Injections queued for the next watches of this table (consumed). */
  takeNextInjections(watcher: Watcher): WatchInjection[];
  /** True when new watches must start stalled. */
  stallsNewWatches(watcher: Watcher): boolean;
}

const HIGH_WATER = 64 * 1024;
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/**
 * One open watch stream (HTTP 200, chunked, one JSON event per `\n`-terminated line). It starts
 * where §4.3 says (replay after an RV, initial ADDED events for watch-lists, a silent wait for a
 * future RV), applies namespace and selector filtering with the enter/leave rules of §4.2, sends
 * progress bookmarks and the `initial-events-end` bookmark, and ends on `timeoutSeconds`.
 * Writes are queued and flushed in 64 KiB chunks with backpressure; a stalled watcher queues
 * without writing until released.
 */
export class Watcher implements EventSink {
  readonly table: ResourceTable;
  readonly namespace: string | undefined;
  readonly representation: Representation;
  readonly bookmarks: boolean;
  readonly #host: WatchHost;
  readonly #res: ServerResponse;
  readonly #query: ListOptionsQuery;
  readonly #filter: EntryFilter | undefined;
  #bookmarkTimer: Timer | undefined;
  #deadlineTimers: Timer[] = [];
  #slowTimer: Timer | undefined;
  #cleanedUp = false;
  #queue: string[] = [];
  #head = 0;
  /** Lines at the front of the queue that are initial events (they do not count as buffered). */
  #initialQueued = 0;
  #fromRV = 0;
  #lastSentRV = 0;
  #live = false;
  #closed = false;
  #ending = false;
  #stalled = false;
  #deadlinePassed = false;
  #truncate = false;
  #pumpScheduled = false;
  #waitingDrain = false;
  readonly #transform: ((line: string) => string) | undefined;

  constructor(
    host: WatchHost,
    table: ResourceTable,
    res: ServerResponse,
    query: ListOptionsQuery,
    namespace: string | undefined,
    representation: Representation,
    /** Rewrites each event line before it is queued (a Table watch: `table.ts`). */
    transform?: (line: string) => string,
  ) {
    this.#transform = transform;
    this.#host = host;
    this.table = table;
    this.#res = res;
    this.#query = query;
    this.namespace = namespace;
    this.representation = representation;
    this.bookmarks = query.allowWatchBookmarks;
    this.#filter = selectorFilter(query);
  }

  /** True until the stream ended (cleanly or not). */
  get open(): boolean {
    return !this.#closed;
  }

  /** True while the watcher is stalled by a fault. */
  get stalled(): boolean {
    return this.#stalled;
  }

  /** Sends the headers and the start of the stream; resolves once live (or ended by an error). */
  async start(): Promise<void> {
    const res = this.#res;
    res.on('close', () => this.#cleanup());
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache, private',
      'Audit-Id': randomUUID(),
    });
    res.flushHeaders();
    this.#stalled = this.#host.stallsNewWatches(this);
    this.#host.opened(this);
    this.#startTimers();
    const { store } = this.#host;
    const q = this.#query;
    const requested = q.resourceVersion === '' ? 0 : (parseResourceVersion(q.resourceVersion) ?? 0);
    if (q.sendInitialEvents === true) {
      if (requested > store.rev) {
        const reached = await store.waitForRevision(requested, this.#host.timing.freshnessWaitMs);
        if (this.#closed || this.#ending) return;
        if (!reached) {
          this.#sendError(tooLargeResourceVersionStatus(requested, store.rev));
          return;
        }
      }
      // A watch-list from "0" may be served from a lagging cache; from "" it is consistent.
      this.#sendInitialEvents(
        q.allowWatchBookmarks,
        q.resourceVersion === '0' ? this.#cacheRev() : undefined,
      );
    } else if (requested === 0) {
      if (q.sendInitialEvents === undefined) {
        // Legacy watch from "" / "0" on a server without watch-list defaulting: the cache's current
        // state, no end marker.
        this.#sendInitialEvents(false, this.#cacheRev());
      } else {
        const from = this.#cacheRev();
        if (from === undefined) this.#goLive(store.rev);
        else this.#replayAfter(from);
      }
    } else {
      if (requested < store.compactedRV) {
        this.#sendError(tooOldWatchStatus(requested, store.compactedRV));
        return;
      }
      this.#replayAfter(requested);
    }
    for (const injection of this.#host.takeNextInjections(this)) this.inject(injection);
  }

  /** The revision of a lagging watch cache (never below what the history still covers), if there is one. */
  #cacheRev(): number | undefined {
    const cache = this.#host.timing.cache;
    return cache === undefined ? undefined : Math.max(cache.cacheRev(), this.#host.store.compactedRV);
  }

  /** Sends the events of this type after `rev` from the history, then goes live. */
  #replayAfter(rev: number): void {
    this.#fromRV = rev;
    const history = this.#host.store.history;
    for (let i = history.firstIndexAfter(rev); i < history.size; i++) {
      const event = history.at(i);
      if (event.entry.type === this.table.type) this.deliver(event);
    }
    this.#goLive(rev);
  }

  /**
   * Sends the state at `atRev` (default: now) as ADDED events and, with `endBookmark`, the
   * `initial-events-end` bookmark; a past state is followed by the newer events of the history.
   */
  #sendInitialEvents(endBookmark: boolean, atRev?: number): void {
    const { store } = this.#host;
    const snapshot = atRev === undefined ? store.current(this.table) : store.snapshotAt(this.table, atRev);
    const keys = snapshot.keys();
    const [lo, hi] = namespaceRange(keys, this.namespace);
    const partial = this.representation === 'partial';
    const filter = this.#filter;
    for (let i = lo; i < hi; i++) {
      const entry = snapshot.entries.get(keys[i]!)!;
      if (filter && !filter(entry)) continue;
      const line = `{"type":"ADDED","object":${partial ? entry.partialJson() : entry.typedJson()}}\n`;
      this.#queue.push(this.#transform === undefined ? line : this.#transform(line));
    }
    this.#initialQueued = this.#queue.length - this.#head;
    this.#schedulePump();
    if (endBookmark) {
      this.#enqueue(this.#bookmarkLine(snapshot.rev, true));
      this.#lastSentRV = snapshot.rev;
    }
    this.#replayAfter(snapshot.rev);
  }

  #goLive(fromRV: number): void {
    this.#fromRV = Math.max(this.#fromRV, fromRV);
    if (this.#closed || this.#ending) return;
    this.#live = true;
    this.table.watchers.add(this);
  }

  /** Receives one write to the table (also used to replay history). */
  deliver(event: HistoryEvent): void {
    if (this.#closed || event.rev <= this.#fromRV) return;
    const entry = event.entry;
    if (this.namespace !== undefined && entry.namespace !== this.namespace) return;
    let view: EventView = 'normal';
    const filter = this.#filter;
    if (filter) {
      if (event.type === 'ADDED') {
        if (!filter(entry)) return;
      } else if (event.type === 'DELETED') {
        if (!filter(event.prev ?? entry)) return;
      } else {
        const now = filter(entry);
        const before = event.prev !== undefined && filter(event.prev);
        if (now && !before) view = 'entered';
        else if (!now && before) view = 'left';
        else if (!now) return;
      }
    }
    const line = event.line(view, this.representation === 'partial');
    // Only an object event is transformed (a Table watch: handlers/watch.go transforms each event's
    // object); bookmarks, errors and injected lines go as they are.
    this.#enqueue(this.#transform === undefined ? line : this.#transform(line));
    this.#lastSentRV = event.rev;
    if (this.#live) this.#checkSlowConsumer();
  }

  /** Events queued after the initial ones and not yet written. */
  get #buffered(): number {
    return this.#queue.length - this.#head - this.#initialQueued;
  }

  #checkSlowConsumer(): void {
    const limit = this.#host.timing.slowConsumers;
    if (limit === undefined || this.#slowTimer !== undefined || this.#buffered <= limit.bufferEvents) return;
    this.#slowTimer = this.#host.timing.clock.setTimeout(() => {
      this.#slowTimer = undefined;
      if (this.#closed || this.#buffered <= limit.bufferEvents) return;
      // cacheWatcher.forget(false): what is buffered is dropped, the stream ends without an ERROR.
      this.#queue = [];
      this.#head = 0;
      this.#initialQueued = 0;
      this.#stalled = false;
      this.#waitingDrain = false;
      this.end();
    }, limit.budgetMs ?? 100);
  }

  #bookmarkLine(rv: number, initialEventsEnd: boolean): string {
    const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
    if (initialEventsEnd) metadata.annotations = { [INITIAL_EVENTS_END]: 'true' };
    const type = this.table.type;
    const object =
      this.representation === 'partial'
        ? { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata }
        : { kind: type.kind, apiVersion: type.apiVersion, metadata, ...type.bookmarkExtra };
    return `{"type":"BOOKMARK","object":${JSON.stringify(object)}}\n`;
  }

  /** Sends a progress bookmark when bookmarks are on and the revision moved past what was sent. */
  maybeBookmark(): void {
    if (!this.bookmarks || !this.#live || this.#closed || this.#ending || this.#stalled) return;
    const { store, timing } = this.#host;
    // A lagging cache only learns the revision of a quiet type from progress notifications.
    const rv = timing.cache === undefined ? store.rev : Math.min(store.rev, timing.cache.progressRev);
    if (rv <= Math.max(this.#lastSentRV, this.#fromRV)) return;
    this.#enqueue(this.#bookmarkLine(rv, false));
    this.#lastSentRV = rv;
  }

  #startTimers(): void {
    const { clock, bookmarkIntervalMs, bookmarkBeforeDeadlineMs } = this.#host.timing;
    if (this.bookmarks && bookmarkIntervalMs > 0) {
      const tick = (): void => {
        this.maybeBookmark();
        this.#bookmarkTimer = this.#closed ? undefined : clock.setTimeout(tick, bookmarkIntervalMs);
      };
      this.#bookmarkTimer = clock.setTimeout(tick, bookmarkIntervalMs);
    }
    const { minRequestTimeoutMs, random } = this.#host.timing;
    // handlers/get.go handleWatch: without timeoutSeconds, minRequestTimeout * (rand.Float64() + 1).
    const timeoutMs =
      this.#query.timeoutSeconds > 0
        ? this.#query.timeoutSeconds * 1000
        : minRequestTimeoutMs > 0
          ? minRequestTimeoutMs * (random() + 1)
          : 0;
    if (timeoutMs > 0) {
      const bookmarkAt = timeoutMs - bookmarkBeforeDeadlineMs;
      if (this.bookmarks && bookmarkAt > 0)
        this.#deadlineTimers.push(clock.setTimeout(() => this.maybeBookmark(), bookmarkAt));
      this.#deadlineTimers.push(
        clock.setTimeout(() => {
          if (this.#stalled) this.#deadlinePassed = true;
          else this.end();
        }, timeoutMs),
      );
    }
  }

  #sendError(status: Status): void {
    this.table.watchers.delete(this);
    this.#live = false;
    this.#enqueue(`{"type":"ERROR","object":${JSON.stringify(status)}}\n`);
    this.end();
  }

  /** Makes the stream send `injection` (queued after anything already queued). */
  inject(injection: WatchInjection): void {
    if (this.#closed || this.#ending) return;
    const store = this.#host.store;
    const type = this.table.type;
    if (typeof injection === 'object') {
      this.#sendError(injection.error);
      return;
    }
    switch (injection) {
      case 'malformed-line':
        this.#enqueue('{"type":"ADDED","object":{not json}}\n');
        break;
      case 'null-object':
        this.#enqueue('{"type":"ADDED","object":null}\n');
        break;
      case 'unknown-event-type': {
        const metadata: Record<string, unknown> = { name: 'kinformer-unknown-event' };
        if (type.namespaced) metadata.namespace = this.namespace ?? 'default';
        metadata.resourceVersion = String(store.rev);
        this.#enqueue(
          `{"type":"SURPRISE","object":${JSON.stringify({ kind: type.kind, apiVersion: type.apiVersion, metadata })}}\n`,
        );
        break;
      }
      case 'truncated-line':
        this.#truncate = true;
        this.#live = false;
        this.table.watchers.delete(this);
        this.#schedulePump();
        break;
    }
  }

  /** Stops writing anything (events queue up) until {@link release}. */
  stall(): void {
    if (!this.#closed) this.#stalled = true;
  }

  /** Ends a stall: queued events are written, and a deadline that passed meanwhile ends the stream. */
  release(): void {
    if (!this.#stalled) return;
    this.#stalled = false;
    if (this.#deadlinePassed) this.end();
    else this.#schedulePump();
  }

  /** Ends the stream cleanly after what is queued (terminating chunk, no ERROR). */
  end(): void {
    if (this.#closed) return;
    this.#ending = true;
    this.#live = false;
    this.table.watchers.delete(this);
    this.#schedulePump();
  }

  /** Ends the stream now, even when stalled (server close, restart). */
  terminate(): void {
    this.#stalled = false;
    this.end();
  }

  /** Destroys the connection abruptly (no terminating chunk). */
  drop(): void {
    if (this.#closed) return;
    this.#res.socket?.destroy();
    this.#cleanup();
  }

  #enqueue(line: string): void {
    if (this.#closed) return;
    this.#queue.push(line);
    this.#schedulePump();
  }

  #schedulePump(): void {
    if (this.#pumpScheduled || this.#closed) return;
    this.#pumpScheduled = true;
    queueMicrotask(() => {
      this.#pumpScheduled = false;
      this.#pump();
    });
  }

  #pump(): void {
    if (this.#closed || this.#stalled || this.#waitingDrain) return;
    const res = this.#res;
    const queue = this.#queue;
    while (this.#head < queue.length) {
      let chunk = '';
      while (this.#head < queue.length && chunk.length < HIGH_WATER) {
        chunk += queue[this.#head++];
        if (this.#initialQueued > 0) this.#initialQueued--;
      }
      if (!res.write(chunk)) {
        if (this.#head > 4096 && this.#head * 2 > queue.length) {
          this.#queue = queue.slice(this.#head);
          this.#head = 0;
        }
        this.#waitingDrain = true;
        res.once('drain', () => {
          this.#waitingDrain = false;
          this.#pump();
        });
        return;
      }
    }
    this.#queue = [];
    this.#head = 0;
    this.#slowTimer?.cancel();
    this.#slowTimer = undefined;
    if (this.#truncate) {
      this.#truncate = false;
      const type = this.table.type;
      const line = `{"type":"ADDED","object":${JSON.stringify({
        kind: type.kind,
        apiVersion: type.apiVersion,
        metadata: { name: 'kinformer-truncated', resourceVersion: String(this.#host.store.rev) },
      })}}\n`;
      const socket = res.socket;
      this.#closed = true;
      res.write(line.slice(0, Math.floor(line.length / 2)), () => {
        socket?.resetAndDestroy();
      });
      return;
    }
    if (this.#ending) {
      res.end();
      this.#cleanup();
    }
  }

  #cleanup(): void {
    this.#bookmarkTimer?.cancel();
    this.#bookmarkTimer = undefined;
    for (const timer of this.#deadlineTimers) timer.cancel();
    this.#deadlineTimers = [];
    this.#slowTimer?.cancel();
    this.#slowTimer = undefined;
    this.table.watchers.delete(this);
    this.#closed = true;
    this.#live = false;
    this.#queue = [];
    this.#head = 0;
    if (!this.#cleanedUp) {
      this.#cleanedUp = true;
      this.#host.closed(this);
    }
  }
}
