import { FakeClock } from '@kinformer/core/testing';
import { FakeListerWatcher } from '@kinformer/reflector/testing';
import { captureLogs, within } from '@kinformer/test-tools';
import type { Pod } from '@kinformer/test-tools';
import { SharedIndexInformer } from './sharedIndexInformer.js';
import { waitForCacheSync } from './waitForCacheSync.js';

// A reflector's run rejects only on a bug (server errors go to the watch error handler); a clock
// whose sleep rejects stands in for one. Before the controller fix the informer then stayed a
// zombie: running, never synced, its run never settling.
describe('SharedIndexInformer when its reflector fails', () => {
  it('stops, rejects run with the error, and waitForCacheSync resolves false', async () => {
    const broken = new Error('the clock broke');
    class BrokenClock extends FakeClock {
      override sleep(): Promise<void> {
        return Promise.reject(broken);
      }
    }
    const lw = new FakeListerWatcher<Pod>().enqueueList(new Error('list failed'));
    const { logger } = captureLogs('silent');
    const informer = new SharedIndexInformer<Pod>(lw, { clock: new BrokenClock(), logger });
    const ac = new AbortController();
    const synced = waitForCacheSync(ac.signal, informer.hasSynced);
    await expect(within(informer.run(ac.signal), 'informer.run')).rejects.toBe(broken);
    expect(informer.isStopped()).toBe(true);
    expect(informer.hasSynced()).toBe(false);
    await expect(within(synced, 'waitForCacheSync')).resolves.toBe(false);
  });
});
