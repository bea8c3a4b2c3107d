/** Compact once at least this many slots at the front are spent (and they are half the array). */
const COMPACT_AFTER = 1024;

/**
 * A first-in first-out buffer with amortised O(1) `push` and `shift` (no `Array.prototype.shift`,
 * which is O(n) on long arrays). Spent slots are cleared at once, so a shifted item can be garbage
 * collected; the array is compacted when the spent prefix is both large and at least half of it.
 * Internal to the package.
 */
export class FifoBuffer<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  /** How many items are buffered. */
  get length(): number {
    return this.items.length - this.head;
  }

  /** Appends `item` at the back. */
  push(item: T): void {
    this.items.push(item);
  }

  /** Removes and returns the front item; `undefined` when empty (check `length` when `T` includes it). */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head++;
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    } else if (this.head >= COMPACT_AFTER && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Drops every item for which `remove` is true, keeping the order of the others. O(n). */
  removeWhere(remove: (item: T) => boolean): void {
    const kept: (T | undefined)[] = [];
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i] as T;
      if (!remove(item)) kept.push(item);
    }
    this.items = kept;
    this.head = 0;
  }
}
