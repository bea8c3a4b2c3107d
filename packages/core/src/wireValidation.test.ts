import { ErrorCodes, isKinformerError } from './errors.js';
import { jsonNestingExceeds, MAX_OBJECT_DEPTH, objectDepth } from './wireValidation.js';
import { objectTooDeepError, validateResourceVersion } from './wireValidation.js';

function nested(depth: number): string {
  return '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
}

describe('MAX_OBJECT_DEPTH', () => {
  it("is Go encoding/json's maxNestingDepth (10000)", () => {
    // encoding/json/scanner.go: `const maxNestingDepth = 10000`
    expect(MAX_OBJECT_DEPTH).toBe(10_000);
  });
});

describe('jsonNestingExceeds', () => {
  it('accepts text nested exactly to the limit and reports where the limit is first exceeded', () => {
    expect(jsonNestingExceeds(nested(MAX_OBJECT_DEPTH))).toBe(-1);
    const text = nested(MAX_OBJECT_DEPTH + 1);
    const at = jsonNestingExceeds(text);
    expect(at).toBeGreaterThan(0);
    expect(text[at]).toBe('{');
    expect(jsonNestingExceeds(nested(100_000))).toBeGreaterThan(0);
  });

  it('counts arrays and objects alike, and ignores brackets inside strings (escaped quotes too)', () => {
    expect(jsonNestingExceeds('[[[1]]]', 3)).toBe(-1);
    expect(jsonNestingExceeds('[[[[1]]]]', 3)).toBe(3);
    expect(jsonNestingExceeds('{"a":[{"b":[]}]}', 3)).toBe(11);
    expect(jsonNestingExceeds(`{"s":"${'['.repeat(50)}"}`, 3)).toBe(-1);
    expect(jsonNestingExceeds(`{"s":"\\"${'['.repeat(50)}"}`, 3)).toBe(-1);
    expect(jsonNestingExceeds(`{"s":"${'['.repeat(3 * MAX_OBJECT_DEPTH)}"}`)).toBe(-1);
  });

  it('does not scan text too short to exceed the limit', () => {
    expect(jsonNestingExceeds('[[[[', 4)).toBe(-1);
    expect(jsonNestingExceeds('[[[[[', 4)).toBe(4);
  });
});

describe('objectDepth', () => {
  it('measures the nesting of parsed values without recursion, whatever the depth', () => {
    expect(objectDepth('x')).toBe(0);
    expect(objectDepth(null)).toBe(0);
    expect(objectDepth({})).toBe(1);
    expect(objectDepth({ a: [1, { b: {} }] })).toBe(4);
    expect(objectDepth(JSON.parse(nested(MAX_OBJECT_DEPTH)))).toBe(MAX_OBJECT_DEPTH);
    expect(objectDepth(JSON.parse(nested(100_000)))).toBe(MAX_OBJECT_DEPTH + 1);
  });
});

describe('objectTooDeepError', () => {
  it('is ERR_OBJECT_TOO_DEEP with the limit and the context in details', () => {
    const err = objectTooDeepError('watch event', { key: 'ns/a' });
    expect(isKinformerError(err, ErrorCodes.OBJECT_TOO_DEEP)).toBe(true);
    expect(err.details).toEqual({ key: 'ns/a', maxDepth: MAX_OBJECT_DEPTH });
    expect(err.message).toContain('10000');
  });
});

describe('validateResourceVersion', () => {
  it('returns strings and absent values unchanged', () => {
    expect(validateResourceVersion('123', 'x')).toBe('123');
    expect(validateResourceVersion('', 'x')).toBe('');
    expect(validateResourceVersion(undefined, 'x')).toBeUndefined();
  });

  it.each([
    ['a number', 123, 'number'],
    ['Infinity (raw 1e309)', JSON.parse('1e309') as number, 'number'],
    ['null', null, 'null'],
    ['an object', { v: '1' }, 'object'],
    ['an array', ['1'], 'array'],
    ['a boolean', true, 'boolean'],
  ])('rejects %s with ERR_BAD_RESOURCE_VERSION naming only its type', (_name, value, type) => {
    let thrown: unknown;
    try {
      validateResourceVersion(value, 'list metadata', { resource: 'pods.v1' });
    } catch (err) {
      thrown = err;
    }
    expect(isKinformerError(thrown, ErrorCodes.BAD_RESOURCE_VERSION)).toBe(true);
    const err = thrown as Error & { details?: unknown };
    expect(err.message).toBe(`list metadata: resourceVersion must be a string, got ${type}`);
    expect(err.details).toEqual({ resource: 'pods.v1', resourceVersionType: type });
  });
});
