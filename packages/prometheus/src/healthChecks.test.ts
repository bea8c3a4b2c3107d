import { ErrorCodes, KinformerError } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import {
  leaderCheck,
  pingCheck,
  runHealthChecks,
  syncedCheck,
  watchingCheck,
  type CheckedInformer,
} from './healthChecks.js';

const informer = (name: string, synced = true, watching = true) => ({
  name,
  synced,
  watching,
  hasSynced(): boolean {
    return this.synced;
  },
  isWatching(): boolean {
    return this.watching;
  },
});

describe('health checks', () => {
  it('report { ok, checks } with the reason of each failure, skipping excluded checks', () => {
    const pods = informer('pods.v1', false);
    const failing = {
      name: 'boom',
      check: () => {
        throw new Error('it broke');
      },
    };
    const report = runHealthChecks([pingCheck, syncedCheck([pods, informer('nodes.v1')]), failing], {
      exclude: ['boom', 'nope'],
    });
    expect(report).toEqual({
      ok: false,
      checks: [
        { name: 'ping', ok: true },
        { name: 'informer-sync', ok: false, reason: '1 informers not synced: pods.v1' },
        { name: 'boom', ok: true, excluded: true },
      ],
      unknownExcludes: ['nope'],
    });
    expect(runHealthChecks([failing]).checks).toEqual([{ name: 'boom', ok: false, reason: 'it broke' }]);
    pods.synced = true;
    expect(runHealthChecks([syncedCheck([pods])]).ok).toBe(true);
  });

  it('fail the watch check only after an informer was seen without a watch for longer than the grace', () => {
    const clock = new FakeClock();
    const pods: CheckedInformer & { watching: boolean } = informer('pods.v1');
    const check = watchingCheck([pods], { graceMs: 10_000, clock });
    expect(check.check()).toBeUndefined();
    pods.watching = false;
    expect(check.check()).toBeUndefined(); // first seen down now
    clock.advance(10_000);
    expect(check.check()).toBeUndefined(); // exactly the grace
    clock.advance(5_000);
    expect(check.check()).toBe('not watching: pods.v1 (15 s)');
    pods.watching = true;
    expect(check.check()).toBeUndefined();
    pods.watching = false;
    clock.advance(60_000);
    expect(check.check()).toBeUndefined(); // a new outage starts counting again
  });

  it("fail the leader check with the elector's error (client-go's HealthzAdaptor)", () => {
    const state: { stuck?: KinformerError } = {};
    const seen: Array<number | undefined> = [];
    const elector = {
      check: (ms?: number) => {
        seen.push(ms);
        return state.stuck;
      },
    };
    const check = leaderCheck(elector, { maxTolerableExpiredMs: 20_000 });
    expect(check.name).toBe('leader-election');
    expect(check.check()).toBeUndefined();
    state.stuck = new KinformerError(
      ErrorCodes.LEADER_ELECTION,
      'failed election to renew leadership on lease x',
    );
    expect(check.check()).toBe('failed election to renew leadership on lease x');
    expect(seen).toEqual([20_000, 20_000]);
  });
});
