import fc from 'fast-check';
import { shareEmptyFieldSets } from './fieldSets.js';
import { ListDecoder } from './listDecoder.js';

const pod = (): Record<string, unknown> =>
  JSON.parse(
    JSON.stringify({
      metadata: {
        name: 'p',
        annotations: {},
        managedFields: [
          {
            manager: 'kubelet',
            operation: 'Update',
            fieldsType: 'FieldsV1',
            fieldsV1: {
              'f:status': { 'f:conditions': { 'k:{"type":"Ready"}': { '.': {}, 'f:status': {} } } },
            },
          },
          {
            manager: 'kubectl',
            operation: 'Apply',
            fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } } },
          },
          { manager: 'odd', fieldsV1: {} },
        ],
      },
      spec: { securityContext: {} },
    }),
  ) as Record<string, unknown>;

/** Every empty object reachable from `v`. */
function empties(v: unknown, out: object[] = []): object[] {
  if (typeof v !== 'object' || v === null) return out;
  if (!Array.isArray(v) && Object.keys(v).length === 0) out.push(v);
  for (const x of Object.values(v)) empties(x, out);
  return out;
}

describe('shareEmptyFieldSets', () => {
  it('makes every empty field set one frozen object, and the object stays equal to what was decoded', () => {
    const obj = pod();
    const before = structuredClone(obj);
    shareEmptyFieldSets(obj);
    expect(obj).toEqual(before);
    expect(JSON.stringify(obj)).toBe(JSON.stringify(before));
    const meta = obj.metadata as { managedFields: Array<{ fieldsV1: unknown }>; annotations: object };
    const shared = empties(meta.managedFields);
    expect(shared.length).toBe(4);
    expect(new Set(shared).size).toBe(1);
    expect(Object.isFrozen(shared[0])).toBe(true);
    // Outside managedFields nothing changes: the annotations and spec's empty objects are their own.
    expect(Object.isFrozen(meta.annotations)).toBe(false);
    expect(Object.isFrozen((obj.spec as { securityContext: object }).securityContext)).toBe(false);
  });

  it('keeps a "__proto__" key an own property and leaves objects without managedFields alone', () => {
    const obj = JSON.parse('{"metadata":{"managedFields":[{"fieldsV1":{"__proto__":{},"f:a":{}}}]}}') as {
      metadata: { managedFields: Array<{ fieldsV1: Record<string, unknown> }> };
    };
    shareEmptyFieldSets(obj);
    const fields = obj.metadata.managedFields[0]!.fieldsV1;
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
    expect(Object.keys(fields)).toEqual(['__proto__', 'f:a']);
    for (const odd of [
      null,
      1,
      'x',
      {},
      { metadata: null },
      { metadata: { managedFields: [null, 1, { fieldsV1: [] }] } },
    ])
      expect(() => shareEmptyFieldSets(odd)).not.toThrow();
  });

  it('does not overflow the stack on a field set nested 10,000 deep', () => {
    const deep = '{"f:x":'.repeat(10_000) + '{}' + '}'.repeat(10_000);
    const obj = JSON.parse(`{"metadata":{"managedFields":[{"fieldsV1":${deep}}]}}`) as {
      metadata: { managedFields: Array<{ fieldsV1: Record<string, unknown> }> };
    };
    expect(() => shareEmptyFieldSets(obj)).not.toThrow();
    let node: Record<string, unknown> = obj.metadata.managedFields[0]!.fieldsV1;
    for (let i = 0; i < 10_000; i++) node = node['f:x'] as Record<string, unknown>;
    expect(node).toEqual({});
  });

  it('property: any field sets encode to the same JSON after sharing', () => {
    const fieldSet = fc.letrec((tie) => ({
      set: fc.dictionary(
        fc.string({ maxLength: 6 }),
        fc.oneof({ depthSize: 'small' }, fc.constant({}), tie('set')),
        {
          maxKeys: 4,
        },
      ),
    })).set;
    fc.assert(
      fc.property(fc.array(fieldSet, { maxLength: 4 }), (sets) => {
        const text = JSON.stringify({ metadata: { managedFields: sets.map((fieldsV1) => ({ fieldsV1 })) } });
        const obj = JSON.parse(text) as unknown;
        shareEmptyFieldSets(obj);
        expect(JSON.stringify(obj)).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ['kept whole', undefined],
    ['item by item', 0],
  ])(
    'the list decoder shares them in every item it decodes (%s), but not in an item it reuses',
    (_how, whole) => {
      const reused = pod();
      const body = Buffer.from(
        JSON.stringify({ kind: 'PodList', metadata: {}, items: [pod(), { ...pod(), reuse: true }] }),
      );
      const d = new ListDecoder<Record<string, unknown>>({
        reuseItem: (item) => (item.reuse === true ? reused : item),
        ...(whole === undefined ? {} : { wholeBodyBytes: whole }),
      });
      d.write(body);
      const { items } = d.end();
      expect(new Set(empties((items[0]!.metadata as { managedFields: unknown }).managedFields)).size).toBe(1);
      expect(items[1]).toBe(reused);
      expect(Object.isFrozen(empties((reused.metadata as { managedFields: unknown }).managedFields)[0])).toBe(
        false,
      );
    },
  );
});
