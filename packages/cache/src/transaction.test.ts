import { ErrorCodes, KinformerError } from '@kinformer/core';
import { thrown } from '@kinformer/test-tools';
import type { KubeObject } from '@kinformer/core';
import { newIndexer, newStore } from './cache.js';
import type { IndexFunc } from './store.js';
import { ThreadSafeStore } from './threadSafeStore.js';
import { TransactionError } from './transaction.js';
import type { ThreadSafeStoreTransaction, Transaction } from './transaction.js';

// Ports of client-go's TestCacheTransactionShouldIndexErrors (store_test.go) and the transaction part
// of TestThreadSafeStoreRV (thread_safe_store_test.go), plus kinformer's own transaction tests.

/** The {@link TransactionError} `fn` throws. */
const transactionError = (fn: () => unknown): TransactionError => thrown(fn, TransactionError);

interface Obj extends KubeObject {
  spec?: { group?: string; poison?: boolean };
}

function obj(name: string, rv: string, group?: string, poison?: boolean): Obj {
  return {
    metadata: { namespace: 'ns', name, resourceVersion: rv },
    ...(group === undefined && poison === undefined
      ? {}
      : { spec: { ...(group === undefined ? {} : { group }), ...(poison === undefined ? {} : { poison }) } }),
  };
}

const byGroup: IndexFunc<Obj> = (o) => {
  if (o.spec?.poison === true) throw new Error('poisoned');
  return o.spec?.group === undefined ? [] : [o.spec.group];
};

describe('store.transaction reports the entries it could not key (TestCacheTransactionShouldIndexErrors)', () => {
  const successObj1 = 1;
  const successObj2 = 2;
  const failObj1 = 3;
  const failObj2 = 4;
  const keyFunc = (o: number): string => {
    if (o === successObj1 || o === successObj2) return String(o);
    throw new KinformerError(ErrorCodes.KEY_FUNC, 'test error');
  };
  const txnsOf = (objs: number[]): Transaction<number>[] => objs.map((object) => ({ type: 'Add', object }));

  it('txn all success objects should work', () => {
    const store = newStore<number>(keyFunc);
    expect(() => store.transaction(txnsOf([successObj1, successObj2]))).not.toThrow();
    expect(store.list().sort()).toEqual([1, 2]);
  });

  it('txn all fail objects should work', () => {
    const store = newStore<number>(keyFunc);
    const err = transactionError(() => store.transaction(txnsOf([failObj1, failObj2])));
    expect(err.successfulIndices).toEqual([]);
    expect(err.totalTransactions).toBe(2);
    expect(err.errors).toHaveLength(2);
    expect(err.code).toBe(ErrorCodes.TRANSACTION);
    expect(err.message).toContain('failed to execute (2/2) transactions');
    expect(store.size()).toBe(0);
  });

  it('txn mix success and fail objects should work', () => {
    const store = newStore<number>(keyFunc);
    const err = transactionError(() =>
      store.transaction(txnsOf([successObj1, failObj1, successObj2, failObj2])),
    );
    expect(err.successfulIndices).toEqual([0, 2]);
    expect(err.totalTransactions).toBe(4);
    expect(err.errors.map((e) => (e as KinformerError).code)).toEqual([
      ErrorCodes.KEY_FUNC,
      ErrorCodes.KEY_FUNC,
    ]);
    expect(err.message).toContain('failed to execute (2/4) transactions');
    expect(store.list().sort()).toEqual([1, 2]);
  });
});

describe('ThreadSafeStore.transaction', () => {
  it('records the resourceVersion of the last entry, not the largest (TestThreadSafeStoreRV)', () => {
    const store = new ThreadSafeStore<Obj>();
    store.add('key1', obj('a', '60'));
    const txns: ThreadSafeStoreTransaction<Obj>[] = [
      { type: 'Update', object: obj('b', '40'), key: 'key9' },
      { type: 'Update', object: obj('c', '30'), key: 'key10' },
      { type: 'Update', object: obj('d', '50'), key: 'key11' },
    ];
    store.transaction(txns);
    expect(store.lastStoreSyncResourceVersion()).toBe('50');
    expect(store.listKeys().sort()).toEqual(['key1', 'key10', 'key11', 'key9']);
  });

  it('applies adds, updates and deletes in order, keeping every index right', () => {
    const store = new ThreadSafeStore<Obj>({ byGroup });
    store.add('a', obj('a', '1', 'g1'));
    store.add('b', obj('b', '2', 'g1'));
    store.transaction([
      { type: 'Update', object: obj('a', '3', 'g2'), key: 'a' },
      { type: 'Delete', object: obj('b', '4'), key: 'b' },
      { type: 'Add', object: obj('c', '5', 'g1'), key: 'c' },
      { type: 'Update', object: obj('c', '6', 'g3'), key: 'c' },
    ]);
    expect(store.get('a')?.metadata?.resourceVersion).toBe('3');
    expect(store.has('b')).toBe(false);
    expect(store.get('c')?.metadata?.resourceVersion).toBe('6');
    expect(store.indexKeys('byGroup', 'g1')).toEqual([]);
    expect(store.indexKeys('byGroup', 'g2')).toEqual(['a']);
    expect(store.indexKeys('byGroup', 'g3')).toEqual(['c']);
    expect(store.listIndexFuncValues('byGroup').sort()).toEqual(['g2', 'g3']);
    expect(store.lastStoreSyncResourceVersion()).toBe('6');
  });

  it('skips an entry whose index function throws, applies the others, then throws a TransactionError', () => {
    const store = new ThreadSafeStore<Obj>({ byGroup });
    store.add('a', obj('a', '1', 'g1'));
    const err = transactionError(() =>
      store.transaction([
        { type: 'Update', object: obj('a', '2', 'g2'), key: 'a' },
        { type: 'Add', object: obj('b', '3', undefined, true), key: 'b' },
        { type: 'Add', object: obj('c', '4', 'g2'), key: 'c' },
      ]),
    );
    expect(err.successfulIndices).toEqual([0, 2]);
    expect(err.totalTransactions).toBe(3);
    expect((err.errors[0] as KinformerError).code).toBe(ErrorCodes.INDEX_FUNC);
    expect(err.message).toContain('failed to execute (1/3) transactions');
    expect(store.has('b')).toBe(false);
    expect(store.indexKeys('byGroup', 'g2').sort()).toEqual(['a', 'c']);
    expect(store.lastStoreSyncResourceVersion()).toBe('4');
  });

  it('skips an entry of unknown type with ERR_INVALID_OPTION', () => {
    const store = new ThreadSafeStore<Obj>();
    const err = transactionError(() =>
      store.transaction([{ type: 'Upsert' as 'Add', object: obj('a', '1'), key: 'a' }]),
    );
    expect(err.successfulIndices).toEqual([]);
    expect((err.errors[0] as KinformerError).code).toBe(ErrorCodes.INVALID_OPTION);
    expect(store.size()).toBe(0);
  });

  it('lets no index function observe the store mid-transaction through a write, and stays usable', () => {
    const store = new ThreadSafeStore<Obj>({
      sneaky: (o) => {
        if (o.spec?.poison === true) store.add('x', obj('x', '0'));
        return [];
      },
    });
    const err = transactionError(() =>
      store.transaction([{ type: 'Add', object: obj('a', '1', undefined, true), key: 'a' }]),
    );
    expect((err.errors[0] as KinformerError).code).toBe(ErrorCodes.INDEX_FUNC);
    store.transaction([{ type: 'Add', object: obj('b', '2'), key: 'b' }]);
    expect(store.listKeys()).toEqual(['b']);
  });

  it('is a no-op for no entries and keeps the resourceVersion', () => {
    const store = new ThreadSafeStore<Obj>();
    store.bookmark('9');
    store.transaction([]);
    expect(store.lastStoreSyncResourceVersion()).toBe('9');
  });

  it('freezes stored objects when asked', () => {
    const store = new ThreadSafeStore<Obj>({}, { freeze: true });
    const o = obj('a', '1');
    store.transaction([{ type: 'Add', object: o, key: 'a' }]);
    expect(Object.isFrozen(o)).toBe(true);
  });
});

describe('indexer.transaction', () => {
  it('reports key and index failures together, in entry order, with the positions of the applied entries', () => {
    const indexer = newIndexer<Obj>(undefined, { byGroup });
    const unkeyable = { metadata: {} } as Obj;
    const err = transactionError(() =>
      indexer.transaction([
        { type: 'Add', object: obj('a', '1', 'g1') },
        { type: 'Add', object: obj('b', '2', undefined, true) }, // index function throws
        { type: 'Add', object: unkeyable }, // key function throws
        { type: 'Add', object: obj('c', '3', 'g1') },
      ]),
    );
    expect(err.successfulIndices).toEqual([0, 3]);
    expect(err.totalTransactions).toBe(4);
    expect(err.errors.map((e) => (e as KinformerError).code)).toEqual([
      ErrorCodes.INDEX_FUNC,
      ErrorCodes.KEY_FUNC,
    ]);
    expect(
      indexer
        .byIndex('byGroup', 'g1')
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(['a', 'c']);
    expect(indexer.lastStoreSyncResourceVersion()).toBe('3');
  });

  it('deletes by the object’s key, tombstones included', () => {
    const indexer = newIndexer<Obj>();
    indexer.add(obj('a', '1'));
    indexer.add(obj('b', '2'));
    indexer.transaction([
      { type: 'Delete', object: obj('a', '5') },
      { type: 'Update', object: obj('b', '6') },
    ]);
    expect(indexer.listKeys()).toEqual(['ns/b']);
    expect(indexer.lastStoreSyncResourceVersion()).toBe('6');
  });
});
