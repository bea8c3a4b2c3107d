import { DeletedFinalStateUnknown, ErrorCodes, KinformerError } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import { FakeListerWatcher } from '@kinformer/reflector/testing';
import type { ResourceEventHandler } from '@kinformer/controller';
import { SharedIndexInformer } from './sharedIndexInformer.js';
import type { SharedIndexInformerOptions } from './sharedIndexInformer.js';
import {
  captureLogs,
  deferred,
  keyOf,
  noBackoff,
  pod,
  podList,
  settle,
  waitFor,
} from '@kinformer/test-tools';
import type { Pod } from '@kinformer/test-tools';

type Event =
  | { type: 'add'; key: string; rv: string | undefined; initial: boolean }
  | { type: 'update'; key: string; rv: string | undefined; oldRv: string | undefined }
  | { type: 'delete'; key: string; tombstone: boolean };

/** client-go's testListener: records what a handler saw. */
class TestListener implements ResourceEventHandler<Pod> {
  readonly events: Event[] = [];
  onAdd(obj: Pod, initial: boolean): void {
    this.events.push({ type: 'add', key: keyOf(obj), rv: obj.metadata?.resourceVersion, initial });
  }
  onUpdate(oldObj: Pod, newObj: Pod): void {
    this.events.push({
      type: 'update',
      key: keyOf(newObj),
      rv: newObj.metadata?.resourceVersion,
      oldRv: oldObj.metadata?.resourceVersion,
    });
  }
  onDelete(obj: Pod | DeletedFinalStateUnknown<Pod>): void {
    const tombstone = obj instanceof DeletedFinalStateUnknown;
    this.events.push({ type: 'delete', key: tombstone ? obj.key : keyOf(obj), tombstone });
  }
  keys(type?: Event['type']): string[] {
    return this.events.filter((e) => type === undefined || e.type === type).map((e) => e.key);
  }
}

function newInformer(lw: FakeListerWatcher<Pod>, options: SharedIndexInformerOptions<Pod> = {}) {
  const clock = new FakeClock();
  const informer = new SharedIndexInformer<Pod>(lw, {
    clock,
    reflectorOptions: { backoff: noBackoff },
    ...options,
  });
  return { informer, clock: (options.clock as FakeClock | undefined) ?? clock };
}

/** {@link newInformer} over a FakeListerWatcher that answers its LISTs with `lists`, in order. */
function listing(
  lists: Parameters<FakeListerWatcher<Pod>['enqueueList']>,
  options: SharedIndexInformerOptions<Pod> = {},
) {
  const lw = new FakeListerWatcher<Pod>().enqueueList(...lists);
  return { lw, ...newInformer(lw, options) };
}

/** Runs `informer` until `stop()` (which aborts the run and waits for it to return). */
function run(informer: SharedIndexInformer<Pod>): {
  ac: AbortController;
  done: Promise<void>;
  stop: () => Promise<void>;
} {
  const ac = new AbortController();
  const done = informer.run(ac.signal);
  return {
    ac,
    done,
    stop: () => {
      ac.abort();
      return done;
    },
  };
}

describe('SharedIndexInformer', () => {
  it('caches the initial list and the watch events, and notifies a handler in order', async () => {
    const { lw, informer, clock } = listing([podList('10', pod('a', '1'), pod('b', '2'))]);
    const listener = new TestListener();
    const reg = informer.addEventHandler(listener);
    expect(informer.hasSynced()).toBe(false);
    const { stop } = run(informer);
    await waitFor(() => reg.hasSynced(), 'the registration to sync');
    expect(informer.hasSynced()).toBe(true);
    expect(informer.lastSyncResourceVersion()).toBe('10');
    const watch = await lw.nextWatch();
    watch.add(pod('c', '11')).modify(pod('a', '12')).delete(pod('b', '13'));
    await waitFor(() => listener.events.length === 5, 'five events');
    expect(listener.events).toEqual([
      { type: 'add', key: 'default/a', rv: '1', initial: true },
      { type: 'add', key: 'default/b', rv: '2', initial: true },
      { type: 'add', key: 'default/c', rv: '11', initial: false },
      { type: 'update', key: 'default/a', rv: '12', oldRv: '1' },
      { type: 'delete', key: 'default/b', tombstone: false },
    ]);
    expect(informer.getStore().listKeys().sort()).toEqual(['default/a', 'default/c']);
    expect(informer.lastSyncResourceVersion()).toBe('13');
    expect(informer.isWatching()).toBe(true);
    await stop();
    expect(informer.isStopped()).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('works the same with the DeltaFIFO queue', async () => {
    const { lw, informer } = listing([podList('10', pod('a', '1'))], { queue: 'DeltaFIFO' });
    const listener = new TestListener();
    const reg = informer.addEventHandler(listener);
    const { stop } = run(informer);
    await waitFor(() => reg.hasSynced(), 'sync');
    (await lw.nextWatch()).modify(pod('a', '2')).delete(pod('a', '3'));
    await waitFor(() => listener.events.length === 3, 'three events');
    expect(listener.events.map((e) => e.type)).toEqual(['add', 'update', 'delete']);
    await stop();
  });

  // client-go TestIndexer
  it('indexes objects, later ones too, and indexes existing objects at once for indexers added after start', async () => {
    const onNode = (node: string): Partial<Pod> => ({ spec: { nodeName: node } });
    const lw = new FakeListerWatcher<Pod>().enqueueList(
      podList('10', pod('a', '1', 'ns1', onNode('n1')), pod('b', '2', 'ns2', onNode('n2'))),
    );
    const { informer } = newInformer(lw, { indexers: { byNode: (obj) => [obj.spec?.nodeName ?? ''] } });
    const { stop } = run(informer);
    await waitFor(() => informer.hasSynced(), 'sync');
    const indexer = informer.getIndexer();
    expect(indexer.byIndex('byNode', 'n1').map(keyOf)).toEqual(['ns1/a']);
    (await lw.nextWatch()).add(pod('c', '11', 'ns2', onNode('n1')));
    await waitFor(() => indexer.byIndex('byNode', 'n1').length === 2, 'c to be indexed');
    informer.addIndexers({ byNamespace: (obj) => [obj.metadata?.namespace ?? ''] });
    expect(indexer.byIndex('byNamespace', 'ns2').map(keyOf).sort()).toEqual(['ns2/b', 'ns2/c']);
    expect(() => informer.addIndexers({ byNode: () => [] })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INDEX }),
    );
    await stop();
    expect(() => informer.addIndexers({ other: () => [] })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INFORMER_STOPPED }),
    );
  });

  // client-go TestListenerResyncPeriods
  it('resyncs each handler at its own period only', async () => {
    const { lw, informer, clock } = listing([podList('10', pod('a', '1'), pod('b', '2'))], {
      resyncPeriodMs: 1000,
    });
    const never = new TestListener();
    const every2s = new TestListener();
    const every3s = new TestListener();
    informer.addEventHandler(never, { resyncPeriodMs: 0 });
    informer.addEventHandler(every2s, { resyncPeriodMs: 2000 });
    informer.addEventHandler(every3s, { resyncPeriodMs: 3000 });
    const { stop } = run(informer);
    await lw.nextWatch();
    await waitFor(() => [never, every2s, every3s].every((l) => l.events.length === 2), 'initial adds');
    const updates = (l: TestListener): number => l.events.filter((e) => e.type === 'update').length;
    const expectUpdates = async (n: number, m: number, k: number, when: string): Promise<void> => {
      await waitFor(() => updates(never) === n && updates(every2s) === m && updates(every3s) === k, when);
      await settle();
      expect([updates(never), updates(every2s), updates(every3s)]).toEqual([n, m, k]);
    };
    await clock.tick(1000);
    await expectUpdates(0, 0, 0, 't=1s');
    await clock.tick(1000);
    await expectUpdates(0, 2, 0, 't=2s');
    await clock.tick(1000);
    await expectUpdates(0, 2, 2, 't=3s');
    await clock.tick(1000);
    await expectUpdates(0, 4, 2, 't=4s');
    await clock.tick(2000);
    await expectUpdates(0, 6, 4, 't=6s');
    expect(
      every2s.events.filter((e) => e.type === 'update').every((e) => e.type === 'update' && e.rv === e.oldRv),
    ).toBe(true);
    await stop();
  });

  // client-go TestResyncCheckPeriod
  it('lowers the resync check period to the smallest handler period before start; listeners keep their own', async () => {
    const lw = new FakeListerWatcher<Pod>().enqueueList(podList('1'));
    const hour = 3_600_000;
    const { informer } = newInformer(lw, { resyncPeriodMs: 12 * hour });
    const periods = (): number[] => informer.stats().handlers.map((h) => h.resyncPeriodMs);
    informer.addEventHandler({}, { resyncPeriodMs: 0 });
    expect(informer.stats().resyncCheckPeriodMs).toBe(12 * hour);
    expect(periods()).toEqual([0]);
    informer.addEventHandler({}, { resyncPeriodMs: 60_000 });
    expect(informer.stats().resyncCheckPeriodMs).toBe(60_000);
    expect(periods()).toEqual([0, 60_000]);
    informer.addEventHandler({}, { resyncPeriodMs: 55_000 });
    expect(informer.stats().resyncCheckPeriodMs).toBe(55_000);
    expect(periods()).toEqual([0, 60_000, 55_000]);
    informer.addEventHandler({}, { resyncPeriodMs: 5_000 });
    expect(informer.stats().resyncCheckPeriodMs).toBe(5_000);
    expect(periods()).toEqual([0, 60_000, 55_000, 5_000]);
    // Below the 1 s minimum: raised to 1 s (and the check period follows, before start).
    informer.addEventHandler({}, { resyncPeriodMs: 10 });
    expect(informer.stats().resyncCheckPeriodMs).toBe(1_000);
    // No period: the informer's default (12 h).
    informer.addEventHandler({});
    expect(periods()).toEqual([0, 60_000, 55_000, 5_000, 1_000, 12 * hour]);
    const { ac, done } = run(informer);
    // After start a smaller period is raised to the check period instead.
    informer.addEventHandler({}, { resyncPeriodMs: 1_000 });
    expect(informer.stats().resyncCheckPeriodMs).toBe(1_000);
    const late = new SharedIndexInformer<Pod>(new FakeListerWatcher<Pod>().enqueueList(podList('1')), {
      resyncPeriodMs: 5_000,
      clock: new FakeClock(),
    });
    const lateRun = run(late);
    late.addEventHandler({}, { resyncPeriodMs: 2_000 });
    expect(late.stats().handlers.map((h) => h.resyncPeriodMs)).toEqual([5_000]);
    expect(late.stats().resyncCheckPeriodMs).toBe(5_000);
    expect(() => informer.addEventHandler({}, { resyncPeriodMs: -1 })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
    ac.abort();
    lateRun.ac.abort();
    await Promise.all([done, lateRun.done]);
  });

  it('never resyncs when the informer was created without a resync period', async () => {
    const { lw, informer, clock } = listing([podList('10', pod('a', '1'))]);
    const l = new TestListener();
    informer.addEventHandler(l, { resyncPeriodMs: 1000 });
    expect(informer.stats().handlers[0]!.resyncPeriodMs).toBe(0);
    const { stop } = run(informer);
    await lw.nextWatch();
    await waitFor(() => l.events.length === 1, 'the add');
    await clock.tick(10_000);
    await settle();
    expect(l.events).toHaveLength(1);
    await stop();
  });

  // client-go TestSharedInformerInitializationRace
  it('delivers everything to handlers added right after run, synchronously or on a later tick', async () => {
    const { lw, informer } = listing([podList('10', pod('a', '1'), pod('b', '2'))]);
    const { stop } = run(informer);
    const first = new TestListener();
    const second = new TestListener();
    informer.addEventHandler(first);
    await Promise.resolve();
    informer.addEventHandler(second);
    await waitFor(() => informer.hasSynced(), 'sync');
    (await lw.nextWatch()).add(pod('c', '11'));
    await waitFor(() => first.events.length === 3 && second.events.length === 3, 'three events each');
    expect(first.keys()).toEqual(['default/a', 'default/b', 'default/c']);
    expect(second.keys()).toEqual(['default/a', 'default/b', 'default/c']);
    await stop();
  });

  // client-go TestSharedInformerWatchDisruption
  it('after a relist, a handler not due for resync sees only changed and new objects', async () => {
    const lw = new FakeListerWatcher<Pod>().enqueueList(
      podList('10', pod('pod1', '1'), pod('pod2', '2')),
      // The relist: pod2 changed and pod3 appeared while the watch was down; pod1 is unchanged.
      podList('20', pod('pod1', '1'), pod('pod2', '4'), pod('pod3', '3')),
    );
    const { informer, clock } = newInformer(lw, { resyncPeriodMs: 1000 });
    const noResync = new TestListener();
    const resync = new TestListener();
    informer.addEventHandler(noResync, { resyncPeriodMs: 0 });
    informer.addEventHandler(resync, { resyncPeriodMs: 1000 });
    const { stop } = run(informer);
    const watch = await lw.nextWatch();
    await waitFor(() => noResync.events.length === 2 && resync.events.length === 2, 'initial adds');
    await clock.tick(1000); // resync due for `resync` only
    await waitFor(() => resync.events.length === 4, 'the resync');
    noResync.events.length = 0;
    resync.events.length = 0;
    watch.error({ code: 410, reason: 'Expired', message: 'too old' });
    await waitFor(() => lw.listCalls.length === 2, 'the relist');
    await waitFor(() => noResync.events.length === 2 && resync.events.length === 3, 'relist events');
    await settle();
    expect(noResync.keys().sort()).toEqual(['default/pod2', 'default/pod3']);
    expect(resync.keys().sort()).toEqual(['default/pod1', 'default/pod2', 'default/pod3']);
    expect(noResync.events.find((e) => e.key === 'default/pod3')).toEqual({
      type: 'add',
      key: 'default/pod3',
      rv: '3',
      initial: false,
    });
    await stop();
  });

  it('delivers a tombstone to onDelete for an object that disappeared during a watch outage', async () => {
    const lw = new FakeListerWatcher<Pod>().enqueueList(
      podList('10', pod('a', '1'), pod('b', '2')),
      podList('20', pod('a', '1')),
    );
    const { informer } = newInformer(lw);
    const l = new TestListener();
    informer.addEventHandler(l);
    const { stop } = run(informer);
    (await lw.nextWatch()).breakConnection();
    await waitFor(() => l.events.some((e) => e.type === 'delete'), 'the delete');
    expect(l.events.find((e) => e.type === 'delete')).toEqual({
      type: 'delete',
      key: 'default/b',
      tombstone: true,
    });
    expect(informer.getStore().listKeys()).toEqual(['default/a']);
    await stop();
  });

  // client-go TestSharedInformerErrorHandling
  it('passes list errors to the handler set with setWatchErrorHandler', async () => {
    const failure = new KinformerError(ErrorCodes.INTERNAL, 'etcd is sad', { httpStatus: 500 });
    const { informer } = listing([failure, podList('10')]);
    const seen: unknown[] = [];
    informer.setWatchErrorHandler((reflector, err) => {
      expect(reflector.name).toBe('SharedIndexInformer');
      seen.push(err);
    });
    const { stop } = run(informer);
    await waitFor(() => informer.hasSynced(), 'sync after the retry');
    expect(seen).toEqual([failure]);
    expect(informer.syncError()).toBeUndefined(); // a 500 is worth retrying
    await stop();
  });

  it('exposes a list refused with 403 through syncError until the informer syncs', async () => {
    const forbidden = KinformerError.fromStatus({
      code: 403,
      reason: 'Forbidden',
      message: 'pods is forbidden',
    });
    // The first list is refused, the second fails with a 500 (worth retrying), the third succeeds;
    // each retry comes after a one-minute backoff on the fake clock.
    const internal = KinformerError.fromStatus({
      code: 500,
      reason: 'InternalError',
      message: 'etcd timeout',
    });
    const lw = new FakeListerWatcher<Pod>().enqueueList(forbidden, internal, podList('10', pod('a', '1')));
    const { logger, lines } = captureLogs('error');
    const clock = new FakeClock();
    const informer = new SharedIndexInformer<Pod>(lw, {
      clock,
      logger,
      reflectorOptions: { backoff: { next: () => 60_000, reset: () => undefined } },
    });
    expect(informer.syncError()).toBeUndefined();
    const { stop } = run(informer);
    await waitFor(() => informer.syncError() !== undefined, 'the 403');
    expect(informer.syncError()).toBe(forbidden);
    expect(informer.hasSynced()).toBe(false);
    expect(
      lines.some(
        (l) =>
          l.msg === 'failed to list and watch; retrying after backoff' && l.code === ErrorCodes.FORBIDDEN,
      ),
    ).toBe(true);
    await clock.tick(60_000);
    await waitFor(
      () => lw.listCalls.length === 2 && informer.syncError() === undefined,
      'the 500 to replace the 403',
    );
    await clock.tick(60_000);
    await waitFor(() => informer.hasSynced(), 'the retry to succeed');
    expect(informer.syncError()).toBeUndefined();
    await stop();
  });

  // client-go TestSharedInformerStartRace: SetWatchErrorHandler/SetTransform after Run are refused.
  it('refuses setTransform and setWatchErrorHandler after run', async () => {
    const { informer } = listing([podList('1')]);
    informer.setTransform((o) => o);
    informer.setWatchErrorHandler(() => undefined);
    const { stop } = run(informer);
    expect(() => informer.setTransform((o) => o)).toThrow(
      expect.objectContaining({ code: ErrorCodes.ALREADY_STARTED }),
    );
    expect(() => informer.setWatchErrorHandler(() => undefined)).toThrow(
      expect.objectContaining({ code: ErrorCodes.ALREADY_STARTED }),
    );
    await stop();
  });

  // client-go TestSharedInformerTransformer
  it('applies the transform set with setTransform to what handlers and the cache see', async () => {
    const { lw, informer } = listing([podList('10', pod('a', '1'))]);
    informer.setTransform((obj) => ({ ...obj, spec: { note: `seen-${obj.metadata?.name ?? ''}` } }));
    const notes: Array<string | undefined> = [];
    const reg = informer.on('add', (obj) => void notes.push(obj.spec?.note));
    const { stop } = run(informer);
    await waitFor(() => reg.hasSynced(), 'sync');
    (await lw.nextWatch()).add(pod('b', '11'));
    await waitFor(() => notes.length === 2, 'two adds');
    expect(notes).toEqual(['seen-a', 'seen-b']);
    expect(informer.getIndexer().getByKey('default/b')?.spec?.note).toBe('seen-b');
    await stop();
  });

  // client-go TestSharedInformerRemoveHandler / TestRemovingRemovedSharedInformer
  it('removes a handler; removing it again is a no-op', async () => {
    const { lw, informer } = listing([podList('10')]);
    const kept = new TestListener();
    const removed = new TestListener();
    informer.addEventHandler(kept);
    const reg = informer.addEventHandler(removed);
    expect(informer.stats().handlers).toHaveLength(2);
    reg.remove();
    informer.removeEventHandler(reg);
    reg.remove();
    expect(informer.stats().handlers).toHaveLength(1);
    const { stop } = run(informer);
    (await lw.nextWatch()).add(pod('a', '11'));
    await waitFor(() => kept.events.length === 1, 'the add');
    await settle();
    expect(removed.events).toEqual([]);
    await stop();
  });

  // client-go TestSharedInformerRemoveForeignHandler
  it("ignores another informer's registration", async () => {
    const { lw, informer } = listing([podList('10')]);
    const { informer: other } = newInformer(new FakeListerWatcher<Pod>());
    const l = new TestListener();
    const mine = informer.addEventHandler(l);
    const foreign = other.addEventHandler(l);
    informer.removeEventHandler(foreign);
    informer.removeEventHandler({
      hasSynced: () => true,
      remove: () => undefined,
      shutdown: () => Promise.resolve(),
      shutDown: () => Promise.resolve(),
    });
    expect(informer.stats().handlers).toHaveLength(1);
    expect(other.stats().handlers).toHaveLength(1);
    const { stop } = run(informer);
    (await lw.nextWatch()).add(pod('a', '11'));
    await waitFor(() => l.events.length === 1, 'the add');
    expect(mine.hasSynced()).toBe(true);
    await stop();
  });

  // client-go TestSharedInformerMultipleRegistration
  it('treats the same handler registered twice as two independent registrations', async () => {
    const { lw, informer } = listing([podList('10')]);
    const l = new TestListener();
    const one = informer.addEventHandler(l);
    const two = informer.addEventHandler(l);
    expect(one).not.toBe(two);
    const { stop } = run(informer);
    const watch = await lw.nextWatch();
    watch.add(pod('a', '11'));
    await waitFor(() => l.events.length === 2, 'two adds');
    one.remove();
    watch.add(pod('b', '12'));
    await waitFor(() => l.events.length === 3, 'one more add');
    await settle();
    expect(l.keys()).toEqual(['default/a', 'default/a', 'default/b']);
    two.remove();
    expect(informer.stats().handlers).toEqual([]);
    await stop();
  });

  // client-go TestSharedInformerHandlerAbuse
  it('stays consistent while handlers are added and removed as events flow', async () => {
    const { lw, informer } = listing([podList('10')]);
    const steady = new TestListener();
    informer.addEventHandler(steady);
    const { stop } = run(informer);
    const watch = await lw.nextWatch();
    const churn: TestListener[] = [];
    for (let i = 0; i < 200; i++) {
      watch.add(pod(`p${i}`, String(11 + i)));
      const l = new TestListener();
      churn.push(l);
      const reg = informer.addEventHandler(l);
      if (i % 3 === 0) await Promise.resolve();
      if (i % 2 === 0) reg.remove();
    }
    await waitFor(() => steady.events.length === 200, 'every event for the steady handler');
    await waitFor(() => informer.stats().handlers.every((h) => h.bufferDepth === 0), 'buffers to drain');
    expect(steady.keys()).toEqual(Array.from({ length: 200 }, (_, i) => `default/p${i}`));
    // Each surviving late handler saw each object exactly once (as a synthetic or a real add).
    for (let i = 1; i < 200; i += 2) {
      const keys = churn[i]!.keys();
      expect(new Set(keys).size).toBe(keys.length);
    }
    expect(churn[199]!.keys()).toHaveLength(200);
    expect(informer.stats().handlers).toHaveLength(101);
    await stop();
  });

  // client-go TestStateSharedInformer / TestAddOnStoppedSharedInformer / TestRemoveOnStoppedSharedInformer
  it('tracks started/stopped; adding to a stopped informer throws and removing is a no-op', async () => {
    const { informer } = listing([podList('10')]);
    const reg = informer.addEventHandler({});
    expect([informer.hasStarted(), informer.isStopped()]).toEqual([false, false]);
    const { ac, done } = run(informer);
    expect([informer.hasStarted(), informer.isStopped()]).toEqual([true, false]);
    await expect(informer.run(ac.signal)).rejects.toMatchObject({ code: ErrorCodes.ALREADY_STARTED });
    ac.abort();
    await done;
    expect([informer.hasStarted(), informer.isStopped()]).toEqual([true, true]);
    expect(() => informer.addEventHandler({})).toThrow(
      expect.objectContaining({ code: ErrorCodes.INFORMER_STOPPED }),
    );
    expect(() => informer.on('add', () => undefined)).toThrow(
      expect.objectContaining({ code: ErrorCodes.INFORMER_STOPPED }),
    );
    expect(() => reg.remove()).not.toThrow();
    await expect(informer.run(new AbortController().signal)).rejects.toMatchObject({
      code: ErrorCodes.INFORMER_STOPPED,
    });
  });

  // client-go TestRemoveWhileActive; shutdown() (client-go ShutDownEventHandler) drops the same and also
  // waits for the call in progress.
  it.each(['remove', 'shutdown'] as const)(
    'delivers nothing more after a handler is unregistered with %s(), even what was already buffered',
    async (how) => {
      const { lw, informer } = listing([podList('10')]);
      const { promise: gate, resolve: release } = deferred();
      const seen: string[] = [];
      const reg = informer.addEventHandler({
        onAdd: async (obj) => {
          seen.push(keyOf(obj));
          await gate;
        },
      });
      const { stop } = run(informer);
      const watch = await lw.nextWatch();
      watch.add(pod('a', '11')).add(pod('b', '12')).add(pod('c', '13'));
      await waitFor(
        () => seen.length === 1 && informer.stats().handlers[0]!.bufferDepth === 2,
        'a in progress, b and c buffered',
      );
      const stopped = how === 'remove' ? reg.remove() : reg.shutdown();
      release();
      await stopped;
      watch.add(pod('d', '14'));
      await waitFor(() => informer.getStore().size() === 4, 'the cache');
      await settle();
      expect(seen).toEqual(['default/a']);
      await stop();
    },
  );

  // client-go TestAddWhileActive
  it('gives a late handler the cached objects first; its hasSynced waits until it processed them', async () => {
    const { lw, informer } = listing([podList('10', pod('a', '1'), pod('b', '2'))]);
    const early = new TestListener();
    informer.addEventHandler(early);
    const { stop } = run(informer);
    await waitFor(() => informer.hasSynced(), 'sync');
    const watch = await lw.nextWatch();
    const { promise: gate, resolve: release } = deferred();
    const late = new TestListener();
    const lateReg = informer.addEventHandler({
      onAdd: async (obj, initial) => {
        late.onAdd(obj, initial);
        await gate;
      },
    });
    // Queued in the same synchronous step as the snapshot: a new event cannot come between.
    watch.add(pod('c', '11'));
    await waitFor(() => late.events.length === 1, 'the first synthetic add');
    expect(lateReg.hasSynced()).toBe(false);
    release();
    await waitFor(() => late.events.length === 3, 'everything');
    await waitFor(() => lateReg.hasSynced(), 'the late registration to sync');
    expect(late.events).toEqual([
      { type: 'add', key: 'default/a', rv: '1', initial: true },
      { type: 'add', key: 'default/b', rv: '2', initial: true },
      { type: 'add', key: 'default/c', rv: '11', initial: false },
    ]);
    await stop();
  });

  it('keeps a registration unsynced until its handler processed the initial list', async () => {
    const { informer } = listing([podList('10', pod('a', '1'), pod('b', '2'))]);
    const { promise: gate, resolve: release } = deferred();
    const reg = informer.addEventHandler({ onAdd: () => gate });
    const fast = informer.addEventHandler({});
    const { stop } = run(informer);
    await waitFor(() => informer.hasSynced() && fast.hasSynced(), 'informer and fast handler');
    expect(reg.hasSynced()).toBe(false);
    expect(informer.stats().handlers.map((h) => h.synced)).toEqual([false, true]);
    release();
    await waitFor(() => reg.hasSynced(), 'the slow registration');
    await stop();
  });

  // client-go TestShutdown
  it('stops cleanly: run resolves after handler calls in progress settle, with no timers left', async () => {
    const { lw, informer, clock } = listing([podList('10', pod('a', '1'))], { resyncPeriodMs: 5000 });
    let finished = false;
    const { promise: gate, resolve: release } = deferred();
    informer.addEventHandler({
      onAdd: async () => {
        await gate;
        finished = true;
      },
    });
    const { ac, done } = run(informer);
    await lw.nextWatch();
    await waitFor(
      () => informer.stats().eventsDispatched === 0 && informer.hasSynced(),
      'the handler to start',
    );
    ac.abort();
    let resolved = false;
    void done.then(() => (resolved = true));
    await settle();
    expect(resolved).toBe(false);
    release();
    await done;
    expect(finished).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
    expect(lw.watches.every((w) => w.isFinished)).toBe(true);

    // Run with an aborted signal: stops at once.
    const { informer: other } = newInformer(new FakeListerWatcher<Pod>());
    await other.run(AbortSignal.abort());
    expect(other.isStopped()).toBe(true);
  });

  it('measures each handler’s latency: time spent and the longest call', async () => {
    const lw = new FakeListerWatcher<Pod>().enqueueList(podList('10'));
    const informer = new SharedIndexInformer<Pod>(lw, { clock: new FakeClock() });
    const spin = (ms: number): void => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    informer.addEventHandler(
      // 25 ms of real time: far above what a preempted no-op handler measures on a loaded machine.
      { onAdd: (obj) => spin(obj.metadata?.name === 'slow' ? 25 : 0) },
      { name: 'slow' },
    );
    informer.addEventHandler({ onAdd: () => undefined }, { name: 'fast' });
    const { stop } = run(informer);
    (await lw.nextWatch()).add(pod('quick', '11')).add(pod('slow', '12'));
    await waitFor(() => informer.stats().handlers.every((h) => h.dispatched === 2), 'both events handled');
    const [slow, fast] = informer.stats().handlers;
    expect(slow!.maxLatencyMs).toBeGreaterThanOrEqual(25);
    expect(slow!.busyMs).toBeGreaterThanOrEqual(slow!.maxLatencyMs);
    expect(fast!.maxLatencyMs).toBeLessThan(slow!.maxLatencyMs);
    await stop();
  });

  // client-go TestEventPanics, adapted: a failing handler is logged with the key and counted; its next event is handled.
  it('logs and counts a throwing or rejecting handler and keeps delivering to it and to others', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const lw = new FakeListerWatcher<Pod>().enqueueList(podList('10'));
      const { logger, lines } = captureLogs('debug');
      const informer = new SharedIndexInformer<Pod>(lw, { clock: new FakeClock(), logger, name: 'pods.v1' });
      const bad: string[] = [];
      informer.addEventHandler(
        {
          onAdd: (obj) => {
            bad.push(keyOf(obj));
            if (obj.metadata?.name === 'a') throw new Error('sync failure');
            if (obj.metadata?.name === 'b') return Promise.reject(new Error('async failure'));
            return undefined;
          },
        },
        { name: 'flaky' },
      );
      const good = new TestListener();
      informer.addEventHandler(good);
      const { stop } = run(informer);
      (await lw.nextWatch()).add(pod('a', '11')).add(pod('b', '12')).add(pod('c', '13'));
      await waitFor(() => bad.length === 3 && good.events.length === 3, 'all events');
      await settle();
      const stats = informer.stats();
      expect(stats.handlerErrors).toBe(2);
      expect(stats.eventsDispatched).toBe(6);
      expect(stats.handlers.map((h) => [h.name, h.errors, h.dispatched])).toEqual([
        ['flaky', 2, 3],
        ['handler-2', 0, 3],
      ]);
      const failures = lines.filter((l) => l.msg === 'event handler failed');
      // The first failure at error, the repeat within the minute at debug.
      expect(failures.map((l) => [l.key, l.handler, l.informer, l.code, l.level])).toEqual([
        ['default/a', 'flaky', 'pods.v1', ErrorCodes.HANDLER_FAILED, 50],
        ['default/b', 'flaky', 'pods.v1', ErrorCodes.HANDLER_FAILED, 20],
      ]);
      await stop();
      await settle();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('awaits an async handler before its next event, so its events stay in order', async () => {
    const { lw, informer } = listing([podList('10')]);
    const log: string[] = [];
    let inFlight = 0;
    informer.addEventHandler({
      onAdd: async (obj) => {
        inFlight++;
        expect(inFlight).toBe(1);
        log.push(`start ${obj.metadata?.name ?? ''}`);
        // Uneven delays: later events would overtake earlier ones if they were not serialized.
        for (let i = 0; i < (obj.metadata?.name === 'a' ? 5 : 1); i++)
          await new Promise<void>((r) => setImmediate(r));
        log.push(`end ${obj.metadata?.name ?? ''}`);
        inFlight--;
      },
    });
    const { stop } = run(informer);
    (await lw.nextWatch()).add(pod('a', '11')).add(pod('b', '12')).add(pod('c', '13'));
    await waitFor(() => log.length === 6, 'three events');
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    await stop();
  });

  it('does not let a slow handler delay a fast one (or the cache)', async () => {
    const { lw, informer } = listing([podList('10')]);
    const { promise: gate, resolve: release } = deferred();
    const slow: string[] = [];
    informer.addEventHandler(
      {
        onAdd: async (obj) => {
          slow.push(keyOf(obj));
          await gate;
        },
      },
      { name: 'slow' },
    );
    const fast = new TestListener();
    informer.addEventHandler(fast, { name: 'fast' });
    const { stop } = run(informer);
    const watch = await lw.nextWatch();
    for (let i = 0; i < 50; i++) watch.add(pod(`p${i}`, String(11 + i)));
    await waitFor(() => fast.events.length === 50, 'the fast handler');
    expect(informer.getStore().size()).toBe(50);
    expect(slow).toEqual(['default/p0']);
    expect(informer.stats().handlers.map((h) => [h.name, h.bufferDepth])).toEqual([
      ['slow', 49],
      ['fast', 0],
    ]);
    release();
    await waitFor(() => slow.length === 50, 'the slow handler to catch up');
    expect(informer.stats().handlers[0]!.bufferDepth).toBe(0);
    await stop();
  });

  it('delivers a same-resourceVersion update to every handler until a resync check marks one as not due', async () => {
    const { lw, informer } = listing([podList('10', pod('a', '1'))]);
    const l = new TestListener();
    informer.addEventHandler(l);
    const { stop } = run(informer);
    const watch = await lw.nextWatch();
    // A MODIFIED with the same resourceVersion is a "sync" update; before any resync check every
    // handler counts as resyncing (client-go), so it is delivered.
    watch.modify(pod('a', '1')).modify(pod('a', '2'));
    await waitFor(() => l.events.length === 3, 'both updates');
    expect(l.events.slice(1)).toEqual([
      { type: 'update', key: 'default/a', rv: '1', oldRv: '1' },
      { type: 'update', key: 'default/a', rv: '2', oldRv: '1' },
    ]);
    await stop();
  });

  it("offers on('update') and on('delete') sugar returning a removable registration", async () => {
    const { lw, informer } = listing([podList('10', pod('a', '1'))]);
    const seen: string[] = [];
    const adds = informer.on(
      'add',
      (obj, initial) => void seen.push(`add ${obj.metadata?.name ?? ''} ${String(initial)}`),
    );
    informer.on(
      'update',
      (oldObj, newObj) =>
        void seen.push(
          `update ${oldObj.metadata?.resourceVersion ?? ''}->${newObj.metadata?.resourceVersion ?? ''}`,
        ),
    );
    informer.on(
      'delete',
      (obj) => void seen.push(`delete ${obj instanceof DeletedFinalStateUnknown ? obj.key : keyOf(obj)}`),
    );
    const { stop } = run(informer);
    await waitFor(() => adds.hasSynced(), 'sync');
    adds.remove();
    (await lw.nextWatch()).add(pod('b', '11')).modify(pod('a', '12')).delete(pod('b', '13'));
    await waitFor(() => seen.length === 3, 'three events');
    await settle();
    expect(seen).toEqual(['add a true', 'update 1->12', 'delete default/b']);
    expect(() => informer.on('bogus' as 'add', () => undefined)).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
    await stop();
  });

  it('counts deltas, and skips (and counts) a change an index function refuses', async () => {
    const lw = new FakeListerWatcher<Pod>().enqueueList(podList('10', pod('a', '1')));
    const { logger, lines } = captureLogs('error');
    const informer = new SharedIndexInformer<Pod>(lw, {
      clock: new FakeClock(),
      logger,
      indexers: {
        picky: (obj) => {
          if (obj.metadata?.name === 'bad') throw new Error('cannot index');
          return [];
        },
      },
    });
    const l = new TestListener();
    informer.addEventHandler(l);
    const { stop } = run(informer);
    (await lw.nextWatch()).add(pod('bad', '11')).add(pod('good', '12'));
    await waitFor(() => l.events.length === 2, 'a and good');
    expect(l.keys()).toEqual(['default/a', 'default/good']);
    expect(informer.stats()).toMatchObject({ deltasProcessed: 3, processErrors: 1 });
    expect(lines.some((line) => line.msg === 'could not apply a change to the cache; skipped')).toBe(true);
    await stop();
  });
});
