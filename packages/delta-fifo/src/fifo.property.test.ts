import { metaNamespaceIndexFunc, NAMESPACE_INDEX, newIndexer } from '@kinformer/cache';
import type { Indexer } from '@kinformer/cache';
import { metaNamespaceKeyFunc } from '@kinformer/core';
import type { KubeObject } from '@kinformer/core';
import fc from 'fast-check';
import { DeltaFIFO } from './deltaFifo.js';
import type { Deltas, Queue } from './queue.js';
import { RealFIFO } from './realFifo.js';

// Model-based check of the whole reflector → FIFO → processDeltas → Indexer path: whatever the
// interleaving of writes, relists, resyncs and pops, once everything is popped the indexer holds
// exactly what applying the same writes to a plain Map gives, and every index agrees with a
// brute-force recomputation.

interface Pod extends KubeObject {
  metadata: { name: string; namespace: string; resourceVersion: string; labels?: Record<string, string> };
}

const LABEL_INDEX = 'app';
const NAMES = ['a', 'b', 'c', 'd'];
const NAMESPACES = ['ns1', 'ns2'];
const APPS = ['web', 'db', undefined];

type PodSpec = { name: string; namespace: string; app: string | undefined };
type Op =
  | { op: 'add' | 'update' | 'delete'; pod: PodSpec }
  | { op: 'replace'; pods: PodSpec[] }
  | { op: 'resync' }
  | { op: 'pop'; count: number; batch: boolean };

const podSpec: fc.Arbitrary<PodSpec> = fc.record({
  name: fc.constantFrom(...NAMES),
  namespace: fc.constantFrom(...NAMESPACES),
  app: fc.constantFrom(...APPS),
});
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constantFrom('add' as const, 'update' as const), pod: podSpec }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), pod: podSpec }) },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('replace' as const), pods: fc.array(podSpec, { maxLength: 6 }) }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('resync' as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('pop' as const),
      count: fc.integer({ min: 1, max: 4 }),
      batch: fc.boolean(),
    }),
  },
);

const appIndexFunc = (pod: Pod): string[] => {
  const app = pod.metadata.labels?.app;
  return app === undefined ? [] : [app];
};

function newPodIndexer(): Indexer<Pod> {
  return newIndexer<Pod>(undefined, {
    [NAMESPACE_INDEX]: metaNamespaceIndexFunc,
    [LABEL_INDEX]: appIndexFunc,
  });
}

/** client-go's processDeltas, writing the indexer (tombstones are deleted by their key). */
function processDeltas(indexer: Indexer<Pod>, deltas: Deltas<Pod>): void {
  for (const d of deltas) {
    if (d.type === 'Deleted') {
      indexer.delete(d.object as Pod);
    } else {
      const obj = d.object as Pod;
      if (indexer.get(obj) === undefined) indexer.add(obj);
      else indexer.update(obj);
    }
  }
}

/** Applies the ops to the queue (popping into the indexer) and to a Map; returns the Map. */
async function run(
  ops: Op[],
  queue: Queue<Pod> & { popBatch?: RealFIFO<Pod>['popBatch'] },
  indexer: Indexer<Pod>,
): Promise<Map<string, Pod>> {
  const model = new Map<string, Pod>();
  let rv = 0;
  const make = (spec: PodSpec): Pod => ({
    metadata: {
      name: spec.name,
      namespace: spec.namespace,
      resourceVersion: String(++rv),
      ...(spec.app === undefined ? {} : { labels: { app: spec.app } }),
    },
  });
  const popOne = async (batch: boolean): Promise<void> => {
    if (batch && queue.popBatch) {
      await queue.popBatch((items) => {
        for (const deltas of items) processDeltas(indexer, deltas);
      });
    } else {
      await queue.pop((deltas) => processDeltas(indexer, deltas));
    }
  };

  for (const op of ops) {
    switch (op.op) {
      case 'add':
      case 'update': {
        const pod = make(op.pod);
        queue[op.op](pod);
        model.set(metaNamespaceKeyFunc(pod), pod);
        break;
      }
      case 'delete': {
        const pod = make(op.pod);
        queue.delete(pod);
        model.delete(metaNamespaceKeyFunc(pod));
        break;
      }
      case 'replace': {
        const pods = op.pods.map(make);
        queue.replace(pods, String(rv));
        model.clear();
        for (const pod of pods) model.set(metaNamespaceKeyFunc(pod), pod);
        break;
      }
      case 'resync':
        queue.resync();
        break;
      case 'pop':
        for (let i = 0; i < op.count && queue.length() > 0; i++) await popOne(op.batch);
        expectIndexesConsistent(indexer, new Map(indexer.list().map((p) => [metaNamespaceKeyFunc(p), p])));
        break;
    }
  }
  while (queue.length() > 0) await popOne(false);
  return model;
}

/** Every index of the indexer equals a brute-force recomputation over `expected`. */
function expectIndexesConsistent(indexer: Indexer<Pod>, expected: Map<string, Pod>): void {
  const check = (indexName: string, indexFunc: (p: Pod) => string[]): void => {
    const byValue = new Map<string, string[]>();
    for (const [key, pod] of expected) {
      for (const value of indexFunc(pod)) byValue.set(value, [...(byValue.get(value) ?? []), key]);
    }
    expect([...indexer.listIndexFuncValues(indexName)].sort()).toEqual([...byValue.keys()].sort());
    for (const value of new Set([...NAMESPACES, 'web', 'db', ...byValue.keys()])) {
      const keys = (byValue.get(value) ?? []).sort();
      expect([...indexer.indexKeys(indexName, value)].sort()).toEqual(keys);
      expect(
        indexer
          .byIndex(indexName, value)
          .map((p) => metaNamespaceKeyFunc(p))
          .sort(),
      ).toEqual(keys);
    }
  };
  check(NAMESPACE_INDEX, (p) => [p.metadata.namespace]);
  check(LABEL_INDEX, (p) => (p.metadata.labels?.app === undefined ? [] : [p.metadata.labels.app]));
}

function expectSameState(indexer: Indexer<Pod>, model: Map<string, Pod>): void {
  expect(indexer.listKeys().sort()).toEqual([...model.keys()].sort());
  for (const [key, pod] of model) expect(indexer.getByKey(key)).toBe(pod);
  expectIndexesConsistent(indexer, model);
}

const ops = fc.array(opArb, { maxLength: 40 });

describe('FIFO → Indexer equals a plain Map (property)', () => {
  it('DeltaFIFO (Sync on relist)', async () => {
    await fc.assert(
      fc.asyncProperty(ops, async (sequence) => {
        const indexer = newPodIndexer();
        const fifo = new DeltaFIFO<Pod>({ knownObjects: indexer });
        expectSameState(indexer, await run(sequence, fifo, indexer));
        expect(fifo.length()).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('DeltaFIFO (Replaced on relist)', async () => {
    await fc.assert(
      fc.asyncProperty(ops, async (sequence) => {
        const indexer = newPodIndexer();
        const fifo = new DeltaFIFO<Pod>({ knownObjects: indexer, emitDeltaTypeReplaced: true });
        expectSameState(indexer, await run(sequence, fifo, indexer));
      }),
      { numRuns: 200 },
    );
  });

  it('RealFIFO (pop and popBatch)', async () => {
    await fc.assert(
      fc.asyncProperty(ops, async (sequence) => {
        const indexer = newPodIndexer();
        const fifo = new RealFIFO<Pod>({ knownObjects: indexer });
        expectSameState(indexer, await run(sequence, fifo, indexer));
        expect(fifo.length()).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('hasSynced holds once everything was popped after a relist or a write', async () => {
    await fc.assert(
      fc.asyncProperty(ops, fc.boolean(), async (sequence, real) => {
        const indexer = newPodIndexer();
        const fifo: Queue<Pod> = real
          ? new RealFIFO<Pod>({ knownObjects: indexer })
          : new DeltaFIFO<Pod>({ knownObjects: indexer });
        await run(sequence, fifo, indexer);
        const populated = sequence.some((o) => o.op !== 'resync' && o.op !== 'pop');
        expect(fifo.hasSynced()).toBe(populated);
      }),
      { numRuns: 100 },
    );
  });
});
