import type { StoredEntry } from './storedEntry.js';

/** The event types a write produces. */
export type StoredEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * How a watcher sees an event: as written (`normal`), as an object entering its selector (`entered`,
 * sent as ADDED) or leaving it (`left`, sent as DELETED with the previous state and the new revision).
 */
export type EventView = 'normal' | 'entered' | 'left';

const VIEW_INDEX: Readonly<Record<EventView, number>> = { normal: 0, entered: 1, left: 2 };

/**
 * One write, as the watch cache keeps it: its revision, type, the new state (for DELETED: the last
 * state carrying the delete's revision) and the previous state. The watch lines of each view are
 * serialised at most once, however many watchers receive them.
 */
export class HistoryEvent {
  readonly rev: number;
  readonly type: StoredEventType;
  readonly entry: StoredEntry;
  readonly prev: StoredEntry | undefined;
  readonly #lines: Array<string | undefined> = [];

  constructor(rev: number, type: StoredEventType, entry: StoredEntry, prev: StoredEntry | undefined) {
    this.rev = rev;
    this.type = type;
    this.entry = entry;
    this.prev = prev;
  }

  /** The `{"type":…,"object":…}\n` line of `view`, full or metadata-only. */
  line(view: EventView, partial: boolean): string {
    const index = VIEW_INDEX[view] * 2 + (partial ? 1 : 0);
    let line = this.#lines[index];
    if (line === undefined) {
      let type: string = this.type;
      let entry = this.entry;
      if (view === 'entered') type = 'ADDED';
      else if (view === 'left') {
        type = 'DELETED';
        entry = (this.prev ?? this.entry).withResourceVersion(this.rev);
      }
      line = `{"type":"${type}","object":${partial ? entry.partialJson() : entry.typedJson()}}\n`;
      this.#lines[index] = line;
    }
    return line;
  }
}

/**
 * The bounded event history shared by every type (a ring buffer; no `shift`). Events are in
 * strictly increasing revision order.
 */
export class EventHistory {
  readonly capacity: number;
  readonly #ring: Array<HistoryEvent | undefined>;
  #start = 0;
  #size = 0;

  constructor(capacity: number) {
    this.capacity = Math.max(0, Math.floor(capacity));
    this.#ring = new Array<HistoryEvent | undefined>(this.capacity);
  }

  get size(): number {
    return this.#size;
  }

  /** Appends `event`; returns the evicted oldest event when the ring was full. */
  push(event: HistoryEvent): HistoryEvent | undefined {
    if (this.capacity === 0) return event;
    if (this.#size < this.capacity) {
      this.#ring[(this.#start + this.#size) % this.capacity] = event;
      this.#size++;
      return undefined;
    }
    const evicted = this.#ring[this.#start];
    this.#ring[this.#start] = event;
    this.#start = (this.#start + 1) % this.capacity;
    return evicted;
  }

  /** The `i`-th oldest retained event. */
  at(i: number): HistoryEvent {
    return this.#ring[(this.#start + i) % this.capacity]!;
  }

  /** Index of the first retained event with `rev > after` (`size` when none). */
  firstIndexAfter(after: number): number {
    let lo = 0;
    let hi = this.#size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid).rev <= after) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Forgets every event. */
  clear(): void {
    this.#ring.fill(undefined);
    this.#start = 0;
    this.#size = 0;
  }
}
