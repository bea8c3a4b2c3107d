import { RingBuffer } from './ringBuffer.js';

describe('RingBuffer', () => {
  it('is a FIFO across growth, wrap-around and shrinking', () => {
    const ring = new RingBuffer<number>();
    const expected: number[] = [];
    let next = 0;
    // Interleave pushes and shifts so the head wraps around several capacities.
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 1000; i++) {
        ring.push(next);
        expected.push(next++);
      }
      for (let i = 0; i < 700; i++) expect(ring.shift()).toBe(expected.shift());
      expect(ring.size).toBe(expected.length);
    }
    while (expected.length > 0) expect(ring.shift()).toBe(expected.shift());
    expect(ring.shift()).toBeUndefined();
    expect(ring.size).toBe(0);
  });

  it('clear drops everything', () => {
    const ring = new RingBuffer<string>();
    ring.push('a');
    ring.push('b');
    ring.clear();
    expect(ring.size).toBe(0);
    expect(ring.shift()).toBeUndefined();
    ring.push('c');
    expect(ring.shift()).toBe('c');
  });
});
