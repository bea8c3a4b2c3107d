const MIN_CAPACITY = 16;

/**
 * A growable FIFO on a power-of-two ring (internal). `push` and `shift` are O(1) amortised: the
 * ring doubles when full and halves when a quarter full, so a listener's unbounded buffer never pays
 * `Array.prototype.shift`'s O(n) and gives memory back once a slow handler caught up. Removed slots
 * are cleared so delivered notifications can be garbage collected.
 */
export class RingBuffer<E> {
  #buf: (E | undefined)[] = new Array<E | undefined>(MIN_CAPACITY);
  #mask = MIN_CAPACITY - 1;
  #head = 0;
  #count = 0;

  /** How many elements are held. */
  get size(): number {
    return this.#count;
  }

  /** Appends at the back. */
  push(e: E): void {
    if (this.#count === this.#buf.length) this.#resize(this.#buf.length * 2);
    this.#buf[(this.#head + this.#count) & this.#mask] = e;
    this.#count++;
  }

  /** Removes and returns the front element, or `undefined` when empty. */
  shift(): E | undefined {
    if (this.#count === 0) return undefined;
    const e = this.#buf[this.#head];
    this.#buf[this.#head] = undefined;
    this.#head = (this.#head + 1) & this.#mask;
    this.#count--;
    if (this.#buf.length > MIN_CAPACITY && this.#count < this.#buf.length >>> 2) this.#resize(this.#buf.length >>> 1);
    return e;
  }

  /** Drops every element. */
  clear(): void {
    this.#buf = new Array<E | undefined>(MIN_CAPACITY);
    this.#mask = MIN_CAPACITY - 1;
    this.#head = 0;
    this.#count = 0;
  }

  #resize(capacity: number): void {
    const next = new Array<E | undefined>(capacity);
    for (let i = 0; i < this.#count; i++) next[i] = this.#buf[(this.#head + i) & this.#mask];
    this.#buf = next;
    this.#mask = capacity - 1;
    this.#head = 0;
  }
}
