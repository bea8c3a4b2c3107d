import { DeletedFinalStateUnknown, ErrorCodes, KinformerError } from '@kinformer/core';
import { pod } from '@kinformer/test-tools';
import type { Pod } from '@kinformer/test-tools';
import { newIndexer, newStore } from './cache.js';
import { metaNamespaceIndexFunc, NAMESPACE_INDEX } from './namespaceIndex.js';
import type { IndexFunc, Indexer, Store } from './store.js';

const sorted = (values: string[]): string[] => [...values].sort();

interface TestObject {
  id: string;
  val: string;
}
const mkObj = (id: string, val: string): TestObject => ({ id, val });
const testStoreKeyFunc = (o: TestObject): string => o.id;
const testStoreIndexFunc: IndexFunc<TestObject> = (o) => [o.val];

const names = (objs: Pod[]): string[] => sorted(objs.map((o) => o.metadata?.name ?? ''));

// client-go: store_test.go doTestStore, run by TestCache
function doTestStore(store: Store<TestObject>): void {
  store.add(mkObj('foo', 'bar'));
  expect(store.get(mkObj('foo', ''))?.val).toBe('bar');
  store.update(mkObj('foo', 'baz'));
  expect(store.get(mkObj('foo', ''))?.val).toBe('baz');
  store.delete(mkObj('foo', ''));
  expect(store.get(mkObj('foo', ''))).toBeUndefined();

  store.add(mkObj('a', 'b'));
  store.add(mkObj('c', 'd'));
  store.add(mkObj('e', 'e'));
  expect(sorted(store.list().map((o) => o.val))).toEqual(['b', 'd', 'e']);

  store.replace([mkObj('foo', 'foo'), mkObj('bar', 'bar')], '0');
  expect(sorted(store.list().map((o) => o.val))).toEqual(['bar', 'foo']);
  expect(sorted(store.listKeys())).toEqual(['bar', 'foo']);
}

describe('newStore', () => {
  // client-go: TestCache
  it('adds, updates, gets, deletes, lists and replaces', () => {
    doTestStore(newStore<TestObject>(testStoreKeyFunc));
  });

  it('works the same on an indexer', () => {
    doTestStore(newIndexer<TestObject>(testStoreKeyFunc, { by_val: testStoreIndexFunc }));
  });

  it('keys by namespace/name (or name) by default', () => {
    const store = newStore<Pod>();
    store.add(pod('a', '1', 'ns'));
    store.add(pod('node-1', '1', ''));
    expect(sorted(store.listKeys())).toEqual(['node-1', 'ns/a']);
    expect(store.getByKey('ns/a')?.metadata?.name).toBe('a');
    expect(store.getByKey('node-1')?.metadata?.name).toBe('node-1');
    expect(store.getByKey('missing')).toBeUndefined();
  });

  it('deletes by tombstone with the default key function', () => {
    const store = newIndexer<Pod>(undefined, { [NAMESPACE_INDEX]: metaNamespaceIndexFunc });
    store.add(pod('a', '1', 'ns'));
    store.add(pod('b', '2', 'ns'));
    const stale = pod('a', '1', 'ns');
    store.delete(new DeletedFinalStateUnknown('ns/a', stale) as unknown as Pod);
    expect(store.listKeys()).toEqual(['ns/b']);
    expect(store.indexKeys(NAMESPACE_INDEX, 'ns')).toEqual(['ns/b']);
    // a tombstone has no metadata: the store's resourceVersion is left alone
    expect(store.lastStoreSyncResourceVersion()).toBe('2');
  });

  it('uses options.keyFunc, and the positional key function over it', () => {
    const byOption = newStore<TestObject>(undefined, { keyFunc: (o) => `opt:${o.id}` });
    byOption.add(mkObj('x', '1'));
    expect(byOption.listKeys()).toEqual(['opt:x']);

    const both = newStore<TestObject>((o) => `pos:${o.id}`, { keyFunc: (o) => `opt:${o.id}` });
    both.add(mkObj('x', '1'));
    expect(both.listKeys()).toEqual(['pos:x']);
  });

  // client-go: TestKeyError checks KeyError unwrapping; here key failures are KinformerErrors (ERR_KEY_FUNC).
  // Not applicable: TestCacheWithTransformer (no store transformer: the informer transforms),
  // TestCacheTransactionShouldIndexErrors (no Transaction API), TestFIFOCache/TestUndeltaStore (other stores).
  it('throws ERR_KEY_FUNC for an object it cannot key and stays unchanged', () => {
    const store = newStore<Pod>();
    store.add(pod('a', '1', 'ns'));
    expect(() => store.add({ kind: 'Pod' })).toThrow(expect.objectContaining({ code: ErrorCodes.KEY_FUNC }));
    expect(() => store.delete({ kind: 'Pod' })).toThrow(
      expect.objectContaining({ code: ErrorCodes.KEY_FUNC }),
    );
    expect(store.listKeys()).toEqual(['ns/a']);
    expect(store.lastStoreSyncResourceVersion()).toBe('1');
  });

  it('replaces nothing when one item cannot be keyed', () => {
    const store = newStore<Pod>();
    store.add(pod('a', '1', 'ns'));
    expect(() => store.replace([pod('b', '1', 'ns'), { metadata: {} }], '9')).toThrow(
      expect.objectContaining({ code: ErrorCodes.KEY_FUNC }),
    );
    expect(store.listKeys()).toEqual(['ns/a']);
    expect(store.lastStoreSyncResourceVersion()).toBe('1');
  });

  it('keeps the last of duplicate keys in replace', () => {
    const store = newStore<TestObject>(testStoreKeyFunc);
    store.replace([mkObj('a', 'first'), mkObj('a', 'second')], '1');
    expect(store.list()).toEqual([mkObj('a', 'second')]);
  });

  it('stores the object itself, once, and returns it by reference', () => {
    const store = newStore<Pod>();
    const a = pod('a', '1', 'ns');
    store.add(a);
    expect(store.getByKey('ns/a')).toBe(a);
    expect(store.get(pod('a', '1', 'ns'))).toBe(a);
    expect(store.list()[0]).toBe(a);
  });

  it('returns a new array (a snapshot) from list on every call', () => {
    const store = newStore<Pod>();
    store.add(pod('a', '1', 'ns'));
    const first = store.list();
    store.add(pod('b', '1', 'ns'));
    expect(first).toHaveLength(1);
    expect(store.list()).toHaveLength(2);
    expect(store.list()).not.toBe(store.list());
  });

  it('reports its size, and tracks the resourceVersion through add, delete, replace and bookmark', () => {
    const store = newStore<Pod>();
    expect(store.size()).toBe(0);
    store.add(pod('a', '5', 'ns'));
    store.add(pod('b', '3', 'ns'));
    expect(store.size()).toBe(2);
    expect(store.lastStoreSyncResourceVersion()).toBe('3');
    store.delete(pod('a', '6', 'ns'));
    expect(store.lastStoreSyncResourceVersion()).toBe('6');
    expect(store.size()).toBe(1);
    store.replace([], '10');
    expect(store.lastStoreSyncResourceVersion()).toBe('10');
    store.bookmark('12');
    expect(store.lastStoreSyncResourceVersion()).toBe('12');
    store.resync();
    expect(store.lastStoreSyncResourceVersion()).toBe('12');
  });
});

// client-go: mutation_detector_test.go TestMutationDetector. kinformer detects mutation by freezing.
describe('freezing', () => {
  it('deep-freezes stored objects by default in development, so mutating them throws', () => {
    // Jest runs with NODE_ENV=test: development mode.
    const store = newStore<Pod>();
    store.add(pod('a', '1', 'ns', { metadata: { labels: { app: 'web' } } }));
    const cached = store.getByKey('ns/a')!;
    expect(() => {
      cached.metadata!.name = 'evil';
    }).toThrow(TypeError);
    expect(() => {
      cached.metadata!.labels!.app = 'evil';
    }).toThrow(TypeError);
    expect(store.getByKey('ns/a')?.metadata?.labels).toEqual({ app: 'web' });
  });

  it('freezes objects stored by update and replace', () => {
    const store = newStore<Pod>(undefined, { freeze: true });
    store.update(pod('a', '1', 'ns'));
    store.replace([pod('b', '1', 'ns', { metadata: { labels: { x: 'y' } } })], '1');
    const b = store.getByKey('ns/b')!;
    expect(Object.isFrozen(b)).toBe(true);
    expect(() => {
      b.metadata!.labels!.x = 'z';
    }).toThrow(TypeError);
  });

  it('leaves objects mutable with freeze: false', () => {
    const store = newIndexer<Pod>(undefined, {}, { freeze: false });
    store.add(pod('a', '1', 'ns', { metadata: { labels: { app: 'web' } } }));
    const cached = store.getByKey('ns/a')!;
    cached.metadata!.labels!.app = 'changed';
    expect(store.getByKey('ns/a')?.metadata?.labels?.app).toBe('changed');
  });
});

describe('newIndexer', () => {
  // client-go: store_test.go TestIndex (doTestIndex)
  it('finds objects whose index values intersect a probe object', () => {
    const indexer = newIndexer<TestObject>(testStoreKeyFunc, { by_val: testStoreIndexFunc });
    indexer.add(mkObj('a', 'b'));
    indexer.add(mkObj('c', 'b'));
    indexer.add(mkObj('e', 'f'));
    indexer.add(mkObj('g', 'h'));
    const expected: Record<string, string[]> = { b: ['a', 'c'], f: ['e'], h: ['g'] };
    for (const [value, ids] of Object.entries(expected)) {
      expect(sorted(indexer.index('by_val', mkObj('', value)).map((o) => o.id))).toEqual(ids);
    }
  });

  // client-go: index_test.go TestGetIndexFuncValues
  it('lists the distinct values of an index', () => {
    const indexer = newIndexer<Pod>(undefined, { testmodes: (p) => [p.metadata?.labels?.foo ?? ''] });
    indexer.add(pod('one', '1', '', { metadata: { labels: { foo: 'bar' } } }));
    indexer.add(pod('two', '1', '', { metadata: { labels: { foo: 'bar' } } }));
    indexer.add(pod('tre', '1', '', { metadata: { labels: { foo: 'biz' } } }));
    expect(sorted(indexer.listIndexFuncValues('testmodes'))).toEqual(['bar', 'biz']);
  });

  // client-go: index_test.go TestMultiIndexKeys
  it('answers byIndex correctly for multi-valued index functions as values change', () => {
    const byUser: IndexFunc<Pod> = (p) => (p.metadata?.annotations?.users ?? '').split(',');
    const indexer = newIndexer<Pod>(undefined, { byUser });
    const pod1 = pod('one', '1', '', { metadata: { annotations: { users: 'ernie,bert' } } });
    const pod2 = pod('two', '1', '', { metadata: { annotations: { users: 'bert,oscar' } } });
    const pod3 = pod('tre', '1', '', { metadata: { annotations: { users: 'ernie,elmo' } } });
    indexer.add(pod1);
    indexer.add(pod2);
    indexer.add(pod3);

    const expected: Record<string, string[]> = {
      ernie: ['one', 'tre'],
      bert: ['one', 'two'],
      elmo: ['tre'],
      oscar: ['two'],
      elmo1: [],
    };
    for (const [user, podNames] of Object.entries(expected)) {
      expect(names(indexer.byIndex('byUser', user))).toEqual(podNames);
      expect(sorted(indexer.indexKeys('byUser', user))).toEqual(podNames);
    }

    indexer.delete(pod3);
    expect(names(indexer.byIndex('byUser', 'ernie'))).toEqual(['one']);
    expect(indexer.byIndex('byUser', 'elmo')).toEqual([]);

    indexer.update(pod('two', '1', '', { metadata: { annotations: { users: 'oscar' } } }));
    expect(names(indexer.byIndex('byUser', 'bert'))).toEqual(['one']);
    expect(sorted(indexer.listIndexFuncValues('byUser'))).toEqual(['bert', 'ernie', 'oscar']);
  });

  // client-go: shared_informer_test.go TestIndexer (the indexer part)
  describe('TestIndexer behaviours', () => {
    let indexer: Indexer<Pod>;
    const byNode: IndexFunc<Pod> = (p) => (p.spec?.nodeName === undefined ? [] : [p.spec.nodeName]);
    const byLabelA: IndexFunc<Pod> = (p) =>
      p.metadata?.labels?.a === undefined ? [] : [p.metadata.labels.a];

    beforeEach(() => {
      indexer = newIndexer<Pod>(undefined, { [NAMESPACE_INDEX]: metaNamespaceIndexFunc, byNode });
      indexer.add(pod('p1', '1', 'ns1', { metadata: { labels: { a: 'x' } }, spec: { nodeName: 'n1' } }));
      indexer.add(pod('p2', '1', 'ns1', { metadata: { labels: { a: 'y' } }, spec: { nodeName: 'n2' } }));
      indexer.add(pod('p3', '1', 'ns2', { spec: { nodeName: 'n1' } }));
    });

    it('looks objects up by index', () => {
      expect(names(indexer.byIndex(NAMESPACE_INDEX, 'ns1'))).toEqual(['p1', 'p2']);
      expect(names(indexer.byIndex(NAMESPACE_INDEX, 'ns2'))).toEqual(['p3']);
      expect(names(indexer.byIndex('byNode', 'n1'))).toEqual(['p1', 'p3']);
      expect(sorted(indexer.indexKeys('byNode', 'n1'))).toEqual(['ns1/p1', 'ns2/p3']);
      expect(names(indexer.index(NAMESPACE_INDEX, pod('whatever', '1', 'ns2')))).toEqual(['p3']);
    });

    it('indexes items added later', () => {
      indexer.add(pod('p4', '1', 'ns2', { spec: { nodeName: 'n2' } }));
      expect(names(indexer.byIndex(NAMESPACE_INDEX, 'ns2'))).toEqual(['p3', 'p4']);
      expect(names(indexer.byIndex('byNode', 'n2'))).toEqual(['p2', 'p4']);
    });

    it('indexes existing items immediately when an indexer is added after items exist', () => {
      indexer.addIndexers({ byLabelA });
      expect(names(indexer.byIndex('byLabelA', 'x'))).toEqual(['p1']);
      expect(names(indexer.byIndex('byLabelA', 'y'))).toEqual(['p2']);
      expect(sorted(indexer.listIndexFuncValues('byLabelA'))).toEqual(['x', 'y']);
      expect(Object.keys(indexer.getIndexers())).toEqual([NAMESPACE_INDEX, 'byNode', 'byLabelA']);
      // and keeps it up to date
      indexer.update(pod('p1', '1', 'ns1', { metadata: { labels: { a: 'y' } }, spec: { nodeName: 'n1' } }));
      expect(names(indexer.byIndex('byLabelA', 'y'))).toEqual(['p1', 'p2']);
      expect(indexer.byIndex('byLabelA', 'x')).toEqual([]);
    });

    it('rejects an indexer whose name is taken with ERR_INDEX', () => {
      let err: unknown;
      try {
        indexer.addIndexers({ byNode: byLabelA });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(KinformerError);
      expect((err as KinformerError).code).toBe(ErrorCodes.INDEX);
      expect((err as KinformerError).message).toBe('indexer conflict: byNode');
      expect(names(indexer.byIndex('byNode', 'n1'))).toEqual(['p1', 'p3']);
    });
  });

  it('throws ERR_INDEX for unknown index names and ERR_INDEX_FUNC for failing index functions', () => {
    const indexer = newIndexer<Pod>(undefined, { [NAMESPACE_INDEX]: metaNamespaceIndexFunc });
    expect(() => indexer.byIndex('nope', 'x')).toThrow('Index with name nope does not exist');
    expect(indexer.listIndexFuncValues('nope')).toEqual([]);
    const keyed = newIndexer<Pod>(() => 'explicit-key', { [NAMESPACE_INDEX]: metaNamespaceIndexFunc });
    expect(() => keyed.add({ kind: 'NoMeta' })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INDEX_FUNC }),
    );
    expect(keyed.size()).toBe(0);
  });

  it('rejects indexers that are not functions at construction', () => {
    expect(() => newIndexer<Pod>(undefined, { x: 1 as unknown as IndexFunc<Pod> })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INDEX }),
    );
  });
});
