import fc from 'fast-check';

import { ExponentialBackoff } from './backoff.js';
import { FakeClock } from './clock.js';

/** The un-jittered client-go reflector sequence: 0.8 s doubling, clamped at 30 s. */
const BASES = [800, 1_600, 3_200, 6_400, 12_800, 25_600, 30_000, 30_000, 30_000];

describe('ExponentialBackoff (client-go reflector backoff, client-go.md §1.1)', () => {
  it('returns exactly the base delays when random() is 0: 0.8 s doubling to the 30 s cap', () => {
    const backoff = new ExponentialBackoff({ clock: new FakeClock(), random: () => 0 });
    expect(BASES.map(() => backoff.next())).toEqual(BASES);
  });

  it('jitters each delay to [d, 2d): random() r gives d + r·d', () => {
    const backoff = new ExponentialBackoff({ clock: new FakeClock(), random: () => 0.5 });
    expect(BASES.map(() => backoff.next())).toEqual(BASES.map((d) => d * 1.5));
    const almostOne = new ExponentialBackoff({ clock: new FakeClock(), random: () => 0.999_999 });
    const delays = BASES.map(() => almostOne.next());
    delays.forEach((delay, i) => {
      expect(delay).toBeLessThan(2 * BASES[i]!);
      expect(delay).toBeGreaterThan(1.99 * BASES[i]!);
    });
  });

  it('never returns the excluded upper bound 2d, even when float rounding would', () => {
    // 1600 + (1 − 2⁻⁵³)·1600 rounds to exactly 3200 in double precision.
    const backoff = new ExponentialBackoff({ clock: new FakeClock(), random: () => 1 - 2 ** -53 });
    for (const d of BASES) {
      const delay = backoff.next();
      expect(delay).toBeLessThan(2 * d);
      expect(delay).toBeGreaterThan(1.99 * d);
    }
  });

  it('stays in [d, 2d) for any random source, and in [30 s, 60 s) once capped', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), {
          minLength: 12,
          maxLength: 12,
        }),
        (randoms) => {
          let i = 0;
          const backoff = new ExponentialBackoff({ clock: new FakeClock(), random: () => randoms[i++]! });
          for (let step = 0; step < 12; step++) {
            const d = BASES[Math.min(step, BASES.length - 1)]!;
            const delay = backoff.next();
            expect(delay).toBeGreaterThanOrEqual(d);
            expect(delay).toBeLessThan(2 * d);
            if (step >= 6) {
              expect(delay).toBeGreaterThanOrEqual(30_000);
              expect(delay).toBeLessThan(60_000);
            }
          }
        },
      ),
    );
  });

  it('starts again from 0.8 s once more than 2 minutes have passed since the last reset', () => {
    const clock = new FakeClock();
    const backoff = new ExponentialBackoff({ clock, random: () => 0 });
    expect([backoff.next(), backoff.next(), backoff.next()]).toEqual([800, 1_600, 3_200]);
    clock.advance(120_000); // exactly 2 minutes: not yet ("now − lastReset > 2m")
    expect(backoff.next()).toBe(6_400);
    clock.advance(1);
    expect(backoff.next()).toBe(800);
    expect(backoff.next()).toBe(1_600);
  });

  it('counts the 2 minutes from the last reset, not from the last call', () => {
    const clock = new FakeClock();
    const backoff = new ExponentialBackoff({ clock, random: () => 0 });
    // A call every 30 s: the backoff still resets once 2 minutes have passed since construction.
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) {
      seen.push(backoff.next());
      clock.advance(30_000);
    }
    // t=0,30,60,90,120 s: no reset (120 000 is not > 120 000); t=150 s: reset.
    expect(seen).toEqual([800, 1_600, 3_200, 6_400, 12_800, 800]);
  });

  it('reset() goes back to the initial delay and restarts the 2-minute window', () => {
    const clock = new FakeClock();
    const backoff = new ExponentialBackoff({ clock, random: () => 0 });
    backoff.next();
    backoff.next();
    clock.advance(100_000);
    backoff.reset();
    expect(backoff.next()).toBe(800);
    expect(backoff.next()).toBe(1_600);
    clock.advance(100_000); // 200 s since construction but only 100 s since reset()
    expect(backoff.next()).toBe(3_200);
  });

  it('honours custom parameters', () => {
    const clock = new FakeClock();
    const backoff = new ExponentialBackoff({
      initialMs: 10,
      capMs: 100,
      factor: 3,
      jitter: 0,
      resetAfterMs: 1_000,
      clock,
      random: () => 0.9,
    });
    expect([backoff.next(), backoff.next(), backoff.next(), backoff.next()]).toEqual([10, 30, 90, 100]);
    clock.advance(1_001);
    expect(backoff.next()).toBe(10);
    const halfJitter = new ExponentialBackoff({ initialMs: 100, jitter: 0.5, clock, random: () => 0.5 });
    expect(halfJitter.next()).toBe(125);
  });

  it('uses Math.random and the real clock by default', () => {
    const backoff = new ExponentialBackoff();
    const first = backoff.next();
    expect(first).toBeGreaterThanOrEqual(800);
    expect(first).toBeLessThan(1_600);
    const second = backoff.next();
    expect(second).toBeGreaterThanOrEqual(1_600);
    expect(second).toBeLessThan(3_200);
  });
});
