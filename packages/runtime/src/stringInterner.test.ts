import fc from 'fast-check';
import { stringInterner } from './stringInterner.js';

describe('stringInterner', () => {
  it('keeps every object JSON-equal to its input (property)', () => {
    const intern = stringInterner({ maxEntries: 8 });
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 5 }), (values) => {
        const obj = {
          metadata: { name: 'x', managedFields: [{ fieldsV1: { 'f:spec': { 'f:a': {} } } }] },
          spec: values,
        };
        const before = JSON.stringify(obj);
        expect(JSON.stringify(intern(obj))).toBe(before);
        expect(intern.size).toBeLessThanOrEqual(8);
      }),
    );
  });

  it('makes equal strings of different objects one value, and empty fieldsV1 leaves one frozen object', () => {
    const intern = stringInterner();
    interface Parsed {
      metadata: { namespace: string; managedFields: Array<{ fieldsV1: Record<string, object> }> };
      spec: { empty: object };
    }
    const parse = (): Parsed =>
      JSON.parse(
        '{"metadata":{"namespace":"prod","managedFields":[{"fieldsV1":{"f:a":{},"f:b":{}}}]},"spec":{"empty":{}}}',
      ) as Parsed;
    const a = intern(parse());
    const b = intern(parse());
    expect(intern.size).toBe(1);
    const fa = a.metadata.managedFields[0]!.fieldsV1;
    const fb = b.metadata.managedFields[0]!.fieldsV1;
    expect(fa['f:a']).toBe(fb['f:b']);
    expect(Object.isFrozen(fa['f:a'])).toBe(true);
    // Outside managedFields an empty object stays the object's own (a user may fill it in).
    expect(a.spec.empty).not.toBe(b.spec.empty);
    expect(Object.isFrozen(a.spec.empty)).toBe(false);
  });

  it('keeps no resourceVersion in its table (none is shared; each would be a new entry per event)', () => {
    const intern = stringInterner();
    for (let rv = 1; rv <= 100; rv++) {
      const obj = intern({ metadata: { name: 'a', namespace: 'prod', resourceVersion: String(rv) } });
      expect(obj.metadata.resourceVersion).toBe(String(rv));
      expect(Object.keys(obj.metadata)).toEqual(['name', 'namespace', 'resourceVersion']);
    }
    expect(intern.size).toBe(2);
  });

  it('clear() empties the table: objects keep their values, later ones share again among themselves', () => {
    const intern = stringInterner();
    const a = intern({ metadata: { name: 'a', namespace: 'prod' } });
    expect(intern.size).toBe(2);
    intern.clear();
    expect(intern.size).toBe(0);
    expect(a.metadata).toEqual({ name: 'a', namespace: 'prod' });
    intern({ metadata: { name: 'b', namespace: 'prod' } });
    expect(intern.size).toBe(2);
  });
});
