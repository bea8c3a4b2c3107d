import { definedProps } from './definedProps.js';

describe('definedProps', () => {
  it('drops the undefined properties and keeps every other value, falsy ones included', () => {
    const out = definedProps({ a: undefined, b: 0, c: '', d: null, e: false, f: 'x' });
    expect(out).toEqual({ b: 0, c: '', d: null, e: false, f: 'x' });
    expect(Object.keys(out)).not.toContain('a');
  });
});
