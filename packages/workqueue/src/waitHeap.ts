/** One item waiting in a {@link WaitHeap}. */
export interface WaitEntry<K> {
  readonly item: K;
  /** When the item is due (clock ms). Only ever moves earlier. */
  readyAt: number;
  /** Insertion order, the tie-breaker between equal `readyAt`s. */
  readonly seq: number;
  /** Position in the heap array. */
  index: number;
}

/**
 * A binary min-heap of waiting items ordered by `readyAt`, then insertion order, with one entry per
 * item (client-go's `waitForPriorityQueue` plus its `item → entry` map). Internal to the package.
 */
export class WaitHeap<K> {
  private readonly heap: WaitEntry<K>[] = [];
  private readonly byItem = new Map<K, WaitEntry<K>>();
  private seq = 0;

  /** How many items wait. */
  get size(): number {
    return this.heap.length;
  }

  /** The earliest entry, or `undefined` when none waits. */
  peek(): WaitEntry<K> | undefined {
    return this.heap[0];
  }

  /**
   * Adds `item` due at `readyAt`. When the item already waits, keeps one entry and moves its
   * `readyAt` earlier if the new one is earlier (never later), keeping its place among equals.
   */
  insert(item: K, readyAt: number): void {
    const existing = this.byItem.get(item);
    if (existing) {
      if (readyAt < existing.readyAt) {
        existing.readyAt = readyAt;
        this.up(existing.index);
      }
      return;
    }
    const entry: WaitEntry<K> = { item, readyAt, seq: this.seq++, index: this.heap.length };
    this.heap.push(entry);
    this.byItem.set(item, entry);
    this.up(entry.index);
  }

  /** Removes and returns the earliest entry. */
  pop(): WaitEntry<K> | undefined {
    const top = this.heap[0];
    if (!top) return undefined;
    const last = this.heap.pop() as WaitEntry<K>;
    if (last !== top) {
      last.index = 0;
      this.heap[0] = last;
      this.down(0);
    }
    this.byItem.delete(top.item);
    return top;
  }

  /** Drops every entry. */
  clear(): void {
    this.heap.length = 0;
    this.byItem.clear();
  }

  private less(a: WaitEntry<K>, b: WaitEntry<K>): boolean {
    return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
  }

  private up(i: number): void {
    const heap = this.heap;
    const entry = heap[i] as WaitEntry<K>;
    while (i > 0) {
      const parentIndex = (i - 1) >> 1;
      const parent = heap[parentIndex] as WaitEntry<K>;
      if (!this.less(entry, parent)) break;
      this.place(parent, i);
      i = parentIndex;
    }
    this.place(entry, i);
  }

  private down(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    const entry = heap[i] as WaitEntry<K>;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child =
        right < n && this.less(heap[right] as WaitEntry<K>, heap[left] as WaitEntry<K>) ? right : left;
      const childEntry = heap[child] as WaitEntry<K>;
      if (!this.less(childEntry, entry)) break;
      this.place(childEntry, i);
      i = child;
    }
    this.place(entry, i);
  }

  /** Puts `entry` at `i` and records its position. */
  private place(entry: WaitEntry<K>, i: number): void {
    this.heap[i] = entry;
    entry.index = i;
  }
}
