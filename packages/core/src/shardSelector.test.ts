import fc from 'fast-check';
import { ErrorCodes, KinformerError } from './errors.js';
import {
  parseShardSelector,
  SHARD_HASH_SPACE_END,
  shardBound,
  shardHash,
  shardRangeLocator,
  shardSelectorFromRanges,
  splitHashSpace,
} from './shardSelector.js';

/** FNV-1a 64 with BigInt: the reference the 32-bit-halves version is checked against. */
function fnv1a64Reference(value: string): string {
  let h = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(value)) {
    h ^= BigInt(byte);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return `0x${h.toString(16).padStart(16, '0')}`;
}

const ZERO = '0x0000000000000000';
const HALF = '0x8000000000000000';
const TWO_TO_64 = '0x10000000000000000';
/** `shardRange(object.metadata.uid, 'start', 'end')`, each of `ranges` so, joined with ` || `. */
const uidRanges = (...ranges: Array<[string, string]>): string =>
  ranges.map(([start, end]) => `shardRange(object.metadata.uid, '${start}', '${end}')`).join(' || ');

describe('shardHash (apimachinery HashField: FNV-1a 64)', () => {
  it('matches the published FNV-1a 64 test vectors', () => {
    expect(shardHash('')).toBe('0xcbf29ce484222325');
    expect(shardHash('a')).toBe('0xaf63dc4c8601ec8c');
    expect(shardHash('foobar')).toBe('0x85944171f73967e8');
  });

  it('equals a BigInt reference for any string, UTF-8 included', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uuid(), fc.string(), fc.string({ unit: 'binary' })), (s) => {
        expect(shardHash(s)).toBe(fnv1a64Reference(s));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('parseShardSelector (k8s.io/apiserver/pkg/sharding parser_test.go cases)', () => {
  const THREE: Array<[string, string]> = [
    [ZERO, '0x0000000000000005'],
    ['0x0000000000000005', '0x000000000000000a'],
    ['0x000000000000000a', '0x000000000000000f'],
  ];
  const valid: Array<[string, string, Array<[string, string]>]> = [
    ['single requirement with uid', uidRanges([ZERO, HALF]), [[ZERO, HALF]]],
    ['full range with 2^64 end', uidRanges([ZERO, TWO_TO_64]), [[ZERO, SHARD_HASH_SPACE_END]]],
    [
      'two requirements with ||',
      uidRanges([ZERO, HALF], [HALF, TWO_TO_64]),
      [
        [ZERO, HALF],
        [HALF, SHARD_HASH_SPACE_END],
      ],
    ],
    ['three requirements with ||', uidRanges(...THREE), THREE],
    [
      'no spaces',
      "shardRange(object.metadata.uid,'0x0000000000000000','0x8000000000000000')",
      [[ZERO, HALF]],
    ],
    [
      'extra whitespace',
      "  shardRange( object.metadata.uid ,  '0x0000000000000000' ,  '0x8000000000000000' )  ",
      [[ZERO, HALF]],
    ],
  ];
  it.each(valid)('%s', (_name, input, ranges) => {
    const sel = parseShardSelector(input);
    expect(sel.ranges).toEqual(ranges.map(([start, end]) => ({ start, end })));
    expect(sel.field).toBe('object.metadata.uid');
  });

  it('parses the namespace field', () => {
    const sel = parseShardSelector(
      "shardRange(object.metadata.namespace, '0x00000000000000aa', '0x00000000000000ff')",
    );
    expect(sel.field).toBe('object.metadata.namespace');
    expect(sel.ranges).toEqual([{ start: '0x00000000000000aa', end: '0x00000000000000ff' }]);
  });

  const invalid: Array<[string, string, string]> = [
    ['empty string', '', 'empty shard selector is not allowed; omit the parameter for unfiltered lists'],
    [
      'missing 0x prefix on start',
      "shardRange(object.metadata.uid, '0000000000000000', '0x8000000000000000')",
      `hexStart must have '0x' prefix, got "0000000000000000"`,
    ],
    [
      'missing 0x prefix on end',
      "shardRange(object.metadata.uid, '0x0000000000000000', '8000000000000000')",
      `hexEnd must have '0x' prefix, got "8000000000000000"`,
    ],
    [
      'empty after 0x prefix',
      "shardRange(object.metadata.uid, '0x', '0x8000000000000000')",
      "hexStart: hex value is required after '0x'",
    ],
    [
      'name field unsupported',
      "shardRange(object.metadata.name, '0x00', '0x80')",
      'unsupported field path "object.metadata.name"; supported: object.metadata.uid, object.metadata.namespace',
    ],
    [
      'unsupported field',
      "shardRange(object.metadata.labels, '0x00', '0x80')",
      'unsupported field path "object.metadata.labels"',
    ],
    [
      'unknown function',
      "invalidFunc(object.metadata.uid, '0x00', '0x80')",
      'unsupported function "invalidFunc"; only shardRange() and || are allowed',
    ],
    [
      'hex too long (18 chars)',
      "shardRange(object.metadata.uid, '0x000000000000000000', '0x80')",
      'hexStart: hex value too long (18 chars, max 17): "000000000000000000"',
    ],
    [
      'invalid hex char',
      "shardRange(object.metadata.uid, '0x0g', '0x80')",
      'hexStart: invalid hex character "g" in "0x0g"',
    ],
    [
      '&& operator not allowed',
      "shardRange(object.metadata.uid, '0x0', '0x8') && shardRange(object.metadata.uid, '0x8', '0xf')",
      'unsupported function "_&&_"',
    ],
    [
      'integer literal instead of string',
      'shardRange(object.metadata.uid, 0, 8)',
      'hexStart must be a string literal, got int64',
    ],
    ['comparison operator', "object.metadata.uid > '0x0'", 'unsupported function "_>_"'],
    [
      'wrong number of arguments',
      "shardRange(object.metadata.uid, '0x0')",
      'shardRange() requires exactly 3 arguments, got 2',
    ],
    [
      'nested function call',
      "shardRange(object.metadata.uid, hex(0), '0x8')",
      "hexStart must be a string literal (e.g. '0xff'), got expression kind 1",
    ],
    [
      'mixed field keys',
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
      'all shard ranges must use the same field, got "object.metadata.uid" and "object.metadata.namespace"',
    ],
    [
      'short hex rejected',
      "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
      'hexStart must be a 0x-prefixed 16-digit hex value, got "0x0" (did you mean "0x0000000000000000"?)',
    ],
    [
      'short hex rejected on end',
      "shardRange(object.metadata.uid, '0x0000000000000000', '0xff')",
      'hexEnd must be a 0x-prefixed 16-digit hex value, got "0xff"',
    ],
    [
      'start equals end',
      "shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')",
      'shard range start 0x8000000000000000 must be less than end 0x8000000000000000',
    ],
    [
      'start greater than end',
      "shardRange(object.metadata.uid, '0xffffffffffffffff', '0x0000000000000000')",
      'shard range start 0xffffffffffffffff must be less than end 0x0000000000000000',
    ],
    [
      '17 digits other than 2^64',
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000001')",
      'hexEnd: 17-digit hex value must be \'0x10000000000000000\' (2^64), got "0x10000000000000001"',
    ],
    [
      'a bare identifier',
      'object',
      'unexpected expression kind 3; expected shardRange() call or || operator',
    ],
    ['unbalanced parentheses', "shardRange(object.metadata.uid, '0x0'", 'CEL parse error: '],
  ];
  it.each(invalid)('rejects %s', (_name, input, message) => {
    let thrown: unknown;
    try {
      parseShardSelector(input);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(KinformerError);
    expect((thrown as KinformerError).code).toBe(ErrorCodes.INVALID_SELECTOR);
    expect((thrown as KinformerError).message).toContain(message);
    expect((thrown as KinformerError).details).toEqual({ selector: input });
  });

  it.each([
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
    "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')",
    "shardRange(object.metadata.namespace, '0x00000000000000aa', '0x00000000000000ff')",
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')",
  ])('round-trips %s through toString (TestParseRoundTrip)', (input) => {
    const sel = parseShardSelector(input);
    expect(sel.toString()).toBe(input);
    expect(parseShardSelector(sel.toString()).toString()).toBe(input);
  });
});

describe('hash ranges', () => {
  const hashArb = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map((n) => shardBound(n));

  it('splitHashSpace(n) partitions the space: every hash is in exactly one range', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 129 }), fc.array(hashArb, { maxLength: 50 }), (n, hashes) => {
        const ranges = splitHashSpace(n);
        expect(ranges).toHaveLength(n);
        expect(ranges[0]!.start).toBe(ZERO);
        expect(ranges[n - 1]!.end).toBe(SHARD_HASH_SPACE_END);
        for (let i = 1; i < n; i++) expect(ranges[i]!.start).toBe(ranges[i - 1]!.end);
        const selectors = ranges.map((r) => shardSelectorFromRanges('object.metadata.uid', [r]));
        for (const hash of [...hashes, ZERO, '0xffffffffffffffff', ...ranges.map((r) => r.start)]) {
          expect(selectors.filter((s) => s.matchesHash(hash))).toHaveLength(1);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('a selector of several ranges matches exactly the union of its ranges', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.array(fc.boolean(), { minLength: 64, maxLength: 64 }),
        fc.array(fc.uuid(), { maxLength: 40 }),
        (n, picks, uids) => {
          const ranges = splitHashSpace(n);
          const chosen = ranges.filter((_r, i) => picks[i]);
          if (chosen.length === 0) return;
          const union = shardSelectorFromRanges('object.metadata.uid', chosen);
          for (const uid of uids) {
            const hash = BigInt(shardHash(uid));
            const inSome = chosen.some((r) => hash >= BigInt(r.start) && hash < BigInt(r.end));
            expect(union.matches({ metadata: { uid } })).toBe(inSome);
          }
        },
      ),
    );
  });

  it('matches any range [start, end) as BigInt arithmetic does, for any field value', () => {
    const bound = fc.bigInt({ min: 0n, max: 1n << 64n });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(bound, bound), { minLength: 1, maxLength: 4 }),
        fc.array(fc.oneof(fc.uuid(), fc.string(), fc.string({ unit: 'binary' })), { maxLength: 30 }),
        (pairs, values) => {
          const ranges = pairs
            .map(([a, b]) => ({ lo: a < b ? a : b, hi: a < b ? b : a }))
            .filter(({ lo, hi }) => lo < hi);
          if (ranges.length === 0) return;
          const sel = shardSelectorFromRanges(
            'object.metadata.namespace',
            ranges.map(({ lo, hi }) => ({ start: shardBound(lo), end: shardBound(hi) })),
          );
          for (const value of values) {
            const hash = BigInt(shardHash(value));
            const expected = ranges.some(({ lo, hi }) => hash >= lo && hash < hi);
            expect(sel.matches({ metadata: { namespace: value } })).toBe(expected);
            expect(sel.matchesHash(shardHash(value))).toBe(expected);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('matches an object by namespace when the field is the namespace, a missing field hashing ""', () => {
    const all = splitHashSpace(4).map((r) => shardSelectorFromRanges('object.metadata.namespace', [r]));
    const owner = all.filter((s) => s.matches({ metadata: { namespace: 'team-a', uid: 'x' } }));
    expect(owner).toHaveLength(1);
    expect(owner[0]!.matchesHash(shardHash('team-a'))).toBe(true);
    expect(all.filter((s) => s.matches({ metadata: {} }))[0]!.matchesHash(shardHash(''))).toBe(true);
  });

  it('refuses a range count that is not a positive integer', () => {
    expect(() => splitHashSpace(0)).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }));
    expect(() => splitHashSpace(1.5)).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }));
  });
});

describe('shardRangeLocator', () => {
  it('finds the range of splitHashSpace(n) that holds the hash, for any n and any value (UTF-8 too)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.uuid()),
        (count, value) => {
          const ranges = splitHashSpace(count);
          const i = shardRangeLocator(ranges)(value);
          const h = BigInt(shardHash(value));
          const r = ranges[i]!;
          expect(h >= BigInt(r.start) && h < BigInt(r.end)).toBe(true);
        },
      ),
    );
  });
});
