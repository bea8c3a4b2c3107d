import { createListWatch } from '@kinformer/client-node';
import { ErrorCodes, isKinformerError, type KubeObject } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import { FakeApiServer } from '@kinformer/testing';
import { CountingListerWatcher } from './countingListerWatcher.js';
import {
  ContinueTrap,
  FAILURE_WINDOW_MS,
  FAULT_KINDS,
  FaultScheduler,
  MAX_PENDING_FAILURES,
  type FaultKind,
} from './faultScheduler.js';
import { Prng } from './prng.js';
import { WIDGETS_DEFINITION } from './churn.js';

let server: FakeApiServer;
/** The server's clock: failure windows end only when a test moves it. */
let clock: FakeClock;

beforeEach(async () => {
  clock = new FakeClock(1_000_000);
  server = await FakeApiServer.start({ recordRequests: false, resources: [WIDGETS_DEFINITION], clock });
});

afterEach(async () => {
  await server.close();
});

function only(kind: FaultKind): Partial<Record<FaultKind, number>> {
  return Object.fromEntries(FAULT_KINDS.map((k) => [k, k === kind ? 1 : 0]));
}

// Regression (seed 102, --duration 3m --fault-interval 100ms): failure rules piled up faster than the
// lone widgets informer could consume them, and it went 50 s without a watch. At most
// MAX_PENDING_FAILURES rules now wait per scope.
test('failure rules do not pile up: at most MAX_PENDING_FAILURES wait per scope, the rest are skipped and counted', async () => {
  const scheduler = new FaultScheduler(server, new Prng(5), new ContinueTrap(server), {
    meanTicks: 1,
    tickMs: 10,
    weights: only('throttle-429'),
  });
  for (let i = 0; i < 40; i++) await scheduler.tick();
  const c = scheduler.counts['throttle-429'];
  expect(c.injected + c.skipped).toBe(40);
  // Four scopes: all resources, pods, configmaps, widgets.
  expect(c.injected).toBeLessThanOrEqual(4 * MAX_PENDING_FAILURES);
  expect(c.skipped).toBeGreaterThanOrEqual(40 - 4 * MAX_PENDING_FAILURES);
});

/** A scheduler that injected one `error-500` rule (seed 3: lists of every resource, count 3), and a pods ListerWatcher. */
async function injectedError500(): Promise<{
  scheduler: FaultScheduler;
  lw: ReturnType<typeof createListWatch<KubeObject>>;
  signal: AbortSignal;
}> {
  const scheduler = new FaultScheduler(server, new Prng(3), new ContinueTrap(server), {
    meanTicks: 1,
    tickMs: 10,
    weights: only('error-500'),
  });
  await scheduler.tick();
  const lw = createListWatch<KubeObject>(server.kubeConfig(), { version: 'v1', resource: 'pods' });
  return { scheduler, lw, signal: AbortSignal.timeout(5_000) };
}

test('the failure rules hit requests, and stop() cancels the rest and counts the hits', async () => {
  const { scheduler, lw, signal } = await injectedError500();
  const outcomes: string[] = [];
  for (let i = 0; i < 4; i++) {
    try {
      await lw.list({}, { signal });
      outcomes.push('ok');
    } catch (err) {
      outcomes.push(isKinformerError(err) ? err.code : 'other');
    }
  }
  scheduler.stop();
  // Seed 3 draws one rule for lists of every resource, counted 3.
  expect(outcomes).toEqual([ErrorCodes.INTERNAL, ErrorCodes.INTERNAL, ErrorCodes.INTERNAL, 'ok']);
  expect(scheduler.counts['error-500']).toEqual({ injected: 1, skipped: 0, hits: 3 });
  await expect(lw.list({}, { signal })).resolves.toMatchObject({ items: [] });
});

// The ten-minute soak at a fault every 2 s (seed 42): rules that waited for "the next request" fell on
// the one informer in backoff, twelve LISTs in a row, and `all/widgets` had no watch for 378 s.
test('a failure rule lasts FAILURE_WINDOW_MS: a request sent after its window is not failed for it', async () => {
  const { scheduler, lw, signal } = await injectedError500();
  await expect(lw.list({}, { signal })).rejects.toMatchObject({ code: ErrorCodes.INTERNAL });
  await clock.tick(FAILURE_WINDOW_MS);
  await expect(lw.list({}, { signal })).resolves.toMatchObject({ items: [] });
  scheduler.stop();
  expect(scheduler.counts['error-500']).toEqual({ injected: 1, skipped: 0, hits: 1 });
});

test('a continue trap not sprung within its window is dropped', () => {
  let now = 0;
  const trap = new ContinueTrap(server, { now: () => now });
  trap.arm();
  trap.arm();
  expect(trap.armed).toBe(2);
  now = FAILURE_WINDOW_MS;
  expect(trap.armed).toBe(0);
  const rv = server.resourceVersion;
  trap.beforeContinue();
  expect(trap.sprung).toBe(0);
  expect(server.resourceVersion).toBe(rv);
});

test('a stall holds open watches until its time is up, then events flow; stop() releases every stall', async () => {
  server.create('pods', { metadata: { name: 'a', namespace: 'default' } });
  const scheduler = new FaultScheduler(server, new Prng(3), new ContinueTrap(server), {
    meanTicks: 1_000_000,
    tickMs: 10,
    weights: only('stall'),
  });
  const lw = createListWatch<KubeObject>(server.kubeConfig(), { version: 'v1', resource: 'pods' });
  const controller = new AbortController();
  const stream = await lw.watch({ resourceVersion: server.resourceVersion }, { signal: controller.signal });
  await scheduler.inject('stall');
  expect(scheduler.counts.stall).toEqual({ injected: 1, skipped: 0, hits: 1 });
  server.patch('pods', 'default/a', { metadata: { labels: { x: '1' } } });
  const it = stream[Symbol.asyncIterator]();
  const next = it.next();
  const raced = await Promise.race([
    next,
    new Promise((resolve) => setTimeout(() => resolve('stalled'), 5)), // unstalled, it arrives over loopback first
  ]);
  expect(raced).toBe('stalled');
  scheduler.stop();
  await expect(next).resolves.toMatchObject({ value: { type: 'MODIFIED' } });
  controller.abort();
});

test('the continue trap compacts the server before a continuation page, which then gets 410 Expired', async () => {
  for (let i = 0; i < 5; i++)
    server.create('configmaps', { metadata: { name: `cm-${i}`, namespace: 'default' } });
  const trap = new ContinueTrap(server, { now: () => clock.now() });
  const lw = new CountingListerWatcher(
    createListWatch<KubeObject>(server.kubeConfig(), { version: 'v1', resource: 'configmaps' }),
    trap,
  );
  const signal = AbortSignal.timeout(5_000);
  const first = await lw.list({ resourceVersion: '', limit: 2 }, { signal });
  const token = first.metadata!.continue!;
  expect(token).toBeTruthy();
  trap.arm();
  await expect(lw.list({ continue: token, limit: 2 }, { signal })).rejects.toMatchObject({
    code: ErrorCodes.RESOURCE_EXPIRED,
  });
  expect(trap.sprung).toBe(1);
  expect(trap.armed).toBe(0);
  // Disarmed: a fresh list pages normally again.
  const again = await lw.list({ resourceVersion: '', limit: 2 }, { signal });
  await expect(lw.list({ continue: again.metadata!.continue!, limit: 2 }, { signal })).resolves.toMatchObject(
    { items: [{}, {}] },
  );
  expect(lw.counters).toMatchObject({
    listRequests: 4,
    continuePages: 2,
    listErrors: { ERR_RESOURCE_EXPIRED: 1 },
  });
});

// Under load the chaos loop runs late (a 10 ms tick took 100+ ms at load 14), and faults drawn once
// per tick fell to a tenth of their wall-time rate: a 30 s run injected 2 faults. A tick that stands
// for `elapsed` ticks draws with the chance of all of them.
test('a late tick keeps the wall-time fault rate: 100 ticks of 10 elapsed inject about as many faults as 1,000 ticks', async () => {
  const run = async (ticks: number, elapsed: number): Promise<number> => {
    const scheduler = new FaultScheduler(server, new Prng(11), new ContinueTrap(server), {
      meanTicks: 25,
      tickMs: 10,
      weights: only('compact'),
    });
    for (let i = 0; i < ticks; i++) await scheduler.tick(elapsed);
    scheduler.stop();
    return scheduler.injected;
  };
  const onTime = await run(1_000, 1); // expected 40
  const late = await run(100, 10); // expected 100 × (1 − (24/25)^10) ≈ 33.5
  expect(onTime).toBeGreaterThan(20);
  expect(late).toBeGreaterThan(15);
  expect(late).toBeLessThan(60);
  const once = await run(100, 1); // the old rule: one draw per tick, whatever the delay: ≈ 4
  expect(once).toBeLessThan(12);
  expect(await run(1_000, 0)).toBe(0); // catch-up ticks, whose time was counted already: no fault
});
