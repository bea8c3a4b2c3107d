import type { V1ConfigMap } from '@kubernetes/client-node';
import { waitFor } from '@kinformer/test-tools';
import { kinds } from './kinds.js';
import { TestEnv } from './testing.js';

// Read-your-writes and no double create, each over many keys at once, with every watch event reaching
// the informers 500 ms late (kube-apiserver's watch cache under load): without the overlay the
// reconcile after a write reads the object from before it.

const TRIALS = Number(process.env['KINFORMER_RYW_TRIALS'] ?? 300);

function configMap(name: string): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default' },
    data: { step: '0' },
  };
}

async function statusTrial(readYourWrites: boolean): Promise<{ trials: number; stale: number }> {
  const env = await TestEnv.start({ informerLagMs: 500 });
  try {
    for (let i = 0; i < TRIALS; i++) env.server.create(kinds.configMaps, configMap(`c${i}`));
    const written = new Map<string, string>();
    let trials = 0;
    let stale = 0;
    const mgr = env.manager({ readYourWrites });
    mgr
      .controller('ryw')
      .for(kinds.configMaps)
      .concurrency(8)
      .reconcile(async (ctx) => {
        const obj = ctx.object;
        if (obj === undefined) return;
        const mine = written.get(ctx.key);
        if (mine === undefined) {
          const updated = await ctx.client.patch(
            kinds.configMaps,
            ctx,
            { data: { step: '1' } },
            { signal: ctx.signal },
          );
          written.set(ctx.key, updated.metadata!.resourceVersion!);
          return { requeueAfterMs: 1 };
        }
        if (mine === 'checked') return;
        trials++;
        if (BigInt(obj.metadata!.resourceVersion!) < BigInt(mine)) stale++;
        written.set(ctx.key, 'checked');
      });
    env.run(mgr);
    await waitFor(() => trials === TRIALS, { timeoutMs: 120_000 });
    return { trials, stale };
  } finally {
    await env.stop();
  }
}

describe('read-your-writes', () => {
  it(`the reconcile after a write sees a resourceVersion ≥ the written one (${TRIALS} keys, watch cache 500 ms behind)`, async () => {
    const withOverlay = await statusTrial(true);
    expect(withOverlay).toEqual({ trials: TRIALS, stale: 0 });
  });

  it('without the overlay the same reconciles read stale objects (the baseline the overlay fixes)', async () => {
    const without = await statusTrial(false);
    expect(without.stale).toBeGreaterThan(TRIALS / 2);
  });

  it(`a child created in one reconcile is seen by the next, before the informer delivers it: created once (${TRIALS} keys)`, async () => {
    const env = await TestEnv.start({ informerLagMs: 500 });
    try {
      for (let i = 0; i < TRIALS; i++) env.server.create(kinds.configMaps, configMap(`p${i}`));
      const creates = new Map<string, number>();
      const runs = new Map<string, number>();
      const mgr = env.manager();
      mgr.informer(kinds.secrets); // the children's cache
      mgr
        .controller('children')
        .for(kinds.configMaps)
        .concurrency(8)
        .reconcile(async (ctx) => {
          if (ctx.object === undefined) return;
          const n = (runs.get(ctx.key) ?? 0) + 1;
          runs.set(ctx.key, n);
          const child = `${ctx.name}-child`;
          if (mgr.get(kinds.secrets, `default/${child}`) === undefined) {
            await ctx.client.create(
              kinds.secrets,
              { apiVersion: 'v1', kind: 'Secret', metadata: { name: child, namespace: 'default' } },
              { signal: ctx.signal },
            );
            creates.set(ctx.key, (creates.get(ctx.key) ?? 0) + 1);
          }
          // Triggered again at once, long before the lagging watch delivers the child.
          if (n < 3) return { requeueAfterMs: 1 };
        });
      env.run(mgr);
      await waitFor(() => runs.size === TRIALS && [...runs.values()].every((n) => n >= 3), {
        timeoutMs: 120_000,
      });
      expect([...creates.values()].filter((n) => n !== 1)).toEqual([]);
      expect(creates.size).toBe(TRIALS);
    } finally {
      await env.stop();
    }
  });
});
