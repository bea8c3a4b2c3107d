import { PassThrough } from 'node:stream';
import { runDemo } from './demo.js';

describe('the README demo', () => {
  it('syncs, follows churn with injected faults, and ends with the cache equal to the server', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const summary = await runDemo({
      pods: 400,
      durationMs: 2500,
      churnPerSecond: 400,
      chaos: true,
      out,
      tty: false,
    });
    expect(summary.matchesServer).toBe(true);
    expect(summary.mismatches).toEqual([]);
    expect(summary.adds).toBeGreaterThanOrEqual(400);
    expect(summary.updates).toBeGreaterThan(0);
    expect(summary.deletes).toBeGreaterThan(0);
    expect(text).toContain('cache synced');
    expect(text).toContain('the cache matches the server');
  });
});
