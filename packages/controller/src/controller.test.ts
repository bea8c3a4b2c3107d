import { newStore } from '@kinformer/cache';
import { ErrorCodes, KinformerError } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import { DeltaFIFO, RealFIFO } from '@kinformer/delta-fifo';
import type { Deltas } from '@kinformer/delta-fifo';
import { FakeListerWatcher } from '@kinformer/reflector/testing';
import { Controller } from './controller.js';
import { captureLogs, keyOf, noBackoff, pod, podList, waitFor, within } from '@kinformer/test-tools';
import type { Pod } from '@kinformer/test-tools';

function setup(options: { queue?: 'RealFIFO' | 'DeltaFIFO' } = {}) {
  const clock = new FakeClock();
  const store = newStore<Pod>();
  const queue =
    options.queue === 'DeltaFIFO'
      ? new DeltaFIFO<Pod>({ knownObjects: store, emitDeltaTypeReplaced: true })
      : new RealFIFO<Pod>({ knownObjects: store });
  const lw = new FakeListerWatcher<Pod>();
  return { clock, store, queue, lw };
}

describe('Controller', () => {
  it('feeds the queue from the reflector and pops into process; hasSynced after the initial list', async () => {
    const { clock, store, queue, lw } = setup();
    lw.enqueueList(podList('10', pod('a', '1'), pod('b', '2')));
    const seen: Array<[string, string, boolean]> = [];
    const controller = new Controller<Pod>({
      queue,
      listerWatcher: lw,
      clock,
      process: (deltas, initial) => {
        for (const d of deltas) {
          seen.push([d.type, keyOf(d.object as Pod), initial]);
          store.update(d.object as Pod);
        }
      },
    });
    expect(controller.hasSynced()).toBe(false);
    expect(controller.lastSyncResourceVersion()).toBe('');
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await waitFor(() => controller.hasSynced(), 'initial sync');
    expect(controller.lastSyncResourceVersion()).toBe('10');
    const watch = await lw.nextWatch();
    expect(watch.options.resourceVersion).toBe('10');
    watch.add(pod('c', '11'));
    await waitFor(() => seen.length === 3, 'the watch event');
    expect(seen).toEqual([
      ['Replaced', 'default/a', true],
      ['Replaced', 'default/b', true],
      ['Added', 'default/c', false],
    ]);
    expect(controller.lastSyncResourceVersion()).toBe('11');
    expect(controller.isWatching()).toBe(true);
    ac.abort();
    await done;
    expect(queue.isClosed()).toBe(true);
    expect(watch.stopped).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('calls onSynced once, also for an empty initial list', async () => {
    const { clock, queue, lw } = setup();
    lw.enqueueList(podList('5'));
    let synced = 0;
    const controller = new Controller<Pod>({
      queue,
      listerWatcher: lw,
      clock,
      process: () => undefined,
      onSynced: () => synced++,
    });
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await waitFor(() => synced === 1, 'onSynced');
    expect(controller.hasSynced()).toBe(true);
    (await lw.nextWatch()).add(pod('a', '6'));
    await waitFor(() => queue.length() === 0, 'the event to be popped');
    ac.abort();
    await done;
    expect(synced).toBe(1);
  });

  it('rejects a second run with ERR_ALREADY_STARTED', async () => {
    const { clock, queue, lw } = setup();
    lw.enqueueList(podList('1'));
    const controller = new Controller<Pod>({ queue, listerWatcher: lw, clock, process: () => undefined });
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await expect(controller.run(ac.signal)).rejects.toMatchObject({ code: ErrorCodes.ALREADY_STARTED });
    ac.abort();
    await done;
  });

  // client-go TestProcessDeltasInBatch, adapted: there is no TransactionStore here, so a batch is the
  // RealFIFO's popBatch handed to processBatch (the informers apply it item by item).
  it('uses popBatch with a RealFIFO: one processBatch call for the initial list', async () => {
    const { clock, queue, lw } = setup();
    lw.enqueueList(podList('10', pod('a', '1'), pod('b', '2'), pod('c', '3')));
    const batches: string[][] = [];
    const singles: string[] = [];
    const controller = new Controller<Pod>({
      queue,
      listerWatcher: lw,
      clock,
      process: (deltas) => void singles.push(keyOf(deltas[0]!.object as Pod)),
      processBatch: (batch: Deltas<Pod>[]) => void batches.push(batch.map((d) => keyOf(d[0]!.object as Pod))),
    });
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await waitFor(() => controller.hasSynced(), 'sync');
    ac.abort();
    await done;
    expect(batches).toEqual([['default/a', 'default/b', 'default/c']]);
    expect(singles).toEqual([]);
  });

  it('pops one key at a time from a DeltaFIFO (no popBatch)', async () => {
    const { clock, queue, lw } = setup({ queue: 'DeltaFIFO' });
    lw.enqueueList(podList('10', pod('a', '1'), pod('b', '2')));
    const singles: string[] = [];
    const controller = new Controller<Pod>({
      queue,
      listerWatcher: lw,
      clock,
      process: (deltas) => void singles.push(`${deltas[0]!.type} ${keyOf(deltas[0]!.object as Pod)}`),
      processBatch: () => {
        throw new Error('not expected');
      },
    });
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await waitFor(() => controller.hasSynced(), 'sync');
    ac.abort();
    await done;
    expect(singles).toEqual(['Replaced default/a', 'Replaced default/b']);
  });

  // client-go TestPanicPropagated, adapted: a throw in process stops the controller and run rejects with it.
  it('stops and rejects run with the error when process throws', async () => {
    const { clock, queue, lw } = setup();
    lw.enqueueList(podList('10', pod('a', '1'), pod('b', '2')));
    const boom = new Error('handler exploded');
    const processed: string[] = [];
    const controller = new Controller<Pod>({
      queue,
      listerWatcher: lw,
      clock,
      process: (deltas) => {
        processed.push(keyOf(deltas[0]!.object as Pod));
        throw boom;
      },
    });
    const ac = new AbortController();
    await expect(controller.run(ac.signal)).rejects.toBe(boom);
    expect(processed).toEqual(['default/a']);
    expect(queue.isClosed()).toBe(true);
    expect(lw.watches.every((w) => w.isFinished)).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('stops and rejects run with the error when the reflector fails, instead of waiting forever', async () => {
    const { queue, lw } = setup();
    lw.enqueueList(new Error('list failed'));
    const broken = new Error('the clock broke');
    // The reflector's run rejects only on a bug; a clock whose sleep rejects stands in for one.
    class BrokenClock extends FakeClock {
      override sleep(): Promise<void> {
        return Promise.reject(broken);
      }
    }
    const clock = new BrokenClock();
    const { logger, lines } = captureLogs('error');
    const controller = new Controller<Pod>({
      queue,
      listerWatcher: lw,
      clock,
      logger,
      process: () => undefined,
    });
    const ac = new AbortController();
    // Before the fix run never settled: within() turns that hang into a failure naming it.
    await expect(within(controller.run(ac.signal), 'controller.run')).rejects.toBe(broken);
    expect(ac.signal.aborted).toBe(false);
    expect(controller.hasSynced()).toBe(false);
    expect(queue.isClosed()).toBe(true);
    expect(lines.map((l) => l.msg)).toContain('reflector failed; stopping the controller');
  });

  it('with retryOnError requeues a failed item and retries it after a short backoff', async () => {
    const { clock, queue, lw } = setup();
    lw.enqueueList(podList('10', pod('a', '1'), pod('b', '2')));
    const attempts: string[] = [];
    let failOnce = true;
    const controller = new Controller<Pod>({
      queue,
      listerWatcher: lw,
      clock,
      retryOnError: true,
      process: async (deltas) => {
        const key = keyOf(deltas[0]!.object as Pod);
        attempts.push(key);
        if (key === 'default/a' && failOnce) {
          failOnce = false;
          throw new KinformerError(ErrorCodes.HANDLER_FAILED, 'transient');
        }
      },
    });
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await waitFor(
      () => attempts.length === 1 && clock.pendingTimers() > 0,
      'the first attempt and its backoff',
    );
    expect(controller.hasSynced()).toBe(false);
    await clock.tick(10);
    await waitFor(() => controller.hasSynced(), 'sync after the retry');
    expect(attempts).toEqual(['default/a', 'default/a', 'default/b']);
    ac.abort();
    await done;
  });

  it('resolves run at once for an already aborted signal', async () => {
    const { clock, queue, lw } = setup();
    const controller = new Controller<Pod>({ queue, listerWatcher: lw, clock, process: () => undefined });
    await controller.run(AbortSignal.abort());
    expect(lw.calls).toEqual([]);
    expect(queue.isClosed()).toBe(true);
  });

  it('passes the resync period and shouldResync to the reflector', async () => {
    const { clock, store, queue, lw } = setup();
    lw.enqueueList(podList('10', pod('a', '1')));
    const types: string[] = [];
    let allow = false;
    let asked = 0;
    const controller = new Controller<Pod>({
      queue,
      listerWatcher: lw,
      clock,
      fullResyncPeriodMs: 1000,
      shouldResync: () => {
        asked++;
        return allow;
      },
      reflectorOptions: { backoff: noBackoff },
      process: (deltas) => {
        for (const d of deltas) {
          types.push(d.type);
          store.update(d.object as Pod);
        }
      },
    });
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await lw.nextWatch();
    await waitFor(() => types.length === 1, 'initial item');
    await clock.tick(1000);
    expect(asked).toBe(1);
    expect(types).toEqual(['Replaced']);
    allow = true;
    await clock.tick(1000);
    await waitFor(() => types.length === 2, 'the resync');
    expect(types).toEqual(['Replaced', 'Sync']);
    ac.abort();
    await done;
  });
});

describe('Controller on a long queue', () => {
  // A relist of a big cluster queues everything at once; the process loop must not hold the event
  // loop for all of it (other informers' watches, HTTP servers, lease renewals share the thread).
  it.each(['pop', 'popBatch'] as const)('lets I/O run while it drains a long queue (%s)', async (mode) => {
    const { clock, store, queue, lw } = setup();
    const n = 20_000;
    const items = Array.from({ length: n }, (_, i) => pod(`p${i}`, String(i + 1)));
    lw.enqueueList(podList(String(n), ...items));
    let processed = 0;
    const apply = (deltas: Deltas<Pod>): void => {
      for (const d of deltas) store.update(d.object as Pod);
      processed++;
    };
    const controller = new Controller<Pod>({
      queue,
      listerWatcher: lw,
      clock,
      process: apply,
      ...(mode === 'popBatch' ? { processBatch: (batch: Deltas<Pod>[]) => batch.forEach(apply) } : {}),
    });
    const ac = new AbortController();
    const done = controller.run(ac.signal);
    await waitFor(() => processed > 0, 'processing to start');
    let processedAtImmediate = -1;
    setImmediate(() => (processedAtImmediate = processed));
    await waitFor(() => controller.hasSynced(), 'the whole list');
    expect(processedAtImmediate).toBeGreaterThan(0);
    expect(processedAtImmediate).toBeLessThan(n);
    ac.abort();
    await done;
  });
});
