import { FakeClock } from '@kinformer/core/testing';
import { FakeListerWatcher } from '@kinformer/reflector/testing';
import { SharedIndexInformer } from './sharedIndexInformer.js';
import { deferred, keyOf, noBackoff, pod, podList, settle, waitFor } from '@kinformer/test-tools';
import type { Pod } from '@kinformer/test-tools';

// Awaitable handler shutdown: ports of client-go's shared_informer_test.go
// TestRemoveEventHandler_SynchronousShutdown and TestShutDownEventHandler_Lifecycles
// (ShutDownEventHandler), plus kinformer's own tests of registration.shutdown().

function newInformer(lw: FakeListerWatcher<Pod>): SharedIndexInformer<Pod> {
  return new SharedIndexInformer<Pod>(lw, {
    clock: new FakeClock(),
    reflectorOptions: { backoff: noBackoff },
  });
}

function run(informer: SharedIndexInformer<Pod>): { ac: AbortController; done: Promise<void> } {
  const ac = new AbortController();
  return { ac, done: informer.run(ac.signal) };
}

/** Tracks whether a promise has settled. */
function track(p: Promise<void>): { settled: () => boolean } {
  let settled = false;
  void p.then(() => (settled = true));
  return { settled: () => settled };
}

describe('handler shutdown (client-go ShutDownEventHandler)', () => {
  it('waits for the call in progress to return; then nothing uses what the handler closes over (TestRemoveEventHandler_SynchronousShutdown)', async () => {
    const lw = new FakeListerWatcher<Pod>().enqueueList(podList('1'));
    const informer = newInformer(lw);
    const { ac, done } = run(informer);
    const scheduled: Pod[] = []; // what client-go's test closes after the shutdown
    let closed = false;
    const { promise: gate, resolve: release } = deferred();
    let started = false;
    let finished = false;
    const reg = informer.addEventHandler({
      onAdd: async (obj) => {
        started = true;
        await gate;
        if (closed) throw new Error('the handler ran after its resources were closed');
        scheduled.push(obj);
        finished = true;
      },
    });
    (await lw.nextWatch()).add(pod('pod1', '2'));
    await waitFor(() => started, 'the handler to start and block');

    const stopped = track(reg.shutdown());
    await settle();
    expect(stopped.settled()).toBe(false); // the call in progress has not returned yet
    release();
    await waitFor(stopped.settled, 'the shutdown');
    expect(finished).toBe(true);
    closed = true; // "NOW it is safe to close the channel"
    expect(scheduled.map(keyOf)).toEqual(['default/pod1']);
    ac.abort();
    await done;
  });

  describe('lifecycles (TestShutDownEventHandler_Lifecycles)', () => {
    it('InformerNeverStarted: resolves at once', async () => {
      const informer = newInformer(new FakeListerWatcher<Pod>());
      const reg = informer.addEventHandler({ onAdd: () => undefined });
      const stopped = track(reg.shutdown());
      await Promise.resolve();
      await Promise.resolve();
      expect(stopped.settled()).toBe(true);
      expect(informer.stats().handlers).toEqual([]);
    });

    it('StartedThenAddedThenShutDown', async () => {
      const lw = new FakeListerWatcher<Pod>().enqueueList(podList('1', pod('a', '1')));
      const informer = newInformer(lw);
      const { ac, done } = run(informer);
      await waitFor(informer.hasSynced, 'sync');
      const seen: string[] = [];
      const reg = informer.addEventHandler({ onAdd: (obj) => void seen.push(keyOf(obj)) });
      await reg.shutdown();
      (await lw.nextWatch()).add(pod('b', '2'));
      await waitFor(() => informer.getStore().size() === 2, 'the cache');
      await settle();
      expect(seen.filter((k) => k === 'default/b')).toEqual([]);
      ac.abort();
      await done;
    });

    it('AddedThenStartedThenShutDown', async () => {
      const lw = new FakeListerWatcher<Pod>().enqueueList(podList('1', pod('a', '1')));
      const informer = newInformer(lw);
      const seen: string[] = [];
      const reg = informer.addEventHandler({ onAdd: (obj) => void seen.push(keyOf(obj)) });
      const { ac, done } = run(informer);
      await waitFor(reg.hasSynced, 'the handler to sync');
      await reg.shutdown();
      expect(seen).toEqual(['default/a']);
      ac.abort();
      await done;
    });
  });

  it('is idempotent, ignores another informer’s registration, and resolves after the informer stopped', async () => {
    const lw = new FakeListerWatcher<Pod>().enqueueList(podList('1', pod('a', '1')));
    const informer = newInformer(lw);
    const other = newInformer(new FakeListerWatcher<Pod>());
    const reg = informer.addEventHandler({ onAdd: () => undefined });
    const foreign = other.addEventHandler({});
    const { ac, done } = run(informer);
    await waitFor(reg.hasSynced, 'sync');
    await informer.shutdownEventHandler(foreign); // not ours: nothing happens
    expect(other.stats().handlers).toHaveLength(1);
    expect(informer.stats().handlers).toHaveLength(1);
    await Promise.all([reg.shutdown(), informer.shutdownEventHandler(reg)]);
    expect(informer.stats().handlers).toHaveLength(0);
    ac.abort();
    await done;
    const late = informer.addEventHandler.bind(informer);
    expect(() => late({})).toThrow(); // stopped
    await reg.shutdown(); // after stop: resolves
  });

  it('waits for a synchronous handler that shuts itself down to return, without deadlock', async () => {
    const lw = new FakeListerWatcher<Pod>().enqueueList(podList('1', pod('a', '1'), pod('b', '2')));
    const informer = newInformer(lw);
    const seen: string[] = [];
    let stopped: Promise<void> | undefined;
    const reg = informer.addEventHandler({
      onAdd: (obj) => {
        seen.push(keyOf(obj));
        stopped ??= reg.shutdown(); // not awaited inside the call
      },
    });
    const { ac, done } = run(informer);
    await waitFor(() => stopped !== undefined, 'the first call');
    await stopped;
    await settle();
    expect(seen).toEqual(['default/a']);
    ac.abort();
    await done;
  });

  describe('deprecated client-go spellings', () => {
    it('registration.shutDown() and informer.shutDownEventHandler() wait for the call in progress like shutdown()', async () => {
      const lw = new FakeListerWatcher<Pod>().enqueueList(podList('1', pod('a', '1'), pod('b', '2')));
      const informer = newInformer(lw);
      const { ac, done } = run(informer);
      const gates = { a: deferred(), b: deferred() };
      const inProgress: string[] = [];
      const handler = (key: 'a' | 'b') => ({
        onAdd: async (obj: Pod) => {
          if (obj.metadata?.name !== key) return;
          inProgress.push(key);
          await gates[key].promise;
        },
      });
      const regA = informer.addEventHandler(handler('a'));
      const regB = informer.addEventHandler(handler('b'));
      await waitFor(() => inProgress.length === 2, 'both calls in progress');
      const viaRegistration = track(regA.shutDown());
      const viaInformer = track(informer.shutDownEventHandler(regB));
      await settle();
      expect([viaRegistration.settled(), viaInformer.settled()]).toEqual([false, false]);
      expect(informer.stats().handlers).toHaveLength(0); // both unregistered at once
      gates.a.resolve();
      gates.b.resolve();
      await waitFor(() => viaRegistration.settled() && viaInformer.settled(), 'both shutdowns');
      ac.abort();
      await done;
    });
  });
});
