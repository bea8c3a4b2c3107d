import { createLogger, DeletedFinalStateUnknown } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import { ProcessorListener } from './processorListener.js';
import type { Notification } from './processorListener.js';
import { determineResyncPeriod, SharedProcessor } from './sharedProcessor.js';
import { captureLogs, deferred, pod, settle, waitFor } from '@kinformer/test-tools';
import type { Pod } from '@kinformer/test-tools';

const silent = createLogger({ level: 'silent' });

function listener(
  onAdd: (name: string, initial: boolean) => void | Promise<void>,
  options: { resyncPeriodMs?: number; now?: number } = {},
) {
  let initialDone = 0;
  const l = new ProcessorListener<Pod>(
    { onAdd: (obj, initial) => onAdd(obj.metadata?.name ?? '', initial) },
    {
      name: 'test',
      logger: silent,
      counters: { dispatched: 0, errors: 0 },
      requestedResyncPeriodMs: options.resyncPeriodMs ?? 0,
      resyncPeriodMs: options.resyncPeriodMs ?? 0,
      clock: new FakeClock(options.now ?? 0),
      onInitialListProcessed: () => initialDone++,
    },
  );
  return { l, initialDone: () => initialDone };
}

const add = (name: string, initial = false): Notification<Pod> => ({
  type: 'add',
  obj: pod(name, '1'),
  isInInitialList: initial,
});

/** A listener named `h` whose handler throws on every event, logging at `level` into `lines`. */
function failingListener(
  level: string,
  clock = new FakeClock(),
  failing: (name: string) => boolean = () => true,
) {
  const { logger, lines } = captureLogs(level);
  const counters = { dispatched: 0, errors: 0 };
  const fail = (obj: Pod | DeletedFinalStateUnknown<Pod>): void => {
    if (failing(obj instanceof DeletedFinalStateUnknown ? obj.key : (obj.metadata?.name ?? '')))
      throw new Error('nope');
  };
  const l = new ProcessorListener<Pod>(
    { onAdd: fail, onUpdate: (_old, obj) => fail(obj), onDelete: fail },
    {
      name: 'h',
      logger,
      counters,
      requestedResyncPeriodMs: 0,
      resyncPeriodMs: 0,
      clock,
      onInitialListProcessed: () => undefined,
    },
  );
  return { l, counters, lines };
}

describe('ProcessorListener', () => {
  // client-go TestListenerResyncPeriodsDelayed (the processor starting late): what was queued before
  // start is delivered, in order, once started.
  it('buffers until started, then delivers in order on a later microtask', async () => {
    const seen: string[] = [];
    const { l } = listener((name) => void seen.push(name));
    l.add(add('a'));
    l.add(add('b'));
    await settle();
    expect(seen).toEqual([]);
    l.start();
    expect(seen).toEqual([]); // never inside the caller
    await settle();
    l.add(add('c'));
    expect(seen).toEqual(['a', 'b']);
    await settle();
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(l.dispatched).toBe(3);
  });

  it('tracks initial-list adds until the handler processed them, and reports it once', async () => {
    const { promise: gate, resolve: release } = deferred();
    const { l, initialDone } = listener((name) => (name === 'a' ? gate : undefined));
    l.start();
    l.add(add('a', true));
    l.add(add('b', true));
    l.add(add('c', false));
    await settle();
    expect(l.initialListProcessed()).toBe(false);
    release();
    await waitFor(() => l.dispatched === 3, 'all three');
    expect(l.initialListProcessed()).toBe(true);
    expect(initialDone()).toBe(1);
  });

  it('drops buffered notifications on stop and resolves once the call in progress settled', async () => {
    const { promise: gate, resolve: release } = deferred();
    const seen: string[] = [];
    const { l } = listener(async (name) => {
      seen.push(name);
      await gate;
    });
    l.start();
    l.add(add('a'));
    l.add(add('b'));
    await settle();
    expect(l.bufferDepth).toBe(1);
    let stopped = false;
    void l.stop().then(() => (stopped = true));
    expect(l.bufferDepth).toBe(0);
    await settle();
    expect(stopped).toBe(false);
    release();
    await waitFor(() => stopped, 'stop');
    l.add(add('c'));
    await settle();
    expect(seen).toEqual(['a']);
    expect(l.isStopped()).toBe(true);
  });

  it('lets the event loop run during a long run of synchronous handler calls', async () => {
    let handled = 0;
    const { l } = listener(() => void handled++);
    l.start();
    for (let i = 0; i < 5000; i++) l.add(add(`p${i}`));
    let immediateRanAt = -1;
    setImmediate(() => (immediateRanAt = handled));
    await waitFor(() => handled === 5000, 'all notifications');
    expect(immediateRanAt).toBeGreaterThan(0);
    expect(immediateRanAt).toBeLessThan(5000);
  });

  it('logs a failure with the key and event, and counts it', async () => {
    const { l, counters, lines } = failingListener('error');
    l.start();
    l.add({ type: 'delete', obj: pod('a', '1', 'ns') });
    await settle();
    expect(counters).toEqual({ dispatched: 1, errors: 1 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: 'event handler failed',
      key: 'ns/a',
      event: 'delete',
      handler: 'h',
      err: { message: 'nope' },
    });
  });
});

describe('ProcessorListener failure logs', () => {
  it('logs a handler that fails on every event once at error, the repeats at debug', async () => {
    const { l, counters, lines } = failingListener('debug');
    l.start();
    for (let i = 0; i < 5; i++) l.add({ type: 'add', obj: pod(`p${i}`, '1'), isInInitialList: false });
    await waitFor(() => counters.errors === 5, 'five failures');
    const failures = lines.filter((x) => x.msg === 'event handler failed');
    expect(failures.map((x) => x.level)).toEqual([50, 20, 20, 20, 20]);
    expect(failures[0]).toMatchObject({ key: 'default/p0', handler: 'h' });
  });

  it('throttles by the injected clock: the next error line after a minute reports the repeats', async () => {
    const clock = new FakeClock();
    const { l, counters, lines } = failingListener('error', clock);
    l.start();
    for (let i = 0; i < 3; i++) l.add(add(`p${i}`));
    await waitFor(() => counters.errors === 3, 'three failures');
    clock.advance(59_999);
    l.add(add('p3'));
    await waitFor(() => counters.errors === 4, 'a fourth failure');
    expect(lines.map((x) => x.failuresSinceLastReport)).toEqual([undefined]); // still within the minute
    clock.advance(1);
    l.add(add('p4'));
    await waitFor(() => counters.errors === 5, 'a fifth failure');
    expect(lines.map((x) => [x.key, x.failuresSinceLastReport])).toEqual([
      ['default/p0', undefined],
      ['default/p4', 3],
    ]);
  });

  it('reports the repeats of a handler that stopped failing once the minute is over, and at stop', async () => {
    const clock = new FakeClock();
    const failing = new Set(['p0', 'p1', 'p2']);
    const { l, counters, lines } = failingListener('error', clock, (name) => failing.has(name));
    l.start();
    for (let i = 0; i < 3; i++) l.add(add(`p${i}`));
    l.add(add('ok1'));
    await waitFor(() => counters.dispatched === 4, 'four handled');
    expect(lines).toHaveLength(1); // the first failure; the minute is not over
    clock.advance(60_000);
    l.add(add('ok2'));
    await waitFor(() => counters.dispatched === 5, 'five handled');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ handler: 'h', failuresSinceLastReport: 2, level: 50 });

    failing.add('p5');
    failing.add('p6');
    clock.advance(60_000);
    l.add(add('p5'));
    l.add(add('p6'));
    await waitFor(() => counters.errors === 5, 'two more failures');
    expect(lines).toHaveLength(3); // p5 at error, p6 quiet
    await l.stop();
    expect(lines).toHaveLength(4);
    expect(lines[3]).toMatchObject({ failuresSinceLastReport: 1 });
  });
});

describe('ProcessorListener isolation', () => {
  it('counts a handler whose returned value has a throwing `then` as failed, and keeps delivering', async () => {
    const counters = { dispatched: 0, errors: 0 };
    const seen: string[] = [];
    const l = new ProcessorListener<Pod>(
      {
        onAdd: (obj) => {
          seen.push(obj.metadata?.name ?? '');
          if (obj.metadata?.name !== 'a') return undefined;
          return Object.defineProperty({}, 'then', {
            get() {
              throw new Error('hostile thenable');
            },
          }) as Promise<void>;
        },
      },
      {
        name: 'h',
        logger: silent,
        counters,
        requestedResyncPeriodMs: 0,
        resyncPeriodMs: 0,
        clock: new FakeClock(),
        onInitialListProcessed: () => undefined,
      },
    );
    l.start();
    l.add(add('a'));
    l.add(add('b'));
    await waitFor(() => seen.length === 2, 'both notifications');
    await settle();
    expect(seen).toEqual(['a', 'b']);
    expect(counters).toEqual({ dispatched: 2, errors: 1 });
  });

  it('logs a throwing initial-list callback and keeps delivering', async () => {
    const { logger, lines } = captureLogs('error');
    const seen: string[] = [];
    const l = new ProcessorListener<Pod>(
      { onAdd: (obj) => void seen.push(obj.metadata?.name ?? '') },
      {
        name: 'h',
        logger,
        counters: { dispatched: 0, errors: 0 },
        requestedResyncPeriodMs: 0,
        resyncPeriodMs: 0,
        clock: new FakeClock(),
        onInitialListProcessed: () => {
          throw new Error('observer failed');
        },
      },
    );
    l.start();
    l.add(add('a', true));
    l.add(add('b'));
    await waitFor(() => seen.length === 2, 'both notifications');
    expect(l.initialListProcessed()).toBe(true);
    expect(lines).toEqual([
      expect.objectContaining({ err: expect.objectContaining({ message: 'observer failed' }) }),
    ]);
  });
});

describe('SharedProcessor', () => {
  // client-go TestListenerResyncPeriods, at the processor level: shouldResync marks exactly the due listeners.
  it('marks only the listeners whose resync is due, and schedules their next one', () => {
    const p = new SharedProcessor<Pod>();
    const never = listener(() => undefined, { resyncPeriodMs: 0 }).l;
    const two = listener(() => undefined, { resyncPeriodMs: 2000 }).l;
    const three = listener(() => undefined, { resyncPeriodMs: 3000 }).l;
    for (const l of [never, two, three]) p.addListener(l);
    const flags = (): boolean[] => [never.syncing, two.syncing, three.syncing];
    expect(flags()).toEqual([true, true, true]); // before the first check every listener counts as syncing
    expect(p.shouldResync(1000)).toBe(false);
    expect(flags()).toEqual([false, false, false]);
    expect(p.shouldResync(2000)).toBe(true);
    expect(flags()).toEqual([false, true, false]);
    expect(p.shouldResync(3000)).toBe(true);
    expect(flags()).toEqual([false, false, true]);
    expect(p.shouldResync(4000)).toBe(true);
    expect(flags()).toEqual([false, true, false]);
    expect(p.shouldResync(6000)).toBe(true);
    expect(flags()).toEqual([false, true, true]);
  });

  it('sends sync notifications only to syncing listeners, others to all', async () => {
    const p = new SharedProcessor<Pod>();
    const a: string[] = [];
    const b: string[] = [];
    const la = listener((name) => void a.push(name)).l;
    const lb = listener((name) => void b.push(name)).l;
    p.addListener(la);
    p.addListener(lb);
    p.run();
    lb.syncing = false;
    p.distribute(add('sync'), true);
    p.distribute(add('real'), false);
    await settle();
    expect(a).toEqual(['sync', 'real']);
    expect(b).toEqual(['real']);
    await p.stop();
    p.distribute(add('late'), false);
    await settle();
    expect(a).toEqual(['sync', 'real']);
  });

  it("determineResyncPeriod follows client-go's rules", () => {
    expect(determineResyncPeriod(0, 1000)).toBe(0);
    expect(determineResyncPeriod(5000, 0)).toBe(0);
    expect(determineResyncPeriod(500, 1000)).toBe(1000);
    expect(determineResyncPeriod(5000, 1000)).toBe(5000);
  });
});
