import fc from 'fast-check';
import { LeaseObserver, planRanges } from './hashRanges.js';

const V = 16;
const free = (): Array<string | undefined> => new Array<string | undefined>(V).fill(undefined);
const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);
/** Who holds each range Lease, from `'a:0-6 b:6-11'` (member a holds ranges 0 to 5, b 6 to 10; the rest free). */
const holding = (held: string): Array<string | undefined> => {
  const h = free();
  for (const [, m, from, to] of held.matchAll(/(\w+):(\d+)-(\d+)/g)) {
    for (const r of range(Number(from), Number(to))) h[r] = m;
  }
  return h;
};

describe('planRanges', () => {
  it.each([
    {
      name: 'alone, all free: takes all 16',
      sees: { identity: 'a', members: [], held: '' },
      plans: { acquire: range(0, 16), release: [] },
    },
    {
      name: 'three members, all free: a gets the first ⌈16/3⌉ = 6',
      sees: { identity: 'a', members: ['a', 'b', 'c'], held: '' },
      plans: { acquire: range(0, 6), release: [] },
    },
    {
      name: 'three members, all free: b gets the next 5',
      sees: { identity: 'b', members: ['a', 'b', 'c'], held: '' },
      plans: { acquire: range(6, 11), release: [] },
    },
    {
      name: 'balanced 6/5/5: nothing to do',
      sees: { identity: 'c', members: ['a', 'b', 'c'], held: 'a:0-6 b:6-11 c:11-16' },
      plans: { acquire: [], release: [] },
    },
    {
      name: 'a 4th joins 6/5/5: a gives up 2 (its highest)',
      sees: { identity: 'a', members: ['a', 'b', 'c', 'd'], held: 'a:0-6 b:6-11 c:11-16' },
      plans: { acquire: [], release: [4, 5] },
    },
    {
      name: 'a 4th joins 6/5/5: b gives up 1',
      sees: { identity: 'b', members: ['a', 'b', 'c', 'd'], held: 'a:0-6 b:6-11 c:11-16' },
      plans: { acquire: [], release: [10] },
    },
    {
      name: 'the 4th takes only the free ranges it is assigned (the surplus, once released)',
      sees: { identity: 'd', members: ['a', 'b', 'c', 'd'], held: 'a:0-4 b:6-10 c:11-16' },
      plans: { acquire: [4, 5, 10], release: [] },
    },
    {
      name: 'the 4th waits for a surplus still held (c holds 5 of quota 4)',
      sees: { identity: 'd', members: ['a', 'b', 'c', 'd'], held: 'a:0-4 b:4-8 c:8-13' },
      plans: { acquire: [13, 14, 15], release: [] },
    },
    {
      name: 'a crashed member (not live, ranges expired): its 6 go to the other two',
      sees: { identity: 'b', members: ['b', 'c'], held: 'b:6-11 c:11-16' },
      plans: { acquire: [0, 1, 2], release: [] },
    },
    {
      name: 'a live range Lease whose member Lease is gone is not taken',
      sees: { identity: 'b', members: ['b'], held: 'x:0-1 b:1-16' },
      plans: { acquire: [], release: [] },
    },
    {
      name: 'five members over 16 ranges: one holds 4, the others 3 — a holder of 4 among 4,4,4,4,0 gives one up',
      sees: { identity: 'b', members: ['a', 'b', 'c', 'd', 'e'], held: 'a:0-4 b:4-8 c:8-12 d:12-16' },
      plans: { acquire: [], release: [7] },
    },
  ])('$name', ({ sees: { identity, members, held }, plans }) => {
    const plan = planRanges({ identity, members, holders: holding(held) });
    expect(plan.acquire).toEqual(plans.acquire);
    expect(plan.release).toEqual(plans.release);
  });

  it('property: quotas sum to V and differ by at most one; everyone seeing the same Leases agrees; no range goes to two members', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g'), { minLength: 1 }),
        fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'x', ''), { maxLength: 64 }),
        (v, members, raw) => {
          const holders = Array.from({ length: v }, (_, i) => raw[i] || undefined);
          const plans = members.map((m) => planRanges({ identity: m, members, holders }));
          const q = [...plans[0]!.quota.values()];
          expect(q.reduce((a, b) => a + b, 0)).toBe(v);
          expect(Math.max(...q) - Math.min(...q)).toBeLessThanOrEqual(1);
          for (const p of plans) expect(p.assignment).toEqual(plans[0]!.assignment);
          // Every member acquires only free ranges assigned to it: no range is acquired twice.
          const acquired = plans.flatMap((p) => p.acquire);
          expect(new Set(acquired).size).toBe(acquired.length);
          for (const r of acquired) expect(holders[r]).toBeUndefined();
        },
      ),
    );
  });

  it('property: from any start, acting on the plans reaches a balanced fixpoint; a joiner then moves ⌈V/m⌉ ± 1 ranges', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.constantFrom(8, 16, 32), (m, v) => {
        const members = Array.from({ length: m }, (_, i) => `r${i}`);
        const settle = (ms: string[], holders: Array<string | undefined>): Array<string | undefined> => {
          for (let round = 0; round < 10; round++) {
            const plans = ms.map((id) => ({ id, plan: planRanges({ identity: id, members: ms, holders }) }));
            let changed = false;
            for (const { plan } of plans)
              for (const r of plan.release) {
                holders[r] = undefined;
                changed = true;
              }
            for (const { id } of plans)
              for (const r of planRanges({ identity: id, members: ms, holders }).acquire) {
                holders[r] = id;
                changed = true;
              }
            if (!changed) return holders;
          }
          throw new Error('no fixpoint within 10 rounds');
        };
        const before = settle(members, new Array<string | undefined>(v).fill(undefined));
        const counts = members.map((id) => before.filter((h) => h === id).length);
        expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
        const after = settle([...members, 'new'], [...before]);
        const moved = after.filter((h, i) => h !== before[i]).length;
        const expected = Math.ceil(v / (m + 1));
        expect(Math.abs(moved - expected)).toBeLessThanOrEqual(1);
        expect(after.filter((h) => h === 'new').length).toBe(moved);
      }),
    );
  });
});

describe('LeaseObserver', () => {
  it('a Lease is live until its record has not changed for a lease duration, by the observer clock', () => {
    const o = new LeaseObserver(1000);
    o.observe('l', 'a|1', 0);
    expect(o.live('l', 'a', 999)).toBe(true);
    o.observe('l', 'a|1', 999); // unchanged: no renewal
    expect(o.live('l', 'a', 1000)).toBe(false);
    o.observe('l', 'a|2', 1500); // renewed
    expect(o.live('l', 'a', 2499)).toBe(true);
    expect(o.live('l', '', 1500)).toBe(false);
    expect(o.live('other', 'a', 1500)).toBe(false);
  });
});
