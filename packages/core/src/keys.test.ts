import { DeletedFinalStateUnknown, isDeletedFinalStateUnknown } from './deletedFinalStateUnknown.js';
import { ErrorCodes, KinformerError } from './errors.js';
import { deletionHandlingMetaNamespaceKeyFunc, metaNamespaceKeyFunc, splitMetaNamespaceKey } from './keys.js';

describe('metaNamespaceKeyFunc', () => {
  it('keys namespaced objects as namespace/name and cluster-scoped ones as name', () => {
    expect(metaNamespaceKeyFunc({ metadata: { namespace: 'ns', name: 'a' } })).toBe('ns/a');
    expect(metaNamespaceKeyFunc({ metadata: { name: 'node-1' } })).toBe('node-1');
    expect(metaNamespaceKeyFunc({ metadata: { namespace: '', name: 'x' } })).toBe('x');
  });

  it('passes an explicit string key through', () => {
    expect(metaNamespaceKeyFunc('ns/explicit')).toBe('ns/explicit');
  });

  it('throws ERR_KEY_FUNC for an object without metadata or name', () => {
    expect(() => metaNamespaceKeyFunc({ kind: 'Pod' })).toThrow(KinformerError);
    expect(() => metaNamespaceKeyFunc({ metadata: {} })).toThrow(
      expect.objectContaining({ code: ErrorCodes.KEY_FUNC }),
    );
    expect(() => metaNamespaceKeyFunc(null as never)).toThrow(
      expect.objectContaining({ code: ErrorCodes.KEY_FUNC }),
    );
  });
});

describe('deletionHandlingMetaNamespaceKeyFunc', () => {
  it('uses the key of a tombstone', () => {
    const tomb = new DeletedFinalStateUnknown('ns/gone', { metadata: { namespace: 'other', name: 'x' } });
    expect(deletionHandlingMetaNamespaceKeyFunc(tomb)).toBe('ns/gone');
    expect(deletionHandlingMetaNamespaceKeyFunc({ metadata: { namespace: 'a', name: 'b' } })).toBe('a/b');
  });
});

describe('splitMetaNamespaceKey', () => {
  it('splits one- and two-part keys', () => {
    expect(splitMetaNamespaceKey('name')).toEqual({ name: 'name' });
    expect(splitMetaNamespaceKey('ns/name')).toEqual({ namespace: 'ns', name: 'name' });
    expect(splitMetaNamespaceKey('/name')).toEqual({ name: 'name' });
  });

  it('rejects other shapes with ERR_INVALID_KEY naming the key and position', () => {
    const err = (() => {
      try {
        splitMetaNamespaceKey('a/b/c');
      } catch (e) {
        return e as KinformerError;
      }
      throw new Error('expected a throw');
    })();
    expect(err.code).toBe(ErrorCodes.INVALID_KEY);
    expect(err.message).toContain('"a/b/c"');
    expect(err.details).toEqual({ key: 'a/b/c', position: 3 });
    expect(() => splitMetaNamespaceKey('')).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_KEY }),
    );
    expect(() => splitMetaNamespaceKey('ns/')).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_KEY }),
    );
  });
});

describe('DeletedFinalStateUnknown', () => {
  it('keeps the key and the last known object, and is told apart from objects by isDeletedFinalStateUnknown', () => {
    const last = { metadata: { namespace: 'ns', name: 'gone' } };
    const tomb = new DeletedFinalStateUnknown('ns/gone', last);
    expect(tomb.key).toBe('ns/gone');
    expect(tomb.obj).toBe(last);
    expect(isDeletedFinalStateUnknown(tomb)).toBe(true);
    expect(isDeletedFinalStateUnknown(last)).toBe(false);
    expect(isDeletedFinalStateUnknown({ key: 'ns/gone', obj: last })).toBe(false);
    expect(isDeletedFinalStateUnknown(null)).toBe(false);
  });
});
