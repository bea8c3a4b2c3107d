/**
 * The reconcile guarantees of issue 24, driven through a real Manager on the embedded FakeApiServer
 * (writes in-process, events over a real watch): one reconcile of a key at a time, the last
 * reconcile of a key sees its last resourceVersion, bursts coalesce, and failures back off on the
 * injected clock. The pure queue's contract is checked against a model in reconcileQueue.model.test.ts.
 */
import { FakeClock } from '@kinformer/core/testing';
import { settle, waitFor } from '@kinformer/test-tools';
import type { V1ConfigMap } from '@kubernetes/client-node';
import fc from 'fast-check';
import { kinds } from './kinds.js';
import type { ReconcileContext } from './reconcileContext.js';
import { TerminalError } from './terminalError.js';
import { configMap, perTestEnv } from './testEnv.test.helpers.js';
import type { TestEnv } from './testing.js';

const KEYS = 200;
const EVENTS = 10_000;

/** A reconcile's latency: 0 sync, 1 a microtask, 2 a macrotask, 3 a 1 ms timer, 4 a 2 ms timer. */
async function pause(kind: number): Promise<void> {
  switch (kind) {
    case 0:
      return;
    case 1:
      await Promise.resolve();
      return;
    case 2:
      await new Promise<void>((resolve) => setImmediate(resolve));
      return;
    default:
      await new Promise<void>((resolve) => setTimeout(resolve, kind - 2));
  }
}

/**
 * Starts, on `env`, a Manager (on `clock` if given) with one controller `cm` over ConfigMaps
 * (`concurrency` workers if given) that reconciles with `reconcile`.
 */
function runConfigMaps(
  env: TestEnv,
  { concurrency, clock }: { concurrency?: number; clock?: FakeClock },
  reconcile: (ctx: ReconcileContext<V1ConfigMap>) => void | Promise<void>,
) {
  const mgr = env.manager(clock === undefined ? {} : { clock });
  const builder = mgr.controller('cm').for(kinds.configMaps);
  const controller = (concurrency === undefined ? builder : builder.concurrency(concurrency)).reconcile(
    reconcile,
  );
  env.run(mgr);
  return { mgr, controller };
}

describe('reconcile guarantees (Manager on FakeApiServer)', () => {
  const env = perTestEnv();

  it(`never overlaps two reconciles of one key; each key's last reconcile sees its last resourceVersion (${EVENTS} events, ${KEYS} keys, concurrency 8)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        // Each event: which key changes, and how many writes go out before the test yields.
        fc.array(fc.tuple(fc.nat(KEYS - 1), fc.nat(40)), { minLength: EVENTS, maxLength: EVENTS }),
        fc.array(fc.nat(4), { minLength: 97, maxLength: 97 }),
        async (events, latencies) => {
          env.server.createMany(
            kinds.configMaps,
            Array.from({ length: KEYS }, (_, i) => configMap(`cm-${i}`, { v: 'initial' })),
          );
          let tick = 0;
          let calls = 0;
          const running = new Set<string>();
          const overlaps: string[] = [];
          const intervals = new Map<string, Array<[number, number]>>();
          const lastSeen = new Map<string, string | undefined>();
          const { controller } = runConfigMaps(env, { concurrency: 8 }, async (ctx) => {
            const start = ++tick;
            if (running.has(ctx.key)) overlaps.push(`${ctx.key} started at ${start} while running`);
            running.add(ctx.key);
            const rv = ctx.object?.metadata?.resourceVersion;
            await pause(latencies[calls++ % latencies.length]!);
            running.delete(ctx.key);
            const list = intervals.get(ctx.key) ?? [];
            list.push([start, ++tick]);
            intervals.set(ctx.key, list);
            lastSeen.set(ctx.key, rv);
          });
          // Writes start while the initial list is still being reconciled.
          let untilYield = 0;
          for (let i = 0; i < events.length; i++) {
            const [k, burst] = events[i]!;
            env.server.patch(kinds.configMaps, `cm-${k}`, { data: { v: String(i) } });
            if (--untilYield <= 0) {
              untilYield = burst + 1;
              await new Promise<void>((resolve) => setImmediate(resolve));
            }
          }
          const finalRv = new Map<string, string>();
          for (let i = 0; i < KEYS; i++) {
            const obj = env.server.get(kinds.configMaps, `cm-${i}`);
            finalRv.set(`default/cm-${i}`, obj.metadata.resourceVersion!);
          }
          const stale = (): string[] =>
            [...finalRv].filter(([key, rv]) => lastSeen.get(key) !== rv).map(([key]) => key);
          await waitFor(() => stale().length === 0 && controller.stats().active === 0, {
            what: "every key's last reconcile to see its last resourceVersion",
            timeoutMs: 30_000,
            describe: () => ({ stale: stale().slice(0, 10), stats: controller.stats() }),
          });
          // The last reconcile of every key (none is queued any more) saw the server's final rv.
          expect(controller.queue.length() + controller.queue.waitingLength()).toBe(0);
          expect(stale()).toEqual([]);
          // No two runs of a key overlapped: checked live, and again on the recorded intervals.
          expect(overlaps).toEqual([]);
          for (const [key, list] of intervals) {
            for (let i = 1; i < list.length; i++) {
              if (list[i]![0] < list[i - 1]![1])
                overlaps.push(`${key}: ${JSON.stringify(list[i - 1])} then ${JSON.stringify(list[i])}`);
            }
          }
          expect(overlaps).toEqual([]);
          const runs = [...intervals.values()].reduce((n, l) => n + l.length, 0);
          expect(runs).toBeGreaterThanOrEqual(KEYS);
          expect(controller.stats().failed).toBe(0);
        },
      ),
      { numRuns: 1, endOnFailure: true },
    );
  }, 60_000);

  it('coalesces 100 updates of a key during one long reconcile into at most 2 further runs', async () => {
    env.server.create(kinds.configMaps, configMap('hot', { v: '0' }));
    let release: (() => void) | undefined;
    const seen: Array<string | undefined> = [];
    const { mgr, controller } = runConfigMaps(env, { concurrency: 4 }, async (ctx) => {
      seen.push(ctx.object?.metadata?.resourceVersion);
      // The first run is the "1 s reconcile": it ends only when the test says so.
      if (seen.length === 1) await new Promise<void>((resolve) => (release = resolve));
    });
    await waitFor(() => release !== undefined, 'the first reconcile to start');
    let last = '';
    for (let i = 1; i <= 100; i++) {
      last = env.server.patch(kinds.configMaps, 'hot', { data: { v: String(i) } }).metadata.resourceVersion!;
      if (i % 10 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    // Every update has reached the cache (and so the queue) while the first run still holds the key.
    await waitFor(() => mgr.get(kinds.configMaps, 'default/hot')?.metadata?.resourceVersion === last);
    expect(seen).toHaveLength(1);
    release!();
    await waitFor(() => seen.at(-1) === last && controller.stats().active === 0);
    await settle(20); // a stray extra run would show now
    expect(seen.length - 1).toBeGreaterThanOrEqual(1);
    expect(seen.length - 1).toBeLessThanOrEqual(2);
    expect(seen.at(-1)).toBe(last);
  });
});

describe('retry backoff on a fake clock (Manager on FakeApiServer)', () => {
  const env = perTestEnv();

  /** controller-runtime's per-key backoff: 5 ms doubling, capped at 1,000 s. */
  const expectedDelay = (failures: number): number => Math.min(5 * 2 ** (failures - 1), 1_000_000);

  it('retries a failing key after 5, 10, 20 … ms up to 1,000 s; a success resets it; a TerminalError is not retried', async () => {
    env.server.create(kinds.configMaps, configMap('flaky'));
    env.server.create(kinds.configMaps, configMap('broken'));
    const clock = new FakeClock(1_000_000);
    const runs: Array<{ at: number; retries: number }> = [];
    let brokenRuns = 0;
    let succeed = false;
    const { controller } = runConfigMaps(env, { clock }, (ctx) => {
      if (ctx.name === 'broken') {
        brokenRuns++;
        throw new TerminalError('invalid spec');
      }
      runs.push({ at: clock.now(), retries: ctx.retries });
      if (succeed) {
        succeed = false;
        return;
      }
      throw new Error('not yet');
    });
    await waitFor(() => runs.length === 1 && brokenRuns === 1, 'the first runs');

    /** Moves the clock to 1 ms before the next expected retry (no run), then onto it (one run). */
    const stepTo = async (delay: number): Promise<void> => {
      const n = runs.length;
      const from = runs[n - 1]!.at;
      clock.advance(delay - 1);
      await new Promise<void>((resolve) => setTimeout(resolve, 2));
      expect(runs).toHaveLength(n);
      clock.advance(1);
      await waitFor(() => runs.length === n + 1, `retry ${n} after ${delay} ms`);
      expect(runs[n]!.at - from).toBe(delay);
    };

    // 5, 10, 20, …, 655,360 ms, then capped at 1,000,000 ms.
    const seenDelays: number[] = [];
    for (let failures = 1; failures <= 21; failures++) {
      const delay = expectedDelay(failures);
      await stepTo(delay);
      seenDelays.push(delay);
      expect(runs.at(-1)!.retries).toBe(failures);
    }
    expect(seenDelays.slice(0, 4)).toEqual([5, 10, 20, 40]);
    expect(seenDelays.slice(-3)).toEqual([1_000_000, 1_000_000, 1_000_000]);

    // One success resets the backoff: the next failure retries after 5 ms again.
    succeed = true;
    await stepTo(1_000_000); // this run succeeds
    expect(controller.stats().succeeded).toBe(1);
    env.server.patch(kinds.configMaps, 'flaky', { data: { v: 'changed' } });
    await waitFor(() => runs.length === 24, 'the run after the change');
    expect(runs.at(-1)!.retries).toBe(0);
    await stepTo(5);
    await stepTo(10);

    // The TerminalError key ran once and was never retried.
    clock.advance(2_000_000);
    await new Promise<void>((resolve) => setTimeout(resolve, 5));
    expect(brokenRuns).toBe(1);
    expect(controller.stats().terminal).toBe(1);
  }, 30_000);
});
