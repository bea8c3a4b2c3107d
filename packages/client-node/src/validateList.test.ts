import { ErrorCodes } from '@kinformer/core';
import { validateListResourceVersions } from './validateList.js';

const details = { resource: 'pods.v1', verb: 'list' };
const item = (rv: unknown): unknown => ({ metadata: { name: 'a', resourceVersion: rv } });

describe('validateListResourceVersions', () => {
  it('accepts string and absent resourceVersions', () => {
    expect(() =>
      validateListResourceVersions(
        { metadata: { resourceVersion: '9' }, items: [item('1'), item(undefined), { metadata: {} }] },
        details,
      ),
    ).not.toThrow();
    expect(() => validateListResourceVersions({ items: [] }, details)).not.toThrow();
  });

  it.each([
    ['a number', 9],
    ['null', null],
    ['Infinity (raw 1e309)', JSON.parse('1e309') as unknown],
  ])('rejects list metadata whose resourceVersion is %s with ERR_BAD_RESOURCE_VERSION', (_name, rv) => {
    expect(() =>
      validateListResourceVersions({ metadata: { resourceVersion: rv }, items: [] }, details),
    ).toThrow(
      expect.objectContaining({
        code: ErrorCodes.BAD_RESOURCE_VERSION,
        details: expect.objectContaining(details),
      }),
    );
  });

  it('rejects an item whose resourceVersion is not a string, naming its index', () => {
    expect(() =>
      validateListResourceVersions(
        { metadata: { resourceVersion: '9' }, items: [item('1'), item(2)] },
        details,
      ),
    ).toThrow(
      expect.objectContaining({
        code: ErrorCodes.BAD_RESOURCE_VERSION,
        message: 'list item 1: resourceVersion must be a string, got number',
        details: expect.objectContaining({ item: 1 }),
      }),
    );
  });
});
