import { runChaos, type ChaosReport } from '@kinformer/soak';

// End to end over HTTP, the CI run of the chaos soak (`pnpm soak`, soak/src/chaos.ts): a
// FakeApiServer with ~2000 objects (pods in four namespaces, configmaps, a cluster-scoped CRD); seven
// informers in three groups (all namespaces / label selector app=web on a DeltaFIFO with resync / one
// namespace with streaming lists) plus one started mid-run; two handlers each (one synchronous, one
// async and slow, both failing now and then on purpose), one more registered mid-run and one removed
// mid-run; random churn and random faults (410 on watches, lists and continue tokens, dropped and
// cleanly ended watches, 429, 500, 503, 504, stalls, malformed and truncated lines, restarts with
// and without history) for 10 s. After quiescence, every cache (and its indexes) must equal the
// server, every handler's per-key stream must never go back in version and must end in the final
// state, memory must stay in budget, and every informer must be watching at the server's
// resourceVersion again. See docs/reliability.md.

const SEEDS = [1, 2, 3];

function outcome(report: ChaosReport): { mismatches: number; samples: ChaosReport['samples'] } {
  return { mismatches: report.mismatches, samples: report.samples };
}

describe('chaos: churn with injected faults, informers over HTTP', () => {
  test.each(SEEDS)(
    'seed %i: every cache equals the server, every handler stream is consistent, every informer recovered',
    async (seed) => {
      // Ten seconds, longer on a loaded machine until 30 faults came (at ~250 ms apart, 40 come in 10 s).
      const report = await runChaos({ seed, durationMs: 10_000, objects: 2_000, minFaults: 30 });

      expect(outcome(report)).toEqual({ mismatches: 0, samples: [] });
      expect(report.quiescent).toBe(true);
      expect(report.memory.withinBudget).toBe(true);
      // The run did what it claims: churn, faults of many kinds, relists, events, comparisons.
      expect(report.writes).toBeGreaterThan(2_000);
      expect(report.faultsInjected).toBeGreaterThan(10);
      expect(Object.values(report.faults).filter((f) => f.injected > 0).length).toBeGreaterThan(8);
      expect(report.informers).toHaveLength(9);
      expect(report.informers.every((i) => i.recovered)).toBe(true);
      const relists = report.informers.reduce(
        (n, i) => n + i.requests.relists + i.requests.streamingLists,
        0,
      );
      expect(relists).toBeGreaterThan(7);
      expect(report.events).toBeGreaterThan(report.writes);
      expect(report.cacheObjectsChecked).toBeGreaterThan(2_000);
      // Every informer's fast and slow handler (and most informers' late one) were checked key by key.
      expect(report.handlerKeysChecked).toBeGreaterThan(2 * report.cacheObjectsChecked);
    },
    180_000,
  );

  test('self-test: when the transport of one informer loses watch events, the soak reports mismatches for that informer only', async () => {
    const report = await runChaos({
      seed: 4,
      durationMs: 3_000,
      objects: 500,
      faultIntervalMs: 1e9, // no faults: no relist can repair the losses
      selfTest: { dropWatchEvents: { informer: 'all/configmaps', every: 50 } },
    });

    expect(report.mismatches).toBeGreaterThan(0);
    expect(new Set(report.samples.map((s) => s.where.split(' ')[0]))).toEqual(new Set(['all/configmaps']));
    const kinds = Object.keys(report.mismatchCounts);
    expect(kinds.some((k) => k.startsWith('cache-'))).toBe(true);
    expect(kinds.some((k) => k.startsWith('final-'))).toBe(true);
  }, 120_000);
});
