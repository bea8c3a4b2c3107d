import { captureLogs } from '@kinformer/test-tools';
import type { KubeObject } from '@kinformer/core';
import { ControllerRing, drainLabel, shardLabel } from './controllerRing.js';
import { kinds } from './kinds.js';
import { passes } from './predicates.js';
import type { Predicate } from './predicates.js';
import type { ReconcileContext } from './reconcileContext.js';
import { TestEnv } from './testing.js';

// The branches of shard mode that the FakeApiServer tests (controllerRing.test.ts) do not reach on
// their own: an object labelled for another shard, a drain seen on create, a delete of a drained
// object, a user hook under the ring's, and the selector a ring kind's informer gets (also as an
// owned kind). Each mirrors pkg/shard/controller/{reconciler,predicate}.go of the sharder.

const ring = new ControllerRing({ name: 'widgets', namespace: 'ops', kinds: [kinds.configMaps] }, 'shard-a');
const SHARD = shardLabel('widgets');
const DRAIN = drainLabel('widgets');

function cm(labels: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default', labels } };
}

interface Patch {
  ref: unknown;
  patch: unknown;
}

/** Runs the ring's hook (over `inner`, if given) on `obj`; says whether the reconcile ran and what was patched. */
async function hookOn(
  obj: KubeObject | undefined,
  inner?: (next: () => Promise<undefined>) => Promise<undefined>,
): Promise<{ ran: boolean; patches: Patch[]; acks: number }> {
  const patches: Patch[] = [];
  let acks = 0;
  let ran = false;
  const ctx = {
    key: 'default/x',
    name: 'x',
    namespace: 'default',
    object: obj,
    signal: new AbortController().signal,
    client: {
      patch: (_kind: unknown, ref: unknown, patch: unknown) => {
        patches.push({ ref, patch });
        return Promise.resolve(obj);
      },
    },
  } as unknown as ReconcileContext;
  const logs = captureLogs();
  const hook = ring.hook(
    kinds.configMaps,
    inner === undefined ? undefined : (_ctx, next) => inner(next as () => Promise<undefined>),
    logs.logger,
    () => acks++,
  );
  await hook(ctx, () => {
    ran = true;
    return Promise.resolve(undefined);
  });
  return { ran, patches, acks };
}

describe('ControllerRing (unit)', () => {
  it('skips an object labelled for another shard, and one without a shard label, without writing', async () => {
    expect(await hookOn(cm({ [SHARD]: 'shard-b' }))).toEqual({ ran: false, patches: [], acks: 0 });
    expect(await hookOn(cm({}))).toEqual({ ran: false, patches: [], acks: 0 });
  });

  it('does not reconcile a gone object (deleted, or moved away: the selector makes it look deleted)', async () => {
    expect(await hookOn(undefined)).toEqual({ ran: false, patches: [], acks: 0 });
  });

  it('acknowledges a drain by removing both labels with a merge patch, without reconciling', async () => {
    const { ran, patches, acks } = await hookOn(cm({ [SHARD]: 'shard-a', [DRAIN]: 'true' }));
    expect(ran).toBe(false);
    expect(acks).toBe(1);
    expect(patches).toEqual([
      {
        ref: { namespace: 'default', name: 'x' },
        patch: { metadata: { labels: { [SHARD]: null, [DRAIN]: null } } },
      },
    ]);
  });

  it("runs the user's hook (and through it the reconcile) only for an object of this shard", async () => {
    let inner = 0;
    const through = (next: () => Promise<undefined>): Promise<undefined> => {
      inner++;
      return next();
    };
    expect((await hookOn(cm({ [SHARD]: 'shard-a' }), through)).ran).toBe(true);
    expect((await hookOn(cm({ [SHARD]: 'shard-b' }), through)).ran).toBe(false);
    expect((await hookOn(cm({ [SHARD]: 'shard-a', [DRAIN]: 'true' }), through)).ran).toBe(false);
    expect(inner).toBe(1);
  });

  it("lets a drained object's create and update through whatever the user's predicates say; a delete passes only on them", () => {
    const never: Predicate = { create: () => false, update: () => false, delete: () => false };
    const [p] = ring.predicates([never]);
    const drained = cm({ [SHARD]: 'shard-a', [DRAIN]: 'true' });
    const plain = cm({ [SHARD]: 'shard-a' });
    expect(passes(p!, { type: 'create', obj: drained })).toBe(true);
    expect(passes(p!, { type: 'update', oldObj: plain, newObj: drained })).toBe(true);
    expect(passes(p!, { type: 'delete', obj: drained })).toBe(false);
    expect(passes(p!, { type: 'create', obj: plain })).toBe(false);
    expect(passes(p!, { type: 'update', oldObj: drained, newObj: plain })).toBe(false);
    const always: Predicate = { delete: () => true };
    expect(passes(ring.predicates([always])[0]!, { type: 'delete', obj: drained })).toBe(true);
    expect(ring.predicates([])).toEqual([]); // no user predicate: everything passes anyway
  });

  it("selects this shard's label on a ring kind's informer, ANDed with the source's own selector", () => {
    expect(ring.has(kinds.configMaps)).toBe(true);
    expect(ring.has(kinds.secrets)).toBe(false);
    expect(ring.scopeSelector(undefined)).toBe(`${SHARD}=shard-a`);
    expect(ring.scopeSelector('app=web')).toBe(`app=web,${SHARD}=shard-a`);
  });

  it("gives a ring kind's informer the shard selector also when the kind is owned, not the primary", async () => {
    const env = await TestEnv.start();
    try {
      const mgr = env.manager({
        controllerRing: {
          name: 'widgets',
          namespace: 'ops',
          identity: 'shard-a',
          kinds: [kinds.configMaps, kinds.secrets],
        },
      });
      mgr
        .controller('c')
        .for(kinds.configMaps)
        .owns(kinds.secrets)
        .owns(kinds.services)
        .reconcile(() => undefined);
      // The same informers the controller's sources got (asked with the same scope, so shared).
      const name = (
        kind: typeof kinds.secrets | typeof kinds.services | typeof kinds.configMaps,
        metadataOnly: boolean,
      ): string => decodeURIComponent(mgr.informer(kind, { metadataOnly }).informer.name);
      expect(name(kinds.configMaps, false)).toContain(`labelSelector=${SHARD}=shard-a`);
      expect(name(kinds.secrets, true)).toContain(`labelSelector=${SHARD}=shard-a`);
      expect(name(kinds.services, true)).not.toContain(SHARD); // not a ring kind
    } finally {
      await env.stop();
    }
  });
});
