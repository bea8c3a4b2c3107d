import { deepFreeze } from '@kinformer/core';
import { dropManagedFields } from './dropManagedFields.js';
import { pod } from '@kinformer/test-tools';

describe('dropManagedFields', () => {
  it('removes metadata.managedFields in place and is idempotent', () => {
    const obj = pod('a', '1');
    obj.metadata!.managedFields = [{ manager: 'kubectl' }];
    expect(dropManagedFields(obj)).toBe(obj);
    expect(obj.metadata!.managedFields).toBeUndefined();
    expect(JSON.stringify(obj)).not.toContain('managedFields');
    expect(dropManagedFields(obj)).toBe(obj);
    expect(obj.metadata?.name).toBe('a');
  });

  it('copies a frozen object instead of mutating it', () => {
    const obj = pod('a', '1');
    obj.metadata!.managedFields = [{ manager: 'kubectl' }];
    deepFreeze(obj);
    const out = dropManagedFields(obj);
    expect(out).not.toBe(obj);
    expect(out.metadata).toEqual({ name: 'a', namespace: 'default', resourceVersion: '1', uid: 'uid-a' });
    expect(obj.metadata?.managedFields).toHaveLength(1);
  });

  it('returns objects without managed fields (or metadata) untouched', () => {
    const noMeta = { kind: 'Thing' };
    expect(dropManagedFields(noMeta)).toBe(noMeta);
  });
});
