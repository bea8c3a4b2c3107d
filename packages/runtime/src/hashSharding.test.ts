import { isKinformerError, ErrorCodes, splitHashSpace } from '@kinformer/core';
import { shardRangeLocator } from '@kinformer/core/internal';
import type { KubeObject, OwnerReference } from '@kinformer/core';
import fc from 'fast-check';
import { waitFor } from '@kinformer/test-tools';
import type { V1ConfigMap, V1Lease, V1Secret } from '@kubernetes/client-node';
import { kinds } from './kinds.js';
import { controllerOf, setControllerReference } from './ownerReferences.js';
import { HASH_RANGE_LABEL, hashRangeOf } from './hashSharding.js';
import type { Manager } from './manager.js';
import { HASH_RING_LABEL } from './rangeCoordinator.js';
import { SeverableConnection } from './testing.js';
import type { TestEnv } from './testing.js';
import { perTestEnv, refuseConfigMaps } from './testEnv.test.helpers.js';

// Hash sharding end to end on FakeApiServer: several Managers in one process, each reconciling the
// ConfigMaps of the hash ranges whose Lease it holds. Every reconcile's [start, end] window is
// recorded per object and replica (performance.now(), one process: one clock); no two replicas'
// windows of one object may overlap, whatever joins, leaves, crashes and partitions happen.

const RING = 'cms';
const RANGES = splitHashSpace(16);
// Short enough for a test, long enough that a loaded machine's event-loop stalls (all replicas share
// one process here) do not pass the renew deadline.
const TIMING = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 250 };

interface Window {
  replica: string;
  start: number;
  end: number;
  rv: string;
}

class Recorder {
  readonly windows = new Map<string, Window[]>();

  record(key: string, w: Window): void {
    const list = this.windows.get(key) ?? [];
    list.push(w);
    this.windows.set(key, list);
  }

  /** The one replica that ran every reconcile of `key` after its first `from` ones (`undefined`: none or several). */
  ranOnlyOn(key: string, from: number): string | undefined {
    const replicas = new Set((this.windows.get(key) ?? []).slice(from).map((w) => w.replica));
    return replicas.size === 1 ? [...replicas][0] : undefined;
  }

  overlaps(): string[] {
    const out: string[] = [];
    for (const [key, ws] of this.windows)
      for (const a of ws)
        for (const b of ws)
          if (a.replica < b.replica && a.start < b.end && b.start < a.end)
            out.push(
              `${key}: ${a.replica} [${a.start.toFixed(1)}, ${a.end.toFixed(1)}] × ${b.replica} [${b.start.toFixed(1)}, ${b.end.toFixed(1)}]`,
            );
    return out;
  }
}

interface Replica {
  id: string;
  mgr: Manager;
  /** Every request to the API server fails while `conn.cut` (a partition; forever: a crash). */
  conn: SeverableConnection;
  stop: () => Promise<unknown>;
}

function configMap(name: string): V1ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { v: '0' } };
}

function startReplica(
  env: TestEnv,
  id: string,
  rec: Recorder,
  reconcileMs = 5,
  gate?: (key: string) => Promise<void> | undefined,
  /** Each reconcile creates the object's owned Secret `<name>-s` (through `ctx.client`) if missing. */
  ownSecrets = false,
): Replica {
  const conn = new SeverableConnection(env.kubeConfig, { namespace: 'default', name: RING });
  const replica = { id, conn } as Replica;
  const { leases, listerWatcherFactory } = conn;
  const mgr = env.manager({
    name: id,
    listerWatcherFactory,
    hashSharding: {
      name: RING,
      namespace: 'default',
      identity: id,
      leases,
      ...TIMING,
      onRangeChange: (e) => events.push(`${id} ${e.range} ${e.state} ${Math.round(e.at)}`),
    },
  });
  mgr
    .controller('cms')
    .for(kinds.configMaps)
    .owns(kinds.secrets)
    .concurrency(4)
    .reconcile(async (ctx) => {
      const start = performance.now();
      const rv = ctx.object?.metadata?.resourceVersion ?? '';
      await gate?.(ctx.key); // ignores ctx.signal: a reconcile that takes its time
      if (ownSecrets && ctx.object !== undefined && !ctx.signal.aborted) {
        const name = `${ctx.object.metadata!.name!}-s`;
        const secret: V1Secret = {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace: 'default' },
        };
        await ctx.client
          .create(kinds.secrets, setControllerReference(ctx.object, secret, kinds.configMaps))
          .catch((err: unknown) => {
            if (!isKinformerError(err, ErrorCodes.CONFLICT)) throw err;
          });
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.random() * reconcileMs);
        ctx.signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
      });
      rec.record(ctx.key, { replica: id, start, end: performance.now(), rv });
    });
  replica.mgr = mgr;
  replica.stop = env.run(mgr);
  return replica;
}

const events: string[] = [];
const locate = shardRangeLocator(RANGES);
const rangeOf = (obj: KubeObject): number => locate(obj.metadata?.uid ?? '');
/** The range of an owned object's controller owner. */
const ownerRangeOf = (obj: KubeObject): number => locate(controllerOf(obj)?.uid ?? '');
/** How many of the stored Secrets `replica` should cache in its range informers: those labelled with a range it holds. */
function ownedOf(env: TestEnv, replica: Replica): number {
  const held = new Set(replica.mgr.hashShard()!.held.map(String));
  return env.server
    .list<V1Secret>(kinds.secrets, 'default')
    .filter((s) => held.has(s.metadata?.labels?.[HASH_RANGE_LABEL] ?? '')).length;
}

/** Every range active on exactly one of `replicas`, balanced, and every replica sees all of them. */
function settled(replicas: Replica[]): boolean {
  const status = replicas.map((r) => r.mgr.hashShard()!);
  const active = status.flatMap((s) => s.active);
  const counts = status.map((s) => s.held.length);
  return (
    active.length === 16 &&
    new Set(active).size === 16 &&
    Math.max(...counts) - Math.min(...counts) <= 1 &&
    status.every((s) => s.members.length === replicas.length && s.active.length === s.held.length)
  );
}

describe('hash sharding (Manager on FakeApiServer)', () => {
  const env = perTestEnv();

  it('splits 16 ranges over 3 replicas, caches only owned ranges, owned objects follow their owner; a 4th takes 4 ranges and relists only those', async () => {
    const rec = new Recorder();
    const N = 400;
    for (let i = 0; i < N; i++) env.server.create(kinds.configMaps, configMap(`cm-${i}`));
    const cms = env.server.list<V1ConfigMap>(kinds.configMaps, 'default');
    const replicas = ['a', 'b', 'c'].map((id) => startReplica(env, id, rec));
    await waitFor(() => settled(replicas), { timeoutMs: 30_000 });
    await waitFor(() => rec.windows.size === N, { timeoutMs: 30_000 });
    expect(replicas.map((r) => r.mgr.hashShard()!.held.length).sort()).toEqual([5, 5, 6]);

    // Leases: one per range and one per member, labelled with the ring.
    const leases = env.server.list<V1Lease>(kinds.leases, 'default');
    expect(leases.filter((l) => l.metadata?.labels?.[HASH_RING_LABEL] === RING)).toHaveLength(16 + 3);

    // Each replica caches exactly the objects of its ranges, and (once settled) reconciles only those.
    const settledAt = performance.now();
    for (const cm of cms) {
      env.server.patch(kinds.configMaps, `default/${cm.metadata.name!}`, { data: { v: '1' } });
      await new Promise((resolve) => setImmediate(resolve));
    }
    await waitFor(() => [...rec.windows.values()].every((ws) => ws.some((w) => w.start > settledAt)), {
      timeoutMs: 30_000,
    });
    for (const r of replicas) {
      const held = new Set(r.mgr.hashShard()!.held);
      for (const cm of cms) {
        const key = `default/${cm.metadata.name!}`;
        expect(r.mgr.get(kinds.configMaps, key) !== undefined).toBe(held.has(rangeOf(cm)));
        for (const w of rec.windows.get(key)!)
          if (w.replica === r.id && w.start > settledAt) expect(held.has(rangeOf(cm))).toBe(true);
      }
    }

    // An owned Secret wakes its owner on the owner's replica only.
    const owner = cms[7]!;
    const ownerKey = `default/${owner.metadata.name!}`;
    const before = rec.windows.get(ownerKey)!.length;
    const secret: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'owned', namespace: 'default' },
    };
    env.server.create(kinds.secrets, setControllerReference(owner, secret, kinds.configMaps));
    await waitFor(() => rec.windows.get(ownerKey)!.length > before);
    // (Under heavy load a range can be lost at its renew deadline and move: wait until it is active.)
    await waitFor(() => replicas.some((r) => r.mgr.hashShard()!.active.includes(rangeOf(owner))));
    const holder = replicas.find((r) => r.mgr.hashShard()!.active.includes(rangeOf(owner)))!;
    expect(rec.ranOnlyOn(ownerKey, before)).toBe(holder.id);

    // A 4th replica: 4 ranges move (⌈16/4⌉), its LISTs select only its ranges.
    const heldBefore = new Map(replicas.map((r) => [r.id, r.mgr.hashShard()!.held]));
    const eventsBefore = events.length;
    env.server.clearRequests();
    const d = startReplica(env, 'd', rec);
    const all = [...replicas, d];
    await waitFor(() => settled(all) && d.mgr.hashShard()!.active.length === 4, { timeoutMs: 30_000 });
    const moved = d.mgr.hashShard()!.held;
    const lost = replicas.flatMap((r) =>
      heldBefore.get(r.id)!.filter((i) => !r.mgr.hashShard()!.held.includes(i)),
    );
    // The ranges given up are those d took, but for any lost at the renew deadline meanwhile (an
    // event-loop stall of this loaded process: such a range may go to any replica).
    const stalled = new Set(
      events
        .slice(eventsBefore)
        .map((e) => e.split(' '))
        .filter(([, , state]) => state === 'lost')
        .map(([, range]) => Number(range)),
    );
    expect(lost.filter((i) => !stalled.has(i)).sort((x, y) => x - y)).toEqual(
      moved.filter((i) => !stalled.has(i)),
    );
    const cmLists = env.server.requests.filter((q) => q.verb === 'list' && q.resource === 'configmaps');
    expect(cmLists.length).toBeGreaterThanOrEqual(4);
    for (const q of cmLists) expect(q.query['shardSelector']).toBeDefined();
    // The moved objects are reconciled by the new owner.
    const movedObjects = cms.filter((cm) => moved.includes(rangeOf(cm)));
    await waitFor(
      () =>
        movedObjects.every((cm) =>
          (rec.windows.get(`default/${cm.metadata.name!}`) ?? []).some((w) => w.replica === 'd'),
        ),
      { timeoutMs: 10_000 },
    );
    expect(rec.overlaps()).toEqual([]);

    // A graceful stop releases its range Leases and its membership.
    expect(await d.stop()).toBeUndefined();
    const after = env.server.list<V1Lease>(kinds.leases, 'default');
    for (const l of after)
      if (
        l.metadata?.name === `${RING}-member-d` ||
        moved.some((i) => l.metadata?.name === `${RING}-range-${i}`)
      )
        expect(l.spec?.holderIdentity ?? '').toBe('');
  }, 90_000);

  it('owned objects: the client labels them with their owner range; each replica caches only its ranges’ owned objects, a handoff moves them; unlabelled and mislabelled ones still wake their owner', async () => {
    const rec = new Recorder();
    const N = 120;
    for (let i = 0; i < N; i++) env.server.create(kinds.configMaps, configMap(`cm-${i}`));
    const secrets = (): V1Secret[] => env.server.list<V1Secret>(kinds.secrets, 'default');
    const a = startReplica(env, 'a', rec, 5, undefined, true);
    await waitFor(() => settled([a]) && secrets().length === N, { timeoutMs: 30_000 });
    // Every owned Secret written through ctx.client carries its owner's range (the label is the index).
    for (const s of secrets()) {
      expect(s.metadata?.labels?.[HASH_RANGE_LABEL]).toBe(String(ownerRangeOf(s)));
      expect(hashRangeOf(controllerOf(s)!.uid, 16)).toBe(ownerRangeOf(s));
    }
    await waitFor(() => a.mgr.hashShard()!.cached.owned === N, { timeoutMs: 30_000 });

    // A second replica: each caches exactly the owned objects of the ranges it holds.
    const b = startReplica(env, 'b', rec, 5, undefined, true);
    await waitFor(() => settled([a, b]), { timeoutMs: 30_000 });
    for (const r of [a, b]) {
      const owned = r.mgr.hashShard()!.cached.owned;
      expect(owned).toBe(ownedOf(env, r));
      expect(owned).toBeLessThan(N);
    }
    expect(a.mgr.hashShard()!.cached.owned + b.mgr.hashShard()!.cached.owned).toBe(N);
    // Secrets are listed per range (label selector) or, for unlabelled ones, by one fallback informer.
    const secretLists = env.server.requests.filter((q) => q.verb === 'list' && q.resource === 'secrets');
    for (const q of secretLists)
      expect(q.query['labelSelector']).toMatch(
        /^(kinformer\.dev\/hash-range=\d+|!kinformer\.dev\/hash-range)$/,
      );

    // A change of an owned object wakes its owner, on the owner's replica only.
    const holderOf = (range: number): Replica =>
      [a, b].find((r) => r.mgr.hashShard()!.active.includes(range))!;
    const owned = secrets()[3]!;
    const ownerKey = `default/${controllerOf(owned)!.name}`;
    let before = rec.windows.get(ownerKey)?.length ?? 0;
    env.server.patch(kinds.secrets, `default/${owned.metadata!.name!}`, {
      metadata: { annotations: { x: '1' } },
    });
    await waitFor(() => (rec.windows.get(ownerKey)?.length ?? 0) > before);
    const holder = holderOf(ownerRangeOf(owned));
    expect(rec.ranOnlyOn(ownerKey, before)).toBe(holder.id);

    // An owned object without the label (another client wrote it) is read by the fallback informer:
    // not lost, and not in the range informers' caches.
    const owner = env.server.list<V1ConfigMap>(kinds.configMaps, 'default')[9]!;
    const key9 = `default/${owner.metadata.name!}`;
    before = rec.windows.get(key9)?.length ?? 0;
    const cachedBefore = [a, b].map((r) => r.mgr.hashShard()!.cached.owned);
    env.server.create(
      kinds.secrets,
      setControllerReference(
        owner,
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bare', namespace: 'default' } },
        kinds.configMaps,
      ),
    );
    await waitFor(() => (rec.windows.get(key9)?.length ?? 0) > before);
    expect(rec.ranOnlyOn(key9, before)).toBe(holderOf(rangeOf(owner)).id);
    expect([a, b].map((r) => r.mgr.hashShard()!.cached.owned)).toEqual(cachedBefore);

    // A mislabelled one (its label names another range) is counted, and still wakes only its owner's replica.
    const wrong = (rangeOf(owner) + 1) % 16;
    before = rec.windows.get(key9)!.length;
    env.server.create(
      kinds.secrets,
      setControllerReference(
        owner,
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: {
            name: 'mislabelled',
            namespace: 'default',
            labels: { [HASH_RANGE_LABEL]: String(wrong) },
          },
        },
        kinds.configMaps,
      ),
    );
    await waitFor(() => holderOf(wrong).mgr.hashShard()!.mislabeled > 0);
    if (holderOf(wrong) === holderOf(rangeOf(owner))) {
      await waitFor(() => rec.windows.get(key9)!.length > before);
      expect(rec.ranOnlyOn(key9, before)).toBe(holderOf(rangeOf(owner)).id);
    } else
      expect(
        rec.windows
          .get(key9)!
          .slice(before)
          .every((w) => w.replica === holderOf(rangeOf(owner)).id),
      ).toBe(true);

    // A graceful leave hands b's ranges, owned objects included, back to a.
    await b.stop();
    await waitFor(() => settled([a]) && a.mgr.hashShard()!.cached.owned === ownedOf(env, a), {
      timeoutMs: 30_000,
    });
    expect(a.mgr.hashShard()!.cached.owned).toBe(N + 1); // the mislabelled one too; 'bare' is in the fallback
    expect(rec.overlaps()).toEqual([]);
  }, 90_000);

  it('owned objects: a patch through the client that sets a controller reference labels the object: it is cached in its owner replica’s range informer only, not mislabelled', async () => {
    const rec = new Recorder();
    for (let i = 0; i < 8; i++) env.server.create(kinds.configMaps, configMap(`cm-${i}`));
    const a = startReplica(env, 'a', rec);
    const b = startReplica(env, 'b', rec);
    await waitFor(() => settled([a, b]), { timeoutMs: 30_000 });
    const owners = env.server.list<V1ConfigMap>(kinds.configMaps, 'default');
    const refTo = (i: number): OwnerReference =>
      controllerOf(setControllerReference(owners[i]!, configMap('x'), kinds.configMaps))!;
    // Secrets created without an owner: no label, read by the catch-all informer only.
    for (const name of ['merge', 'strategic', 'json', 'json-no-labels'])
      env.server.create(kinds.secrets, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace: 'default' },
      });
    await waitFor(() => rec.windows.size === 8);
    expect([a, b].map((r) => r.mgr.hashShard()!.cached.owned)).toEqual([0, 0]);

    const at = (name: string) => ({ namespace: 'default', name });
    await a.mgr.client.patch(kinds.secrets, at('merge'), { metadata: { ownerReferences: [refTo(0)] } });
    await b.mgr.client.patch(
      kinds.secrets,
      at('strategic'),
      { metadata: { ownerReferences: [refTo(1)] } },
      { type: 'strategic' },
    );
    // A JSON patch is stamped when it makes sure of the labels map itself…
    await a.mgr.client.patch(
      kinds.secrets,
      at('json'),
      [
        { op: 'add', path: '/metadata/labels', value: { app: 'x' } },
        { op: 'add', path: '/metadata/ownerReferences', value: [refTo(2)] },
      ],
      { type: 'json' },
    );
    // …and sent unchanged otherwise (no operation sequence is right without knowing the object).
    await b.mgr.client.patch(
      kinds.secrets,
      at('json-no-labels'),
      [{ op: 'add', path: '/metadata/ownerReferences', value: [refTo(3)] }],
      { type: 'json' },
    );

    const stored = (name: string): V1Secret => env.server.get<V1Secret>(kinds.secrets, `default/${name}`);
    for (const [name, i] of [
      ['merge', 0],
      ['strategic', 1],
      ['json', 2],
    ] as const)
      expect(stored(name).metadata?.labels?.[HASH_RANGE_LABEL]).toBe(
        String(hashRangeOf(owners[i]!.metadata.uid!)),
      );
    expect(stored('json').metadata?.labels?.['app']).toBe('x');
    expect(stored('json-no-labels').metadata?.labels?.[HASH_RANGE_LABEL]).toBeUndefined();
    // Each labelled one is cached by the replica holding its owner's range only; none is mislabelled.
    await waitFor(() => a.mgr.hashShard()!.cached.owned + b.mgr.hashShard()!.cached.owned === 3, {
      timeoutMs: 30_000,
    });
    for (const r of [a, b]) {
      expect(r.mgr.hashShard()!.cached.owned).toBe(ownedOf(env, r));
      expect(r.mgr.hashShard()!.mislabeled).toBe(0);
    }
    expect(rec.overlaps()).toEqual([]);
  }, 60_000);

  it('a moved range is released only after its reconcile in flight ended; the new owner reconciles that object only then', async () => {
    const rec = new Recorder();
    // 64 objects, and more until one falls in range 15 (uids are random: 1.6 % of draws had none).
    let n = 0;
    while (
      n < 64 ||
      !env.server.list<V1ConfigMap>(kinds.configMaps, 'default').some((cm) => rangeOf(cm) === 15)
    )
      env.server.create(kinds.configMaps, configMap(`cm-${n++}`));
    const cms = env.server.list<V1ConfigMap>(kinds.configMaps, 'default');
    let unblock!: () => void;
    const blocked = new Promise<void>((resolve) => (unblock = resolve));
    const target = { key: '' };
    let started = false;
    const a = startReplica(env, 'a', rec, 1, (key) => {
      if (key !== target.key) return undefined;
      started = true;
      return blocked;
    });
    await waitFor(() => settled([a]) && rec.windows.size === n, { timeoutMs: 30_000 });
    // a holds all 16; b will take 8 — ranges 8..15 under the plan (a keeps the lowest). Block a
    // reconcile of an object in range 15 and trigger it.
    const victim = cms.find((cm) => rangeOf(cm) === 15)!;
    target.key = `default/${victim.metadata.name!}`;
    env.server.patch(kinds.configMaps, target.key, { data: { v: 'blocked' } });
    await waitFor(() => started);
    const b = startReplica(env, 'b', rec);
    await waitFor(() => b.mgr.hashShard()!.active.length === 7, { timeoutMs: 30_000 });
    // Everything else moved; range 15 waits for the reconcile in flight.
    const leaseLists = (): number =>
      env.server.requests.filter((q) => q.verb === 'list' && q.resource === 'leases').length;
    const listed = leaseLists();
    await waitFor(() => leaseLists() >= listed + 8, { timeoutMs: 30_000 }); // 4 more periods each
    expect(a.mgr.hashShard()!.held).toContain(15);
    expect(b.mgr.hashShard()!.held).not.toContain(15);
    expect((rec.windows.get(target.key) ?? []).some((w) => w.replica === 'b')).toBe(false);
    unblock();
    await waitFor(() => b.mgr.hashShard()!.active.includes(15), { timeoutMs: 30_000 });
    await waitFor(() => (rec.windows.get(target.key) ?? []).some((w) => w.replica === 'b'), {
      timeoutMs: 10_000,
    });
    expect(rec.overlaps()).toEqual([]);
  }, 60_000);

  it('/readyz counts the range informers: not ready while a held range cannot sync, ready once it does', async () => {
    const refusal = refuseConfigMaps(env);
    const rec = new Recorder();
    const a = startReplica(env, 'a', rec);
    const sync = (): string | undefined => a.mgr.readyChecks()[1]!.check();
    await waitFor(() => a.mgr.hashShard()!.held.length === 16, { timeoutMs: 30_000 });
    await waitFor(() => (sync() ?? '').includes('#range-'), { timeoutMs: 30_000 });
    expect(sync()).toContain('ERR_FORBIDDEN');
    refusal.cancel();
    await waitFor(() => sync() === undefined && a.mgr.hashShard()!.active.length === 16, {
      timeoutMs: 30_000,
    });
  }, 60_000);

  it('chaos: joins, graceful leaves, crashes and a partition while objects change: 0 overlapping reconciles; every object reconciled at its last version', async () => {
    const rec = new Recorder();
    const N = 200;
    for (let i = 0; i < N; i++) env.server.create(kinds.configMaps, configMap(`cm-${i}`));
    let n = 0;
    const replicas: Replica[] = [startReplica(env, `r${n++}`, rec, 300, undefined, true)];
    const live = (): Replica[] => replicas.filter((r) => !r.conn.cut);
    let writes = 0;
    let writing = true;
    function patchOwned(key: string, v: string): boolean {
      try {
        env.server.patch(kinds.secrets, key, { metadata: { annotations: { v } } });
        return true;
      } catch {
        return false; // not created yet
      }
    }
    const writer = (async () => {
      while (writing) {
        const i = Math.floor(Math.random() * N);
        // One write in four changes an owned Secret (once its owner's reconcile created it): it wakes
        // the owner, on the replica of the owner's range only.
        if (!(writes % 4 === 3 && patchOwned(`default/cm-${i}-s`, String(writes + 1))))
          env.server.patch(kinds.configMaps, `default/cm-${i}`, { data: { v: String(writes + 1) } });
        writes++;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const settle = (): Promise<void> => waitFor(() => settled(live()), { timeoutMs: 30_000 });
    // A fixed script touching every fault (random victims): scale 1 → 4 without waiting in between
    // (joins during a rebalance), a crash, a partition, a graceful leave, a join.
    const join = (): void => void replicas.push(startReplica(env, `r${n++}`, rec, 300, undefined, true));
    const pick = (): Replica => live()[Math.floor(Math.random() * live().length)]!;
    const script: Array<() => Promise<void>> = [
      async () => join(),
      async () => join(),
      async () => {
        join();
        await settle();
      },
      async () => {
        // kill -9: every request fails from now on, then the process is gone (its reconciles end).
        const victim = pick();
        victim.conn.cut = true;
        await victim.stop();
        await settle();
      },
      async () => {
        // Cut one off until the others have taken its ranges over, then let it back in.
        const victim = pick();
        victim.conn.cut = true;
        await waitFor(() => victim.mgr.hashShard()!.held.length === 0 && settled(live()), {
          timeoutMs: 30_000,
        });
        victim.conn.cut = false;
        await settle();
      },
      async () => {
        const leaver = live()[0]!;
        replicas.splice(replicas.indexOf(leaver), 1);
        await leaver.stop();
        await settle();
      },
      async () => join(),
    ];
    for (const step of script) await step();
    writing = false;
    await writer;
    const alive = replicas.filter((r) => !r.conn.cut);
    await waitFor(() => settled(alive), { timeoutMs: 30_000 });
    // Every object's last version is reconciled (by whoever owns it now).
    const last = new Map(
      env.server
        .list<V1ConfigMap>(kinds.configMaps, 'default')
        .map((cm) => [`default/${cm.metadata.name!}`, cm.metadata.resourceVersion!]),
    );
    await waitFor(
      () => [...last].every(([key, rv]) => (rec.windows.get(key) ?? []).some((w) => w.rv === rv)),
      {
        timeoutMs: 30_000,
      },
    );
    const total = [...rec.windows.values()].reduce((s, ws) => s + ws.length, 0);
    const lost = events.filter((e) => e.includes(' lost ')).length;
    console.info(
      `hash sharding chaos: ${writes} writes, ${total} reconciles over ${n} replicas, ${lost} ranges lost (crash, partition), overlaps ${rec.overlaps().length}`,
    );
    expect(rec.overlaps()).toEqual([]);
    // Every owned Secret carries its owner's range; each live replica caches exactly those of its ranges.
    const secrets = env.server.list<V1Secret>(kinds.secrets, 'default');
    expect(secrets).toHaveLength(N);
    for (const s of secrets) expect(s.metadata?.labels?.[HASH_RANGE_LABEL]).toBe(String(ownerRangeOf(s)));
    await waitFor(() => alive.every((r) => r.mgr.hashShard()!.cached.owned === ownedOf(env, r)), {
      timeoutMs: 30_000,
    });
    expect(alive.reduce((sum, r) => sum + r.mgr.hashShard()!.cached.owned, 0)).toBe(N);
  }, 120_000);
});

describe('patches through the Manager’s client (FakeApiServer patch semantics)', () => {
  const env = perTestEnv();

  it('property: a stamped patch applies exactly where the original does, and yields the same labels plus the owner’s range (a JSON patch: when it makes sure of the labels map)', async () => {
    const mgr = env.manager({ name: 'p', hashSharding: { name: RING, namespace: 'default', identity: 'p' } });
    mgr
      .controller('cms')
      .for(kinds.configMaps)
      .owns(kinds.secrets)
      .reconcile(() => undefined);
    const K = HASH_RANGE_LABEL;
    let n = 0;
    const outcome = async (
      write: () => unknown,
      name: string,
    ): Promise<Record<string, string> | 'failed'> => {
      try {
        await write();
      } catch {
        return 'failed';
      }
      return env.server.get<V1Secret>(kinds.secrets, `default/${name}`).metadata?.labels ?? {};
    };
    const without = (labels: Record<string, string>): Record<string, string> =>
      Object.fromEntries(Object.entries(labels).filter(([k]) => k !== K));
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          labels: fc.constantFrom<Record<string, string> | undefined>(
            undefined,
            {},
            { app: 'a' },
            { app: 'a', [K]: '99' },
          ),
          refs: fc.constantFrom<OwnerReference[] | undefined>(
            undefined,
            [],
            [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'pod' }],
          ),
          uid: fc.uuid(),
          sharded: fc.boolean(),
          type: fc.constantFrom('merge', 'strategic', 'json'),
          objectLabels: fc.constantFrom<Record<string, string> | null | undefined>(undefined, null, {
            tier: 't',
          }),
          setRefs: fc.constantFrom('whole', 'append', 'index'),
          labelsOp: fc.constantFrom('none', 'map', 'label'),
          labelsFirst: fc.boolean(),
        }),
        async (c) => {
          const ref: OwnerReference = c.sharded
            ? { apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: c.uid, controller: true }
            : { apiVersion: 'apps/v1', kind: 'Deployment', name: 'o', uid: c.uid, controller: true };
          let patch: unknown;
          if (c.type !== 'json')
            patch = {
              metadata: {
                ownerReferences: [...(c.refs ?? []), ref],
                ...(c.objectLabels === undefined ? {} : { labels: c.objectLabels }),
              },
            };
          else {
            const set = {
              whole: { op: 'add', path: '/metadata/ownerReferences', value: [ref] },
              append: { op: 'add', path: '/metadata/ownerReferences/-', value: ref },
              index: { op: 'add', path: '/metadata/ownerReferences/0', value: ref },
            }[c.setRefs];
            const labels = {
              none: [],
              map: [{ op: 'add', path: '/metadata/labels', value: { tier: 't' } }],
              label: [{ op: 'add', path: '/metadata/labels/tier', value: 't' }],
            }[c.labelsOp];
            patch = c.labelsFirst ? [...labels, set] : [set, ...labels];
          }
          const names = [`o-${n}`, `s-${n++}`] as const;
          for (const name of names)
            env.server.create(kinds.secrets, {
              apiVersion: 'v1',
              kind: 'Secret',
              metadata: {
                name,
                namespace: 'default',
                ...(c.labels === undefined ? {} : { labels: c.labels }),
                ...(c.refs === undefined ? {} : { ownerReferences: c.refs }),
              },
            });
          const original = await outcome(
            () => env.server.patch(kinds.secrets, `default/${names[0]}`, patch, { type: c.type }),
            names[0],
          );
          const stamped = await outcome(
            () =>
              mgr.client.patch(kinds.secrets, { namespace: 'default', name: names[1] }, patch, {
                type: c.type,
              }),
            names[1],
          );
          if (original === 'failed' || stamped === 'failed') {
            expect(stamped).toBe(original);
            return;
          }
          expect(without(stamped)).toEqual(without(original));
          // Not stamped: a JSON patch that leaves the labels map to chance, a merge that deletes every label.
          const labelled = c.sharded && (c.type === 'json' ? c.labelsOp !== 'none' : c.objectLabels !== null);
          expect(stamped[K]).toBe(labelled ? String(hashRangeOf(c.uid)) : original[K]);
        },
      ),
      { numRuns: 80 },
    );
  }, 60_000);
});
