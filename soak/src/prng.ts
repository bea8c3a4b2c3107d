/**
 * A small seeded pseudo-random generator (mulberry32) with the helpers the soak draws from. The same
 * seed always yields the same sequence, on every platform (32-bit integer arithmetic only).
 */
export class Prng {
  #state: number;

  /** `seed` is reduced to an unsigned 32-bit integer. */
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** The next number in `[0, 1)`. */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in `[0, n)`; `n` must be a positive integer. */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An integer in `[min, max]`. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A uniformly chosen element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** A key of `weights` chosen with probability proportional to its (non-negative) weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    let total = 0;
    for (const key in weights) total += weights[key];
    let r = this.next() * total;
    let last: K | undefined;
    for (const key in weights) {
      const w = weights[key];
      if (w <= 0) continue;
      last = key;
      if (r < w) return key;
      r -= w;
    }
    if (last === undefined) throw new RangeError('weighted() needs at least one positive weight');
    return last;
  }

  /** A child generator whose sequence depends only on this one's seed and `stream` (splitmix32). */
  fork(stream: number): Prng {
    let z = (this.#state ^ Math.imul(stream + 1, 0x9e3779b9)) >>> 0;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return new Prng((z ^ (z >>> 16)) >>> 0);
  }
}
