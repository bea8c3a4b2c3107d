import type { Clock, Logger } from '@kinformer/core';
import type { V1Lease } from '@kubernetes/client-node';
import { LeaseObserver, planRanges } from './hashRanges.js';

/** The label every Lease of a hash ring carries: its value is the ring's name. */
export const HASH_RING_LABEL = 'kinformer.dev/hash-ring';
/** The label saying what a ring Lease is: a range index (`'0'`…) or `member`. */
export const HASH_RING_ROLE_LABEL = 'kinformer.dev/hash-ring-role';

/**
 * Where the ring's Leases live: the API server (`objectClientLeaseStore`), or anything with the same
 * optimistic concurrency (`update` fails with `ERR_CONFLICT` on a stale `resourceVersion`, `create`
 * with `ERR_CONFLICT` when the Lease exists).
 */
export interface RangeLeaseStore {
  /** Every Lease of the ring (the label `kinformer.dev/hash-ring=<ring>`). */
  list(signal: AbortSignal): Promise<V1Lease[]>;
  create(lease: V1Lease, signal: AbortSignal): Promise<V1Lease>;
  update(lease: V1Lease, signal: AbortSignal): Promise<V1Lease>;
  /**
   * Optional: calls `onChange` with each Lease of the ring as it is created or changes, until
   * `signal` aborts (an informer on the ring's Leases). The coordinator then reacts to a released
   * range, a joining or leaving member at once instead of at its next retry period; without it (or
   * while it is down) the retry period still polls.
   */
  watch?(signal: AbortSignal, onChange: (lease: V1Lease) => void): void;
}

/** What the coordinator tells the Manager. */
export interface RangeCallbacks {
  /** The range's Lease is now this replica's: start its informer (reconcile once it synced). */
  acquired(range: number): void;
  /**
   * Hand the range off: stop queueing its keys, drop the queued ones, and resolve once every
   * reconcile of it in flight has ended. The Lease is released after that.
   */
  handoff(range: number): Promise<void>;
  /** The Lease could not be renewed within the renew deadline (or another took it): stop at once. */
  lost(range: number): void;
  /** The range's Lease was released (after its handoff). */
  released(range: number): void;
}

/** Options of {@link RangeCoordinator}. */
export interface RangeCoordinatorOptions {
  ring: string;
  namespace: string;
  identity: string;
  ranges: number;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  store: RangeLeaseStore;
  clock: Clock;
  logger: Logger;
  callbacks: RangeCallbacks;
}

interface Held {
  lease: V1Lease;
  /** When the last successful write of it was sent (clock ms): the renew deadline counts from there. */
  renewedAt: number;
  /** Handoff started. */
  releasing: boolean;
  /** Handoff finished: write the release (empty holder) instead of renewing. */
  handedOff: boolean;
}

/** The name of range `i`'s Lease. */
export function rangeLeaseName(ring: string, i: number): string {
  return `${ring}-range-${i}`;
}

/** The name of a member's Lease. */
export function memberLeaseName(ring: string, identity: string): string {
  return `${ring}-member-${identity}`;
}

/** A Lease's MicroTime (`2026-01-01T00:00:00.123000Z`). */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000Z');
}

/**
 * The balancer of one replica: every retry period it lists the ring's Leases, renews its membership
 * Lease and its range Leases, and acts on its row of {@link planRanges}: acquires the free ranges
 * assigned to it, hands off (then releases) those assigned elsewhere. A range whose renewal has not
 * succeeded within the renew deadline is given up at once (`lost`), before any other replica can see
 * it expire (lease duration > renew deadline, both measured from when the renewal was sent). While no
 * replica holds a range, a starting replica acquires no free range until the members it sees have
 * stayed the same for one retry period (the join window: replicas started together see each other
 * first, and each takes only its share). A membership Lease of another replica that it saw unchanged
 * for a lease duration (a replica killed without leaving) it clears, so that replicas joining later
 * do not count the dead one as a member.
 */
export class RangeCoordinator {
  readonly #o: RangeCoordinatorOptions;
  readonly #observer: LeaseObserver;
  readonly #held = new Map<number, Held>();
  #member: V1Lease | undefined;
  #members: string[] = [];
  #tick: Promise<void> | undefined;
  readonly #handoffs = new Set<Promise<void>>();
  /** A Lease changed while a tick ran: run another once it ends. */
  #again = false;
  /** When the last tick started (clock ms). */
  #lastTick = Number.NEGATIVE_INFINITY;
  /** When the first tick whose list succeeded started (clock ms): the join window opens. */
  #joinedAt: number | undefined;
  /** The members of the last list, and since when (clock ms) they have been the same. */
  #joinMembers = '';
  #joinQuietSince = 0;
  /** Wakes the loop when the join window closes (a tick deferred an acquisition), and when. */
  #joinTimer: { cancel(): void; at: number } | undefined;
  /** Ends the current pause between ticks. */
  #wake: (() => void) | undefined;
  #wakeTimer: { cancel(): void } | undefined;

  constructor(options: RangeCoordinatorOptions) {
    this.#o = options;
    this.#observer = new LeaseObserver(options.leaseDurationMs);
  }

  /** The ranges whose Lease this replica holds now (handoffs included), ascending. */
  held(): number[] {
    return [...this.#held.keys()].sort((a, b) => a - b);
  }

  /** The live members this replica saw at its last successful list (itself included). */
  members(): string[] {
    return [...this.#members];
  }

  /**
   * Runs until `signal` aborts, then leaves: hands off every range (bounded by the renew deadline:
   * a range still busy then is left to expire), releases the range Leases and the membership Lease.
   * A tick runs every retry period, and sooner (at most one per {@link minTickGapMs}) when the
   * store's watch reports another replica's Lease changing hands: a range released, a member joining
   * or leaving.
   */
  async run(signal: AbortSignal): Promise<void> {
    const { clock, retryPeriodMs } = this.#o;
    this.#watch(signal);
    while (!signal.aborted) {
      if (this.#tick === undefined) {
        this.#again = false;
        this.#lastTick = clock.now();
        this.#tick = this.#once().finally(() => {
          this.#tick = undefined;
          if (this.#again) this.#wakeSoon();
        });
      }
      // A tick outlasted the retry period (a slow Lease list under load): the next one starts as
      // soon as it ends, not a whole period later (which delayed seeing renewals and expiries).
      else this.#again = true;
      await this.#pause(retryPeriodMs, signal);
      this.#checkDeadlines();
    }
    this.#wakeTimer?.cancel();
    this.#joinTimer?.cancel();
    await this.#tick;
    await this.#leave();
  }

  /** The least time between two ticks started early by {@link poke}: a tenth of the retry period, at most 100 ms. */
  get minTickGapMs(): number {
    return Math.min(100, this.#o.retryPeriodMs / 10);
  }

  /** Runs a tick soon (after the one running, if any) instead of at the next retry period. */
  poke(): void {
    this.#again = true;
    if (this.#tick === undefined) this.#wakeSoon();
  }

  #wakeSoon(): void {
    if (this.#wakeTimer !== undefined) return;
    const delay = this.#lastTick + this.minTickGapMs - this.#o.clock.now();
    if (delay <= 0) {
      this.#wake?.();
      return;
    }
    this.#wakeTimer = this.#o.clock.setTimeout(() => {
      this.#wakeTimer = undefined;
      this.#wake?.();
    }, delay);
  }

  async #pause(ms: number, signal: AbortSignal): Promise<void> {
    const ctl = new AbortController();
    const abort = (): void => ctl.abort();
    signal.addEventListener('abort', abort, { once: true });
    this.#wake = abort;
    try {
      await this.#o.clock.sleep(ms, ctl.signal);
    } finally {
      this.#wake = undefined;
      signal.removeEventListener('abort', abort);
    }
  }

  /**
   * Pokes on every change of holder of another replica's Lease: a release (range free, member gone)
   * and a new holder (a member joining, a range taken). Renewals (same holder) and this replica's
   * own acquisitions and releases are ignored.
   */
  #watch(signal: AbortSignal): void {
    const { identity, store } = this.#o;
    if (store.watch === undefined) return;
    const holders = new Map<string, string>();
    try {
      store.watch(signal, (lease) => {
        const name = lease.metadata?.name ?? '';
        const holder = lease.spec?.holderIdentity ?? '';
        const prev = holders.get(name);
        holders.set(name, holder);
        if (prev === holder || holder === identity || prev === identity) return;
        this.poke();
      });
    } catch (err) {
      this.#o.logger.warn({ err }, 'watching the ring Leases failed; polling every retry period');
    }
  }

  #timeout(): { signal: AbortSignal; cancel: () => void } {
    const ctl = new AbortController();
    const timer = this.#o.clock.setTimeout(() => ctl.abort(), this.#o.renewDeadlineMs);
    return { signal: ctl.signal, cancel: () => timer.cancel() };
  }

  #checkDeadlines(): void {
    const now = this.#o.clock.now();
    for (const [i, h] of this.#held)
      if (now - h.renewedAt > this.#o.renewDeadlineMs) this.#lose(i, 'renew deadline passed');
  }

  #lose(i: number, why: string): void {
    const h = this.#held.get(i);
    if (h === undefined) return;
    this.#held.delete(i);
    this.#o.logger.warn({ range: i, why }, 'range lost');
    if (!h.handedOff) this.#o.callbacks.lost(i);
  }

  async #once(): Promise<void> {
    const { clock, identity, ring, ranges, store } = this.#o;
    const started = clock.now();
    const t = this.#timeout();
    try {
      let leases: V1Lease[];
      try {
        leases = await store.list(t.signal);
      } catch (err) {
        this.#o.logger.debug({ err }, 'listing the ring Leases failed');
        return;
      }
      const now = clock.now();
      this.#joinedAt ??= started;
      const byName = new Map<string, V1Lease>();
      for (const l of leases) {
        const name = l.metadata?.name ?? '';
        byName.set(name, l);
        this.#observer.observe(
          name,
          `${l.spec?.holderIdentity ?? ''}|${l.metadata?.resourceVersion ?? ''}`,
          now,
        );
      }
      this.#observer.retain(new Set(byName.keys()));
      const members = [identity];
      const expired: V1Lease[] = [];
      for (const l of leases) {
        if (l.metadata?.labels?.[HASH_RING_ROLE_LABEL] !== 'member') continue;
        const holder = l.spec?.holderIdentity ?? '';
        if (holder === '' || holder === identity) continue;
        if (this.#observer.live(l.metadata?.name ?? '', holder, now)) members.push(holder);
        else expired.push(l);
      }
      this.#members = [...new Set(members)].sort();
      const holders: Array<string | undefined> = [];
      for (let i = 0; i < ranges; i++) {
        const name = rangeLeaseName(ring, i);
        const l = byName.get(name);
        const holder = l?.spec?.holderIdentity ?? '';
        if (this.#held.has(i) && l !== undefined && holder !== identity) {
          this.#lose(i, `the Lease is held by ${holder || 'nobody'}`);
        }
        // A Lease still naming this replica that it no longer holds (lost when this process stalled
        // past the renew deadline, or held by a previous process of the same identity) counts as
        // free for it: nobody else can have reconciled the range since, and the conditional update
        // fails if anybody wrote the Lease meanwhile.
        holders.push(
          this.#held.has(i)
            ? identity
            : holder !== identity && this.#observer.live(name, holder, now)
              ? holder
              : undefined,
        );
      }
      const writes: Array<Promise<void>> = [this.#renewMember(byName, started, t.signal)];
      for (const l of expired) writes.push(this.#clearMember(l, t.signal));
      for (const [i, h] of this.#held) writes.push(this.#renewRange(i, h, byName, started, t.signal));
      const plan = planRanges({ identity, members: this.#members, holders });
      for (const i of plan.release) this.#startHandoff(i);
      // The join window: while no replica holds a range (a ring starting up), a replica that holds
      // none takes only ranges whose Lease still names it (a restart under the same identity) until
      // the members it sees have stayed the same for one retry period (at most a lease duration
      // after its first list). Replicas started together (a Deployment's, seconds apart) thus see
      // each other's membership Leases first and each lists only its share, instead of each taking
      // every free range and handing most of them off again. A replica joining a running ring takes
      // at once what the others release for it.
      const memberKey = this.#members.join(',');
      if (memberKey !== this.#joinMembers) {
        this.#joinMembers = memberKey;
        this.#joinQuietSince = started;
      }
      const joining =
        this.#joinClosesAt() > started &&
        this.#held.size === 0 &&
        !holders.some((h) => h !== undefined && h !== identity);
      for (const i of plan.acquire) {
        const listed = byName.get(rangeLeaseName(ring, i));
        if (joining && (listed?.spec?.holderIdentity ?? '') !== identity) {
          this.#closeJoinWindowLater();
          continue;
        }
        writes.push(this.#acquire(i, listed, started, t.signal));
      }
      await Promise.all(writes);
    } finally {
      t.cancel();
    }
  }

  /** When the join window closes (clock ms), as things stand. */
  #joinClosesAt(): number {
    if (this.#joinedAt === undefined) return Number.POSITIVE_INFINITY;
    return Math.min(this.#joinQuietSince + this.#o.retryPeriodMs, this.#joinedAt + this.#o.leaseDurationMs);
  }

  /** Runs a tick as soon as the join window closes (not up to a retry period later). */
  #closeJoinWindowLater(): void {
    const at = this.#joinClosesAt();
    if (this.#joinTimer?.at === at) return;
    this.#joinTimer?.cancel();
    const timer = this.#o.clock.setTimeout(() => this.poke(), Math.max(0, at - this.#o.clock.now()));
    this.#joinTimer = { cancel: () => timer.cancel(), at };
  }

  #record(holder: string, previous: V1Lease | undefined): NonNullable<V1Lease['spec']> {
    const now = this.#o.clock.now();
    const prev = previous?.spec;
    const same = (prev?.holderIdentity ?? '') === holder;
    return {
      holderIdentity: holder,
      leaseDurationSeconds: Math.max(1, Math.ceil(this.#o.leaseDurationMs / 1000)),
      acquireTime: (same && prev?.acquireTime !== undefined
        ? prev.acquireTime
        : microTime(now)) as unknown as Date,
      renewTime: microTime(now) as unknown as Date,
      leaseTransitions: (prev?.leaseTransitions ?? 0) + (same || holder === '' ? 0 : 1),
    };
  }

  #body(name: string, role: string, holder: string, previous: V1Lease | undefined): V1Lease {
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        ...(previous?.metadata ?? {}),
        name,
        namespace: this.#o.namespace,
        labels: {
          ...previous?.metadata?.labels,
          [HASH_RING_LABEL]: this.#o.ring,
          [HASH_RING_ROLE_LABEL]: role,
        },
      },
      spec: this.#record(holder, previous),
    };
  }

  async #renewMember(byName: Map<string, V1Lease>, started: number, signal: AbortSignal): Promise<void> {
    const name = memberLeaseName(this.#o.ring, this.#o.identity);
    const listed = byName.get(name);
    try {
      this.#member =
        listed === undefined
          ? await this.#o.store.create(this.#body(name, 'member', this.#o.identity, undefined), signal)
          : await this.#o.store.update(this.#body(name, 'member', this.#o.identity, listed), signal);
    } catch (err) {
      this.#o.logger.debug({ err, started }, 'renewing the membership Lease failed');
    }
  }

  /**
   * Empties the holder of another replica's membership Lease that this replica saw unchanged for a
   * lease duration (a replica killed without leaving). Every replica that joins later sees the Lease
   * for the first time and, as client-go counts a Lease it has just seen, would take it for just
   * renewed: it then planned ranges for the dead member (for a lease duration nobody took the ranges
   * the others handed off for the joiner) while the others, who saw it expire, planned them for the
   * joiner. The write is conditional on the listed `resourceVersion`: a member that renewed meanwhile
   * keeps its Lease (the write fails), and one that comes back (a partition) takes it again at its
   * next tick.
   */
  async #clearMember(lease: V1Lease, signal: AbortSignal): Promise<void> {
    const holder = lease.spec?.holderIdentity ?? '';
    try {
      await this.#o.store.update(this.#body(lease.metadata?.name ?? '', 'member', '', lease), signal);
      this.#o.logger.debug({ member: holder }, 'cleared an expired membership Lease');
    } catch (err) {
      this.#o.logger.debug({ err, member: holder }, 'clearing an expired membership Lease failed');
    }
  }

  async #renewRange(
    i: number,
    h: Held,
    byName: Map<string, V1Lease>,
    started: number,
    signal: AbortSignal,
  ): Promise<void> {
    const name = rangeLeaseName(this.#o.ring, i);
    const base = byName.get(name) ?? h.lease;
    if (h.handedOff) {
      await this.#release(i, h, base, signal);
      return;
    }
    try {
      const lease = await this.#o.store.update(this.#body(name, String(i), this.#o.identity, base), signal);
      if (this.#held.get(i) === h) {
        h.lease = lease;
        h.renewedAt = Math.max(h.renewedAt, started);
      }
    } catch (err) {
      this.#o.logger.debug({ err, range: i }, 'renewing a range Lease failed');
    }
  }

  async #acquire(
    i: number,
    listed: V1Lease | undefined,
    started: number,
    signal: AbortSignal,
  ): Promise<void> {
    const name = rangeLeaseName(this.#o.ring, i);
    try {
      const body = this.#body(name, String(i), this.#o.identity, listed);
      const lease =
        listed === undefined
          ? await this.#o.store.create(body, signal)
          : await this.#o.store.update(body, signal);
      if (this.#held.has(i)) return;
      this.#held.set(i, { lease, renewedAt: started, releasing: false, handedOff: false });
      this.#o.logger.debug({ range: i }, 'range acquired');
      this.#o.callbacks.acquired(i);
    } catch (err) {
      this.#o.logger.debug({ err, range: i }, 'acquiring a range Lease failed (another replica was faster?)');
    }
  }

  #startHandoff(i: number): void {
    const h = this.#held.get(i);
    if (h === undefined || h.releasing) return;
    h.releasing = true;
    const p = this.#o.callbacks
      .handoff(i)
      .then(async () => {
        if (this.#held.get(i) !== h) return; // lost meanwhile
        h.handedOff = true;
        const t = this.#timeout();
        try {
          // Failed (a renewal raced it: stale resourceVersion)? The next tick releases from a fresh
          // list. Released? The next tick plans again soon: while several replicas hand off at once,
          // the quotas move with who holds the most (a range being handed off still counts), and the
          // range may now be planned for this replica again; its own release does not poke it through
          // the watch, so it would stay unowned until the next retry period.
          await this.#release(i, h, h.lease, t.signal);
          this.poke();
        } finally {
          t.cancel();
        }
      })
      .finally(() => this.#handoffs.delete(p));
    this.#handoffs.add(p);
  }

  /** Writes the release of range `i`; false when the write failed (retried at the next tick). */
  async #release(i: number, h: Held, base: V1Lease, signal: AbortSignal): Promise<boolean> {
    try {
      await this.#o.store.update(this.#body(rangeLeaseName(this.#o.ring, i), String(i), '', base), signal);
    } catch (err) {
      this.#o.logger.debug({ err, range: i }, 'releasing a range Lease failed; retried next tick');
      return false;
    }
    if (this.#held.get(i) === h) {
      this.#held.delete(i);
      this.#o.logger.debug({ range: i }, 'range released');
      this.#o.callbacks.released(i);
    }
    return true;
  }

  async #leave(): Promise<void> {
    const { clock, renewDeadlineMs } = this.#o;
    // The membership Lease first: the others then plan without this replica and take each range as
    // soon as its handoff releases it, instead of waiting for the membership Lease to expire.
    const member = this.#member;
    if (member !== undefined) {
      const t = this.#timeout();
      try {
        await this.#o.store.update(
          this.#body(memberLeaseName(this.#o.ring, this.#o.identity), 'member', '', member),
          t.signal,
        );
      } catch (err) {
        this.#o.logger.debug({ err }, 'releasing the membership Lease failed');
      } finally {
        t.cancel();
      }
    }
    for (const i of this.#held.keys()) this.#startHandoff(i);
    const deadline = new AbortController();
    await Promise.race([Promise.all([...this.#handoffs]), clock.sleep(renewDeadlineMs, deadline.signal)]);
    deadline.abort();
    // A release that failed (a renewal raced it) is retried once from a fresh list: the loop that
    // would retry it has ended, and a range left to expire costs the others a lease duration.
    const pending = [...this.#held].filter(([, h]) => h.handedOff);
    if (pending.length === 0) return;
    const t = this.#timeout();
    try {
      const leases = new Map((await this.#o.store.list(t.signal)).map((l) => [l.metadata?.name ?? '', l]));
      await Promise.all(
        pending.map(([i, h]) =>
          this.#release(i, h, leases.get(rangeLeaseName(this.#o.ring, i)) ?? h.lease, t.signal),
        ),
      );
    } catch (err) {
      this.#o.logger.debug({ err }, 'listing the ring Leases to release failed');
    } finally {
      t.cancel();
    }
  }
}
