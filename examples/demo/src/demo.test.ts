import { PassThrough } from 'node:stream';
import { FakeApiServer } from '@kinformer/testing';
import { FAULT_KINDS, runDemo, type DemoOptions } from './demo.js';

function capture(): { out: PassThrough; text: () => string; waitFor: (s: string) => Promise<void> } {
  const out = new PassThrough();
  let text = '';
  const waiters: Array<() => void> = [];
  out.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    for (const w of waiters) w();
  });
  return {
    out,
    text: () => text,
    waitFor: (s) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if (text.includes(s)) resolve();
        };
        waiters.push(check);
        check();
      }),
  };
}

/** A kubeconfig for a port where nothing listens any more. */
async function unreachable(): Promise<NonNullable<DemoOptions['kubeConfig']>> {
  const server = await FakeApiServer.start();
  const kubeConfig = server.kubeConfig();
  await server.close();
  return kubeConfig;
}

describe('the README demo', () => {
  it('runs the default settings end to end: churn, a fault every 2 s, and the cache equal to the server within the settle window', async () => {
    const c = capture();
    const summary = await runDemo({ out: c.out, tty: false });
    const text = c.text();
    expect(summary.synced).toBe(true);
    // 20 s of churn with a fault every 2 s: about ten, every kind several times.
    expect(summary.faults).toBeGreaterThanOrEqual(6);
    for (const kind of FAULT_KINDS) expect(summary.faultKinds[kind]).toBeGreaterThanOrEqual(2);
    expect(summary.adds).toBeGreaterThanOrEqual(3000);
    expect(summary.updates).toBeGreaterThan(0);
    expect(summary.deletes).toBeGreaterThan(0);
    expect(text).toMatch(/cache synced in \d+ ms: 3000 pods/);
    // The live line shows the current lag and the last fault.
    expect(text).toMatch(/ lag \d+(\.\d)? m?s /);
    expect(text).toMatch(/last fault: (dropped watch|410 after compaction|429 Retry-After 1 s) \d/);
    expect(summary.lag?.writes).toBeGreaterThan(1000);
    expect(text).toContain('delivery lag (server write → handler)');
    // The final check waits for the cache to equal the server, up to 10 s, and passes.
    expect(summary.mismatches.slice(0, 3)).toEqual([]);
    expect(summary.matchesServer).toBe(true);
    expect(text).toContain('✓ the cache matches the server');
  }, 120_000);

  it('stops at once on Ctrl-C before the first sync and says it did not sync', async () => {
    const c = capture();
    const stop = new AbortController();
    const run = runDemo({ kubeConfig: await unreachable(), out: c.out, tty: false, signal: stop.signal });
    await c.waitFor('cannot list pods yet');
    stop.abort();
    const summary = await run;
    expect(summary).toMatchObject({ synced: false, interrupted: true, notSyncedReason: 'interrupted' });
    expect(c.text()).toContain('✗ not synced (interrupted)');
    expect(c.text()).not.toContain('cache synced');
    expect(c.text()).not.toContain('adds ');
  });

  it('gives up on an unreachable server after the sync timeout, in one line naming the cause', async () => {
    const c = capture();
    const summary = await runDemo({
      kubeConfig: await unreachable(),
      syncTimeoutMs: 1_000,
      out: c.out,
      tty: false,
    });
    expect(summary.synced).toBe(false);
    expect(summary.interrupted).toBe(false);
    expect(summary.notSyncedReason).toMatch(/^no answer after .*ECONNREFUSED/);
    const lines = c.text().trim().split('\n');
    expect(lines).toHaveLength(3); // "watching pods on …", "cannot list pods yet: … retrying", "✗ not synced (…)"
    expect(lines[1]).toMatch(/^cannot list pods yet: .*ECONNREFUSED.* — retrying \(Ctrl-C to stop\)$/);
    expect(lines[2]).toMatch(/^✗ not synced \(no answer after .*ECONNREFUSED.*\)$/);
  });

  it('reports a 403 in one line and stops', async () => {
    const server = await FakeApiServer.start({ recordRequests: false });
    try {
      server.faults.failNext({ status: 403, count: 1_000, verbs: ['list'] });
      const c = capture();
      const summary = await runDemo({ kubeConfig: server.kubeConfig(), out: c.out, tty: false });
      expect(summary.synced).toBe(false);
      expect(summary.notSyncedReason).toMatch(/forbidden/i);
      const lines = c.text().trim().split('\n');
      expect(lines.at(-1)).toMatch(/^✗ not synced \(.*forbidden.*\)$/i);
      expect(lines.length).toBeLessThanOrEqual(3);
      expect(c.text()).not.toMatch(/\n\s+at /); // no stack
    } finally {
      await server.close();
    }
  });
});
