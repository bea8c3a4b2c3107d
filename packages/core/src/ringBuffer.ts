const MIN_CAPACITY = 16;

/**
 * A growable double-ended queue on a power-of-two ring: the buffer behind every kinformer queue
 * (FIFOs, handler listeners, work queues).
 *
 * `push`, `pushFront`, `shift` and `at` are O(1) (amortised: the ring doubles when full and halves
 * when a quarter full), so a FIFO never pays `Array.prototype.shift`'s O(n) on a long queue.
 * Removed slots are cleared so popped objects can be garbage collected.
 */
export class RingBuffer<E> {
  private buf: (E | undefined)[] = new Array<E | undefined>(MIN_CAPACITY);
  private mask = MIN_CAPACITY - 1;
  private head = 0;
  private count = 0;

  /** How many elements are held. */
  get size(): number {
    return this.count;
  }

  /** Appends at the back. */
  push(e: E): void {
    if (this.count === this.buf.length) this.resize(this.buf.length * 2);
    this.buf[(this.head + this.count) & this.mask] = e;
    this.count++;
  }

  /** Inserts at the front (the next `shift` returns it). */
  pushFront(e: E): void {
    if (this.count === this.buf.length) this.resize(this.buf.length * 2);
    this.head = (this.head - 1) & this.mask;
    this.buf[this.head] = e;
    this.count++;
  }

  /** Removes and returns the front element, or `undefined` when empty. */
  shift(): E | undefined {
    if (this.count === 0) return undefined;
    const e = this.buf[this.head];
    this.buf[this.head] = undefined;
    this.head = (this.head + 1) & this.mask;
    this.count--;
    if (this.buf.length > MIN_CAPACITY && this.count < this.buf.length >>> 2)
      this.resize(this.buf.length >>> 1);
    return e;
  }

  /** The front element without removing it, or `undefined` when empty. */
  peek(): E | undefined {
    return this.count === 0 ? undefined : this.buf[this.head];
  }

  /** The element at position `i` from the front (0 = front); `undefined` when out of range. */
  at(i: number): E | undefined {
    if (i < 0 || i >= this.count) return undefined;
    return this.buf[(this.head + i) & this.mask];
  }

  /** A fresh array of the elements, front first. */
  toArray(): E[] {
    const out = new Array<E>(this.count);
    for (let i = 0; i < this.count; i++) out[i] = this.buf[(this.head + i) & this.mask] as E;
    return out;
  }

  /** Drops every element. */
  clear(): void {
    this.buf = new Array<E | undefined>(MIN_CAPACITY);
    this.mask = MIN_CAPACITY - 1;
    this.head = 0;
    this.count = 0;
  }

  /** Drops every element for which `remove` is true, keeping the order of the others. O(n). */
  removeWhere(remove: (e: E) => boolean): void {
    const kept = this.toArray().filter((e) => !remove(e));
    this.clear();
    for (const e of kept) this.push(e);
  }

  private resize(capacity: number): void {
    const next = new Array<E | undefined>(capacity);
    for (let i = 0; i < this.count; i++) next[i] = this.buf[(this.head + i) & this.mask];
    this.buf = next;
    this.mask = capacity - 1;
    this.head = 0;
  }
}
