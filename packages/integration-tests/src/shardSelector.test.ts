import { createListWatch } from '@kinformer/client-node';
import { ErrorCodes, shardSelectorFromRanges, splitHashSpace, type KubeObject } from '@kinformer/core';
import { Reflector } from '@kinformer/reflector';
import type { FakeApiServer } from '@kinformer/testing';
import { serverPod, waitFor } from '@kinformer/test-tools';
import fc from 'fast-check';
import { disposeAll, startReflector, type Pod, PODS, startServer } from './testSupport.test.helpers.js';

// KEP-5866 end to end: Reflector({ shardSelector }) ← createListWatch ← FakeApiServer with the
// ShardedListAndWatch gate on (server-side filtering, shardInfo echoed) and off (the parameter ignored:
// the reflector filters on the client). The guarantee: whatever the server, the cache holds exactly the
// objects of the range, through LIST, WATCH, watch-list and relists.

afterEach(disposeAll);

function keys(objs: readonly KubeObject[]): string[] {
  return objs.map((o) => o.metadata!.name!).sort();
}

describe.each([
  ['server', true],
  ['client', false],
] as const)('a sharded reflector whose server filters: %s', (mode, gate) => {
  test.each([false, true])(
    'holds exactly its range through list (watch-list %s), watch and deletes',
    async (watchList) => {
      const server = await startServer({ shardedListAndWatch: gate });
      const [low] = splitHashSpace(2).map((r) => shardSelectorFromRanges('object.metadata.uid', [r]));
      for (let i = 0; i < 40; i++) server.create('pods', serverPod(`a-${i}`));
      const h = startReflector(createListWatch<Pod>(server.kubeConfig(), PODS), {
        reflector: { shardSelector: low!.toString(), useWatchList: watchList },
      });
      const expected = (): string[] => keys(server.list('pods', 'default').filter((o) => low!.matches(o)));
      await waitFor(() => JSON.stringify(keys(h.indexer.list())) === JSON.stringify(expected()));
      for (let i = 0; i < 40; i++) server.create('pods', serverPod(`b-${i}`));
      for (let i = 0; i < 40; i += 3) server.delete('pods', `default/a-${i}`);
      await waitFor(() => JSON.stringify(keys(h.indexer.list())) === JSON.stringify(expected()), {
        describe: () => ({ cache: keys(h.indexer.list()), expected: expected() }),
      });
      expect(expected().length).toBeGreaterThan(15);
      const stats = h.reflector.stats();
      if (watchList) {
        // A streaming list carries no ListMeta: the reflector cannot tell, it filters (and says so).
        expect(stats.shardFilterMode).toBe('client');
      } else {
        expect(stats.shardFilterMode).toBe(mode);
      }
      if (gate) expect(stats.shardDropped).toBe(0);
      else expect(stats.shardDropped).toBeGreaterThan(20);
      // Every request carried the selector.
      const sent = server.requests.filter(
        (r) => r.resource === 'pods' && (r.verb === 'list' || r.verb === 'watch'),
      );
      expect(sent.length).toBeGreaterThan(0);
      for (const r of sent) expect(r.query.shardSelector).toBe(low!.toString());
    },
  );
});

test('property: client-side filtering = server-side filtering = the ranges, for any set of ranges', async () => {
  const servers = [
    await startServer({ shardedListAndWatch: true }),
    await startServer({ shardedListAndWatch: false }),
  ];
  for (const server of servers) for (let i = 0; i < 120; i++) server.create('pods', serverPod(`p-${i}`));
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 16 }),
      fc.array(fc.boolean(), { minLength: 16, maxLength: 16 }),
      async (n, picks) => {
        const chosen = splitHashSpace(n).filter((_r, i) => picks[i]);
        if (chosen.length === 0) return;
        const selector = shardSelectorFromRanges('object.metadata.uid', chosen);
        const want = (server: FakeApiServer): string[] =>
          keys(
            server.list('pods', 'default').filter((o) => {
              const h = BigInt(selectorHash(o));
              return chosen.some((r) => h >= BigInt(r.start) && h < BigInt(r.end));
            }),
          );
        for (const server of servers) {
          const h = startReflector(createListWatch<Pod>(server.kubeConfig(), PODS), {
            reflector: { shardSelector: selector },
          });
          await waitFor(() => h.reflector.isWatching());
          expect(keys(h.indexer.list())).toEqual(want(server));
          await h.stop();
        }
      },
    ),
    { numRuns: 12 },
  );
});

function selectorHash(o: KubeObject): string {
  // The FNV-1a 64 hash of the uid, computed independently of the selector (BigInt reference).
  let h = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(o.metadata!.uid)) {
    h ^= BigInt(byte);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return `0x${h.toString(16)}`;
}

test('a shardSelector that does not parse fails at construction with ERR_INVALID_SELECTOR', () => {
  const lw = {
    list: () => Promise.reject(new Error('unused')),
    watch: () => Promise.reject(new Error('unused')),
  };
  expect(
    () =>
      new Reflector(
        lw,
        { add() {}, update() {}, delete() {}, replace() {}, resync() {} },
        {
          shardSelector: "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
        },
      ),
  ).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_SELECTOR }));
});
