import { ErrorCodes, KinformerError } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import { FakeListerWatcher } from '@kinformer/reflector/testing';
import { SharedIndexInformer } from './sharedIndexInformer.js';
import { deferred, noBackoff, pod, podList, settle, waitFor } from '@kinformer/test-tools';
import type { Pod } from '@kinformer/test-tools';
import { waitForCacheSync } from './waitForCacheSync.js';

function track<T>(promise: Promise<T>): { settled: () => boolean; promise: Promise<T> } {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  return { settled: () => done, promise };
}

/** An informer (running, on a fake clock) whose every LIST rejects with `err`. */
function runFailingInformer(err: KinformerError): {
  lw: FakeListerWatcher<Pod>;
  informer: SharedIndexInformer<Pod>;
  ac: AbortController;
  done: Promise<void>;
} {
  const lw = new FakeListerWatcher<Pod>({ list: () => Promise.reject(err) });
  const informer = new SharedIndexInformer<Pod>(lw, {
    clock: new FakeClock(),
    name: 'pods.v1',
    reflectorOptions: { backoff: { next: () => 60_000, reset: () => undefined } },
  });
  const ac = new AbortController();
  return { lw, informer, ac, done: informer.run(ac.signal) };
}

describe('waitForCacheSync', () => {
  it('resolves true at once when everything has synced (and for no functions at all)', async () => {
    const signal = new AbortController().signal;
    await expect(
      waitForCacheSync(
        signal,
        () => true,
        () => true,
      ),
    ).resolves.toBe(true);
    await expect(waitForCacheSync(signal)).resolves.toBe(true);
  });

  it('polls plain functions every 100 ms on the given clock', async () => {
    const clock = new FakeClock();
    let synced = false;
    const wait = track(waitForCacheSync({ signal: new AbortController().signal, clock }, () => synced));
    await settle();
    expect(clock.pendingTimers()).toBe(1);
    synced = true;
    await clock.tick(99);
    expect(wait.settled()).toBe(false);
    await clock.tick(1);
    await expect(wait.promise).resolves.toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('resolves false when the signal aborts first, leaving no timer behind', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const wait = waitForCacheSync({ signal: ac.signal, clock, pollIntervalMs: 50 }, () => false);
    await clock.tick(500);
    ac.abort();
    await expect(wait).resolves.toBe(false);
    expect(clock.pendingTimers()).toBe(0);
    await expect(waitForCacheSync(AbortSignal.abort(), () => false)).resolves.toBe(false);
  });

  it("wakes on an informer's and a registration's sync without polling", async () => {
    const lw = new FakeListerWatcher<Pod>().enqueueList(podList('10', pod('a', '1')));
    const informer = new SharedIndexInformer<Pod>(lw, { clock: new FakeClock() });
    const { promise: gate, resolve: release } = deferred();
    const reg = informer.addEventHandler({ onAdd: () => gate });
    const waitClock = new FakeClock();
    const ac = new AbortController();
    const wait = track(
      waitForCacheSync({ signal: ac.signal, clock: waitClock }, informer.hasSynced, reg.hasSynced),
    );
    const done = informer.run(ac.signal);
    await waitFor(() => informer.hasSynced(), 'the informer');
    await settle();
    expect(wait.settled()).toBe(false);
    expect(waitClock.pendingTimers()).toBe(0); // event-driven: nothing to poll
    release();
    await expect(wait.promise).resolves.toBe(true);
    ac.abort();
    await done;
  });

  it('rejects with ERR_CACHE_SYNC_FAILED (cause: the 403) when the server refuses the list', async () => {
    const forbidden = KinformerError.fromStatus({
      code: 403,
      reason: 'Forbidden',
      message: 'pods is forbidden: User "x" cannot list',
    });
    const { informer, ac, done } = runFailingInformer(forbidden);
    const err = await waitForCacheSync(ac.signal, informer.hasSynced).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KinformerError);
    expect(err).toMatchObject({ code: ErrorCodes.CACHE_SYNC_FAILED, httpStatus: 403, cause: forbidden });
    expect((err as Error).message).toContain('pods.v1 cannot sync');
    // A registration's hasSynced fails the same way.
    await expect(waitForCacheSync(ac.signal, informer.addEventHandler({}).hasSynced)).rejects.toMatchObject({
      code: ErrorCodes.CACHE_SYNC_FAILED,
    });
    ac.abort();
    await done;
  });

  it('rejects with ERR_CACHE_SYNC_FAILED (cause: ERR_TLS) when the server certificate cannot be trusted', async () => {
    // A permanent TLS failure resolved `false` at the timeout before, the cause only in syncError().
    const untrusted = new KinformerError(ErrorCodes.TLS, 'could not reach the API server: unable to verify');
    const { informer, ac, done } = runFailingInformer(untrusted);
    const err = await waitForCacheSync(ac.signal, informer.hasSynced).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: ErrorCodes.CACHE_SYNC_FAILED, cause: untrusted });
    ac.abort();
    await done;
  });

  it('keeps waiting (no rejection) for a connection failure, which retrying can fix', async () => {
    const refused = new KinformerError(ErrorCodes.CONNECTION, 'connect ECONNREFUSED');
    const { lw, informer, ac, done } = runFailingInformer(refused);
    const wait = track(waitForCacheSync(ac.signal, informer.hasSynced));
    await waitFor(() => lw.calls.length >= 1);
    await settle();
    expect(wait.settled()).toBe(false);
    ac.abort();
    expect(await wait.promise).toBe(false);
    await done;
  });

  it('resolves false when an informer stops before it synced, and when a registration is removed', async () => {
    const lw = new FakeListerWatcher<Pod>(); // the list hangs
    const informer = new SharedIndexInformer<Pod>(lw, {
      clock: new FakeClock(),
      reflectorOptions: { backoff: noBackoff },
    });
    const reg = informer.addEventHandler({});
    const keep = new AbortController();
    const byRemoval = waitForCacheSync(keep.signal, reg.hasSynced);
    reg.remove();
    await expect(byRemoval).resolves.toBe(false);
    const stop = new AbortController();
    const done = informer.run(stop.signal);
    const wait = waitForCacheSync(keep.signal, informer.hasSynced);
    stop.abort();
    await done;
    await expect(wait).resolves.toBe(false);
  });
});

describe('waitForCacheSync with a hasSynced function that throws', () => {
  it('rejects with the error, also when it throws on a later check, and leaves the informer and its handlers unharmed', async () => {
    const lw = new FakeListerWatcher<Pod>().enqueueList(podList('10', pod('a', '1')));
    const informer = new SharedIndexInformer<Pod>(lw, { clock: new FakeClock() });
    const added: string[] = [];
    const reg = informer.addEventHandler({ onAdd: (obj) => void added.push(obj.metadata?.name ?? '') });
    const boom = new Error('broken hasSynced');
    let calls = 0;
    const flaky = (): boolean => {
      if (++calls > 1) throw boom; // fine at the first check, throws when the informer's sync wakes the wait
      return false;
    };
    const ac = new AbortController();
    const wait = track(waitForCacheSync(ac.signal, reg.hasSynced, flaky));
    const done = informer.run(ac.signal);
    await waitFor(() => wait.settled(), 'the wait to settle');
    await expect(wait.promise).rejects.toBe(boom);
    // The check ran inside the handler's listener: its later events are still delivered.
    (await lw.nextWatch()).add(pod('b', '11'));
    await waitFor(() => added.length === 2, 'the add of b');
    expect(added).toEqual(['a', 'b']);
    expect(reg.hasSynced()).toBe(true);
    ac.abort();
    await done;
  });

  it('rejects (instead of throwing in a timer) when a polled function throws', async () => {
    const clock = new FakeClock();
    const boom = new Error('broken poll');
    let calls = 0;
    const wait = track(
      waitForCacheSync({ signal: new AbortController().signal, clock }, () => {
        if (++calls > 1) throw boom;
        return false;
      }),
    );
    await clock.tick(100);
    await expect(wait.promise).rejects.toBe(boom);
    expect(clock.pendingTimers()).toBe(0);
  });
});
