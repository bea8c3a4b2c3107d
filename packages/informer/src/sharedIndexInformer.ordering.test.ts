import { DeletedFinalStateUnknown } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import type { ResourceEventHandler } from '@kinformer/controller';
import { FakeListerWatcher } from '@kinformer/reflector/testing';
import type { FakeWatchStream } from '@kinformer/reflector/testing';
import { SharedIndexInformer } from './sharedIndexInformer.js';
import type { ResourceEventHandlerRegistration } from './sharedIndexInformer.js';
import { keyOf, noBackoff, pod, prng, settle, waitFor } from '@kinformer/test-tools';
import type { Pod } from '@kinformer/test-tools';

/**
 * A handler that replays what it is told into its own view of the cache and checks every step
 * against client-go's per-handler contract: an add only for an absent key, an update only for a
 * present key with `old` = the version last delivered and `new` never older, a delete only for a
 * present key. Async handlers take a random number of event-loop turns per event.
 */
class Replayer implements ResourceEventHandler<Pod> {
  readonly view = new Map<string, string>();
  readonly violations: string[] = [];
  events = 0;
  constructor(private readonly delay: () => number) {}

  async #pause(): Promise<void> {
    for (let i = this.delay(); i > 0; i--) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  onAdd(obj: Pod): Promise<void> | void {
    const key = keyOf(obj);
    if (this.view.has(key))
      this.violations.push(`add of present ${key}@${obj.metadata?.resourceVersion ?? ''}`);
    this.view.set(key, obj.metadata?.resourceVersion ?? '');
    this.events++;
    return this.delay() > 0 ? this.#pause() : undefined;
  }
  onUpdate(oldObj: Pod, newObj: Pod): Promise<void> | void {
    const key = keyOf(newObj);
    const seen = this.view.get(key);
    const oldRv = oldObj.metadata?.resourceVersion ?? '';
    const newRv = newObj.metadata?.resourceVersion ?? '';
    if (seen === undefined) this.violations.push(`update of absent ${key}`);
    else if (seen !== oldRv) this.violations.push(`update of ${key}: old ${oldRv}, last delivered ${seen}`);
    if (Number(newRv) < Number(oldRv))
      this.violations.push(`update of ${key} back in time: ${oldRv} -> ${newRv}`);
    this.view.set(key, newRv);
    this.events++;
    return this.delay() > 0 ? this.#pause() : undefined;
  }
  onDelete(obj: Pod | DeletedFinalStateUnknown<Pod>): Promise<void> | void {
    const key = obj instanceof DeletedFinalStateUnknown ? obj.key : keyOf(obj);
    if (!this.view.has(key)) this.violations.push(`delete of absent ${key}`);
    this.view.delete(key);
    this.events++;
    return this.delay() > 0 ? this.#pause() : undefined;
  }
}

describe.each(['RealFIFO', 'DeltaFIFO'] as const)(
  'SharedIndexInformer (%s) under a random mix of events, relists, resyncs and handler churn',
  (queue) => {
    it.each([1, 2, 3])(
      'keeps every handler in order and ends equal to the server (seed %i)',
      async (seed) => {
        const random = prng(seed);
        const clock = new FakeClock();
        const server = new Map<string, Pod>();
        let rv = 100;
        for (let i = 0; i < 8; i++) server.set(`default/p${i}`, pod(`p${i}`, String(++rv)));
        const snapshot = () => ({ metadata: { resourceVersion: String(rv) }, items: [...server.values()] });
        const lw = new FakeListerWatcher<Pod>({ list: () => snapshot() });
        const informer = new SharedIndexInformer<Pod>(lw, {
          clock,
          queue,
          resyncPeriodMs: 1000,
          reflectorOptions: { backoff: noBackoff },
        });
        const handlers: Array<{ replayer: Replayer; reg: ResourceEventHandlerRegistration }> = [];
        const addHandler = (): void => {
          const slow = random() < 0.5;
          const replayer = new Replayer(() => (slow ? Math.floor(random() * 3) : 0));
          const reg = informer.addEventHandler(replayer, {
            resyncPeriodMs: random() < 0.5 ? 0 : 1000 + Math.floor(random() * 2) * 1000,
          });
          handlers.push({ replayer, reg });
        };
        addHandler();
        addHandler();
        const ac = new AbortController();
        const done = informer.run(ac.signal);
        let watch: FakeWatchStream<Pod> = await lw.nextWatch();
        const removed = new Set<Replayer>();

        for (let step = 0; step < 400; step++) {
          const r = random();
          const name = `p${Math.floor(random() * 16)}`;
          const key = `default/${name}`;
          if (r < 0.7) {
            const obj = pod(name, String(++rv));
            if (!server.has(key)) {
              server.set(key, obj);
              watch.add(obj);
            } else if (random() < 0.25) {
              server.delete(key);
              watch.delete(obj);
            } else {
              server.set(key, obj);
              watch.modify(obj);
            }
          } else if (r < 0.78) {
            // A watch outage: changes the watch never delivers, then a 410 and a relist.
            for (let i = 0; i < 3; i++) {
              const n = `p${Math.floor(random() * 16)}`;
              if (server.has(`default/${n}`) && random() < 0.5) server.delete(`default/${n}`);
              else server.set(`default/${n}`, pod(n, String(++rv)));
            }
            watch.error({ code: 410, reason: 'Expired', message: 'too old resource version' });
            watch = await lw.nextWatch();
          } else if (r < 0.86) {
            await clock.tick(1000); // resync check
          } else if (r < 0.93) {
            addHandler(); // late registration while events flow
          } else {
            const live = handlers.filter((h) => !removed.has(h.replayer));
            const victim = live[Math.floor(random() * live.length)];
            if (victim !== undefined && live.length > 1) {
              victim.reg.remove();
              removed.add(victim.replayer);
            }
          }
          if (random() < 0.3) await new Promise<void>((resolve) => setImmediate(resolve));
        }

        await waitFor(
          () => informer.lastSyncResourceVersion() === String(rv) && watch.pending === 0,
          'the last event',
          10_000,
        );
        const expected = new Map([...server].map(([k, o]) => [k, o.metadata?.resourceVersion ?? '']));
        await waitFor(
          () =>
            informer.stats().queueDepth === 0 && informer.stats().handlers.every((h) => h.bufferDepth === 0),
          'the queue and every buffer to drain',
          10_000,
        );
        await settle(20);
        const cache = new Map(
          informer
            .getStore()
            .list()
            .map((o) => [keyOf(o), o.metadata?.resourceVersion ?? '']),
        );
        expect(cache).toEqual(expected);
        for (const { replayer, reg } of handlers) {
          expect(replayer.violations).toEqual([]);
          if (removed.has(replayer)) continue;
          expect(reg.hasSynced()).toBe(true);
          expect(replayer.view).toEqual(expected);
        }
        ac.abort();
        await done;
      },
    );
  },
);
