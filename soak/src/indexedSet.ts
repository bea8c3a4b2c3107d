import type { Prng } from './prng.js';

/**
 * A set of strings with O(1) add, delete, membership and uniform random pick (an array plus an
 * index map; deletion swaps the last element into the hole).
 */
export class IndexedSet {
  readonly #items: string[] = [];
  readonly #index = new Map<string, number>();

  get size(): number {
    return this.#items.length;
  }

  has(item: string): boolean {
    return this.#index.has(item);
  }

  /** Adds `item`; false when it was already there. */
  add(item: string): boolean {
    if (this.#index.has(item)) return false;
    this.#index.set(item, this.#items.length);
    this.#items.push(item);
    return true;
  }

  /** Removes `item`; false when it was not there. */
  delete(item: string): boolean {
    const i = this.#index.get(item);
    if (i === undefined) return false;
    const last = this.#items.pop()!;
    this.#index.delete(item);
    if (i < this.#items.length) {
      this.#items[i] = last;
      this.#index.set(last, i);
    }
    return true;
  }

  /** A uniformly chosen member, or `undefined` when empty. */
  pick(prng: Prng): string | undefined {
    return this.#items.length === 0 ? undefined : this.#items[prng.int(this.#items.length)];
  }

  values(): readonly string[] {
    return this.#items;
  }
}
