import { groupVersionString, gvrString, hasObjectMeta, resourceVersionOf } from './types.js';

describe('object helpers', () => {
  it('hasObjectMeta is true only for non-null objects with an object metadata', () => {
    expect(hasObjectMeta({ metadata: {} })).toBe(true);
    expect(hasObjectMeta({ metadata: { name: 'a' } })).toBe(true);
    expect(hasObjectMeta({ metadata: null })).toBe(false);
    expect(hasObjectMeta({ metadata: 'x' })).toBe(false);
    expect(hasObjectMeta({ kind: 'Pod' })).toBe(false);
    expect(hasObjectMeta(null)).toBe(false);
    expect(hasObjectMeta('ns/name')).toBe(false);
  });

  it('resourceVersionOf reads metadata.resourceVersion', () => {
    expect(resourceVersionOf({ metadata: { resourceVersion: '42' } })).toBe('42');
    expect(resourceVersionOf({ metadata: {} })).toBeUndefined();
    expect(resourceVersionOf(undefined)).toBeUndefined();
  });
});

describe('group/version/resource strings', () => {
  it('groupVersionString is the API path segment: v1 for the core group, group/version otherwise', () => {
    expect(groupVersionString({ version: 'v1' })).toBe('v1');
    expect(groupVersionString({ group: '', version: 'v1' })).toBe('v1');
    expect(groupVersionString({ group: 'apps', version: 'v1' })).toBe('apps/v1');
  });

  it('gvrString is resource.version[.group]', () => {
    expect(gvrString({ version: 'v1', resource: 'pods' })).toBe('pods.v1');
    expect(gvrString({ group: 'apps', version: 'v1', resource: 'deployments' })).toBe('deployments.v1.apps');
  });
});
