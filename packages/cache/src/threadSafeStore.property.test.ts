import fc from 'fast-check';
import { ErrorCodes, isKinformerError, metaNamespaceKeyFunc } from '@kinformer/core';
import type { KubeObject } from '@kinformer/core';
import { newIndexer } from './cache.js';
import { metaNamespaceIndexFunc, NAMESPACE_INDEX } from './namespaceIndex.js';
import type { IndexFunc, Indexer, Indexers } from './store.js';

/**
 * Model-based test: random add/update/delete/replace/bookmark/addIndexers sequences run against the
 * indexer and against a plain Map; after every step the contents must be the same objects and every
 * index must equal a brute-force recomputation from the Map (so no stale keys, no empty sets).
 */

interface Obj extends KubeObject {
  spec: { tags: string[]; poison: boolean };
}

const byTags: IndexFunc<Obj> = (o) => o.spec.tags;
const byFirstTag: IndexFunc<Obj> = (o) => (o.spec.tags.length === 0 ? [] : [o.spec.tags[0]!]);
const poisonable: IndexFunc<Obj> = (o) => {
  if (o.spec.poison) throw new Error('poisoned');
  return [String(o.spec.tags.length)];
};

const INITIAL: Indexers<Obj> = { [NAMESPACE_INDEX]: metaNamespaceIndexFunc, tags: byTags };
const LATE: Indexers<Obj> = { firstTag: byFirstTag, poisonable };

type Op =
  | { type: 'add' | 'update'; obj: Obj }
  | { type: 'delete'; obj: Obj }
  | { type: 'replace'; objs: Obj[]; rv: string }
  | { type: 'bookmark'; rv: string }
  | { type: 'addIndexer'; name: keyof typeof LATE };

const rvArb = fc.integer({ min: 1, max: 1000 }).map(String);
const objArb: fc.Arbitrary<Obj> = fc
  .record({
    namespace: fc.constantFrom('', 'n1', 'n2'),
    name: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
    rv: rvArb,
    tags: fc.array(fc.constantFrom('x', 'y', 'z', 'w'), { maxLength: 4 }),
    poison: fc.boolean(),
  })
  .map(({ namespace, name, rv, tags, poison }) => ({
    metadata: { name, resourceVersion: rv, ...(namespace === '' ? {} : { namespace }) },
    spec: { tags, poison: poison && tags.length > 2 },
  }));

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: objArb.map((obj): Op => ({ type: 'add', obj })) },
  { weight: 5, arbitrary: objArb.map((obj): Op => ({ type: 'update', obj })) },
  { weight: 3, arbitrary: objArb.map((obj): Op => ({ type: 'delete', obj })) },
  {
    weight: 1,
    arbitrary: fc
      .record({ objs: fc.array(objArb, { maxLength: 8 }), rv: rvArb })
      .map((r): Op => ({ type: 'replace', ...r })),
  },
  { weight: 1, arbitrary: rvArb.map((rv): Op => ({ type: 'bookmark', rv })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom<keyof typeof LATE>('firstTag', 'poisonable')
      .map((name): Op => ({ type: 'addIndexer', name })),
  },
);

class Model {
  items = new Map<string, Obj>();
  indexers: Indexers<Obj> = { ...INITIAL };
  rv = '';

  /** True when some current index function would reject `objs`. */
  rejects(objs: Iterable<Obj>, indexers: Indexers<Obj> = this.indexers): boolean {
    if (!('poisonable' in indexers)) return false;
    for (const o of objs) if (o.spec.poison) return true;
    return false;
  }
}

function expectIndexFuncError(fn: () => void): void {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(isKinformerError(thrown, ErrorCodes.INDEX_FUNC)).toBe(true);
}

function apply(indexer: Indexer<Obj>, model: Model, op: Op): void {
  switch (op.type) {
    case 'add':
    case 'update':
      if (model.rejects([op.obj])) {
        expectIndexFuncError(() => indexer[op.type](op.obj));
      } else {
        indexer[op.type](op.obj);
        model.items.set(metaNamespaceKeyFunc(op.obj), op.obj);
        model.rv = op.obj.metadata!.resourceVersion!;
      }
      return;
    case 'delete':
      indexer.delete(op.obj);
      model.items.delete(metaNamespaceKeyFunc(op.obj));
      model.rv = op.obj.metadata!.resourceVersion!;
      return;
    case 'replace': {
      // Like client-go, a replace keys the list first: of two objects with one key, the last wins,
      // and only the winners are indexed (a poisoned object shadowed by a later one is never seen).
      const items = new Map(op.objs.map((o) => [metaNamespaceKeyFunc(o), o]));
      if (model.rejects(items.values())) {
        expectIndexFuncError(() => indexer.replace(op.objs, op.rv));
      } else {
        indexer.replace(op.objs, op.rv);
        model.items = items;
        model.rv = op.rv;
      }
      return;
    }
    case 'bookmark':
      indexer.bookmark(op.rv);
      model.rv = op.rv;
      return;
    case 'addIndexer': {
      const added = { [op.name]: LATE[op.name]! };
      if (op.name in model.indexers) {
        expect(() => indexer.addIndexers(added)).toThrow(expect.objectContaining({ code: ErrorCodes.INDEX }));
      } else if (model.rejects(model.items.values(), added)) {
        expectIndexFuncError(() => indexer.addIndexers(added));
      } else {
        indexer.addIndexers(added);
        model.indexers = { ...model.indexers, ...added };
      }
      return;
    }
  }
}

function check(indexer: Indexer<Obj>, model: Model): void {
  expect([...indexer.listKeys()].sort()).toEqual([...model.items.keys()].sort());
  expect(indexer.size()).toBe(model.items.size);
  for (const [key, obj] of model.items) expect(indexer.getByKey(key)).toBe(obj);
  expect(indexer.lastStoreSyncResourceVersion()).toBe(model.rv);
  expect(Object.keys(indexer.getIndexers()).sort()).toEqual(Object.keys(model.indexers).sort());

  for (const [name, fn] of Object.entries(model.indexers)) {
    const brute = new Map<string, Set<string>>();
    for (const [key, obj] of model.items) {
      for (const value of fn(obj)) {
        let set = brute.get(value);
        if (set === undefined) brute.set(value, (set = new Set()));
        set.add(key);
      }
    }
    expect([...indexer.listIndexFuncValues(name)].sort()).toEqual([...brute.keys()].sort());
    for (const [value, keys] of brute) {
      expect([...indexer.indexKeys(name, value)].sort()).toEqual([...keys].sort());
      const objs = indexer.byIndex(name, value);
      expect(objs).toHaveLength(keys.size);
      for (const o of objs) expect(model.items.get(metaNamespaceKeyFunc(o))).toBe(o);
    }
  }
}

describe('indexer against a brute-force model', () => {
  it('keeps contents and every index equal to a recomputation after any sequence of writes', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), fc.boolean(), (ops, freeze) => {
        const indexer = newIndexer<Obj>(undefined, INITIAL, { freeze });
        const model = new Model();
        for (const op of ops) {
          apply(indexer, model, op);
          check(indexer, model);
        }
      }),
      { numRuns: 300 },
    );
  });
});
