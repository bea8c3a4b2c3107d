import { ErrorCodes } from '@kinformer/core';
import type { KubeObject } from '@kinformer/core';
import { newIndexer, newStore } from './cache.js';
import { indexFuncToKeyFuncAdapter, metaNamespaceIndexFunc, NAMESPACE_INDEX } from './namespaceIndex.js';

describe('metaNamespaceIndexFunc', () => {
  it('indexes by namespace, and cluster-scoped objects under the empty string', () => {
    expect(NAMESPACE_INDEX).toBe('namespace');
    expect(metaNamespaceIndexFunc({ metadata: { namespace: 'ns', name: 'a' } })).toEqual(['ns']);
    expect(metaNamespaceIndexFunc({ metadata: { name: 'node-1' } })).toEqual(['']);
  });

  it('throws ERR_INDEX_FUNC for an object without metadata', () => {
    expect(() => metaNamespaceIndexFunc({ kind: 'Pod' })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INDEX_FUNC }),
    );
    expect(() => metaNamespaceIndexFunc(null as unknown as KubeObject)).toThrow(
      expect.objectContaining({ code: ErrorCodes.INDEX_FUNC }),
    );
  });

  it('groups objects by namespace in an indexer', () => {
    const indexer = newIndexer<KubeObject>(undefined, { [NAMESPACE_INDEX]: metaNamespaceIndexFunc });
    indexer.add({ metadata: { namespace: 'a', name: 'x' } });
    indexer.add({ metadata: { namespace: 'a', name: 'y' } });
    indexer.add({ metadata: { namespace: 'b', name: 'x' } });
    indexer.add({ metadata: { name: 'cluster' } });
    expect([...indexer.indexKeys(NAMESPACE_INDEX, 'a')].sort()).toEqual(['a/x', 'a/y']);
    expect(indexer.indexKeys(NAMESPACE_INDEX, '')).toEqual(['cluster']);
    expect([...indexer.listIndexFuncValues(NAMESPACE_INDEX)].sort()).toEqual(['', 'a', 'b']);
  });
});

describe('indexFuncToKeyFuncAdapter', () => {
  it('uses the single index value as the key', () => {
    const keyFunc = indexFuncToKeyFuncAdapter(metaNamespaceIndexFunc);
    expect(keyFunc({ metadata: { namespace: 'ns', name: 'a' } })).toBe('ns');
    const store = newStore<KubeObject>(keyFunc);
    store.add({ metadata: { namespace: 'ns', name: 'a' } });
    store.add({ metadata: { namespace: 'ns', name: 'b' } });
    expect(store.listKeys()).toEqual(['ns']);
    expect(store.getByKey('ns')?.metadata?.name).toBe('b');
  });

  it('throws ERR_KEY_FUNC when the index function yields no value or several', () => {
    const none = indexFuncToKeyFuncAdapter<string>(() => []);
    const several = indexFuncToKeyFuncAdapter<string>(() => ['a', 'b']);
    expect(() => none('x')).toThrow(expect.objectContaining({ code: ErrorCodes.KEY_FUNC }));
    expect(() => several('x')).toThrow(
      expect.objectContaining({
        code: ErrorCodes.KEY_FUNC,
        message: expect.stringContaining('too many keys: a, b'),
      }),
    );
  });
});
