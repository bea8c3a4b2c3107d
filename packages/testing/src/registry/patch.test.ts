import { applyJsonPatch, applyMergePatch, PatchError, patchTypeOf } from './patch.js';

describe('merge patch (RFC 7386)', () => {
  test('merges objects, deletes keys set to null, replaces arrays and scalars, leaves the target alone', () => {
    const target = { a: { b: 1, c: [1, 2] }, d: 'x', e: true };
    const result = applyMergePatch(target, { a: { b: null, c: [3], n: { m: 1 } }, d: 'y', e: null });
    expect(result).toEqual({ a: { c: [3], n: { m: 1 } }, d: 'y' });
    expect(target).toEqual({ a: { b: 1, c: [1, 2] }, d: 'x', e: true });
    expect(applyMergePatch({ a: 1 }, [1])).toEqual([1]);
  });
});

describe('JSON patch (RFC 6902)', () => {
  test('add (including "-" and inserts), remove, replace, move, copy and test', () => {
    const doc = { list: [1, 2], obj: { 'a/b': 1, 'c~d': 2 } };
    const out = applyJsonPatch(doc, [
      { op: 'add', path: '/list/-', value: 3 },
      { op: 'add', path: '/list/0', value: 0 },
      { op: 'remove', path: '/obj/a~1b' },
      { op: 'replace', path: '/obj/c~0d', value: 'two' },
      { op: 'copy', from: '/list', path: '/copy' },
      { op: 'move', from: '/obj/c~0d', path: '/moved' },
      { op: 'test', path: '/list', value: [0, 1, 2, 3] },
    ]);
    expect(out).toEqual({ list: [0, 1, 2, 3], obj: {}, copy: [0, 1, 2, 3], moved: 'two' });
  });

  test('a failing test or a missing path is a 422 PatchError; a non-array patch is 400', () => {
    expect(() => applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }])).toThrow(
      expect.objectContaining({ httpStatus: 422 }),
    );
    expect(() => applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '/b', value: 2 }])).toThrow(PatchError);
    expect(() => applyJsonPatch({ a: 1 }, [{ op: 'remove', path: '/x/y' }])).toThrow(
      expect.objectContaining({ httpStatus: 422 }),
    );
    expect(() => applyJsonPatch({ a: 1 }, { op: 'add' })).toThrow(
      expect.objectContaining({ httpStatus: 400 }),
    );
    expect(() => applyJsonPatch({ a: 1 }, [{ op: 'frobnicate', path: '/a' }])).toThrow(
      expect.objectContaining({ httpStatus: 400 }),
    );
  });
});

test('patch types come from the Content-Type', () => {
  expect(patchTypeOf('application/merge-patch+json; charset=utf-8')).toBe('merge');
  expect(patchTypeOf('application/json-patch+json')).toBe('json');
  expect(patchTypeOf('application/strategic-merge-patch+json')).toBe('strategic');
  expect(patchTypeOf('application/apply-patch+yaml')).toBeUndefined();
  expect(patchTypeOf(undefined)).toBeUndefined();
});
