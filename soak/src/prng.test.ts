import { Prng } from './prng.js';
import { parseDuration } from './parseDuration.js';

test('the same seed gives the same sequence; another seed another one', () => {
  const a = new Prng(42);
  const b = new Prng(42);
  const c = new Prng(43);
  const seqA = Array.from({ length: 8 }, () => a.next());
  expect(Array.from({ length: 8 }, () => b.next())).toEqual(seqA);
  expect(Array.from({ length: 8 }, () => c.next())).not.toEqual(seqA);
  for (const x of seqA) expect(x >= 0 && x < 1).toBe(true);
});

test('mulberry32 gives its reference values (the sequence must never change: seeds are regression tests)', () => {
  const p = new Prng(1);
  expect(Array.from({ length: 3 }, () => Math.floor(p.next() * 2 ** 32))).toEqual([
    2693262067, 11749833, 2265367787,
  ]);
});

test('int, between, pick and weighted stay in range and follow the weights', () => {
  const p = new Prng(7);
  const counts = { a: 0, b: 0, never: 0 };
  for (let i = 0; i < 10_000; i++) {
    const n = p.int(5);
    expect(Number.isInteger(n) && n >= 0 && n < 5).toBe(true);
    const m = p.between(3, 4);
    expect(m === 3 || m === 4).toBe(true);
    expect(['x', 'y']).toContain(p.pick(['x', 'y']));
    counts[p.weighted({ a: 3, b: 1, never: 0 })]++;
  }
  expect(counts.never).toBe(0);
  expect(counts.a / counts.b).toBeGreaterThan(2.5);
  expect(counts.a / counts.b).toBeLessThan(3.5);
});

test('forks are independent of each other and reproducible', () => {
  const f1 = new Prng(9).fork(1);
  const f2 = new Prng(9).fork(2);
  const again = new Prng(9).fork(1);
  const s1 = Array.from({ length: 4 }, () => f1.next());
  expect(Array.from({ length: 4 }, () => again.next())).toEqual(s1);
  expect(Array.from({ length: 4 }, () => f2.next())).not.toEqual(s1);
});

test('parseDuration accepts ms, s, m, h and bare seconds, and rejects the rest', () => {
  expect(parseDuration('500ms')).toBe(500);
  expect(parseDuration('30s')).toBe(30_000);
  expect(parseDuration('10m')).toBe(600_000);
  expect(parseDuration('1h')).toBe(3_600_000);
  expect(parseDuration('2.5')).toBe(2_500);
  expect(() => parseDuration('ten minutes')).toThrow(RangeError);
  expect(() => parseDuration('-1s')).toThrow(RangeError);
});
