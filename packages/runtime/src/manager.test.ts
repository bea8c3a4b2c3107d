import { waitFor } from '@kinformer/test-tools';
import type { V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { kinds } from './kinds.js';
import { setControllerReference } from './ownerReferences.js';
import { predicates } from './predicates.js';
import type { ReconcileContext } from './reconcileContext.js';
import { TerminalError } from './terminalError.js';
import { configMap, perTestEnv } from './testEnv.test.helpers.js';

function deployment(name: string, labels: Record<string, string> = {}): V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default', labels },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } } } },
  };
}

describe('Manager', () => {
  const env = perTestEnv();

  it('reconciles every object of the initial list, then each change, with the latest cached object', async () => {
    env.server.create(kinds.configMaps, configMap('a', { v: '1' }));
    env.server.create(kinds.configMaps, configMap('b', { v: '1' }));
    const seen: Array<{ key: string; v: string | undefined }> = [];
    const mgr = env.manager();
    mgr
      .controller('cm')
      .for(kinds.configMaps)
      .reconcile((ctx) => {
        seen.push({ key: ctx.key, v: ctx.object?.data?.['v'] });
      });
    env.run(mgr);
    await waitFor(() => seen.length >= 2);
    expect(seen.map((s) => s.key).sort()).toEqual(['default/a', 'default/b']);
    env.server.patch(kinds.configMaps, 'a', { data: { v: '2' } });
    await waitFor(() => seen.some((s) => s.key === 'default/a' && s.v === '2'));
    env.server.delete(kinds.configMaps, 'b');
    await waitFor(() => seen.some((s) => s.key === 'default/b' && s.v === undefined));
  });

  it('maps owned objects to their controller owner, and watches() through a mapping', async () => {
    const d = env.server.create(kinds.deployments, deployment('web'));
    const keys: string[] = [];
    const mgr = env.manager();
    mgr
      .controller('dep')
      .for(kinds.deployments)
      .owns(kinds.configMaps)
      .watches(kinds.configMaps, (cm) =>
        cm.metadata?.labels?.['for'] ? [`default/${cm.metadata.labels['for']}`] : [],
      )
      .reconcile((ctx) => {
        keys.push(`${ctx.key} ${ctx.reasons.join(',')}`);
      });
    env.run(mgr);
    await waitFor(() => keys.length >= 1);
    keys.length = 0;
    const owned = setControllerReference(d, configMap('web-config'), kinds.deployments);
    env.server.create(kinds.configMaps, owned);
    await waitFor(() => keys.some((k) => k.startsWith('default/web ') && k.includes('(owned)')));
    keys.length = 0;
    env.server.create(kinds.configMaps, {
      ...configMap('other'),
      metadata: { name: 'other', labels: { for: 'web' } },
    });
    await waitFor(() => keys.some((k) => k.startsWith('default/web ') && k.includes('configmaps.v1 Added')));
  });

  it('predicates filter events before they become keys', async () => {
    env.server.create(kinds.deployments, deployment('in', { team: 'a' }));
    env.server.create(kinds.deployments, deployment('out', { team: 'b' }));
    const keys: string[] = [];
    const mgr = env.manager();
    mgr
      .controller('dep')
      .for(kinds.deployments, { predicates: [predicates.labelSelector('team=a')] })
      .reconcile((ctx) => {
        keys.push(ctx.key);
      });
    env.run(mgr);
    await waitFor(() => keys.length >= 1);
    env.server.patch(kinds.deployments, 'out', { metadata: { labels: { x: '1' } } });
    env.server.patch(kinds.deployments, 'in', { metadata: { labels: { x: '1' } } });
    await waitFor(() => keys.length >= 2);
    expect(keys).toEqual(['default/in', 'default/in']);
  });

  it('retries a failing key and stops after a TerminalError', async () => {
    env.server.create(kinds.configMaps, configMap('flaky'));
    env.server.create(kinds.configMaps, configMap('broken'));
    const runs = new Map<string, number>();
    const mgr = env.manager();
    mgr
      .controller('cm')
      .for(kinds.configMaps)
      .reconcile((ctx) => {
        const n = (runs.get(ctx.name) ?? 0) + 1;
        runs.set(ctx.name, n);
        if (ctx.name === 'broken') throw new TerminalError('invalid spec');
        if (n < 3) throw new Error('try again');
        expect(ctx.retries).toBe(2);
      });
    env.run(mgr);
    await waitFor(() => runs.get('flaky') === 3);
    const c = mgr.controllers()[0]!;
    await waitFor(() => c.stats().succeeded === 1 && c.stats().terminal === 1);
    expect(runs.get('broken')).toBe(1);
    expect(c.stats().failed).toBe(3);
  });

  it('aborts reconciles in flight on stop and resolves start', async () => {
    env.server.create(kinds.configMaps, configMap('slow'));
    let aborted = false;
    let started = false;
    const mgr = env.manager();
    mgr
      .controller('cm')
      .for(kinds.configMaps)
      .reconcile(async (ctx: ReconcileContext<V1ConfigMap>) => {
        started = true;
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        aborted = true;
      });
    const stop = env.run(mgr);
    await waitFor(() => started);
    expect(await stop()).toBeUndefined();
    expect(aborted).toBe(true);
    expect(mgr.controllers()[0]!.stats().aborted + mgr.controllers()[0]!.stats().succeeded).toBe(1);
  });

  it('reading a kind nobody caches is a typed error', () => {
    const mgr = env.manager();
    expect(() => mgr.get(kinds.secrets, 'default/x')).toThrow(
      expect.objectContaining({ code: 'ERR_KIND_NOT_CACHED' }),
    );
  });
});
