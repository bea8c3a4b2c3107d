import { ErrorCodes, KinformerError } from '@kinformer/core';
import { thrown } from '@kinformer/test-tools';
import type { KubeObject } from '@kinformer/core';
import type { IndexFunc } from './store.js';
import { ThreadSafeStore } from './threadSafeStore.js';

const sorted = (values: string[]): string[] => [...values].sort();

interface Obj extends KubeObject {
  spec?: { values?: string[]; poison?: boolean };
}

function obj(name: string, rv?: string, values?: string[]): Obj {
  return {
    metadata: { namespace: 'ns', name, ...(rv === undefined ? {} : { resourceVersion: rv }) },
    ...(values === undefined ? {} : { spec: { values } }),
  };
}

const byValues: IndexFunc<Obj> = (o) => o.spec?.values ?? [];
const byNamespace: IndexFunc<Obj> = (o) => [o.metadata?.namespace ?? ''];

describe('ThreadSafeStore index maintenance', () => {
  // client-go: TestThreadSafeStoreDeleteRemovesEmptySetsFromIndex
  it('removes an index value whose last key was deleted', () => {
    const store = new ThreadSafeStore<string>({ testIndexer: (s) => [s] });
    store.add('testKey', 'testKey');
    expect(store.indexKeys('testIndexer', 'testKey')).toEqual(['testKey']);
    expect(store.listIndexFuncValues('testIndexer')).toEqual(['testKey']);

    store.delete('testKey');
    expect(store.listIndexFuncValues('testIndexer')).toEqual([]);
    expect(store.indexKeys('testIndexer', 'testKey')).toEqual([]);
  });

  // client-go: TestThreadSafeStoreAddKeepsNonEmptySetPostDeleteFromIndex
  it('keeps an index value that still has keys after a delete', () => {
    const store = new ThreadSafeStore<string>({ testIndexer: () => ['testIndex'] });
    store.add('retain', 'retain');
    store.add('delete', 'delete');
    expect(sorted(store.indexKeys('testIndexer', 'testIndex'))).toEqual(['delete', 'retain']);

    store.delete('delete');
    expect(store.listIndexFuncValues('testIndexer')).toEqual(['testIndex']);
    expect(store.indexKeys('testIndexer', 'testIndex')).toEqual(['retain']);
  });

  // client-go: TestThreadSafeStoreIndexingFunctionsWithMultipleValues
  it('moves keys between the values of a multi-value index on add, update and delete', () => {
    const store = new ThreadSafeStore<string>({ testIndexer: (s) => s.split(',') });
    const keysOf = (value: string): string[] => sorted(store.indexKeys('testIndexer', value));

    store.add('key1', 'foo');
    store.add('key2', 'bar');
    expect(keysOf('foo')).toEqual(['key1']);
    expect(keysOf('bar')).toEqual(['key2']);

    store.update('key2', 'foo,bar');
    expect(keysOf('foo')).toEqual(['key1', 'key2']);
    expect(keysOf('bar')).toEqual(['key2']);

    store.update('key1', 'foo,bar');
    expect(keysOf('foo')).toEqual(['key1', 'key2']);
    expect(keysOf('bar')).toEqual(['key1', 'key2']);

    store.add('key3', 'foo,bar,baz');
    expect(keysOf('foo')).toEqual(['key1', 'key2', 'key3']);
    expect(keysOf('bar')).toEqual(['key1', 'key2', 'key3']);
    expect(keysOf('baz')).toEqual(['key3']);

    store.update('key1', 'foo');
    expect(keysOf('foo')).toEqual(['key1', 'key2', 'key3']);
    expect(keysOf('bar')).toEqual(['key2', 'key3']);
    expect(keysOf('baz')).toEqual(['key3']);

    store.update('key2', 'bar');
    expect(keysOf('foo')).toEqual(['key1', 'key3']);
    expect(keysOf('bar')).toEqual(['key2', 'key3']);
    expect(keysOf('baz')).toEqual(['key3']);

    store.delete('key1');
    expect(keysOf('foo')).toEqual(['key3']);
    expect(keysOf('bar')).toEqual(['key2', 'key3']);
    expect(keysOf('baz')).toEqual(['key3']);

    store.delete('key3');
    expect(keysOf('foo')).toEqual([]);
    expect(keysOf('bar')).toEqual(['key2']);
    expect(keysOf('baz')).toEqual([]);
    expect(store.listIndexFuncValues('testIndexer')).toEqual(['bar']);
  });

  it('handles duplicate values from an index function without leaving empty sets', () => {
    const store = new ThreadSafeStore<Obj>({ v: byValues });
    store.add('a', obj('a', '1', ['x', 'x', 'y']));
    expect(store.byIndex('v', 'x')).toHaveLength(1);
    store.update('a', obj('a', '2', ['y']));
    expect(sorted(store.listIndexFuncValues('v'))).toEqual(['y']);
    store.delete('a');
    expect(store.listIndexFuncValues('v')).toEqual([]);
  });

  it('maintains indexes whose objects have many values', () => {
    const many = (prefix: string, n: number): string[] =>
      Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    const store = new ThreadSafeStore<Obj>({ v: byValues });
    store.add('a', obj('a', '1', many('v', 40)));
    store.update('a', obj('a', '2', [...many('v', 20), ...many('w', 30)]));
    expect(sorted(store.listIndexFuncValues('v'))).toEqual(sorted([...many('v', 20), ...many('w', 30)]));
    expect(store.indexKeys('v', 'v25')).toEqual([]);
    expect(store.indexKeys('v', 'w29')).toEqual(['a']);
    store.update('a', obj('a', '3', ['only']));
    expect(store.listIndexFuncValues('v')).toEqual(['only']);
  });

  it('leaves an index untouched when an update keeps the same values (fast path)', () => {
    const store = new ThreadSafeStore<Obj>({ namespace: byNamespace, v: byValues });
    store.add('a', obj('a', '1', ['p', 'q']));
    store.add('b', obj('b', '1', ['p', 'q']));
    store.add('c', obj('c', '1', ['p', 'q']));
    // Had `a` been removed and re-added, it would now iterate last in its sets.
    store.update('a', obj('a', '2', ['p', 'q']));
    expect(store.indexKeys('namespace', 'ns')).toEqual(['a', 'b', 'c']);
    expect(store.indexKeys('v', 'p')).toEqual(['a', 'b', 'c']);
    expect(store.indexKeys('v', 'q')).toEqual(['a', 'b', 'c']);
    expect(store.get('a')?.metadata?.resourceVersion).toBe('2');
  });

  it('calls each index function once for the new object and once for the old one on update', () => {
    const seen: string[] = [];
    const store = new ThreadSafeStore<Obj>({
      rv: (o) => {
        seen.push(o.metadata?.resourceVersion ?? '');
        return [];
      },
    });
    store.add('a', obj('a', '1'));
    store.update('a', obj('a', '2'));
    expect(seen).toEqual(['1', '2', '1']);
  });

  it('returns each object once from index() when several of its values match', () => {
    const store = new ThreadSafeStore<Obj>({ v: byValues });
    store.add('a', obj('a', '1', ['x', 'y']));
    store.add('b', obj('b', '1', ['y']));
    store.add('c', obj('c', '1', ['z']));
    const found = store
      .index('v', obj('probe', undefined, ['x', 'y', 'missing']))
      .map((o) => o.metadata?.name);
    expect(sorted(found as string[])).toEqual(['a', 'b']);
    expect(store.index('v', obj('probe', undefined, ['z'])).map((o) => o.metadata?.name)).toEqual(['c']);
    expect(store.index('v', obj('probe', undefined, []))).toEqual([]);
  });

  it('byIndex returns the stored objects themselves', () => {
    const store = new ThreadSafeStore<Obj>({ v: byValues });
    const a = obj('a', '1', ['x']);
    store.add('a', a);
    expect(store.byIndex('v', 'x')[0]).toBe(a);
    expect(store.byIndex('v', 'nope')).toEqual([]);
  });
});

describe('ThreadSafeStore unknown indexes', () => {
  it('throws ERR_INDEX "Index with name X does not exist" from index, byIndex and indexKeys', () => {
    const store = new ThreadSafeStore<Obj>({ v: byValues });
    for (const call of [
      () => store.byIndex('missing', 'x'),
      () => store.indexKeys('missing', 'x'),
      () => store.index('missing', obj('a')),
    ]) {
      const err = thrown(call);
      expect(err.code).toBe(ErrorCodes.INDEX);
      expect(err.message).toBe('Index with name missing does not exist');
    }
  });

  it('returns no values from listIndexFuncValues for an unknown index', () => {
    expect(new ThreadSafeStore<Obj>().listIndexFuncValues('missing')).toEqual([]);
  });
});

describe('ThreadSafeStore addIndexers', () => {
  it('indexes the items already stored', () => {
    const store = new ThreadSafeStore<Obj>();
    store.add('a', obj('a', '1', ['x']));
    store.add('b', obj('b', '1', ['x', 'y']));
    store.addIndexers({ v: byValues });
    expect(sorted(store.indexKeys('v', 'x'))).toEqual(['a', 'b']);
    expect(store.indexKeys('v', 'y')).toEqual(['b']);
    // and keeps maintaining it
    store.delete('b');
    expect(store.listIndexFuncValues('v')).toEqual(['x']);
  });

  it('rejects a name that already exists with ERR_INDEX "indexer conflict" and changes nothing', () => {
    const store = new ThreadSafeStore<Obj>({ v: byValues });
    store.add('a', obj('a', '1', ['x']));
    const err = thrown(() => store.addIndexers({ other: byNamespace, v: byNamespace }));
    expect(err.code).toBe(ErrorCodes.INDEX);
    expect(err.message).toBe('indexer conflict: v');
    expect(Object.keys(store.getIndexers())).toEqual(['v']);
    expect(store.getIndexers().v).toBe(byValues);
    expect(() => store.byIndex('other', 'ns')).toThrow(expect.objectContaining({ code: ErrorCodes.INDEX }));
    expect(store.indexKeys('v', 'x')).toEqual(['a']);
  });

  it('rejects a value that is not a function with ERR_INDEX', () => {
    const store = new ThreadSafeStore<Obj>();
    expect(() => store.addIndexers({ bad: 'nope' as unknown as IndexFunc<Obj> })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INDEX }),
    );
    expect(store.getIndexers()).toEqual({});
  });

  it('adds nothing when an index function fails on an existing item (ERR_INDEX_FUNC)', () => {
    const store = new ThreadSafeStore<Obj>();
    store.add('good', obj('good', '1', ['x']));
    store.add('bad', { metadata: { name: 'bad' }, spec: { poison: true } });
    const poisoned: IndexFunc<Obj> = (o) => {
      if (o.spec?.poison === true) throw new Error('boom');
      return ['ok'];
    };
    const err = thrown(() => store.addIndexers({ fine: byValues, poisoned }));
    expect(err.code).toBe(ErrorCodes.INDEX_FUNC);
    expect(err.message).toContain('"poisoned"');
    expect(err.message).toContain('"bad"');
    expect(Object.keys(store.getIndexers())).toEqual([]);
    expect(() => store.byIndex('fine', 'x')).toThrow(expect.objectContaining({ code: ErrorCodes.INDEX }));
    // the store still works and can take the good indexer afterwards
    store.addIndexers({ fine: byValues });
    expect(store.indexKeys('fine', 'x')).toEqual(['good']);
  });

  it('exposes the indexers as a frozen record that changes identity only when indexers are added', () => {
    const store = new ThreadSafeStore<Obj>({ v: byValues });
    const first = store.getIndexers();
    expect(Object.isFrozen(first)).toBe(true);
    expect(store.getIndexers()).toBe(first);
    store.addIndexers({ namespace: byNamespace });
    expect(store.getIndexers()).not.toBe(first);
    expect(Object.keys(store.getIndexers())).toEqual(['v', 'namespace']);
    expect(Object.keys(first)).toEqual(['v']);
  });
});

describe('ThreadSafeStore atomic writes', () => {
  const poisonable: IndexFunc<Obj> = (o) => {
    if (o.spec?.poison === true) throw new Error('poisoned object');
    return [o.metadata?.name ?? ''];
  };

  function snapshot(store: ThreadSafeStore<Obj>): unknown {
    const indexes: Record<string, Record<string, string[]>> = {};
    for (const name of Object.keys(store.getIndexers())) {
      indexes[name] = {};
      for (const value of sorted(store.listIndexFuncValues(name)))
        indexes[name][value] = sorted(store.indexKeys(name, value));
    }
    return { items: store.list(), keys: store.listKeys(), indexes, rv: store.lastStoreSyncResourceVersion() };
  }

  it('throws ERR_INDEX_FUNC naming the index and key, with the cause, and leaves the store unchanged on update', () => {
    // The first indexer succeeds: its index must not be touched either.
    const store = new ThreadSafeStore<Obj>({ v: byValues, poisonable });
    store.add('a', obj('a', '1', ['x']));
    const before = snapshot(store);

    const err = thrown(() =>
      store.update('a', { ...obj('a', '2', ['y']), spec: { values: ['y'], poison: true } }),
    );
    expect(err.code).toBe(ErrorCodes.INDEX_FUNC);
    expect(err.message).toBe('index function "poisonable" failed for key "a": poisoned object');
    expect(err.details).toEqual({ index: 'poisonable', key: 'a' });
    expect((err.cause as Error).message).toBe('poisoned object');
    expect(snapshot(store)).toEqual(before);
    expect(store.get('a')?.metadata?.resourceVersion).toBe('1');
  });

  it('leaves the store unchanged when adding a new key fails', () => {
    const store = new ThreadSafeStore<Obj>({ v: byValues, poisonable });
    store.add('a', obj('a', '1', ['x']));
    const before = snapshot(store);
    expect(() => store.add('b', { ...obj('b', '2'), spec: { values: ['x'], poison: true } })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INDEX_FUNC }),
    );
    expect(store.has('b')).toBe(false);
    expect(snapshot(store)).toEqual(before);
  });

  it('leaves the store unchanged when the old object cannot be unindexed on update or delete', () => {
    let failOld = false;
    const flaky: IndexFunc<Obj> = (o) => {
      if (failOld && o.metadata?.resourceVersion === '1') throw new Error('cannot index the old object');
      return [o.metadata?.name ?? ''];
    };
    const store = new ThreadSafeStore<Obj>({ v: byValues, flaky });
    store.add('a', obj('a', '1', ['x']));
    const before = snapshot(store);
    failOld = true;
    expect(() => store.update('a', obj('a', '2', ['y']))).toThrow(
      expect.objectContaining({ code: ErrorCodes.INDEX_FUNC }),
    );
    expect(snapshot(store)).toEqual(before);
    expect(() => store.delete('a')).toThrow(expect.objectContaining({ code: ErrorCodes.INDEX_FUNC }));
    expect(() => store.deleteWithObject('a', obj('a', '9'))).toThrow(
      expect.objectContaining({ code: ErrorCodes.INDEX_FUNC }),
    );
    expect(snapshot(store)).toEqual(before);
  });

  it('rejects index functions that return something other than an array of strings', () => {
    const notArray = new ThreadSafeStore<Obj>({ bad: (() => 'x') as unknown as IndexFunc<Obj> });
    const err = thrown(() => notArray.add('a', obj('a')));
    expect(err.code).toBe(ErrorCodes.INDEX_FUNC);
    expect(err.message).toBe('index function "bad" failed for key "a": it did not return an array');
    expect(notArray.size()).toBe(0);

    const notStrings = new ThreadSafeStore<Obj>({ bad: (() => ['x', 1]) as unknown as IndexFunc<Obj> });
    expect(() => notStrings.add('a', obj('a'))).toThrow(/value 1 is not a string/);
    expect(notStrings.size()).toBe(0);
  });

  it('leaves the store unchanged when replace fails, and rebuilds nothing', () => {
    const store = new ThreadSafeStore<Obj>({ v: byValues, poisonable });
    store.add('a', obj('a', '1', ['x']));
    store.bookmark('5');
    const before = snapshot(store);
    const items = new Map<string, Obj>([
      ['b', obj('b', '2', ['y'])],
      ['c', { ...obj('c', '2'), spec: { poison: true } }],
    ]);
    const err = thrown(() => store.replace(items, '10'));
    expect(err.code).toBe(ErrorCodes.INDEX_FUNC);
    expect(err.details).toEqual({ index: 'poisonable', key: 'c' });
    expect(snapshot(store)).toEqual(before);
  });

  it('refuses writes from inside an index function and stays usable', () => {
    let reenter: (() => void) | undefined;
    const store: ThreadSafeStore<Obj> = new ThreadSafeStore<Obj>({
      sneaky: (o) => {
        reenter?.();
        return [o.metadata?.name ?? ''];
      },
    });
    store.add('a', obj('a', '1'));
    reenter = () => store.add('x', obj('x', '1'));
    const err = thrown(() => store.add('b', obj('b', '1')));
    expect(err.code).toBe(ErrorCodes.INDEX_FUNC);
    expect(sorted(store.listKeys())).toEqual(['a']);
    reenter = undefined;
    store.add('b', obj('b', '1'));
    expect(sorted(store.listKeys())).toEqual(['a', 'b']);
    expect(store.indexKeys('sneaky', 'b')).toEqual(['b']);
  });

  it('lets index functions read the store', () => {
    const store: ThreadSafeStore<Obj> = new ThreadSafeStore<Obj>({
      siblings: () => [String(store.size())],
    });
    store.add('a', obj('a'));
    store.add('b', obj('b'));
    expect(store.indexKeys('siblings', '1')).toEqual(['b']);
  });
});

describe('ThreadSafeStore resource version', () => {
  // client-go: TestThreadSafeStoreRV
  it('tracks the resourceVersion of the last object written, not the largest', () => {
    const store = new ThreadSafeStore<unknown>();
    expect(store.lastStoreSyncResourceVersion()).toBe('');
    store.add('a', obj('a', '10'));
    expect(store.lastStoreSyncResourceVersion()).toBe('10');
    store.update('a', obj('a', '12'));
    expect(store.lastStoreSyncResourceVersion()).toBe('12');
    store.add('b', obj('b', '11'));
    expect(store.lastStoreSyncResourceVersion()).toBe('11');
  });

  it('ignores objects without metadata', () => {
    const store = new ThreadSafeStore<unknown>();
    store.add('a', obj('a', '3'));
    store.add('s', 'a plain string');
    store.add('n', 42);
    store.add('o', { spec: {} });
    expect(store.lastStoreSyncResourceVersion()).toBe('3');
  });

  it('records an empty resourceVersion for an object whose metadata has none (as client-go)', () => {
    const store = new ThreadSafeStore<unknown>();
    store.add('a', obj('a', '3'));
    store.add('b', obj('b'));
    expect(store.lastStoreSyncResourceVersion()).toBe('');
  });

  it('records the resourceVersion of an object deleted with deleteWithObject, not of a plain delete', () => {
    const store = new ThreadSafeStore<unknown>();
    store.add('a', obj('a', '1'));
    store.add('b', obj('b', '2'));
    store.delete('a');
    expect(store.lastStoreSyncResourceVersion()).toBe('2');
    store.deleteWithObject('b', obj('b', '7'));
    expect(store.lastStoreSyncResourceVersion()).toBe('7');
    expect(store.size()).toBe(0);
    // a tombstone-like object without metadata leaves it unchanged
    store.deleteWithObject('b', { key: 'b', obj: obj('b', '99') });
    expect(store.lastStoreSyncResourceVersion()).toBe('7');
  });

  it('records the resourceVersion given to replace and bookmark', () => {
    const store = new ThreadSafeStore<unknown>();
    store.add('a', obj('a', '1'));
    store.replace(new Map([['b', obj('b', '50')]]), '100');
    expect(store.lastStoreSyncResourceVersion()).toBe('100');
    store.bookmark('150');
    expect(store.lastStoreSyncResourceVersion()).toBe('150');
    // client-go's Transaction records the last object's RV; here a sequence of writes does the same.
    store.add('c', obj('c', '151'));
    store.delete('c');
    store.add('d', obj('d', '152'));
    expect(store.lastStoreSyncResourceVersion()).toBe('152');
  });

  it('does not record the resourceVersion of a write that failed', () => {
    const store = new ThreadSafeStore<Obj>({
      bad: (o) => (o.metadata?.resourceVersion === '2' ? ({} as string[]) : []),
    });
    store.add('a', obj('a', '1'));
    expect(() => store.add('a', obj('a', '2'))).toThrow(KinformerError);
    expect(store.lastStoreSyncResourceVersion()).toBe('1');
  });
});

describe('ThreadSafeStore contents', () => {
  it('replace swaps the contents and rebuilds every index', () => {
    const store = new ThreadSafeStore<Obj>({ v: byValues });
    store.add('a', obj('a', '1', ['x']));
    store.add('b', obj('b', '1', ['y']));
    const fresh = new Map<string, Obj>([
      ['b', obj('b', '2', ['z'])],
      ['c', obj('c', '2', ['x', 'z'])],
    ]);
    store.replace(fresh, '2');
    expect(sorted(store.listKeys())).toEqual(['b', 'c']);
    expect(store.get('b')?.spec?.values).toEqual(['z']);
    expect(sorted(store.listIndexFuncValues('v'))).toEqual(['x', 'z']);
    expect(store.indexKeys('v', 'x')).toEqual(['c']);
    expect(sorted(store.indexKeys('v', 'z'))).toEqual(['b', 'c']);
    expect(store.indexKeys('v', 'y')).toEqual([]);

    store.replace(new Map(), '3');
    expect(store.size()).toBe(0);
    expect(store.listIndexFuncValues('v')).toEqual([]);
  });

  it('ignores deletes of unknown keys', () => {
    const store = new ThreadSafeStore<Obj>({ v: byValues });
    store.add('a', obj('a', '1', ['x']));
    store.delete('nope');
    store.deleteWithObject('nope', obj('nope', '4'));
    expect(store.listKeys()).toEqual(['a']);
    expect(store.lastStoreSyncResourceVersion()).toBe('4');
  });

  it('returns a new array from list and listKeys on every call', () => {
    const store = new ThreadSafeStore<Obj>();
    const a = obj('a');
    store.add('a', a);
    const list = store.list();
    const keys = store.listKeys();
    expect(list).toEqual([a]);
    expect(list[0]).toBe(a);
    expect(store.list()).not.toBe(list);
    list.push(obj('intruder'));
    keys.push('intruder');
    expect(store.list()).toEqual([a]);
    expect(store.listKeys()).toEqual(['a']);
  });

  it('stores objects by reference and does not freeze them unless asked', () => {
    const store = new ThreadSafeStore<Obj>();
    const a = obj('a');
    store.add('a', a);
    expect(store.get('a')).toBe(a);
    expect(Object.isFrozen(a)).toBe(false);
  });

  it('deep-freezes stored objects with freeze: true, on add, update and replace', () => {
    const store = new ThreadSafeStore<Obj>({}, { freeze: true });
    const a = obj('a', '1', ['x']);
    store.add('a', a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(a.metadata)).toBe(true);
    expect(Object.isFrozen(a.spec?.values)).toBe(true);
    const b = obj('b', '2');
    store.update('b', b);
    expect(Object.isFrozen(b.metadata)).toBe(true);
    const c = obj('c', '3');
    store.replace(new Map([['c', c]]), '3');
    expect(Object.isFrozen(c.metadata)).toBe(true);
  });

  it('does not freeze an object whose write failed', () => {
    const store = new ThreadSafeStore<Obj>(
      {
        bad: () => {
          throw new Error('no');
        },
      },
      { freeze: true },
    );
    const a = obj('a');
    expect(() => store.add('a', a)).toThrow(KinformerError);
    expect(Object.isFrozen(a)).toBe(false);
  });

  it('resync is a no-op', () => {
    const store = new ThreadSafeStore<Obj>({ v: byValues });
    store.add('a', obj('a', '1', ['x']));
    store.resync();
    expect(store.listKeys()).toEqual(['a']);
    expect(store.indexKeys('v', 'x')).toEqual(['a']);
    expect(store.lastStoreSyncResourceVersion()).toBe('1');
  });
});
