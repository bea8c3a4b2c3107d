import { kubeConfigListerWatchers } from '@kinformer/client-node';
import { ErrorCodes } from '@kinformer/core';
import { InformerFactory } from '@kinformer/informer';
import { waitFor } from '@kinformer/test-tools';
import type { V1ConfigMap, V1Lease } from '@kubernetes/client-node';
import { CONTROLLER_RING_LABEL, defaultShardIdentity, drainLabel, shardLabel } from './controllerRing.js';
import { kinds } from './kinds.js';
import type { ManagerControllerRingOptions } from './controllerRing.js';
import type { Manager } from './manager.js';
import { predicates } from './predicates.js';
import type { TestEnv } from './testing.js';
import { perTestEnv } from './testEnv.test.helpers.js';

// The ControllerRing shard protocol of timebertt/kubernetes-controller-sharding, against a sharder
// simulated on FakeApiServer (the webhook's assignment label on create; moves as the sharder makes
// them: drain label, wait for the shard to remove both labels, then the new shard's label, 100 moves
// at a time as its `concurrentMoves` default). Every reconcile's window is recorded per object, on one
// sequence counter shared by both shards and by the sharder's writes.

const RING = 'cm-ring';
const SHARD = shardLabel(RING);
const DRAIN = drainLabel(RING);

interface Window {
  shard: string;
  start: number;
  end: number;
}

let seq = 0;

function configMap(name: string, shard: string): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default', labels: { [SHARD]: shard } },
  };
}

function startShard(
  env: TestEnv,
  identity: string,
  windows: Map<string, Window[]>,
): { mgr: Manager; stop: () => Promise<unknown> } {
  const mgr = env.manager({
    name: identity,
    controllerRing: {
      name: RING,
      namespace: 'default',
      identity,
      kinds: [kinds.configMaps],
      retryPeriodMs: 200,
    },
  });
  mgr
    .controller('cm')
    .for(kinds.configMaps)
    // Label changes do not pass this predicate: the drain must pass anyway.
    .withPredicates(predicates.generationChanged())
    .concurrency(16)
    .reconcile(async (ctx) => {
      const start = ++seq;
      await new Promise<void>((resolve) => setImmediate(resolve));
      const end = ++seq;
      const list = windows.get(ctx.key) ?? [];
      list.push({ shard: identity, start, end });
      windows.set(ctx.key, list);
    });
  return { mgr, stop: env.run(mgr) };
}

describe('ControllerRing shard mode', () => {
  const env = perTestEnv();

  it('the simulated sharder moves 1,000 objects between two shards: 0 reconciled by both at once or out of turn, each drain acknowledged within a bound', async () => {
    const N = 1_000;
    const windows = new Map<string, Window[]>();
    const names = Array.from({ length: N }, (_v, i) => `cm-${String(i).padStart(4, '0')}`);
    for (const name of names) env.server.create(kinds.configMaps, configMap(name, 'shard-a'));
    const a = startShard(env, 'shard-a', windows);
    const b = startShard(env, 'shard-b', windows);

    // Both shards announce themselves with their own labelled Lease and reconcile their objects.
    await waitFor(() => a.mgr.isLeader() && b.mgr.isLeader(), { timeoutMs: 30_000 });
    for (const id of ['shard-a', 'shard-b']) {
      const lease = env.server.get<V1Lease>(kinds.leases, `default/${id}`);
      expect(lease.metadata?.labels?.[CONTROLLER_RING_LABEL]).toBe(RING);
      expect(lease.spec?.holderIdentity).toBe(id);
    }
    await waitFor(() => names.every((n) => windows.has(`default/${n}`)), { timeoutMs: 60_000 });
    expect(b.mgr.informer(kinds.configMaps).informer.getStore().list()).toHaveLength(0);

    // The sharder's moves: drain, wait for the acknowledgement (both labels gone), assign to B.
    const drainedAt = new Map<string, { seq: number; ms: number }>();
    const ackedAt = new Map<string, { seq: number; ms: number }>();
    const assignedAt = new Map<string, number>();
    const waiting = new Map<string, () => void>();
    // The sharder watches the objects (unfiltered); the ack time is when it sees the labels gone, so
    // it includes the watch delivery to the sharder: an upper bound of the shard's own latency.
    const sharder = new InformerFactory(kubeConfigListerWatchers(env.kubeConfig));
    const sharderStop = new AbortController();
    const watched = sharder.forResource<V1ConfigMap>(kinds.configMaps);
    watched.informer.addEventHandler({
      onUpdate: (_old, obj) => {
        const key = `default/${String(obj.metadata?.name)}`;
        if (!drainedAt.has(key) || ackedAt.has(key)) return;
        const labels = obj.metadata?.labels ?? {};
        if (SHARD in labels || DRAIN in labels) return;
        ackedAt.set(key, { seq: ++seq, ms: performance.now() });
        waiting.get(key)?.();
      },
    });
    sharder.start(sharderStop.signal);
    await waitFor(() => watched.informer.hasSynced());
    const move = async (name: string): Promise<void> => {
      const key = `default/${name}`;
      const acked = new Promise<void>((resolve) => waiting.set(key, resolve));
      drainedAt.set(key, { seq: ++seq, ms: performance.now() });
      env.server.patch(kinds.configMaps, key, { metadata: { labels: { [DRAIN]: 'true' } } });
      await acked;
      assignedAt.set(key, ++seq);
      env.server.patch(kinds.configMaps, key, { metadata: { labels: { [SHARD]: 'shard-b' } } });
    };
    const queue = [...names];
    await Promise.all(
      Array.from({ length: 100 }, async () => {
        for (let name = queue.shift(); name !== undefined; name = queue.shift()) await move(name);
      }),
    );
    await waitFor(
      () => names.every((n) => (windows.get(`default/${n}`) ?? []).some((w) => w.shard === 'shard-b')),
      { timeoutMs: 60_000 },
    );

    sharderStop.abort();
    await sharder.shutdown();
    const latencies = names.map((n) => ackedAt.get(`default/${n}`)!.ms - drainedAt.get(`default/${n}`)!.ms);
    latencies.sort((x, y) => x - y);
    const maxAckMs = latencies[latencies.length - 1]!;
    let reconciledByAAfterDrain = 0;
    let reconciledByBBeforeAssign = 0;
    let overlapping = 0;
    for (const name of names) {
      const key = `default/${name}`;
      const ws = windows.get(key)!;
      const drain = drainedAt.get(key)!.seq;
      const assign = assignedAt.get(key)!;
      reconciledByAAfterDrain += ws.filter((w) => w.shard === 'shard-a' && w.start > drain).length;
      reconciledByBBeforeAssign += ws.filter((w) => w.shard === 'shard-b' && w.start < assign).length;
      const lastA = Math.max(...ws.filter((w) => w.shard === 'shard-a').map((w) => w.end));
      const firstB = Math.min(...ws.filter((w) => w.shard === 'shard-b').map((w) => w.start));
      if (lastA > firstB) overlapping++;
    }
    // Reported by the test run (docs/sharding.md quotes it).
    console.info(
      `controllerRing: ${N} moves, drain ack p50 ${latencies[N >> 1]!.toFixed(1)} ms, p99 ${latencies[Math.floor(N * 0.99)]!.toFixed(1)} ms, max ${maxAckMs.toFixed(1)} ms; overlapping ${overlapping}`,
    );
    expect(overlapping).toBe(0);
    expect(reconciledByAAfterDrain).toBe(0);
    expect(reconciledByBBeforeAssign).toBe(0);
    expect(a.mgr.shard()?.drainsAcknowledged).toBe(N);
    // The goal is 1 s; the bound is generous because this one process runs the server, the sharder and
    // both shards on a shared, loaded machine (measured: p99 0.92 s, max 0.96 s at load 10.5 on 2 cores).
    expect(maxAckMs).toBeLessThanOrEqual(3_000);
    await waitFor(() => a.mgr.informer(kinds.configMaps).informer.getStore().list().length === 0);
    expect(b.mgr.informer(kinds.configMaps).informer.getStore().list()).toHaveLength(N);

    // A graceful stop releases the shard Lease (empty holderIdentity), so the sharder reassigns at once.
    expect(await a.stop()).toBeUndefined();
    const released = env.server.get<V1Lease>(kinds.leases, 'default/shard-a');
    expect(released.spec?.holderIdentity ?? '').toBe('');
  }, 180_000);

  it('skips objects of another shard and deleted objects, and selects only its own objects', async () => {
    const windows = new Map<string, Window[]>();
    env.server.create(kinds.configMaps, configMap('mine', 'shard-a'));
    env.server.create(kinds.configMaps, configMap('theirs', 'shard-b'));
    env.server.create(kinds.configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'unassigned', namespace: 'default' },
    });
    const a = startShard(env, 'shard-a', windows);
    await waitFor(() => windows.has('default/mine'));
    expect(a.mgr.shard()).toEqual({
      ring: RING,
      identity: 'shard-a',
      selector: `${SHARD}=shard-a`,
      drainsAcknowledged: 0,
    });
    expect(
      a.mgr
        .informer(kinds.configMaps)
        .informer.getStore()
        .list()
        .map((o) => o.metadata?.name),
    ).toEqual(['mine']);
    const before = windows.get('default/mine')!.length;
    env.server.delete(kinds.configMaps, 'default/mine');
    await waitFor(() => a.mgr.informer(kinds.configMaps).informer.getStore().list().length === 0);
    // The delete is not reconciled: a gone object may have moved to another shard.
    await waitFor(
      () => a.mgr.controllers()[0]!.stats().queued === 0 && a.mgr.controllers()[0]!.stats().active === 0,
    );
    expect(windows.get('default/mine')).toHaveLength(before);
    expect([...windows.keys()]).toEqual(['default/mine']);
  });

  it('the shard Lease takes the ring timings and reports leadership to onLeadershipChange', async () => {
    const changes: boolean[] = [];
    const mgr = env.manager({
      name: 'shard-t',
      controllerRing: {
        name: RING,
        namespace: 'default',
        identity: 'shard-t',
        kinds: [kinds.configMaps],
        leaseDurationMs: 21_000,
        renewDeadlineMs: 14_000,
        retryPeriodMs: 200,
        onLeadershipChange: (leading) => changes.push(leading),
      },
    });
    mgr
      .controller('cm')
      .for(kinds.configMaps)
      .reconcile(() => undefined);
    const stop = env.run(mgr);
    await waitFor(() => mgr.isLeader(), { timeoutMs: 30_000 });
    await waitFor(() => changes.length >= 1);
    const lease = env.server.get<V1Lease>(kinds.leases, 'default/shard-t');
    expect(lease.spec?.leaseDurationSeconds).toBe(21);
    expect(lease.spec?.holderIdentity).toBe('shard-t');
    expect(changes).toEqual([true]);
    await stop();
    expect(changes).toEqual([true, false]);
  });

  it('refuses a ring name that cannot be a label key, and leaderElection with a ring', async () => {
    expect(() =>
      env.manager({
        controllerRing: { name: 'x'.repeat(64), namespace: 'default', kinds: [kinds.configMaps] },
      }),
    ).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }));
    // There is no `lock` option: the shard Lease is always the labelled LeaseLock the sharder watches.
    const ringOptions: ManagerControllerRingOptions = {
      name: RING,
      namespace: 'default',
      kinds: [kinds.configMaps],
      // @ts-expect-error controllerRing takes no lock
      lock: undefined,
    };
    expect(ringOptions.name).toBe(RING);
    expect(() =>
      env.manager({
        controllerRing: { name: RING, namespace: 'default', identity: 'a', kinds: [kinds.configMaps] },
        leaderElection: { namespace: 'default', name: 'x' },
      }),
    ).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }));
  });

  it('defaults the identity to $POD_NAME, else a Lease-name-safe hostname, and refuses an identity kube would reject', () => {
    const lease = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
    expect(defaultShardIdentity({ POD_NAME: 'op-0', HOSTNAME: 'Host' })).toBe('op-0');
    const fromHost = defaultShardIdentity({ HOSTNAME: 'My_Host.Example' });
    expect(fromHost).toMatch(/^my-host\.example-[a-z0-9]{8}$/);
    for (const vars of [
      {},
      { HOSTNAME: '' },
      { HOSTNAME: '_X_' },
      { HOSTNAME: 'A'.repeat(80) },
      { HOSTNAME: 'node-1.' },
    ]) {
      const id = defaultShardIdentity(vars);
      expect(id).toMatch(lease);
      expect(id.length).toBeLessThanOrEqual(63);
    }
    // Without $POD_NAME or an explicit identity, the Manager's shard Lease name is valid.
    const saved = process.env['POD_NAME'];
    delete process.env['POD_NAME'];
    try {
      const mgr = env.manager({
        controllerRing: { name: RING, namespace: 'default', kinds: [kinds.configMaps] },
      });
      expect(mgr.shard()!.identity).toMatch(lease);
    } finally {
      if (saved !== undefined) process.env['POD_NAME'] = saved;
    }
    for (const identity of ['Host_abc', 'UPPER', 'a_b', '-a'])
      expect(() =>
        env.manager({
          controllerRing: { name: RING, namespace: 'default', identity, kinds: [kinds.configMaps] },
        }),
      ).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }));
  });
});
