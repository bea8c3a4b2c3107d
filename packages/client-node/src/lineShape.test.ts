import { describeLine } from './lineShape.js';

describe('describeLine', () => {
  it('keeps key names short however long they are, so a shape stays a few hundred characters', () => {
    const longKey = 'k'.repeat(100_000);
    const shape = describeLine({ type: 'ADDED', object: { metadata: {}, [longKey]: 1 } });
    expect(shape.length).toBeLessThan(1_000);
    expect(shape).not.toContain('k'.repeat(65));
  });

  it('lists at most 20 key names, then an ellipsis', () => {
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`key${i}`, i]));
    const shape = JSON.parse(describeLine(many)) as { keys: string[] };
    expect(shape.keys).toHaveLength(21);
    expect(shape.keys.at(-1)).toBe('…');
  });
});
