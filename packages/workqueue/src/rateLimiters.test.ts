import { ErrorCodes } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  defaultItemBasedRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  WithMaxWaitRateLimiter,
  type RateLimiter,
} from './rateLimiters.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

const invalid = expect.objectContaining({ code: ErrorCodes.INVALID_OPTION });

/**
 * client-go's per-item sequence (TestItemExponentialFailureRateLimiter, TestItemFastSlowRateLimiter,
 * TestMaxOfRateLimiter): `one` fails `one.length` times, `two` `two.length` times, each counting its
 * own tries; then `one` is forgotten and starts over, `two` keeps its count.
 */
function expectPerItemDelays(limiter: RateLimiter<string>, one: number[], two: number[]): void {
  expect(one.map(() => limiter.when('one'))).toEqual(one);
  expect(limiter.numRequeues('one')).toBe(one.length);
  expect(two.map(() => limiter.when('two'))).toEqual(two);
  expect(limiter.numRequeues('two')).toBe(two.length);
  limiter.forget('one');
  expect(limiter.numRequeues('one')).toBe(0);
  expect(limiter.when('one')).toBe(one[0]);
  expect(limiter.numRequeues('two')).toBe(two.length);
}

describe('ItemExponentialFailureRateLimiter', () => {
  // client-go TestItemExponentialFailureRateLimiter
  it('doubles the delay per failure of each item up to the cap, and forget resets it', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>({ baseDelayMs: 1, maxDelayMs: SECOND });
    expectPerItemDelays(limiter, [1, 2, 4, 8, 16], [1, 2]);
  });

  it('caps the delay at maxDelayMs', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>({ baseDelayMs: 1, maxDelayMs: SECOND });
    for (let i = 0; i < 10; i++) limiter.when('one'); // 512 ms
    expect(limiter.when('one')).toBe(SECOND);
    expect(limiter.when('one')).toBe(SECOND);
  });

  // client-go TestItemExponentialFailureRateLimiterOverFlow
  it('never overflows: a huge number of failures yields the cap', () => {
    let limiter = new ItemExponentialFailureRateLimiter<string>({
      baseDelayMs: 1,
      maxDelayMs: 1000 * SECOND,
    });
    for (let i = 0; i < 5; i++) limiter.when('one');
    expect(limiter.when('one')).toBe(32);
    for (let i = 0; i < 1000; i++) limiter.when('overflow1');
    expect(limiter.when('overflow1')).toBe(1000 * SECOND);

    limiter = new ItemExponentialFailureRateLimiter<string>({ baseDelayMs: MINUTE, maxDelayMs: 1000 * HOUR });
    for (let i = 0; i < 2; i++) limiter.when('two');
    expect(limiter.when('two')).toBe(4 * MINUTE);
    for (let i = 0; i < 1000; i++) limiter.when('overflow2');
    expect(limiter.when('overflow2')).toBe(1000 * HOUR);
    for (let i = 0; i < 2000; i++) limiter.when('overflow2'); // 2^2000 is Infinity in a double
    expect(limiter.when('overflow2')).toBe(1000 * HOUR);
  });

  it('defaults to 5 ms doubling up to 1000 s', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>();
    expect(limiter.when('a')).toBe(5);
    expect(limiter.when('a')).toBe(10);
    for (let i = 0; i < 30; i++) limiter.when('a');
    expect(limiter.when('a')).toBe(1000 * SECOND);
  });

  it('rejects negative or NaN durations', () => {
    expect(() => new ItemExponentialFailureRateLimiter({ baseDelayMs: -1 })).toThrow(invalid);
    expect(() => new ItemExponentialFailureRateLimiter({ maxDelayMs: Number.NaN })).toThrow(invalid);
  });
});

describe('ItemFastSlowRateLimiter', () => {
  // client-go TestItemFastSlowRateLimiter
  it('uses the fast delay for the first attempts of each item, then the slow one', () => {
    const limiter = new ItemFastSlowRateLimiter<string>({
      fastDelayMs: 5,
      slowDelayMs: 10 * SECOND,
      maxFastAttempts: 3,
    });
    expectPerItemDelays(limiter, [5, 5, 5, 10 * SECOND, 10 * SECOND], [5, 5]);
  });

  it('rejects invalid options', () => {
    expect(
      () => new ItemFastSlowRateLimiter({ fastDelayMs: -1, slowDelayMs: 1, maxFastAttempts: 1 }),
    ).toThrow(invalid);
    expect(
      () => new ItemFastSlowRateLimiter({ fastDelayMs: 1, slowDelayMs: 1, maxFastAttempts: Number.NaN }),
    ).toThrow(invalid);
  });
});

describe('MaxOfRateLimiter', () => {
  // client-go TestMaxOfRateLimiter
  it('returns the longest delay of its limiters, the largest requeue count, and forgets in all', () => {
    const limiter = new MaxOfRateLimiter<string>(
      new ItemFastSlowRateLimiter({ fastDelayMs: 5, slowDelayMs: 3 * SECOND, maxFastAttempts: 3 }),
      new ItemExponentialFailureRateLimiter({ baseDelayMs: 1, maxDelayMs: SECOND }),
    );
    expectPerItemDelays(limiter, [5, 5, 5, 3 * SECOND, 3 * SECOND], [5, 5]);
  });

  it('asks every limiter on each call, so all of them count the retry', () => {
    const exponential = new ItemExponentialFailureRateLimiter<string>({ baseDelayMs: 1, maxDelayMs: SECOND });
    const limiter = new MaxOfRateLimiter<string>(
      new ItemFastSlowRateLimiter({ fastDelayMs: 50, slowDelayMs: 50, maxFastAttempts: 1 }),
      exponential,
    );
    for (let i = 0; i < 7; i++) expect(limiter.when('a')).toBe(i < 6 ? 50 : 64);
    expect(exponential.numRequeues('a')).toBe(7);
  });
});

/** client-go's StepRateLimiter test helper: `baseDelay` for the first `threshold` calls overall, then `maxDelay`. */
class StepRateLimiter implements RateLimiter<unknown> {
  private count = 0;
  constructor(
    private readonly baseDelayMs: number,
    private readonly maxDelayMs: number,
    private readonly threshold: number,
  ) {}
  when(): number {
    this.count++;
    return this.count <= this.threshold ? this.baseDelayMs : this.maxDelayMs;
  }
  forget(): void {}
  numRequeues(): number {
    return 0;
  }
}

describe('WithMaxWaitRateLimiter', () => {
  // client-go TestWithMaxWaitRateLimiter
  it('caps the delays of the limiter it wraps', () => {
    const limiter = new WithMaxWaitRateLimiter<unknown>(new StepRateLimiter(5, 1000 * SECOND, 100), {
      maxDelayMs: 500 * SECOND,
    });
    for (let i = 0; i < 100; i++) expect(limiter.when(i)).toBe(5);
    for (let i = 100; i < 200; i++) expect(limiter.when(i)).toBe(500 * SECOND);
  });

  it('delegates forget and numRequeues', () => {
    const inner = new ItemExponentialFailureRateLimiter<string>({ baseDelayMs: 1, maxDelayMs: SECOND });
    const limiter = new WithMaxWaitRateLimiter(inner, { maxDelayMs: 3 });
    expect([limiter.when('a'), limiter.when('a'), limiter.when('a')]).toEqual([1, 2, 3]);
    expect(limiter.numRequeues('a')).toBe(3);
    limiter.forget('a');
    expect(inner.numRequeues('a')).toBe(0);
  });
});

describe('BucketRateLimiter', () => {
  it('lets a burst through at once, then spaces calls at 1/qps', () => {
    const clock = new FakeClock();
    const limiter = new BucketRateLimiter<string>({ qps: 10, burst: 100, clock });
    for (let i = 0; i < 100; i++) expect(limiter.when(`item-${i}`)).toBe(0);
    // Reservations queue up: each further call waits one more token (100 ms at 10 qps).
    expect(limiter.when('a')).toBeCloseTo(100);
    expect(limiter.when('b')).toBeCloseTo(200);
    expect(limiter.when('c')).toBeCloseTo(300);
    expect(limiter.numRequeues('a')).toBe(0);
  });

  it('refills at qps tokens per second, up to the burst', () => {
    const clock = new FakeClock();
    const limiter = new BucketRateLimiter({ qps: 10, burst: 5, clock });
    for (let i = 0; i < 5; i++) expect(limiter.when('x')).toBe(0);
    expect(limiter.when('x')).toBeCloseTo(100); // tokens: -1

    clock.advance(300); // +3 tokens: 2
    expect(limiter.when('x')).toBe(0);
    expect(limiter.when('x')).toBe(0);
    expect(limiter.when('x')).toBeCloseTo(100);

    clock.advance(60 * SECOND); // refills to the burst, not beyond
    for (let i = 0; i < 5; i++) expect(limiter.when('x')).toBe(0);
    expect(limiter.when('x')).toBeCloseTo(100);
  });

  it('defaults to 10 qps with a burst of 100', () => {
    const limiter = new BucketRateLimiter({ clock: new FakeClock() });
    for (let i = 0; i < 100; i++) expect(limiter.when(i)).toBe(0);
    expect(limiter.when(100)).toBeCloseTo(100);
  });

  it('never waits with an infinite qps', () => {
    const limiter = new BucketRateLimiter({ qps: Infinity, burst: 1, clock: new FakeClock() });
    for (let i = 0; i < 1000; i++) expect(limiter.when(i)).toBe(0);
  });

  it('is shared by all items: forget does not give tokens back', () => {
    const clock = new FakeClock();
    const limiter = new BucketRateLimiter<string>({ qps: 1, burst: 1, clock });
    expect(limiter.when('a')).toBe(0);
    limiter.forget('a');
    expect(limiter.when('b')).toBeCloseTo(1000);
  });

  it('rejects invalid options', () => {
    expect(() => new BucketRateLimiter({ qps: 0 })).toThrow(invalid);
    expect(() => new BucketRateLimiter({ burst: 0 })).toThrow(invalid);
    expect(() => new BucketRateLimiter({ burst: Infinity })).toThrow(invalid);
  });
});

describe('defaultControllerRateLimiter', () => {
  it('backs off each item exponentially from 5 ms', () => {
    const limiter = defaultControllerRateLimiter<string>({ clock: new FakeClock() });
    expect([limiter.when('a'), limiter.when('a'), limiter.when('a')]).toEqual([5, 10, 20]);
    expect(limiter.numRequeues('a')).toBe(3);
    limiter.forget('a');
    expect(limiter.when('a')).toBe(5);
  });

  it('caps a single item at 1000 s', () => {
    const limiter = defaultControllerRateLimiter<string>({ clock: new FakeClock() });
    for (let i = 0; i < 40; i++) limiter.when('a');
    expect(limiter.when('a')).toBe(1000 * SECOND);
  });

  it("takes the per-item base and cap from its options (the runtime Manager's `retry`)", () => {
    const limiter = defaultControllerRateLimiter<string>({
      clock: new FakeClock(),
      baseDelayMs: 100,
      maxDelayMs: 250,
    });
    expect([limiter.when('a'), limiter.when('a'), limiter.when('a')]).toEqual([100, 200, 250]);
  });

  it('holds a storm of fresh failures to 10 per second after a burst of 100', () => {
    const limiter = defaultControllerRateLimiter<number>({ clock: new FakeClock() });
    for (let i = 0; i < 100; i++) expect(limiter.when(i)).toBe(5);
    expect(limiter.when(100)).toBeCloseTo(100);
    expect(limiter.when(101)).toBeCloseTo(200);
  });
});

describe('defaultItemBasedRateLimiter', () => {
  it('backs off each item exponentially from 1 ms up to 1000 s', () => {
    const limiter = defaultItemBasedRateLimiter<string>();
    expect([limiter.when('a'), limiter.when('a'), limiter.when('a')]).toEqual([1, 2, 4]);
    for (let i = 0; i < 40; i++) limiter.when('a');
    expect(limiter.when('a')).toBe(1000 * SECOND);
  });
});
