import fc from 'fast-check';
import { RingBuffer } from './ringBuffer.js';

describe('RingBuffer', () => {
  it('is a FIFO across wrap-around, growth and shrink', () => {
    const r = new RingBuffer<number>();
    for (let i = 0; i < 10; i++) r.push(i);
    for (let i = 0; i < 8; i++) expect(r.shift()).toBe(i);
    for (let i = 10; i < 100; i++) r.push(i); // wraps, then grows
    expect(r.size).toBe(92);
    expect(r.peek()).toBe(8);
    expect(r.at(91)).toBe(99);
    expect(r.at(92)).toBeUndefined();
    expect(r.at(-1)).toBeUndefined();
    const out: number[] = [];
    while (r.size > 0) out.push(r.shift()!);
    expect(out).toEqual(Array.from({ length: 92 }, (_, i) => i + 8));
    expect(r.shift()).toBeUndefined();
    expect(r.peek()).toBeUndefined();
  });

  it('pushFront puts elements before the head', () => {
    const r = new RingBuffer<string>();
    r.push('b');
    r.pushFront('a');
    for (let i = 0; i < 40; i++) r.pushFront(`f${i}`); // grows while the head wraps backwards
    expect(r.toArray().slice(-2)).toEqual(['a', 'b']);
    expect(r.shift()).toBe('f39');
    expect(r.size).toBe(41);
  });

  it('behaves like an array used as a deque (model-based)', () => {
    type Op = { op: 'push' | 'pushFront'; v: number } | { op: 'shift' };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ op: fc.constant('push' as const), v: fc.integer() }),
      fc.record({ op: fc.constant('pushFront' as const), v: fc.integer() }),
      fc.record({ op: fc.constant('shift' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
        const r = new RingBuffer<number>();
        const model: number[] = [];
        for (const o of ops) {
          if (o.op === 'push') {
            r.push(o.v);
            model.push(o.v);
          } else if (o.op === 'pushFront') {
            r.pushFront(o.v);
            model.unshift(o.v);
          } else {
            expect(r.shift()).toBe(model.shift());
          }
          expect(r.size).toBe(model.length);
        }
        expect(r.toArray()).toEqual(model);
      }),
    );
  });

  it('clear drops everything and removeWhere keeps the order of the rest', () => {
    const r = new RingBuffer<number>();
    for (let i = 0; i < 40; i++) r.push(i);
    r.removeWhere((n) => n % 3 !== 0);
    expect(r.toArray()).toEqual([0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39]);
    r.clear();
    expect(r.size).toBe(0);
    expect(r.shift()).toBeUndefined();
    r.push(7);
    expect(r.toArray()).toEqual([7]);
  });
});
