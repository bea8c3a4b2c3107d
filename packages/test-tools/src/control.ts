// Small controls of a test's own flow: a promise the test resolves when it chooses, and a seeded
// pseudo-random source for randomised cases that replay.

/**
 * A promise and the function that resolves it (ES2024's `Promise.withResolvers`, for the ES2023
 * lib): holds a handler or a process function mid-call until the test calls `resolve`.
 */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A seeded pseudo-random number generator (mulberry32): numbers in [0, 1), the same for a seed. */
export function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
