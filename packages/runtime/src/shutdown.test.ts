/**
 * Shutdown and hand-over (issue 24): a leader stopped with 20 reconciles in flight lets each one
 * finish or abort through its signal within the graceful timeout, releases the Lease, and the
 * standby leads within 3 s. And `/readyz` stays false, naming the cause, while a cache cannot sync.
 */
import { waitFor } from '@kinformer/test-tools';
import type { V1ConfigMap, V1Lease } from '@kubernetes/client-node';
import { httpGet } from './http.test.helpers.js';
import { kinds } from './kinds.js';
import type { Manager } from './manager.js';
import type { ReconcileContext } from './reconcileContext.js';
import { configMap, perTestEnv, recordKeys, refuseConfigMaps } from './testEnv.test.helpers.js';

const IN_FLIGHT = 20;
const GRACEFUL_MS = 3_000;

describe('Manager shutdown and hand-over', () => {
  const env = perTestEnv();

  it(`a stopped leader ends its ${IN_FLIGHT} reconciles in flight within the graceful timeout, releases the Lease, and the standby leads within 3 s`, async () => {
    env.server.createMany(
      kinds.configMaps,
      Array.from({ length: IN_FLIGHT }, (_, i) => configMap(`cm-${i}`)),
    );
    const election = (identity: string): Manager =>
      env.manager({
        name: identity,
        gracefulShutdownMs: GRACEFUL_MS,
        leaderElection: {
          namespace: 'default',
          name: 'proof-operator',
          identity,
          leaseDurationMs: 4_000,
          renewDeadlineMs: 3_000,
          retryPeriodMs: 250,
        },
      });

    // The leader: every reconcile waits for its signal, then ends one of three ways.
    const leader = election('replica-a');
    const ends: Array<{ key: string; how: string; at: number }> = [];
    let inFlight = 0;
    leader
      .controller('cm')
      .for(kinds.configMaps)
      .concurrency(IN_FLIGHT)
      .reconcile(async (ctx: ReconcileContext<V1ConfigMap>) => {
        inFlight++;
        const i = Number(ctx.name.slice(3));
        try {
          await new Promise<void>((resolve) => {
            if (ctx.signal.aborted) resolve();
            else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
          });
          if (i % 3 === 0) throw ctx.signal.reason; // aborts
          if (i % 3 === 1) await new Promise<void>((resolve) => setTimeout(resolve, 5)); // cleans up, then returns
          ends.push({ key: ctx.key, how: i % 3 === 0 ? 'threw' : 'returned', at: performance.now() });
        } catch (err) {
          ends.push({ key: ctx.key, how: 'threw', at: performance.now() });
          throw err;
        } finally {
          inFlight--;
        }
      });
    const stopLeader = env.run(leader);
    await waitFor(() => leader.isLeader(), 'replica-a to lead', 10_000);
    await waitFor(() => inFlight === IN_FLIGHT, `${IN_FLIGHT} reconciles in flight`, 10_000);

    // The standby, started once the leader leads; it watches the Lease to see the release.
    const standby = election('replica-b');
    const holders: string[] = [];
    const leases = standby.informer(kinds.leases, { namespace: 'default' });
    const record = (lease: V1Lease): void => {
      if (lease.metadata?.name === 'proof-operator') holders.push(lease.spec?.holderIdentity ?? '');
    };
    leases.informer.addEventHandler({ onAdd: record, onUpdate: (_old, lease) => record(lease) });
    const standbyRuns: Array<{ key: string; at: number }> = [];
    standby
      .controller('cm')
      .for(kinds.configMaps)
      .concurrency(4)
      .reconcile((ctx) => {
        standbyRuns.push({ key: ctx.key, at: performance.now() });
      });
    env.run(standby);
    await waitFor(() => holders.includes('replica-a'), 'the standby to see replica-a hold the Lease', 10_000);
    expect(standby.isLeader()).toBe(false);
    expect(standbyRuns).toHaveLength(0);

    const stopAt = performance.now();
    const stopError = await stopLeader();
    const stoppedAt = performance.now();
    expect(stopError).toBeUndefined();
    // Every reconcile in flight ended (returned or threw through its signal) within the graceful timeout.
    expect(ends).toHaveLength(IN_FLIGHT);
    expect(inFlight).toBe(0);
    for (const e of ends) expect(e.at - stopAt).toBeLessThan(GRACEFUL_MS);
    const stats = leader.controllers()[0]!.stats();
    expect(stats.aborted + stats.succeeded).toBe(IN_FLIGHT);
    expect(stats.aborted).toBe(Math.ceil(IN_FLIGHT / 3));
    expect(stats.failed).toBe(0);
    expect(stoppedAt - stopAt).toBeLessThan(GRACEFUL_MS);

    // The Lease was released (holder emptied), and the standby took it and reconciled within 3 s.
    await waitFor(() => holders.includes(''), 'the Lease to be released', 5_000);
    await waitFor(() => standbyRuns.length >= IN_FLIGHT, 'the standby to reconcile every key', 5_000);
    expect(holders.slice(holders.indexOf(''))).toContain('replica-b');
    expect(standby.isLeader()).toBe(true);
    const handOverMs = standbyRuns[0]!.at - stopAt;
    expect(handOverMs).toBeLessThan(3_000);
    expect(new Set(standbyRuns.map((r) => r.key)).size).toBe(IN_FLIGHT);
  }, 30_000);

  it('/readyz is false, with the 403 as its cause, until the caches sync', async () => {
    const refusal = refuseConfigMaps(env);
    const mgr = env.manager({ probes: { port: 0, host: '127.0.0.1' } });
    const seen = recordKeys(mgr, kinds.configMaps);
    env.run(mgr);
    await waitFor(() => mgr.probeAddress() !== undefined, 'the probe server');
    const { host, port } = mgr.probeAddress()!;
    const get = (path: string): Promise<{ status: number; body: string }> => httpGet(host, port, path);
    expect((await get('/healthz')).status).toBe(200);
    // Wait until the informer has been refused at least once, then ask.
    await waitFor(() => refusal.remaining < 1_000_000, 'the list to be refused', 10_000);
    let ready = await get('/readyz/informer-sync');
    await waitFor(
      async () => (ready = await get('/readyz/informer-sync')).body.includes('ERR_FORBIDDEN'),
      'the readiness check to name the refusal',
    );
    expect(ready.status).toBe(500);
    // The cause: the informer's name and the server's 403 (kinformer's ERR_FORBIDDEN, the Status message).
    expect(ready.body).toMatch(/configmaps\.v1(\?\S*)?: ERR_FORBIDDEN/); // the informer's key may carry its scope
    expect(ready.body).toContain('configmaps is forbidden');
    const all = await get('/readyz');
    expect(all.status).toBe(500);
    expect(all.body).toContain('[-]informer-sync failed');
    expect(seen).toHaveLength(0);

    // Access granted: the cache syncs, /readyz turns 200, the key is reconciled.
    refusal.cancel();
    await waitFor(() => seen.length > 0, 'the first reconcile after the grant', 15_000);
    const after = await get('/readyz');
    expect(after).toEqual({ status: 200, body: 'ok' });
  }, 30_000);

  it('a Manager stopped while its list is refused (403) stops at once', async () => {
    env.server.faults.failNext({
      status: 403,
      verbs: ['list', 'watch'],
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      count: 1_000_000,
    });
    const mgr = env.manager();
    const c = mgr
      .controller('cm')
      .for(kinds.configMaps)
      .reconcile(() => undefined);
    const stop = env.run(mgr);
    await waitFor(() => c.informers()[0]!.syncError() !== undefined, 'the list to be refused', 10_000);
    const t0 = performance.now();
    // Before the fix the sync wait spun in microtasks once stopped: this await never returned.
    expect(await stop()).toBeUndefined();
    expect(performance.now() - t0).toBeLessThan(5_000);
  });
});
