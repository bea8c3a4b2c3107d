/**
 * Hash ranges owned through Leases (issue 21, step 3): the pure balancing decision and the bookkeeping
 * of who is alive. The loop that reads and writes the Leases is {@link RangeCoordinator}
 * (`rangeCoordinator.ts`); the Manager's glue (one informer per owned range, handoff) is
 * `hashSharding.ts`.
 */

/** What one replica sees: the live members and, per virtual range, its live holder. */
export interface RangePlanInput {
  /** This replica. Counted as a member whether or not it appears in `members`. */
  readonly identity: string;
  /** Identities whose membership Lease is live. */
  readonly members: readonly string[];
  /** Per range: the identity of its live holder, or `undefined` when free (never held, released, expired). */
  readonly holders: ReadonlyArray<string | undefined>;
}

/** What {@link planRanges} decides. */
export interface RangePlan {
  /** Per range: the member it should belong to (a range held by a live non-member stays with it). */
  readonly assignment: readonly string[];
  /** How many ranges each member should hold (`⌊V/m⌋` or `⌈V/m⌉`, summing to V). */
  readonly quota: ReadonlyMap<string, number>;
  /** Free ranges assigned to this replica: take their Leases. */
  readonly acquire: readonly number[];
  /** Ranges this replica holds but should not: hand them off (drop keys, wait, then release). */
  readonly release: readonly number[];
}

/**
 * The balancing decision, identical on every replica that sees the same Leases:
 *
 * 1. quotas: V ranges over m members, `⌊V/m⌋` each, and one more for the `V mod m` members holding
 *    the most ranges (ties by identity), so the members already holding more keep them;
 * 2. every member keeps up to its quota of the ranges it holds (lowest indices first);
 * 3. the pool is the free ranges plus everyone's surplus; it goes, lowest index first, to the members
 *    below their quota in identity order.
 *
 * So a joining 4th replica with V = 16 takes ⌈16/4⌉ = 4 ranges and nothing else moves; a crashed
 * member's ranges (once expired) go to the others up to their new quotas. A replica acts only on its
 * own row: it acquires the free ranges assigned to it and hands off the ones assigned elsewhere; a
 * range assigned to it but still held by another waits until that one releases it.
 */
export function planRanges(input: RangePlanInput): RangePlan {
  const v = input.holders.length;
  const members = [...new Set([...input.members, input.identity])].sort();
  const memberSet = new Set(members);
  const held = new Map<string, number[]>(members.map((m) => [m, []]));
  const assignment: string[] = new Array<string>(v).fill('');
  const pool: number[] = [];
  input.holders.forEach((holder, i) => {
    if (holder === undefined || holder === '') pool.push(i);
    else if (!memberSet.has(holder))
      assignment[i] = holder; // live Lease, member Lease gone: wait for it to expire
    else held.get(holder)!.push(i);
  });
  const byHeld = [...members].sort(
    (a, b) => held.get(b)!.length - held.get(a)!.length || (a < b ? -1 : a > b ? 1 : 0),
  );
  const base = Math.floor(v / members.length);
  const extra = v % members.length;
  const quota = new Map<string, number>();
  byHeld.forEach((m, i) => quota.set(m, base + (i < extra ? 1 : 0)));
  const count = new Map<string, number>(members.map((m) => [m, 0]));
  for (const m of members) {
    const mine = held.get(m)!;
    const q = quota.get(m)!;
    mine.forEach((r, k) => {
      if (k < q) {
        assignment[r] = m;
        count.set(m, count.get(m)! + 1);
      } else pool.push(r);
    });
  }
  pool.sort((a, b) => a - b);
  for (const m of members) {
    while (count.get(m)! < quota.get(m)! && pool.length > 0) {
      assignment[pool.shift()!] = m;
      count.set(m, count.get(m)! + 1);
    }
  }
  const acquire: number[] = [];
  const release: number[] = [];
  for (let i = 0; i < v; i++) {
    const h = input.holders[i];
    if (assignment[i] === input.identity && (h === undefined || h === '')) acquire.push(i);
    if (h === input.identity && assignment[i] !== input.identity) release.push(i);
  }
  return { assignment, quota, acquire, release };
}

/**
 * Lease liveness as client-go's leader election judges it: a Lease is live while its record has
 * changed within the last lease duration **by the observer's clock** (never by the times written in
 * it, so clock skew between replicas does not matter). A Lease seen for the first time counts as
 * just renewed; an empty holder is never live.
 */
export class LeaseObserver {
  readonly #seen = new Map<string, { record: string; at: number }>();
  readonly #durationMs: number;

  constructor(durationMs: number) {
    this.#durationMs = durationMs;
  }

  /** Records what `name` looks like now (`record`: anything that changes on every renewal). */
  observe(name: string, record: string, now: number): void {
    const prev = this.#seen.get(name);
    if (prev === undefined || prev.record !== record) this.#seen.set(name, { record, at: now });
  }

  /** True while `holder` is set and the record changed less than a lease duration ago. */
  live(name: string, holder: string | undefined, now: number): boolean {
    if (holder === undefined || holder === '') return false;
    const seen = this.#seen.get(name);
    return seen !== undefined && now - seen.at < this.#durationMs;
  }

  /** Forgets Leases not in `names` (deleted ones). */
  retain(names: ReadonlySet<string>): void {
    for (const n of this.#seen.keys()) if (!names.has(n)) this.#seen.delete(n);
  }
}
