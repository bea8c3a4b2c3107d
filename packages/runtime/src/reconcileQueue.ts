import { realClock } from '@kinformer/core';
import type { Clock } from '@kinformer/core';
import type { Timer } from '@kinformer/core/internal';
import type {
  CounterMetric,
  GaugeMetric,
  HistogramMetric,
  MetricsProvider,
  SettableGaugeMetric,
} from '@kinformer/workqueue';

/** Priority of keys from a change (controller-runtime's default priority). */
export const PRIORITY_NORMAL = 0;
/**
 * Priority of keys from the initial list and from resyncs (controller-runtime 0.23's `LowPriority`):
 * they wait behind every key that changed, so a change during a large sync is not stuck behind
 * thousands of no-op reconciles.
 */
export const PRIORITY_LOW = -100;

/** How a key is added: its priority, why (coalesced into the next reconcile's reasons), and a delay. */
export interface QueueAddOptions {
  /** Higher runs first; equal priorities run in the order they were added. Default {@link PRIORITY_NORMAL}. */
  priority?: number;
  /** Why the key is queued (`'deployments.v1.apps Updated'`). Reasons of coalesced adds are merged. */
  reason?: string;
  /** Wait this long first, ms. A key that is already ready, or due sooner, keeps the earlier time. */
  afterMs?: number;
}

/** What a worker gets from {@link ReconcileQueue.get}. */
export interface QueueItem {
  key: string;
  /** The reasons of every add coalesced into this run, in the order first seen. */
  reasons: string[];
  priority: number;
}

/** Options of {@link ReconcileQueue}. */
export interface ReconcileQueueOptions {
  /** The `name` label of the workqueue metrics. */
  name?: string;
  clock?: Clock;
  /** Where workqueue metrics go (client-go / controller-runtime names, see `@kinformer/workqueue`). */
  metrics?: MetricsProvider;
}

interface KeyState {
  key: string;
  reasons: Set<string>;
  priority: number;
  /** Ready: the live ready-heap entry's sequence number; 0 when not in the ready heap. */
  readySeq: number;
  /** Waiting: when it becomes ready (clock ms); undefined when not waiting. */
  readyAt: number | undefined;
  processing: boolean;
  /** Added while processing: goes back into the queue at {@link ReconcileQueue.done}. */
  dirty: boolean;
  /** For the queue-duration metric: when it last became ready. */
  readySince: number;
  startedAt: number;
}

interface HeapEntry {
  state: KeyState;
  /** Sort key: priority (higher first) for the ready heap, readyAt (earlier first) for the waiting one. */
  rank: number;
  seq: number;
}

/** A binary min-heap over (rank, seq). */
class Heap {
  readonly items: HeapEntry[] = [];
  push(entry: HeapEntry): void {
    const a = this.items;
    a.push(entry);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  peek(): HeapEntry | undefined {
    return this.items[0];
  }
  pop(): HeapEntry | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && less(a[l]!, a[m]!)) m = l;
        if (r < a.length && less(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
}

function less(a: HeapEntry, b: HeapEntry): boolean {
  return a.rank < b.rank || (a.rank === b.rank && a.seq < b.seq);
}

/**
 * The runtime's work queue: client-go's workqueue guarantees plus controller-runtime 0.23's
 * priorities, for string keys.
 *
 * - **One at a time**: a key handed to a worker is not handed out again until {@link done}; adds
 *   meanwhile mark it dirty and it is queued once more at `done` (all of them coalesce into one run).
 * - **Coalescing**: adds of a key that is waiting merge into one entry (reasons merged, the highest
 *   priority and the earliest due time win).
 * - **Priority**: ready keys run highest priority first, then in the order they became ready.
 * - **Delays** (`afterMs`) run on the injected clock, one timer for the earliest due key.
 */
export class ReconcileQueue {
  readonly #clock: Clock;
  readonly #states = new Map<string, KeyState>();
  readonly #ready = new Heap();
  readonly #waiting = new Heap();
  readonly #getters: Array<(item: QueueItem | undefined) => void> = [];
  #seq = 0;
  #readyCount = 0;
  #timer: Timer | undefined;
  #timerAt = Infinity;
  #shutdown = false;
  readonly #depth: GaugeMetric | undefined;
  readonly #adds: CounterMetric | undefined;
  readonly #latency: HistogramMetric | undefined;
  readonly #workDuration: HistogramMetric | undefined;
  readonly #retries: CounterMetric | undefined;
  readonly #unfinished: SettableGaugeMetric | undefined;
  readonly #longest: SettableGaugeMetric | undefined;
  #processingCount = 0;

  constructor(options: ReconcileQueueOptions = {}) {
    this.#clock = options.clock ?? realClock;
    const name = options.name ?? '';
    const m = options.metrics;
    this.#depth = m?.newDepthMetric?.(name);
    this.#adds = m?.newAddsMetric?.(name);
    this.#latency = m?.newLatencyMetric?.(name);
    this.#workDuration = m?.newWorkDurationMetric?.(name);
    this.#retries = m?.newRetriesMetric?.(name);
    this.#unfinished = m?.newUnfinishedWorkSecondsMetric?.(name);
    this.#longest = m?.newLongestRunningProcessorSecondsMetric?.(name);
  }

  /** Queues `key` (see the class comment for how adds coalesce). Ignored after {@link shutdown}. */
  add(key: string, options: QueueAddOptions = {}): void {
    if (this.#shutdown) return;
    const priority = options.priority ?? PRIORITY_NORMAL;
    const delay = options.afterMs ?? 0;
    if (delay > 0) this.#retries?.inc();
    let state = this.#states.get(key);
    if (state === undefined) {
      state = {
        key,
        reasons: new Set(),
        priority,
        readySeq: 0,
        readyAt: undefined,
        processing: false,
        dirty: false,
        readySince: 0,
        startedAt: 0,
      };
      this.#states.set(key, state);
      if (options.reason !== undefined) state.reasons.add(options.reason);
      this.#adds?.inc();
      this.#place(state, delay, priority);
      return;
    }
    if (options.reason !== undefined) state.reasons.add(options.reason);
    if (state.processing && !state.dirty) {
      state.dirty = true;
      state.priority = priority;
      state.readyAt = delay > 0 ? this.#clock.now() + delay : undefined;
      this.#adds?.inc();
      return;
    }
    if (state.processing) {
      // Already dirty: keep the higher priority and the earlier due time.
      state.priority = Math.max(state.priority, priority);
      if (delay <= 0) state.readyAt = undefined;
      else if (state.readyAt !== undefined)
        state.readyAt = Math.min(state.readyAt, this.#clock.now() + delay);
      return;
    }
    if (state.readySeq !== 0) {
      // Ready already: raise its priority if this add has a higher one (a new heap entry; the old one
      // is skipped when popped).
      if (priority > state.priority) {
        state.priority = priority;
        this.#pushReady(state);
      }
      return;
    }
    // Waiting: due now, or at the earlier of the two times.
    state.priority = Math.max(state.priority, priority);
    if (delay <= 0) {
      state.readyAt = undefined;
      this.#makeReady(state);
    } else if (state.readyAt !== undefined && this.#clock.now() + delay < state.readyAt) {
      state.readyAt = this.#clock.now() + delay;
      this.#waiting.push({ state, rank: state.readyAt, seq: ++this.#seq });
      this.#armTimer();
    }
  }

  /**
   * The next ready key, highest priority first; waits for one. Resolves `undefined` once the queue
   * is shut down. The caller must call {@link done} with the key when its work ends.
   */
  get(): Promise<QueueItem | undefined> {
    if (this.#shutdown) return Promise.resolve(undefined);
    const item = this.#take();
    if (item !== undefined) return Promise.resolve(item);
    return new Promise((resolve) => this.#getters.push(resolve));
  }

  /** Ends the work on `key`: if it was added meanwhile, it is queued again (once). */
  done(key: string): void {
    const state = this.#states.get(key);
    if (state === undefined || !state.processing) return;
    state.processing = false;
    this.#processingCount--;
    this.#workDuration?.observe((this.#clock.now() - state.startedAt) / 1000);
    if (!state.dirty || this.#shutdown) {
      this.#states.delete(key);
      return;
    }
    state.dirty = false;
    const due = state.readyAt;
    state.readyAt = undefined;
    this.#place(state, due === undefined ? 0 : due - this.#clock.now(), state.priority);
  }

  /**
   * Forgets a waiting or ready key without running it (a dirty key being processed is cleaned so it
   * is not queued again). For sharding: a key whose object this replica no longer owns.
   */
  drop(key: string): void {
    const state = this.#states.get(key);
    if (state === undefined) return;
    if (state.processing) {
      state.dirty = false;
      state.reasons.clear();
      return;
    }
    if (state.readySeq !== 0) {
      this.#readyCount--;
      this.#depth?.dec();
    }
    this.#states.delete(key);
  }

  /** Keys ready to run now (not those processing or waiting out a delay); WorkQueue's `length()`. */
  length(): number {
    return this.#readyCount;
  }

  /** Keys waiting out a delay. */
  waitingLength(): number {
    let n = 0;
    for (const s of this.#states.values()) if (!s.processing && s.readySeq === 0) n++;
    return n;
  }

  /** @deprecated Use {@link length} (one spelling with WorkQueue and the FIFOs). */
  len(): number {
    return this.length();
  }

  /** @deprecated Use {@link waitingLength}. */
  waitingLen(): number {
    return this.waitingLength();
  }

  /** Keys handed to workers and not done yet. */
  processing(): number {
    return this.#processingCount;
  }

  /** Stops handing out keys: waiting `get` calls resolve `undefined`; later adds are ignored. */
  shutdown(): void {
    if (this.#shutdown) return;
    this.#shutdown = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    for (const resolve of this.#getters.splice(0)) resolve(undefined);
  }

  isShutdown(): boolean {
    return this.#shutdown;
  }

  /** Updates the unfinished-work gauges (call periodically; the runtime does every 500 ms). */
  updateUnfinishedWork(): void {
    if (this.#unfinished === undefined && this.#longest === undefined) return;
    const now = this.#clock.now();
    let total = 0;
    let longest = 0;
    for (const s of this.#states.values()) {
      if (!s.processing) continue;
      const age = (now - s.startedAt) / 1000;
      total += age;
      longest = Math.max(longest, age);
    }
    this.#unfinished?.set(total);
    this.#longest?.set(longest);
  }

  #place(state: KeyState, delay: number, priority: number): void {
    state.priority = priority;
    if (delay > 0) {
      state.readyAt = this.#clock.now() + delay;
      this.#waiting.push({ state, rank: state.readyAt, seq: ++this.#seq });
      this.#armTimer();
    } else {
      this.#makeReady(state);
    }
  }

  #makeReady(state: KeyState): void {
    this.#readyCount++;
    this.#depth?.inc();
    state.readySince = this.#clock.now();
    this.#pushReady(state);
    this.#wake();
  }

  #pushReady(state: KeyState): void {
    state.readySeq = ++this.#seq;
    this.#ready.push({ state, rank: -state.priority, seq: state.readySeq });
  }

  #wake(): void {
    while (this.#getters.length > 0) {
      const item = this.#take();
      if (item === undefined) return;
      this.#getters.shift()!(item);
    }
  }

  #take(): QueueItem | undefined {
    for (;;) {
      const entry = this.#ready.pop();
      if (entry === undefined) return undefined;
      const state = entry.state;
      if (state.readySeq !== entry.seq || this.#states.get(state.key) !== state) continue; // stale
      state.readySeq = 0;
      this.#readyCount--;
      this.#depth?.dec();
      state.processing = true;
      this.#processingCount++;
      const now = this.#clock.now();
      state.startedAt = now;
      this.#latency?.observe((now - state.readySince) / 1000);
      const reasons = [...state.reasons];
      state.reasons.clear();
      return { key: state.key, reasons, priority: state.priority };
    }
  }

  #armTimer(): void {
    const next = this.#nextDue();
    if (next === undefined || next >= this.#timerAt) return;
    this.#timer?.cancel();
    this.#timerAt = next;
    this.#timer = this.#clock.setTimeout(() => this.#onTimer(), Math.max(0, next - this.#clock.now()));
  }

  /** The earliest live waiting entry's due time (drops stale entries off the top). */
  #nextDue(): number | undefined {
    for (;;) {
      const top = this.#waiting.peek();
      if (top === undefined) return undefined;
      const s = top.state;
      if (this.#states.get(s.key) === s && !s.processing && s.readySeq === 0 && s.readyAt === top.rank)
        return top.rank;
      this.#waiting.pop();
    }
  }

  #onTimer(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    if (this.#shutdown) return;
    const now = this.#clock.now();
    for (;;) {
      const due = this.#nextDue();
      if (due === undefined || due > now) break;
      const state = this.#waiting.pop()!.state;
      state.readyAt = undefined;
      this.#makeReady(state);
    }
    this.#armTimer();
  }
}
