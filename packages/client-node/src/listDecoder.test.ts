import { ErrorCodes, KinformerError } from '@kinformer/core';
import { MAX_OBJECT_DEPTH } from '@kinformer/core/internal';
import fc from 'fast-check';
import { DEFAULT_MAX_LIST_ITEM_BYTES, DEFAULT_WHOLE_LIST_BYTES, ListDecoder } from './listDecoder.js';
import { expectOwnProtoKey, jsonArbitraries } from './json.test.helpers.js';

/**
 * How the decoder under test takes a body: kept whole and parsed at its end (every body below is
 * under the limit), or item by item from the first byte (`wholeBodyBytes: 0`, what a body over the
 * limit gets). Every test runs in both.
 */
let wholeBodyBytes: number | undefined;

/** Decodes `body` fed as the given chunks (split points are byte offsets). */
function decode(body: Buffer | string, splits: number[] = [], maxItemBytes?: number): unknown {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const d = new ListDecoder({
    ...(maxItemBytes === undefined ? {} : { maxItemBytes }),
    ...(wholeBodyBytes === undefined ? {} : { wholeBodyBytes }),
  });
  let from = 0;
  for (const at of [...splits].sort((a, b) => a - b)) {
    d.write(bytes.subarray(from, at));
    from = at;
  }
  d.write(bytes.subarray(from));
  return d.end();
}

function decodeError(body: Buffer | string, splits: number[] = [], maxItemBytes?: number): KinformerError {
  try {
    decode(body, splits, maxItemBytes);
  } catch (err) {
    expect(err).toBeInstanceOf(KinformerError);
    return err as KinformerError;
  }
  throw new Error('expected the body to be rejected');
}

/** A small list with everything a scanner can trip over: escapes, brackets in strings, multi-byte UTF-8. */
const TRICKY = {
  kind: 'PodList',
  apiVersion: 'v1',
  metadata: { resourceVersion: '77', continue: 'tok"en]', remainingItemCount: 3 },
  items: [
    { metadata: { name: 'a', annotations: { x: '}]{["', y: 'back\\slash\\', z: 'quote\\"' } } },
    {
      metadata: { name: 'ü✓😀' },
      data: { k: '\u0000\u001f\u2028 tab\t nl\n "' },
      n: [1, -2.5e3, true, null],
    },
    { metadata: { name: 'c' }, nested: [[[{}]], { '': '' }], s: '\\"}' },
  ],
};

/** Strings with every character a scanner can trip over. */
const { string: tricky, value: randomValue } = jsonArbitraries(
  ['{', '}', '[', ']', '"', '\\', ',', ':', ' ', 'a', 'ü', '😀', '\n', '\u0001'],
  4,
);
/** Random list bodies: any keys and values in the items, metadata, and another top-level value. */
const randomList = fc.record(
  {
    kind: fc.constant('PodList'),
    metadata: fc.record({ resourceVersion: fc.string(), continue: tricky }, { requiredKeys: [] }),
    items: fc.array(fc.dictionary(tricky, randomValue, { maxKeys: 5 }), { maxLength: 6 }),
    extra: randomValue,
  },
  { requiredKeys: ['items'] },
);
/** A random list, its JSON text in one of `indents`' layouts, and up to `maxCuts` points within the text to cut it at. */
const randomBody = (indents: Array<number | string>, maxCuts: number) =>
  fc
    .tuple(randomList, fc.constantFrom(...indents), fc.array(fc.nat(), { maxLength: maxCuts }))
    .map(([list, indent, cuts]) => {
      const bytes = Buffer.from(JSON.stringify(list, null, indent));
      return { list, bytes, cuts: cuts.map((c) => c % (bytes.length + 1)) };
    });

describe.each([
  ['kept whole', undefined],
  ['item by item', 0],
])('ListDecoder, body %s', (_how, whole) => {
  beforeAll(() => {
    wholeBodyBytes = whole;
  });
  afterAll(() => {
    wholeBodyBytes = undefined;
  });

  describe('ListDecoder: shapes a server sends', () => {
    it('decodes a compact list to what JSON.parse gives', () => {
      const body = JSON.stringify(TRICKY);
      expect(decode(body)).toEqual(JSON.parse(body));
    });

    it('decodes a pretty-printed list with CRLF and tabs', () => {
      const body = JSON.stringify(TRICKY, null, '\t').replace(/\n/g, '\r\n') + '\r\n';
      expect(decode(body)).toEqual(TRICKY);
    });

    it('reads metadata, kind and apiVersion wherever they are, after items too', () => {
      const body = `{"items":[{"metadata":{"name":"a"}}],"apiVersion":"v1","metadata":{"resourceVersion":"5","continue":"c"},"kind":"PodList"}`;
      expect(decode(body)).toEqual({
        kind: 'PodList',
        apiVersion: 'v1',
        metadata: { resourceVersion: '5', continue: 'c' },
        items: [{ metadata: { name: 'a' } }],
      });
    });

    it('keeps other top-level fields, scalars included', () => {
      const body = `{"kind":"PodList","x":12.5e1,"y":true,"z":null,"w":"s","v":[1,{"a":[]}],"items":[]}`;
      expect(decode(body)).toEqual(JSON.parse(body));
    });

    it('turns items: null into an empty array', () => {
      expect(decode('{"kind":"PodList","metadata":{"resourceVersion":"9"},"items":null}')).toEqual({
        kind: 'PodList',
        metadata: { resourceVersion: '9' },
        items: [],
      });
    });

    it('turns a missing items of a *List kind into an empty array', () => {
      expect(decode('{"kind":"PodList","metadata":{"resourceVersion":"9"}}')).toEqual({
        kind: 'PodList',
        metadata: { resourceVersion: '9' },
        items: [],
      });
    });

    it('decodes an empty items array in any spacing', () => {
      expect(decode('{ "items" : [ ] , "kind" : "PodList" }')).toEqual({ kind: 'PodList', items: [] });
    });
  });

  describe('ListDecoder: chunk boundaries', () => {
    const body = Buffer.from(JSON.stringify(TRICKY, null, 1));
    const expected = JSON.parse(body.toString('utf8')) as unknown;

    it('decodes the same list for a split at every byte offset, UTF-8 characters and escapes included', () => {
      for (let at = 0; at <= body.length; at++) expect(decode(body, [at])).toEqual(expected);
    });

    it('decodes the same list fed one byte at a time', () => {
      const splits = Array.from({ length: body.length }, (_, i) => i);
      expect(decode(body, splits)).toEqual(expected);
    });

    it('decodes any list to the value it encodes, for any formatting and any chunking (property)', () => {
      fc.assert(
        fc.property(randomBody([0, 1, 2, '\t'], 8), ({ list, bytes, cuts }) => {
          // The generated value, not JSON.parse of the text: V8's JSON.parse can misread escaped keys.
          expect(decode(bytes, cuts)).toEqual(list);
        }),
        { numRuns: 300 },
      );
    });
  });

  describe('ListDecoder: bodies cut short', () => {
    const body = JSON.stringify(TRICKY, null, 1);
    const bytes = Buffer.from(body);
    const last = bytes.lastIndexOf('}'.charCodeAt(0));

    it('rejects every proper prefix of a list with ERR_LIST_TRUNCATED, never a partial list', () => {
      for (let len = 1; len <= last; len++) {
        const err = decodeError(bytes.subarray(0, len), [len >> 1]);
        expect({ len, code: err.code }).toEqual({ len, code: ErrorCodes.LIST_TRUNCATED });
        expect(err.details).toMatchObject({ bytes: len });
      }
    });

    it('rejects an empty body with ERR_BAD_RESPONSE', () => {
      expect(decodeError('').code).toBe(ErrorCodes.BAD_RESPONSE);
    });

    it('says how far it got', () => {
      const body = '{"kind":"PodList","items":[{"a":1},{"b":';
      expect(decodeError(body).message).toBe(
        `the list response was cut short after ${body.length} bytes (1 items), before the end of the list`,
      );
    });
  });

  describe('ListDecoder: bodies that are not a list', () => {
    it.each<[string, string]>([
      ['an HTML page', '<html><body>login</body></html>'],
      ['a JSON array', '[{"metadata":{}}]'],
      ['an object without items that is not a *List', '{"kind":"Pod","metadata":{"name":"x"}}'],
      ['items that are a number', '{"kind":"PodList","items":5}'],
      ['items that are an object', '{"kind":"PodList","items":{}}'],
      ['items: nul', '{"kind":"PodList","items":nul}'],
      ['an item that is not an object', '{"kind":"PodList","items":[1]}'],
      ['an item that is not valid JSON', '{"kind":"PodList","items":[{"a":tru}]}'],
      ['a trailing comma between items', '{"kind":"PodList","items":[{},]}'],
      ['a trailing comma in the list', '{"kind":"PodList","items":[],}'],
      ['a missing colon', '{"kind" "PodList","items":[]}'],
      ['an unquoted key', '{kind:"PodList","items":[]}'],
      ['data after the list', '{"kind":"PodList","items":[]} {}'],
      ['a bad top-level value', '{"kind":PodList,"items":[]}'],
      ['a numeric continue token', '{"kind":"PodList","metadata":{"continue":1},"items":[]}'],
      ['metadata that is an array', '{"kind":"PodList","metadata":[],"items":[]}'],
    ])('rejects %s with ERR_BAD_RESPONSE and an excerpt of the body', (_what, body) => {
      const err = decodeError(body);
      expect(err.code).toBe(ErrorCodes.BAD_RESPONSE);
      // The excerpt stops where the items begin (never an object's values).
      const items = /"items":\[(?=[^\]])/.exec(body);
      const shown = items === null ? body.slice(0, 200) : `${body.slice(0, items.index + items[0].length)}…`;
      expect(err.details).toMatchObject({ bodyExcerpt: shown });
    });

    it("cuts a bad body's excerpt where its items begin: a Secret's data never reaches an error", () => {
      const value = 'c2VjcmV0LWRhdGEtdmFsdWU=';
      const body = `{"kind":"SecretList","metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"s"},"data":{"password":"${value}"}},oops]}`;
      const err = decodeError(body);
      expect(err.details?.bodyExcerpt).toBe(
        '{"kind":"SecretList","metadata":{"resourceVersion":"9"},"items":[…',
      );
      expect(JSON.stringify(err)).not.toContain(value);
    });

    it('keeps a "__proto__" key of the list as an own property, as JSON.parse does (never the prototype)', () => {
      const list = decode('{"kind":"PodList","__proto__":{"polluted":true},"items":[]}');
      expectOwnProtoKey(list);
      expect((list as { polluted?: unknown }).polluted).toBeUndefined();
    });

    it("keeps where JSON.parse failed in a bad item, never V8's message (it quotes the item's text)", () => {
      const err = decodeError('{"kind":"PodList","items":[{"a":"s3cr3t-value",tru}]}');
      expect(err.cause).toBeUndefined();
      expect(err.details?.jsonErrorPosition).toEqual(expect.any(Number));
      expect(err.message).toBe('the list response is not valid JSON');
      expect(JSON.stringify({ ...err.details, message: err.message })).not.toContain('s3cr3t-value');
    });

    it(`accepts nesting up to ${MAX_OBJECT_DEPTH} levels in metadata and other top-level values too, and rejects one more`, () => {
      // The list object is level 1, a top-level value level 2: one level more than an item has.
      for (const key of ['metadata', 'extra']) {
        const prefix = `{"kind":"PodList","${key}":{"a":`;
        const nested = (levels: number): string =>
          `${prefix}${'['.repeat(levels - 2)}${']'.repeat(levels - 2)}},"items":[]}`;
        expect(decode(nested(MAX_OBJECT_DEPTH))).toMatchObject({ [key]: { a: expect.any(Array) } });
        const err = decodeError(nested(MAX_OBJECT_DEPTH + 1));
        expect(err.code).toBe(ErrorCodes.OBJECT_TOO_DEEP);
        expect(err.details).toMatchObject({ offset: prefix.length + MAX_OBJECT_DEPTH + 1 - 2 - 1 });
      }
    });

    it(`accepts nesting up to ${MAX_OBJECT_DEPTH} levels and rejects one more`, () => {
      // The list object is level 1, items level 2, an item level 3.
      const prefix = '{"kind":"PodList","items":[{"a":';
      const nested = (levels: number): string =>
        `${prefix}${'['.repeat(levels - 3)}${']'.repeat(levels - 3)}}]}`;
      expect(decode(nested(MAX_OBJECT_DEPTH))).toMatchObject({ items: [{ a: expect.any(Array) }] });
      const err = decodeError(nested(MAX_OBJECT_DEPTH + 1));
      expect(err.code).toBe(ErrorCodes.OBJECT_TOO_DEEP);
      expect(err.message).toContain(`nested more than ${MAX_OBJECT_DEPTH} levels deep`);
      // The offset is that of the bracket one level too deep: the last opening one.
      const offset = prefix.length + MAX_OBJECT_DEPTH + 1 - 3 - 1;
      expect(err.details).toMatchObject({ maxDepth: MAX_OBJECT_DEPTH, offset });
    });
  });

  describe('ListDecoder: item size limit', () => {
    const item = (bytes: number): string => `{"s":"${'x'.repeat(bytes - 8)}"}`;
    const list = (itemBytes: number): string => `{"kind":"PodList","items":[{"a":1},${item(itemBytes)}]}`;

    it('accepts an item exactly at the limit, in one chunk and across chunks', () => {
      expect(decode(list(100), [], 100)).toMatchObject({ items: [{ a: 1 }, { s: expect.any(String) }] });
      expect(decode(list(100), [40, 60, 80], 100)).toMatchObject({ items: [{}, { s: expect.any(String) }] });
    });

    it.each([
      ['in one chunk', []],
      ['across chunks', [40, 60, 80]],
    ])('rejects an item one byte over the limit with ERR_LIST_ITEM_TOO_LARGE (%s)', (_how, splits) => {
      const err = decodeError(list(101), splits, 100);
      expect(err.code).toBe(ErrorCodes.LIST_ITEM_TOO_LARGE);
      expect(err.message).toBe('the list response has an item (number 1) longer than 100 bytes');
    });

    it('stops as soon as a spanning item passes the limit, before the body ends', () => {
      const d = new ListDecoder({
        maxItemBytes: 1000,
        ...(wholeBodyBytes === undefined ? {} : { wholeBodyBytes }),
      });
      d.write(Buffer.from('{"kind":"PodList","items":[{"s":"'));
      expect(() => d.write(Buffer.alloc(2000, 0x78))).toThrow(
        expect.objectContaining({ code: ErrorCodes.LIST_ITEM_TOO_LARGE }),
      );
    });

    it('bounds other top-level values too', () => {
      const err = decodeError(`{"kind":"PodList","junk":"${'x'.repeat(200)}","items":[]}`, [50], 100);
      expect(err.code).toBe(ErrorCodes.LIST_ITEM_TOO_LARGE);
      expect(err.message).toContain('value of junk');
    });

    it('defaults to 16 MiB and refuses a limit that is not a positive integer', () => {
      expect(DEFAULT_MAX_LIST_ITEM_BYTES).toBe(16 * 1024 * 1024);
      for (const bad of [0, -1, 1.5, Number.NaN]) {
        expect(() => new ListDecoder({ maxItemBytes: bad })).toThrow(
          expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
        );
      }
    });
  });

  describe('ListDecoder: reuseItem', () => {
    it('keeps what reuseItem returns for each item, in order, and fails the list when it throws', () => {
      const held = { metadata: { name: 'a', resourceVersion: '1' } };
      const seen: unknown[] = [];
      const d = new ListDecoder<{ metadata: { name: string; resourceVersion: string } }>({
        ...(wholeBodyBytes === undefined ? {} : { wholeBodyBytes }),
        reuseItem: (item) => {
          seen.push(item);
          return item.metadata.resourceVersion === held.metadata.resourceVersion ? held : item;
        },
      });
      d.write(Buffer.from('{"kind":"PodList","items":[{"metadata":{"name":"a","resourceVersion":"1"}},'));
      d.write(Buffer.from('{"metadata":{"name":"b","resourceVersion":"2"}}]}'));
      const list = d.end();
      expect(list.items[0]).toBe(held);
      expect(list.items[1]).toEqual({ metadata: { name: 'b', resourceVersion: '2' } });
      expect(seen).toHaveLength(2);

      const failing = new ListDecoder({
        ...(wholeBodyBytes === undefined ? {} : { wholeBodyBytes }),
        reuseItem: () => {
          throw new Error('boom');
        },
      });
      expect(() => {
        failing.write(Buffer.from('{"kind":"PodList","items":[{}]}'));
        failing.end();
      }).toThrow('boom');
    });
  });
});

describe('ListDecoder: a body kept whole, and one that passes the limit', () => {
  const body = Buffer.from(
    JSON.stringify({
      kind: 'PodList',
      metadata: { resourceVersion: '5' },
      items: Array.from({ length: 20 }, (_, i) => ({ metadata: { name: `p${i}` }, s: 'x'.repeat(i) })),
    }),
  );

  it('parses a body under the limit with one JSON.parse, when it ends', () => {
    const original = JSON.parse;
    let parses = 0;
    JSON.parse = (text: string, reviver?: Parameters<typeof JSON.parse>[1]): unknown => {
      parses++;
      return original(text, reviver);
    };
    try {
      const d = new ListDecoder({ wholeBodyBytes: body.length });
      d.write(body.subarray(0, 100));
      d.write(body.subarray(100));
      expect(d.itemCount).toBe(0);
      expect(parses).toBe(0);
      expect(d.end().items).toHaveLength(20);
      expect(parses).toBe(1);
    } finally {
      JSON.parse = original;
    }
  });

  it('decodes a body that passes the limit item by item from there, kept bytes first', () => {
    const d = new ListDecoder({ wholeBodyBytes: body.length - 1 });
    d.write(body.subarray(0, body.length - 10));
    expect(d.itemCount).toBe(0);
    d.write(body.subarray(body.length - 10));
    expect(d.itemCount).toBe(20);
    expect(d.end()).toEqual(JSON.parse(body.toString('utf8')));
  });

  it('gives the same list for any limit and any chunking, random bodies (property)', () => {
    fc.assert(
      fc.property(randomBody([0, 1, '\t'], 6), fc.nat(), ({ list, bytes, cuts }, limit) => {
        const d = new ListDecoder({ wholeBodyBytes: limit % (bytes.length + 2) });
        let from = 0;
        for (const at of [...cuts].sort((a, b) => a - b)) {
          d.write(bytes.subarray(from, at));
          from = at;
        }
        d.write(bytes.subarray(from));
        expect(d.end()).toEqual(list);
      }),
      { numRuns: 500 },
    );
  });

  it('defaults to 16 MiB and refuses a limit that is not a non-negative integer', () => {
    expect(DEFAULT_WHOLE_LIST_BYTES).toBe(16 * 1024 * 1024);
    for (const bad of [-1, 1.5, Number.NaN]) {
      expect(() => new ListDecoder({ wholeBodyBytes: bad })).toThrow(
        expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
      );
    }
  });
});

describe("ListDecoder: V8's wrong-key bug (nodejs/node#63785)", () => {
  it('reads an escaped key right after a list whose item has a key holding a backslash', () => {
    // The trigger: JSON.parse of an object with a key holding a backslash, then of one with the same
    // keys before an escaped key. Key names of their own, so no other test shares V8's maps.
    for (const whole of [undefined, 0]) {
      const d1 = new ListDecoder(whole === undefined ? {} : { wholeBodyBytes: whole });
      d1.write(Buffer.from(`{"kind":"PodList","items":[{"ld-${String(whole)}":1,"\\\\":0}]}`));
      expect(Object.keys(d1.end().items[0] as object)).toEqual([`ld-${String(whole)}`, '\\']);
      const d2 = new ListDecoder(whole === undefined ? {} : { wholeBodyBytes: whole });
      d2.write(Buffer.from(`{"kind":"PodList","items":[{"ld-${String(whole)}":1,"\\"":2}]}`));
      expect(Object.keys(d2.end().items[0] as object)).toEqual([`ld-${String(whole)}`, '"']);
    }
  });
});

describe('ListDecoder: onMetadata, the list metadata before the items (for the pager to ask ahead)', () => {
  function metas(body: Buffer, splits: number[], whole?: number): { seen: unknown[]; list: unknown } {
    const seen: unknown[] = [];
    const d = new ListDecoder({
      onMetadata: (m) => seen.push(m),
      ...(whole === undefined ? {} : { wholeBodyBytes: whole }),
    });
    let from = 0;
    for (const at of [...splits].sort((a, b) => a - b)) {
      d.write(body.subarray(from, at));
      from = at;
    }
    d.write(body.subarray(from));
    return { seen, list: d.end() };
  }

  it('gives kube-apiserver-ordered metadata once, before any item has arrived, at every split', () => {
    const body = Buffer.from(JSON.stringify(TRICKY));
    const itemsAt = body.indexOf('"items"');
    for (let at = 0; at <= body.length; at++) {
      const seen: unknown[] = [];
      const d = new ListDecoder({ onMetadata: (m) => seen.push(m) });
      d.write(body.subarray(0, Math.min(at, itemsAt)));
      if (at >= itemsAt) expect(seen).toEqual([TRICKY.metadata]);
      d.write(body.subarray(Math.min(at, itemsAt)));
      expect(seen).toEqual([TRICKY.metadata]);
      expect(d.end()).toEqual(TRICKY);
    }
  });

  it('gives nothing when the metadata follows the items or is not within the first 4 KB', () => {
    expect(metas(Buffer.from('{"items":[],"metadata":{"continue":"c"}}'), []).seen).toEqual([]);
    const late = `{"kind":"PodList","pad":"${'x'.repeat(5000)}","metadata":{"continue":"c"},"items":[]}`;
    expect(metas(Buffer.from(late), [100, 4000]).seen).toEqual([]);
  });

  it('property: for any list, layout and chunking, what it gives is the list metadata, at most once', () => {
    fc.assert(
      fc.property(
        randomBody([0, 1, '\t'], 8),
        fc.constantFrom(undefined, 0),
        ({ list: l, bytes, cuts }, whole) => {
          const { seen, list } = metas(bytes, cuts, whole);
          expect(seen.length).toBeLessThanOrEqual(1);
          if (seen.length === 1) expect(seen[0]).toEqual((list as { metadata: unknown }).metadata);
          // Metadata written before the items (and not too far in) is always announced.
          const keys = Object.keys(l);
          if (l.metadata !== undefined && keys.indexOf('metadata') < keys.indexOf('items')) {
            const at = bytes.indexOf('"items"');
            if (at < 4000) expect(seen).toHaveLength(1);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
