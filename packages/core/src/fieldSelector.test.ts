import fc from 'fast-check';

import { parseFieldSelector, type FieldRequirement, type FieldSelectorOperator } from './fieldSelector.js';
import { expectRoundTrip, invalidSelector } from './selector.test.helpers.js';

function term(field: string, operator: FieldSelectorOperator, value: string): FieldRequirement {
  return { field, operator, value };
}

describe('parseFieldSelector (apimachinery fields/selector_test.go)', () => {
  // TestSelectorParse: good strings print back unchanged.
  it.each(['x=a,y=b,z=c', '', 'x!=a,y=b', String.raw`x=a||y\=b`, String.raw`x=a\=\=b`])(
    'parses %j and prints it back',
    (text) => {
      expect(parseFieldSelector(text).toString()).toBe(text);
    },
  );

  // TestSelectorParse: bad strings.
  it.each(['x=a||y=b', 'x==a==b', 'x=a,b', 'x in (a)', 'x in (a,b,c)', 'x'])('rejects %j', (text) => {
    invalidSelector(() => parseFieldSelector(text));
  });

  // TestDeterministicParse
  it('prints the same text whatever the order of the terms', () => {
    expect(parseFieldSelector('x=a,a=x').toString()).toBe('a=x,x=a');
    expect(parseFieldSelector('a=x,x=a').toString()).toBe('a=x,x=a');
  });

  // TestSplitTerms / TestSplitTerm / TestEscapeValue, seen through the parser.
  // Requirements come sorted by their canonical text ('2' sorts before '=').
  it.each<[string, FieldRequirement[]]>([
    ['a=avalue', [term('a', '=', 'avalue')]],
    ['a=avalue,b=bvalue', [term('a', '=', 'avalue'), term('b', '=', 'bvalue')]],
    [
      'a=avalue,b==bvalue,c!=cvalue',
      [term('a', '=', 'avalue'), term('b', '=', 'bvalue'), term('c', '!=', 'cvalue')],
    ],
    ['a=a,', [term('a', '=', 'a')]],
    [',a=a', [term('a', '=', 'a')]],
    [',,a=a,,', [term('a', '=', 'a')]],
    [',', []],
    [String.raw`k=\,,k2=v2`, [term('k2', '=', 'v2'), term('k', '=', ',')]],
    [String.raw`k=\\,k2=v2`, [term('k2', '=', 'v2'), term('k', '=', '\\')]],
    [String.raw`k=\\\,,k2=v2`, [term('k2', '=', 'v2'), term('k', '=', '\\,')]],
    [String.raw`k=\=`, [term('k', '=', '=')]],
    [String.raw`k=\=value\\\,\\`, [term('k', '=', '=value\\,\\')]],
    ['함=수,목=록', [term('목', '=', '록'), term('함', '=', '수')]],
    ['k=', [term('k', '=', '')]],
    ['k!=', [term('k', '!=', '')]],
    ['k==', [term('k', '=', '')]],
    ['k=!x', [term('k', '=', '!x')]],
    ['k!!=x', [term('k!', '!=', 'x')]],
    [
      'metadata.name=my-pod,status.phase!=Running',
      [term('metadata.name', '=', 'my-pod'), term('status.phase', '!=', 'Running')],
    ],
    [' spec.nodeName = n1', [term(' spec.nodeName ', '=', ' n1')]],
    ['a=1,a=1', [term('a', '=', '1'), term('a', '=', '1')]],
  ])('parses %j', (text, expected) => {
    const selector = parseFieldSelector(text);
    expect(selector.requirements).toEqual(expected);
    expect(selector.isEmpty()).toBe(expected.length === 0);
  });

  it.each<[string, string]>([
    ['', ''],
    ['b==x,a!=y', 'a!=y,b=x'],
    [String.raw`k==\,\=\\`, String.raw`k=\,\=\\`],
    [',,z=1,,', 'z=1'],
  ])('prints %j canonically as %j', (text, canonical) => {
    expect(parseFieldSelector(text).toString()).toBe(canonical);
  });

  it.each<[string, number, string]>([
    ['x', 0, `can't understand "x"`],
    ['a=b,x', 4, `can't understand "x"`],
    ['a=b,x in (a', 4, `can't understand "x in (a"`],
    ['x=a||y=b', 6, "unescaped '=' in a value"],
    ['x==a==b', 4, "unescaped '=' in a value"],
    ['a=b,k=v=w', 7, "unescaped '=' in a value"],
    [String.raw`k=\a`, 2, String.raw`invalid escape sequence "\\a"`],
    [String.raw`k=\\\a`, 4, String.raw`invalid escape sequence "\\a"`],
    [String.raw`k=\ `, 2, 'invalid escape sequence'],
    ['k=\\', 2, "can't end with a single '\\'"],
    ['k=\\\\\\', 4, "can't end with a single '\\'"],
    ['a=b,k=v\\', 7, "can't end with a single '\\'"],
  ])('rejects %j at position %d', (text, position, problem) => {
    const err = invalidSelector(() => parseFieldSelector(text));
    expect(err.message).toContain(
      `invalid field selector ${JSON.stringify(text)}: at position ${position}: `,
    );
    expect(err.message).toContain(problem);
    expect(err.details).toEqual({ selector: text, position });
  });

  it('rejects a non-string with ERR_INVALID_SELECTOR', () => {
    invalidSelector(() => parseFieldSelector(42 as unknown as string));
  });
});

describe('FieldSelector.matches', () => {
  const fields = { foo: 'bar', baz: 'blah', complex: '=value\\,\\' };

  // TestSelectorMatches
  it.each<[string, Record<string, string>]>([
    ['', { x: 'y' }],
    ['x=y', { x: 'y' }],
    ['x=y,z=w', { x: 'y', z: 'w' }],
    ['x!=y,z!=w', { x: 'z', z: 'a' }],
    ['notin=in', { notin: 'in' }],
    ['foo=bar', fields],
    ['baz=blah', fields],
    ['foo=bar,baz=blah', fields],
    [String.raw`foo=bar,baz=blah,complex=\=value\\\,\\`, fields],
  ])('%j matches %j', (text, set) => {
    expect(parseFieldSelector(text).matches(set)).toBe(true);
  });

  it.each<[string, Record<string, string>]>([
    ['x=y', { x: 'z' }],
    ['x=y,z=w', { x: 'w', z: 'w' }],
    ['x!=y,z!=w', { x: 'z', z: 'w' }],
    ['foo=blah', fields],
    ['baz=bar', fields],
    ['foo=bar,foobar=bar,baz=blah', fields],
  ])('%j does not match %j', (text, set) => {
    expect(parseFieldSelector(text).matches(set)).toBe(false);
  });

  it("counts a missing field as ''", () => {
    expect(parseFieldSelector('spec.nodeName=').matches({})).toBe(true);
    expect(parseFieldSelector('spec.nodeName!=').matches({})).toBe(false);
    expect(parseFieldSelector('spec.nodeName!=n1').matches({})).toBe(true);
    expect(parseFieldSelector('spec.nodeName=n1').matches({})).toBe(false);
  });

  it('compares exactly and does not take inherited members for fields', () => {
    expect(parseFieldSelector('a=B').matches({ a: 'b' })).toBe(false);
    expect(parseFieldSelector('a= b').matches({ a: 'b' })).toBe(false);
    expect(parseFieldSelector('constructor=').matches({})).toBe(true);
    expect(parseFieldSelector('toString!=').matches({})).toBe(false);
  });

  it('does not let callers change a parsed selector', () => {
    const selector = parseFieldSelector('a=b');
    expect(Object.isFrozen(selector.requirements)).toBe(true);
    expect(Object.isFrozen(selector.requirements[0])).toBe(true);
  });
});

describe('parseFieldSelector: properties', () => {
  // Field names as the API server knows them (no operators, commas or backslashes).
  const fieldArb = fc.oneof(
    fc.stringMatching(/^[a-z][A-Za-z0-9]{0,8}(?:\.[a-z][A-Za-z0-9]{0,8}){0,3}$/),
    fc.constantFrom('metadata.name', 'metadata.namespace', 'spec.nodeName', 'status.phase'),
  );
  // Values with every special character in them.
  const valueArb = fc.string({
    unit: fc.constantFrom('a', 'b', '1', '=', ',', '\\', '!', ' ', '.', '-', 'é'),
    maxLength: 10,
  });
  const opArb = fc.constantFrom<FieldSelectorOperator>('=', '!=');
  const termArb = fc.record({ field: fieldArb, operator: opArb, value: valueArb });
  const escape = (v: string): string => v.replace(/[\\,=]/g, (c) => `\\${c}`);

  it('parses what it is given, escaped, and round-trips through toString()', () => {
    fc.assert(
      fc.property(fc.array(termArb, { maxLength: 6 }), fc.constantFrom('=', '=='), (terms, eq) => {
        const text = terms
          .map((t) => `${t.field}${t.operator === '=' ? eq : '!='}${escape(t.value)}`)
          .join(',');
        const selector = parseFieldSelector(text);
        expect([...selector.requirements].sort(byText)).toEqual([...terms].sort(byText));
        expectRoundTrip(parseFieldSelector, selector);
      }),
      { numRuns: 500 },
    );
  });

  it('matches exactly when every term holds', () => {
    const arb = fc.array(termArb, { minLength: 1, maxLength: 4 }).chain((terms) =>
      fc.tuple(
        fc.constant(terms),
        fc
          .array(
            fc.tuple(
              fc.constantFrom(...terms),
              fc.oneof(valueArb, fc.constantFrom(...terms.map((t) => t.value))),
            ),
            { maxLength: 5 },
          )
          .map((entries) => Object.fromEntries(entries.map(([t, v]) => [t.field, v]))),
      ),
    );
    fc.assert(
      fc.property(arb, ([terms, fields]) => {
        const selector = parseFieldSelector(
          terms.map((t) => `${t.field}${t.operator}${escape(t.value)}`).join(','),
        );
        const expected = terms.every((t) => ((fields[t.field] ?? '') === t.value) === (t.operator === '='));
        expect(selector.matches(fields)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });
});

function byText(a: FieldRequirement, b: FieldRequirement): number {
  const x = `${a.field}\u0000${a.operator}\u0000${a.value}`;
  const y = `${b.field}\u0000${b.operator}\u0000${b.value}`;
  return x < y ? -1 : x > y ? 1 : 0;
}
