import fc from 'fast-check';

import {
  labelSelectorFromObject,
  parseLabelSelector,
  type LabelRequirement,
  type LabelSelectorObject,
  type LabelSelectorOperator,
} from './labelSelector.js';
import { expectRoundTrip, invalidSelector, thrown } from './selector.test.helpers.js';

/** The KinformerError `fn` throws (fails the test when it does not throw one). */

function req(key: string, operator: LabelSelectorOperator, values: string[] = []): LabelRequirement {
  return { key, operator, values };
}

describe('parseLabelSelector: Kubernetes grammar (apimachinery labels/selector_test.go)', () => {
  // TestSelectorParse: good strings restring to themselves without spaces. (`x>1`, `x>1,z<5` are not supported yet.)
  it.each(['x=a,y=b,z=c', '', 'x!=a,y=b', 'x=', 'x= ', 'x=,z= ', 'x= ,z= ', '!x'])(
    'parses %j and prints it back without spaces',
    (text) => {
      expect(parseLabelSelector(text).toString()).toBe(text.replaceAll(' ', ''));
    },
  );

  // TestSelectorParse: bad strings.
  it.each(['x=a||y=b', 'x==a==b', '!x=a', 'x<a'])('rejects %j', (text) => {
    invalidSelector(() => parseLabelSelector(text));
  });

  // TestDeterministicParse
  it('prints the same text whatever the order of the requirements', () => {
    expect(parseLabelSelector('x=a,a=x').toString()).toBe(parseLabelSelector('a=x,x=a').toString());
    expect(parseLabelSelector('x=a,a=x').toString()).toBe('a=x,x=a');
  });

  // TestSetSelectorParser: valid inputs and the requirements they give (sorted by key, values sorted).
  it.each<[string, LabelRequirement[]]>([
    ['', []],
    ['\rx', [req('x', 'exists')]],
    ['this-is-a-dns.domain.com/key-with-dash', [req('this-is-a-dns.domain.com/key-with-dash', 'exists')]],
    [
      'this-is-another-dns.domain.com/key-with-dash in (so,what)',
      [req('this-is-another-dns.domain.com/key-with-dash', 'in', ['so', 'what'])],
    ],
    [
      '0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)',
      [req('0.1.2.domain/99', 'notin', ['10.10.100.1', 'tick.tack.clock'])],
    ],
    ['foo  in\t (abc)', [req('foo', 'in', ['abc'])]],
    ['x notin\n (abc)', [req('x', 'notin', ['abc'])]],
    ['x  notin\t\t\t(abc,def)', [req('x', 'notin', ['abc', 'def'])]],
    ['x in (abc,def)', [req('x', 'in', ['abc', 'def'])]],
    ['x in (abc,)', [req('x', 'in', ['', 'abc'])]],
    ['x in ()', [req('x', 'in', [''])]],
    [
      'x notin (abc,def),bar,z in (),w',
      [req('bar', 'exists'), req('w', 'exists'), req('x', 'notin', ['abc', 'def']), req('z', 'in', [''])],
    ],
    ['x,y in (a)', [req('x', 'exists'), req('y', 'in', ['a'])]],
    ['x=a', [req('x', '=', ['a'])]],
    ['x==a', [req('x', '=', ['a'])]],
    ['x=a,y!=b', [req('x', '=', ['a']), req('y', '!=', ['b'])]],
    ['x=a,y!=b,z in (h,i,j)', [req('x', '=', ['a']), req('y', '!=', ['b']), req('z', 'in', ['h', 'i', 'j'])]],
    ['x notin ( )', [req('x', 'notin', [''])]],
    ['x notin (, a)', [req('x', 'notin', ['', 'a'])]],
    ['a ', [req('a', 'exists')]],
    ['a in (x,y,notin, z,in)', [req('a', 'in', ['in', 'notin', 'x', 'y', 'z'])]],
    ['a in (b,a,b,,)', [req('a', 'in', ['', 'a', 'b'])]],
    ['notin=in', [req('notin', '=', ['in'])]],
    ['in in (in)', [req('in', 'in', ['in'])]],
    ['!in', [req('in', '!')]],
    ['  ! x  ,  y  ', [req('x', '!'), req('y', 'exists')]],
    ['x=a,x!=b,a', [req('a', 'exists'), req('x', '=', ['a']), req('x', '!=', ['b'])]],
  ])('parses %j', (text, expected) => {
    const selector = parseLabelSelector(text);
    expect(selector.requirements).toEqual(expected);
    expect(selector.isEmpty()).toBe(expected.length === 0);
  });

  // TestSetSelectorParser: invalid inputs.
  it.each([
    'x=a||y=b',
    'x,y,',
    ',x,y',
    'x nott in (y)',
    'a in (xyz),',
    'a in (xyz)b notin ()',
    'a in (xyz abc)',
    'a notin(',
    'a (',
    '(',
  ])('rejects %j', (text) => {
    invalidSelector(() => parseLabelSelector(text));
  });

  it.each([
    'x in',
    'x in a',
    'x in (a',
    'x in (a,',
    'x in (a))',
    'x in (=)',
    'x=(',
    'x!=,',
    '!',
    '!!x',
    '!x y',
    'x,,y',
    ',',
    'x y',
    '=a',
    'x=a=b',
    'x = a b',
  ])('rejects the malformed %j', (text) => {
    const err = invalidSelector(() => parseLabelSelector(text));
    expect(err.details?.selector).toBe(text);
    const position = err.details?.position as number;
    expect(position).toBeGreaterThanOrEqual(0);
    expect(position).toBeLessThanOrEqual(text.length);
  });

  // TestToString: the canonical text of each requirement kind.
  it.each<[string, string]>([
    ['x in (abc,def),y notin (jkl),z', 'x in (abc,def),y notin (jkl),z'],
    ['x notin (def,abc),y!=jkl,!z', 'x notin (abc,def),y!=jkl,!z'],
    ['x notin (abc),y in (jkl,mno),z notin ()', 'x notin (abc),y in (jkl,mno),z notin ()'],
    ['x=abc,y==jkl,z!=a,z', 'x=abc,y=jkl,z!=a,z'],
    ['  z ,\t!y,x  in  ( b , a )', 'x in (a,b),!y,z'],
  ])('prints %j as %j', (text, canonical) => {
    expect(parseLabelSelector(text).toString()).toBe(canonical);
    expect(parseLabelSelector(canonical).toString()).toBe(canonical);
  });

  it('treats the empty and the all-whitespace string as the selector that matches everything', () => {
    for (const text of ['', ' ', '\t\r\n ']) {
      const selector = parseLabelSelector(text);
      expect(selector.isEmpty()).toBe(true);
      expect(selector.toString()).toBe('');
      expect(selector.matches({ a: 'b' })).toBe(true);
      expect(selector.matches(undefined)).toBe(true);
    }
  });
});

describe('parseLabelSelector: keys and values', () => {
  it.each([
    'a',
    '1foo',
    '1234',
    'A.b-c_D',
    'a'.repeat(63),
    'example.com/MyName',
    'k8s.io/app',
    'app.kubernetes.io/name',
    `${'a'.repeat(253)}/x`,
    `${'a'.repeat(63)}.${'b'.repeat(63)}/name`,
  ])('accepts the key %j', (key) => {
    expect(parseLabelSelector(key).requirements).toEqual([req(key, 'exists')]);
  });

  it.each([
    ['a'.repeat(64), 'no more than 63'],
    ['a'.repeat(254), 'no more than 63'],
    ['-a', 'start and end with an alphanumeric'],
    ['a-', 'start and end with an alphanumeric'],
    ['_a', 'start and end with an alphanumeric'],
    ['.a', 'start and end with an alphanumeric'],
    ['a@b', 'alphanumeric'],
    ['Example.com/x', 'lowercase RFC 1123 subdomain'],
    ['exa_mple.com/x', 'lowercase RFC 1123 subdomain'],
    ['-example.com/x', 'lowercase RFC 1123 subdomain'],
    ['example..com/x', 'lowercase RFC 1123 subdomain'],
    [`${'a'.repeat(254)}/x`, 'no more than 253'],
    ['/x', 'prefix part must be non-empty'],
    ['x/', 'name part must be non-empty'],
    ['a/b/c', "at most one '/'"],
    ['example.com/-x', 'name part'],
  ])('rejects the key %j, naming it and its position', (key, why) => {
    const text = `ok, ${key}=v`;
    const err = invalidSelector(() => parseLabelSelector(text));
    expect(err.message).toContain(`'${key}'`);
    expect(err.message).toContain(why);
    expect(err.message).toContain('position 4');
    expect(err.details).toEqual({ selector: text, position: 4 });
  });

  it.each(['', 'a', 'A', '1', 'a.b_c-d', 'a'.repeat(63), 'in', 'notin', '0.1.2'])(
    'accepts the value %j',
    (value) => {
      expect(parseLabelSelector(`k=${value}`).requirements).toEqual([req('k', '=', [value])]);
      expect(parseLabelSelector(`k in (${value})`).requirements).toEqual([req('k', 'in', [value])]);
    },
  );

  it.each([
    ['a'.repeat(64), 'no more than 63'],
    ['-a', 'must be empty or'],
    ['a-', 'must be empty or'],
    ['a/b', 'must be empty or'],
    ['a@b', 'must be empty or'],
    ['ü', 'must be empty or'],
  ])('rejects the value %j, naming it and its position', (value, why) => {
    for (const [text, position] of [
      [`k=${value}`, 2],
      [`k != ${value}`, 5],
      [`k in (a, ${value})`, 9],
    ] as const) {
      const err = thrown(() => parseLabelSelector(text));
      expect(err.message).toContain(`'${value}'`);
      expect(err.message).toContain(why);
      expect(err.details).toEqual({ selector: text, position });
    }
  });
});

describe('parseLabelSelector: errors', () => {
  it.each<[string, number, string]>([
    ['x in (a', 7, "found the end of the selector at position 7; expected ',' or ')'"],
    ['a in (xyz abc)', 10, "found 'abc' at position 10; expected ',' or ')'"],
    [',x', 0, "found ',' at position 0; expected '!', a label key or the end"],
    ['x,y,', 4, "found the end of the selector at position 4; expected '!' or a label key after ','"],
    ['x=a b', 4, "found 'b' at position 4; expected ',' or the end"],
    ['x y', 2, "found 'y' at position 2; expected one of in, notin, =, ==, !="],
    ['!x=a', 2, "found '=' at position 2; expected ',' or the end"],
    ['x in a', 5, "found 'a' at position 5; expected '('"],
    ['x in (=)', 6, "found '=' at position 6; expected ',', ')' or a label value"],
    ['x=a==b', 3, "found '==' at position 3; expected ',' or the end"],
  ])('reports %j at position %d', (text, position, message) => {
    const err = invalidSelector(() => parseLabelSelector(text));
    expect(err.name).toBe('KinformerError');
    expect(err.message).toBe(`invalid label selector ${JSON.stringify(text)}: ${message}`);
    expect(err.details).toEqual({ selector: text, position });
  });

  it('parses and matches the integer comparisons k>n and k<n as apimachinery does', () => {
    const gt = parseLabelSelector('x>1');
    expect(gt.requirements).toEqual([{ key: 'x', operator: 'gt', values: ['1'] }]);
    expect(gt.toString()).toBe('x>1');
    expect(gt.matches({ x: '2' })).toBe(true);
    expect(gt.matches({ x: '1' })).toBe(false);
    expect(gt.matches({ x: 'abc' })).toBe(false); // not an integer: no match
    expect(gt.matches({})).toBe(false); // absent: no match
    const lt = parseLabelSelector('a=b, x < -3');
    expect(lt.toString()).toBe('a=b,x<-3');
    expect(lt.matches({ a: 'b', x: '-4' })).toBe(true);
    expect(lt.matches({ a: 'b', x: '-3' })).toBe(false);
    expect(parseLabelSelector(lt.toString()).requirements).toEqual(lt.requirements);
    expect(parseLabelSelector('x>9223372036854775806').matches({ x: '9223372036854775807' })).toBe(true);
  });

  it('rejects a comparison whose bound is not an integer, naming the position', () => {
    for (const [text, at] of [
      ['x>a', 2],
      ['x<1.5', 2],
      ['x>', 2],
      ['x>99999999999999999999', 2],
    ] as const) {
      const err = invalidSelector(() => parseLabelSelector(text));
      expect(err.message).toContain('must be an integer');
      expect(err.details?.position).toBe(at);
    }
  });

  it('rejects a non-string with ERR_INVALID_SELECTOR', () => {
    invalidSelector(() => parseLabelSelector(undefined as unknown as string));
  });
});

describe('LabelSelector.matches', () => {
  // TestSelectorMatches
  it.each<[string, Record<string, string>]>([
    ['', { x: 'y' }],
    ['x=y', { x: 'y' }],
    ['x==y', { x: 'y' }],
    ['x=y,z=w', { x: 'y', z: 'w' }],
    ['x!=y,z!=w', { x: 'z', z: 'a' }],
    ['notin=in', { notin: 'in' }],
    ['x', { x: 'z' }],
    ['!x', { y: 'z' }],
    ['foo=bar', { foo: 'bar', baz: 'blah' }],
    ['baz=blah', { foo: 'bar', baz: 'blah' }],
    ['foo=bar,baz=blah', { foo: 'bar', baz: 'blah' }],
    ['x=', { x: '' }],
    ['x in (a,)', { x: '' }],
    ['x in ()', { x: '' }],
    ['x notin (a)', { x: 'b' }],
  ])('%j matches %j', (text, labels) => {
    expect(parseLabelSelector(text).matches(labels)).toBe(true);
  });

  it.each<[string, Record<string, string>]>([
    ['x=z', {}],
    ['x=y', { x: 'z' }],
    ['x=y,z=w', { x: 'w', z: 'w' }],
    ['x!=y,z!=w', { x: 'z', z: 'w' }],
    ['x', { y: 'z' }],
    ['!x', { x: 'z' }],
    ['foo=blah', { foo: 'bar', baz: 'blah' }],
    ['baz=bar', { foo: 'bar', baz: 'blah' }],
    ['foo=bar,foobar=bar,baz=blah', { foo: 'bar', baz: 'blah' }],
    ['x=', {}],
    ['x in (a,b)', { x: 'c' }],
    ['x in (a,b)', {}],
    ['x notin (a,b)', { x: 'a' }],
    ['x in ()', { x: 'a' }],
  ])('%j does not match %j', (text, labels) => {
    expect(parseLabelSelector(text).matches(labels)).toBe(false);
  });

  // TestRequirementSelectorMatching
  it.each<[Record<string, string>, string, boolean]>([
    [{ x: 'foo', y: 'baz' }, 'x in (foo),y notin (alpha)', true],
    [{ x: 'foo', y: 'baz' }, 'x in (foo),y in (alpha)', false],
    [{ y: '' }, 'x notin (),y', true],
    [{ y: '' }, '!x,y', true],
    [{ y: '' }, 'x notin (),!y', false],
    [{ y: 'baz' }, 'x in ()', false],
  ])('with labels %j, %j gives %s', (labels, text, expected) => {
    expect(parseLabelSelector(text).matches(labels)).toBe(expected);
  });

  it('matches != and notin when the label is absent, and = / in / exists only when it is present', () => {
    const absent = { other: 'v' };
    expect(parseLabelSelector('k!=v').matches(absent)).toBe(true);
    expect(parseLabelSelector('k notin (v)').matches(absent)).toBe(true);
    expect(parseLabelSelector('!k').matches(absent)).toBe(true);
    expect(parseLabelSelector('k=v').matches(absent)).toBe(false);
    expect(parseLabelSelector('k in (v)').matches(absent)).toBe(false);
    expect(parseLabelSelector('k').matches(absent)).toBe(false);
  });

  it('treats undefined labels as no labels', () => {
    expect(parseLabelSelector('k!=v,!j,x notin (a)').matches(undefined)).toBe(true);
    expect(parseLabelSelector('k').matches(undefined)).toBe(false);
    expect(parseLabelSelector('k=').matches(undefined)).toBe(false);
  });

  it('does not take inherited object members for labels', () => {
    expect(parseLabelSelector('constructor').matches({})).toBe(false);
    expect(parseLabelSelector('!toString,!hasOwnProperty').matches({})).toBe(true);
    expect(parseLabelSelector('constructor=x').matches({ constructor: 'x' })).toBe(true);
  });

  it('looks up large value sets correctly', () => {
    const values = Array.from({ length: 40 }, (_, i) => `v${i}`);
    const inSet = parseLabelSelector(`k in (${values.join(',')})`);
    const notInSet = parseLabelSelector(`k notin (${values.join(',')})`);
    for (const v of values) {
      expect(inSet.matches({ k: v })).toBe(true);
      expect(notInSet.matches({ k: v })).toBe(false);
    }
    expect(inSet.matches({ k: 'v40' })).toBe(false);
    expect(notInSet.matches({ k: 'v40' })).toBe(true);
    expect(inSet.requirements[0]!.values).toHaveLength(40);
  });

  it('does not let callers change a parsed selector', () => {
    const selector = parseLabelSelector('k in (a,b)');
    expect(Object.isFrozen(selector.requirements)).toBe(true);
    expect(Object.isFrozen(selector.requirements[0])).toBe(true);
    expect(Object.isFrozen(selector.requirements[0]!.values)).toBe(true);
  });
});

describe('labelSelectorFromObject', () => {
  it('converts matchLabels and matchExpressions into ANDed requirements sorted by key', () => {
    const selector = labelSelectorFromObject({
      matchLabels: { tier: 'web', app: 'shop' },
      matchExpressions: [
        { key: 'env', operator: 'In', values: ['prod', 'staging', 'prod'] },
        { key: 'track', operator: 'NotIn', values: ['canary'] },
        { key: 'owner', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist', values: [] },
      ],
    });
    expect(selector.requirements).toEqual([
      req('app', '=', ['shop']),
      req('env', 'in', ['prod', 'staging']),
      req('legacy', '!'),
      req('owner', 'exists'),
      req('tier', '=', ['web']),
      req('track', 'notin', ['canary']),
    ]);
    expect(selector.toString()).toBe(
      'app=shop,env in (prod,staging),!legacy,owner,tier=web,track notin (canary)',
    );
    expect(parseLabelSelector(selector.toString())).toEqual(selector);
    expect(selector.matches({ app: 'shop', tier: 'web', env: 'prod', owner: 'me' })).toBe(true);
    expect(selector.matches({ app: 'shop', tier: 'web', env: 'prod', owner: 'me', track: 'canary' })).toBe(
      false,
    );
    expect(selector.matches({ app: 'shop', tier: 'web', env: 'prod', owner: 'me', legacy: '' })).toBe(false);
    expect(selector.matches({ app: 'shop', tier: 'web', env: 'dev', owner: 'me' })).toBe(false);
  });

  it('gives the selector that matches everything for an empty object', () => {
    for (const object of [
      {},
      { matchLabels: {} },
      { matchExpressions: [] },
      { matchLabels: {}, matchExpressions: [] },
    ]) {
      const selector = labelSelectorFromObject(object);
      expect(selector.isEmpty()).toBe(true);
      expect(selector.toString()).toBe('');
      expect(selector.matches({ any: 'thing' })).toBe(true);
    }
  });

  it('keeps the empty value of a set, printing it so that it parses back', () => {
    const selector = labelSelectorFromObject({
      matchExpressions: [{ key: 'k', operator: 'In', values: [''] }],
    });
    expect(selector.toString()).toBe('k in ()');
    expect(parseLabelSelector(selector.toString())).toEqual(selector);
    const two = labelSelectorFromObject({
      matchExpressions: [{ key: 'k', operator: 'NotIn', values: ['a', ''] }],
    });
    expect(two.toString()).toBe('k notin (,a)');
    expect(parseLabelSelector(two.toString())).toEqual(two);
  });

  /** A selector with the one expression `k <operator> <values>` (no `values` field when undefined). */
  const expr = (operator: string, values?: unknown): unknown => ({
    matchExpressions: [{ key: 'k', operator, ...(values === undefined ? {} : { values }) }],
  });
  const OPERATOR = 'matchExpressions[0].operator';
  const VALUES = 'matchExpressions[0].values';
  it.each<[string, unknown, string, string]>([
    ['an unknown operator', expr('Foo'), OPERATOR, '"Foo" is not a valid label selector operator'],
    ['a lower-case operator', expr('in', ['a']), OPERATOR, 'not a valid label selector operator'],
    ['the text operator =', expr('=', ['a']), OPERATOR, 'not a valid'],
    ['In without values', expr('In'), VALUES, "can't be empty"],
    ['NotIn with no values', expr('NotIn', []), VALUES, "can't be empty"],
    ['Exists with values', expr('Exists', ['a']), VALUES, 'must be empty'],
    ['DoesNotExist with values', expr('DoesNotExist', ['a']), VALUES, 'must be empty'],
    ['an invalid value', expr('In', ['ok', 'not ok']), `${VALUES}[1]`, 'invalid label value "not ok"'],
    ['a non-string value', expr('In', [1]), `${VALUES}[0]`, 'must be a string'],
    ['values that are not an array', expr('In', 'a'), VALUES, 'array of strings'],
    [
      'an invalid expression key',
      {
        matchExpressions: [
          { key: 'ok', operator: 'Exists' },
          { key: 'Bad/k', operator: 'Exists' },
        ],
      },
      'matchExpressions[1].key',
      'invalid label key "Bad/k"',
    ],
    [
      'a missing expression key',
      { matchExpressions: [{ operator: 'Exists' }] },
      'matchExpressions[0].key',
      'must be a string',
    ],
    ['a null expression', { matchExpressions: [null] }, 'matchExpressions[0]', 'must be an object'],
    [
      'matchExpressions that is not an array',
      { matchExpressions: {} },
      'matchExpressions',
      'must be an array',
    ],
    [
      'an invalid matchLabels key',
      { matchLabels: { 'a b': 'c' } },
      'matchLabels["a b"]',
      'invalid label key "a b"',
    ],
    [
      'an invalid matchLabels value',
      { matchLabels: { a: 'b c' } },
      'matchLabels["a"]',
      'invalid label value "b c"',
    ],
    [
      'a long matchLabels value',
      { matchLabels: { a: 'b'.repeat(64) } },
      'matchLabels["a"]',
      'no more than 63 characters',
    ],
    ['a non-string matchLabels value', { matchLabels: { a: 1 } }, 'matchLabels["a"]', 'must be a string'],
    ['matchLabels that is not an object', { matchLabels: 'a=b' }, 'matchLabels', 'must be an object'],
    ['null', null, '', 'expected a LabelSelector object, got null'],
  ])('rejects %s with ERR_INVALID_SELECTOR naming the field', (_name, object, field, problem) => {
    const err = invalidSelector(() => labelSelectorFromObject(object as LabelSelectorObject));
    expect(err.message).toContain(problem);
    if (field !== '') expect(err.message).toContain(`${field}: `);
    expect(err.details).toEqual({ selector: object, field });
  });
});

// --- property tests -------------------------------------------------------------------------

const nameArb = fc.oneof(
  { weight: 8, arbitrary: fc.stringMatching(/^[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/) },
  { weight: 1, arbitrary: fc.constantFrom('in', 'notin', 'a', 'b', 'x') },
);
const prefixArb = fc.stringMatching(
  /^[a-z0-9](?:[-a-z0-9]{0,8}[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]{0,8}[a-z0-9])?){0,3}$/,
);
const keyArb = fc
  .tuple(fc.option(prefixArb, { nil: undefined }), nameArb)
  .map(([p, n]) => (p === undefined ? n : `${p}/${n}`));
const valueArb = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/) },
  { weight: 1, arbitrary: fc.constantFrom('', 'in', 'notin', 'a', 'b') },
);
const wsArb = fc.constantFrom('', '', '', ' ', '  ', '\t', '\n', '\r', ' \t ');
const ws1Arb = fc.constantFrom(' ', '  ', '\t', '\n', ' \r\n');

interface Spec {
  key: string;
  operator: LabelSelectorOperator;
  values: string[];
  text: string;
}

/** One requirement and a random but valid way of writing it. */
const specArb: fc.Arbitrary<Spec> = fc.oneof(
  fc
    .tuple(keyArb, valueArb, fc.constantFrom('=', '==', '!='), wsArb, wsArb)
    .map(([key, value, op, w1, w2]): Spec => ({
      key,
      operator: op === '!=' ? '!=' : '=',
      values: [value],
      text: `${key}${w1}${op}${w2}${value}`,
    })),
  fc
    .tuple(
      keyArb,
      fc.array(valueArb, { minLength: 1, maxLength: 12 }),
      fc.constantFrom('in', 'notin'),
      ws1Arb,
      wsArb,
      wsArb,
    )
    .map(([key, values, op, w1, w2, w3]): Spec => ({
      key,
      operator: op,
      values,
      text: `${key}${w1}${op}${w2}(${w3}${values.join(`${w3},${w3}`)}${w3})`,
    })),
  fc
    .tuple(keyArb, wsArb)
    .map(([key, w]) => ({ key, operator: 'exists' as const, values: [], text: `${w}${key}` })),
  fc
    .tuple(keyArb, wsArb)
    .map(([key, w]) => ({ key, operator: '!' as const, values: [], text: `!${w}${key}` })),
);

/** Matching as the Kubernetes docs define it, independent of the implementation. */
function expectedMatch(specs: Spec[], labels: Record<string, string>): boolean {
  return specs.every(({ key, operator, values }) => {
    const has = Object.hasOwn(labels, key);
    const value = labels[key];
    switch (operator) {
      case '=':
      case 'in':
        return has && values.includes(value!);
      case '!=':
      case 'notin':
        return !has || !values.includes(value!);
      case 'exists':
        return has;
      case '!':
        return !has;
    }
  });
}

/** Label sets that hit the specs' keys and values often. */
function labelsFor(specs: Spec[]): fc.Arbitrary<Record<string, string>> {
  if (specs.length === 0) return fc.dictionary(keyArb, valueArb, { maxKeys: 3 });
  return fc
    .array(
      fc.tuple(
        fc.constantFrom(...specs),
        fc.oneof(
          fc.constant(undefined),
          valueArb,
          fc.constantFrom(...specs.flatMap((s) => (s.values.length > 0 ? s.values : ['']))),
        ),
      ),
      { maxLength: specs.length + 2 },
    )
    .map((entries) => {
      const labels: Record<string, string> = {};
      for (const [spec, value] of entries) if (value !== undefined) labels[spec.key] = value;
      return labels;
    });
}

describe('parseLabelSelector: properties', () => {
  const selectorArb = fc
    .tuple(fc.array(specArb, { maxLength: 6 }), wsArb, wsArb)
    .chain(([specs, w1, w2]) =>
      fc.tuple(
        fc.constant(specs),
        fc.constant(specs.map((s) => s.text).join(`${w1},${w2}`)),
        labelsFor(specs),
      ),
    );

  it('round-trips: parse(s.toString()) equals s, and the canonical text is a fixed point', () => {
    fc.assert(
      fc.property(selectorArb, ([, text]) => {
        const selector = parseLabelSelector(text);
        expectRoundTrip(parseLabelSelector, selector);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps every requirement, sorted by key, with set values sorted and de-duplicated', () => {
    fc.assert(
      fc.property(selectorArb, ([specs, text]) => {
        const selector = parseLabelSelector(text);
        const expected = specs
          .map((s) => ({
            key: s.key,
            operator: s.operator,
            values: s.operator === 'in' || s.operator === 'notin' ? [...new Set(s.values)].sort() : s.values,
          }))
          .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
        expect(selector.requirements).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('matches exactly when every requirement holds', () => {
    fc.assert(
      fc.property(selectorArb, ([specs, text, labels]) => {
        const selector = parseLabelSelector(text);
        expect(selector.matches(labels)).toBe(expectedMatch(specs, labels));
        expect(parseLabelSelector(selector.toString()).matches(labels)).toBe(expectedMatch(specs, labels));
      }),
      { numRuns: 500 },
    );
  });

  it('round-trips selectors built from the object form', () => {
    const expressionArb = fc.oneof(
      fc.record({
        key: keyArb,
        operator: fc.constantFrom('In' as const, 'NotIn' as const),
        values: fc.array(valueArb, { minLength: 1, maxLength: 5 }),
      }),
      fc.record({ key: keyArb, operator: fc.constantFrom('Exists' as const, 'DoesNotExist' as const) }),
    );
    const objectArb = fc.record(
      {
        matchLabels: fc.dictionary(keyArb, valueArb, { maxKeys: 4 }),
        matchExpressions: fc.array(expressionArb, { maxLength: 4 }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(objectArb, (object) => {
        const selector = labelSelectorFromObject(object);
        expect(parseLabelSelector(selector.toString())).toEqual(selector);
      }),
      { numRuns: 300 },
    );
  });
});
