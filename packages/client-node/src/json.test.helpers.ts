import fc from 'fast-check';

/**
 * Arbitrary JSON text parts for the decoders' property tests: `string`, strings made of `chars` (what
 * escapes and scanners trip over), and `value`, any JSON value built of them — finite numbers (no -0,
 * which JSON encodes as 0), integers, booleans, null, and arrays and objects of up to `maxEntries`.
 */
export function jsonArbitraries(
  chars: string[],
  maxEntries: number,
): { string: fc.Arbitrary<string>; value: fc.Arbitrary<unknown> } {
  const string = fc.string({ unit: fc.constantFrom(...chars) });
  const value = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      string,
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => (d === 0 ? 0 : d)),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('v'), { maxLength: maxEntries }),
      fc.dictionary(string, tie('v'), { maxKeys: maxEntries }),
    ),
  })).v;
  return { string, value };
}

/**
 * Asserts that `value`, parsed from JSON with a `"__proto__"` key, holds that key as an own property
 * (as JSON.parse does) and still has `Object.prototype` as its prototype: nothing was polluted.
 */
export function expectOwnProtoKey(value: unknown): void {
  expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  expect(Object.hasOwn(value as object, '__proto__')).toBe(true);
}
