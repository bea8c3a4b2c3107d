import { KinformerError, ErrorCodes } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import { compareResourceVersions, isNumericResourceVersion } from './resourceVersion.js';
import { RetryWithDeadline } from './retryWithDeadline.js';
import { effectiveMinWatchTimeoutMs, watchTimeoutSeconds } from './watchTimeout.js';

describe('resourceVersion helpers', () => {
  it('tells numeric versions from opaque ones', () => {
    expect(isNumericResourceVersion('12345')).toBe(true);
    expect(isNumericResourceVersion('')).toBe(false);
    expect(isNumericResourceVersion('abc')).toBe(false);
    expect(isNumericResourceVersion('-1')).toBe(false);
  });

  it('orders numeric versions by length then lexically, and refuses to order opaque ones', () => {
    expect(compareResourceVersions('9', '10')).toBeLessThan(0);
    expect(compareResourceVersions('100', '99')).toBeGreaterThan(0);
    expect(compareResourceVersions('123', '123')).toBe(0);
    expect(compareResourceVersions('0010', '9')).toBeGreaterThan(0);
    expect(
      compareResourceVersions(
        '340282366920938463463374607431768211455',
        '340282366920938463463374607431768211454',
      ),
    ).toBeGreaterThan(0);
    expect(compareResourceVersions('a', '1')).toBeUndefined();
  });
});

describe('watch timeouts (client-go TestWatchTimeout)', () => {
  it('draws timeoutSeconds from [min, 2·min) and honours only minimums above 5 minutes', () => {
    expect(effectiveMinWatchTimeoutMs(undefined)).toBe(300_000);
    expect(effectiveMinWatchTimeoutMs(1000)).toBe(300_000);
    expect(effectiveMinWatchTimeoutMs(1_800_000)).toBe(1_800_000);
    expect(watchTimeoutSeconds(300_000, () => 0)).toBe(300);
    expect(watchTimeoutSeconds(300_000, () => 0.9999)).toBe(599);
    for (let i = 0; i < 100; i++) {
      const s = watchTimeoutSeconds(300_000);
      expect(s).toBeGreaterThanOrEqual(300);
      expect(s).toBeLessThan(600);
    }
  });
});

describe('RetryWithDeadline (client-go retry_with_deadline.go)', () => {
  const internal = (): KinformerError => new KinformerError(ErrorCodes.INTERNAL, 'etcdserver: no leader');
  const isInternal = (err: unknown): boolean =>
    err instanceof KinformerError && err.code === ErrorCodes.INTERNAL;

  it('never retries when the maximum duration is 0', () => {
    const clock = new FakeClock();
    const retry = new RetryWithDeadline(0, 60_000, isInternal, clock);
    retry.after(internal());
    expect(retry.shouldRetry()).toBe(false);
  });

  it('retries until the window since the first error is exhausted, then resets', () => {
    const clock = new FakeClock();
    const retry = new RetryWithDeadline(30_000, 60_000, isInternal, clock);
    expect(retry.shouldRetry()).toBe(false); // no error recorded yet
    retry.after(internal());
    clock.advance(30_000);
    retry.after(internal());
    expect(retry.shouldRetry()).toBe(true);
    clock.advance(1);
    retry.after(internal());
    expect(retry.shouldRetry()).toBe(false);
    retry.after(internal()); // a fresh window after the reset
    expect(retry.shouldRetry()).toBe(true);
  });

  it('ignores non-retryable outcomes and restarts the window after a quiet minute', () => {
    const clock = new FakeClock();
    const retry = new RetryWithDeadline(30_000, 60_000, isInternal, clock);
    retry.after(internal());
    clock.advance(25_000);
    retry.after(undefined);
    retry.after(new KinformerError(ErrorCodes.FORBIDDEN, 'no'));
    clock.advance(60_000);
    retry.after(internal()); // 60 s since the last internal error: new window
    expect(retry.shouldRetry()).toBe(true);
  });
});
