import type { Clock } from '@kinformer/core';
import type { Timer } from '@kinformer/core/internal';
import { notFoundError } from '../api/statusErrors.js';
import type { ResourceType } from '../registry/resourceRegistry.js';
import { EventHistory, HistoryEvent, type StoredEventType } from './eventHistory.js';
import { StoredEntry, type StoredObject } from './storedEntry.js';

/** Receives every write to one resource type, in revision order (a watcher). */
export interface EventSink {
  deliver(event: HistoryEvent): void;
  /** Ends the sink (a watch stream) when its type stops being served. */
  terminate?(): void;
}

/** A consistent view of one type at one revision: entries by key, and the keys in storage order. */
export interface Snapshot {
  readonly rev: number;
  readonly entries: ReadonlyMap<string, StoredEntry>;
  /** Keys sorted in storage (byte) order. Computed once per snapshot. */
  keys(): readonly string[];
}

/** All objects of one resource type, plus the watchers of that type. */
export class ResourceTable {
  readonly type: ResourceType;
  readonly entries = new Map<string, StoredEntry>();
  readonly watchers = new Set<EventSink>();
  /** Revision of the last write to this type (0 when never written). */
  lastWriteRev = 0;
  #sorted: string[] | undefined;

  constructor(type: ResourceType) {
    this.type = type;
  }

  /** Keys in storage order; re-sorted only after an object was added or removed. */
  sortedKeys(): readonly string[] {
    return (this.#sorted ??= [...this.entries.keys()].sort());
  }

  put(entry: StoredEntry): void {
    if (!this.entries.has(entry.key)) this.#sorted = undefined;
    this.entries.set(entry.key, entry);
  }

  remove(key: string): void {
    if (this.entries.delete(key)) this.#sorted = undefined;
  }
}

class HistoricalSnapshot implements Snapshot {
  readonly rev: number;
  readonly table: ResourceTable;
  readonly entries: Map<string, StoredEntry>;
  #keys: string[] | undefined;

  constructor(table: ResourceTable, rev: number, entries: Map<string, StoredEntry>) {
    this.table = table;
    this.rev = rev;
    this.entries = entries;
  }

  keys(): readonly string[] {
    return (this.#keys ??= [...this.entries.keys()].sort());
  }
}

/** Options of {@link ObjectStore}. */
export interface ObjectStoreOptions {
  historySize: number;
  initialResourceVersion: number;
  clock: Clock;
  /** Called with the new revision after every write, bump and compaction. */
  onRevision?: ((rev: number) => void) | undefined;
}

interface RevisionWaiter {
  target: number;
  resolve(reached: boolean): void;
  timer: Timer | undefined;
}

const SNAPSHOT_CACHE_SIZE = 4;

/**
 * The fake's storage (kube-apiserver's `storage.Interface` over etcd, with the watch cache's
 * history): one global revision counter, every object of every type, the bounded event history,
 * historical snapshots for exact-revision lists and continue tokens, the watchers and the commit
 * listeners. The write verbs with their validation are the registry's (`registry/registryStore.ts`).
 * Synchronous.
 *
 * History model: events are kept in one ring of `historySize` events across all types. The oldest
 * revision the server can still serve (`compactedRV`) starts at the initial revision and moves up
 * when events are evicted or the history is compacted; exact lists, continue tokens and watches
 * from before it get 410.
 */
export class ObjectStore {
  readonly history: EventHistory;
  readonly #clock: Clock;
  readonly #tables = new Map<ResourceType, ResourceTable>();
  readonly #snapshots: HistoricalSnapshot[] = [];
  readonly #waiters = new Set<RevisionWaiter>();
  readonly #onRevision: ((rev: number) => void) | undefined;
  readonly #commitListeners: Array<(event: HistoryEvent) => void> = [];
  #rev: number;
  #compactedRV: number;

  constructor(options: ObjectStoreOptions) {
    this.history = new EventHistory(options.historySize);
    this.#clock = options.clock;
    this.#onRevision = options.onRevision;
    this.#rev = Math.max(1, Math.floor(options.initialResourceVersion));
    this.#compactedRV = this.#rev;
  }

  /** The current global revision. */
  get rev(): number {
    return this.#rev;
  }

  /** The oldest revision still served: exact lists, continue tokens and watches below it get 410. */
  get compactedRV(): number {
    return this.#compactedRV;
  }

  /** The table of `type` (created on first use). */
  table(type: ResourceType): ResourceTable {
    let table = this.#tables.get(type);
    if (!table) {
      table = new ResourceTable(type);
      this.#tables.set(type, table);
    }
    return table;
  }

  /** Every table created so far. */
  tables(): IterableIterator<ResourceTable> {
    return this.#tables.values();
  }

  /** The current state of `table` as a snapshot at the current revision (live: use synchronously). */
  current(table: ResourceTable): Snapshot {
    return { rev: this.#rev, entries: table.entries, keys: () => table.sortedKeys() };
  }

  /**
   * The state of `table` at revision `rev` (`compactedRV ≤ rev ≤ this.rev`), rebuilt by undoing the
   * newer events of the history. Rebuilt snapshots are cached, so paging through one costs one rebuild.
   */
  snapshotAt(table: ResourceTable, rev: number): Snapshot {
    if (rev >= table.lastWriteRev) return { rev, entries: table.entries, keys: () => table.sortedKeys() };
    const cached = this.#snapshots.find((s) => s.table === table && s.rev === rev);
    if (cached) return cached;
    const entries = new Map(table.entries);
    const history = this.history;
    for (let i = history.size - 1; i >= 0; i--) {
      const event = history.at(i);
      if (event.rev <= rev) break;
      if (event.entry.type !== table.type) continue;
      if (event.type === 'ADDED') entries.delete(event.entry.key);
      else if (event.prev) entries.set(event.prev.key, event.prev);
    }
    const snapshot = new HistoricalSnapshot(table, rev, entries);
    if (this.#snapshots.length >= SNAPSHOT_CACHE_SIZE) this.#snapshots.shift();
    this.#snapshots.push(snapshot);
    return snapshot;
  }

  /** Advances the revision by `n` without an event (writes to other types, an etcd progress notify). */
  bump(n = 1): number {
    this.#rev += Math.max(1, Math.floor(n));
    this.#notifyRevision();
    return this.#rev;
  }

  /**
   * Compacts: bumps the revision once and forgets all history before it, so every resourceVersion
   * and continue token handed out so far is too old (410).
   */
  compact(): number {
    this.#rev++;
    this.#compactedRV = this.#rev;
    this.history.clear();
    this.#snapshots.length = 0;
    this.#notifyRevision();
    return this.#compactedRV;
  }

  /**
   * Resolves `true` once the revision reaches `target`, or `false` after `timeoutMs` (on the
   * injected clock) or when {@link cancelWaits} is called.
   */
  waitForRevision(target: number, timeoutMs: number): Promise<boolean> {
    if (this.#rev >= target) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: RevisionWaiter = { target, resolve, timer: undefined };
      waiter.timer = this.#clock.setTimeout(() => {
        this.#waiters.delete(waiter);
        resolve(false);
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  /** Resolves every pending {@link waitForRevision} with `false`. */
  cancelWaits(): void {
    for (const waiter of this.#waiters) {
      waiter.timer?.cancel();
      waiter.resolve(false);
    }
    this.#waiters.clear();
  }

  #notifyRevision(): void {
    this.#onRevision?.(this.#rev);
    if (this.#waiters.size === 0) return;
    for (const waiter of this.#waiters) {
      if (this.#rev >= waiter.target) {
        this.#waiters.delete(waiter);
        waiter.timer?.cancel();
        waiter.resolve(true);
      }
    }
  }

  /** The revision of the next write, taken now (its object carries it before it is committed). */
  nextRevision(): number {
    return ++this.#rev;
  }

  /**
   * Commits a write at `entry.rev` (from {@link nextRevision}): stores `entry` (removes it for
   * `DELETED`), records the event, delivers it to the type's watchers, then to the commit listeners.
   */
  commit(type: StoredEventType, entry: StoredEntry, prev: StoredEntry | undefined): void {
    const table = this.table(entry.type);
    if (type === 'DELETED') table.remove(entry.key);
    else table.put(entry);
    const event = new HistoryEvent(entry.rev, type, entry, prev);
    const evicted = this.history.push(event);
    if (evicted !== undefined && evicted.rev > this.#compactedRV) this.#compactedRV = evicted.rev;
    table.lastWriteRev = entry.rev;
    for (const watcher of table.watchers) watcher.deliver(event);
    this.#notifyRevision();
    for (const listener of this.#commitListeners) listener(event);
  }

  /**
   * Calls `listener` after every committed write (watchers have the event by then). A listener may
   * write to the store (the garbage collector does).
   */
  addCommitListener(listener: (event: HistoryEvent) => void): void {
    this.#commitListeners.push(listener);
  }

  /**
   * Puts an object in storage as it was before the server started (the system namespaces): at the
   * current revision, with no event and no revision bump. `obj` is the stored form.
   */
  preload(type: ResourceType, namespace: string, name: string, obj: StoredObject): StoredEntry {
    const entry = new StoredEntry(type, namespace, name, obj, this.#rev);
    this.table(type).put(entry);
    return entry;
  }

  /**
   * Moves the objects of `from` to `to` (the same group/version/resource re-registered with another
   * definition: an updated CRD), so they stay served. Watches of `from` are ended.
   */
  retype(from: ResourceType, to: ResourceType): void {
    const old = this.#tables.get(from);
    if (old === undefined || from === to) return;
    this.#tables.delete(from);
    const table = this.table(to);
    for (const entry of old.entries.values())
      table.put(new StoredEntry(to, entry.namespace, entry.name, entry.obj, entry.rev));
    table.lastWriteRev = old.lastWriteRev;
    for (const w of [...old.watchers]) w.terminate?.();
  }

  /** Forgets every object of `type` without events (its CRD is gone); ends its watches. */
  drop(type: ResourceType): void {
    const table = this.#tables.get(type);
    if (table === undefined) return;
    this.#tables.delete(type);
    for (const w of [...table.watchers]) w.terminate?.();
  }

  /** The stored object, or undefined. */
  find(type: ResourceType, namespace: string, name: string): StoredEntry | undefined {
    const table = this.#tables.get(type);
    return table?.entries.get(type.namespaced ? `${namespace}/${name}` : name);
  }

  /** The stored object. @throws 404 NotFound. */
  get(type: ResourceType, namespace: string, name: string): StoredEntry {
    const entry = this.find(type, namespace, name);
    if (!entry) throw notFoundError(type, name);
    return entry;
  }
}
