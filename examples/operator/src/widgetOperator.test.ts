import type { V1ConfigMap } from '@kubernetes/client-node';
import { kinds } from 'kinformer';
import { TestEnv } from '@kinformer/runtime/testing';
import { addWidgetOperator, FINALIZER, widgets } from './widgetOperator.js';
import type { Widget } from './widgetOperator.js';

describe('the Widget operator', () => {
  let env: TestEnv;
  beforeEach(async () => {
    env = await TestEnv.start();
    env.server.registerResource({
      ...widgets,
      namespaced: true,
      customResource: true,
      subresources: { status: {} },
    });
  });
  afterEach(() => env.stop());

  const find = <T>(kind: Parameters<typeof env.server.get>[0], name: string): T | undefined => {
    try {
      return env.server.get(kind, name) as T;
    } catch {
      return undefined;
    }
  };

  it('owns a ConfigMap per Widget, reports status, and cleans up through its finalizer', async () => {
    const mgr = env.manager({ name: 'widget-operator' });
    addWidgetOperator(mgr);
    env.run(mgr);
    const w: Widget = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w1', namespace: 'default' },
      spec: { color: 'red', size: 3 },
    };
    env.server.create(widgets, w);
    await env.server.waitFor(() => find<Widget>(widgets, 'w1')?.status?.ready === true);
    const stored = find<Widget>(widgets, 'w1')!;
    expect(stored.metadata?.finalizers).toEqual([FINALIZER]);
    expect(stored.status).toEqual({
      observedGeneration: stored.metadata?.generation,
      configMap: 'w1-widget',
      ready: true,
    });
    expect(find<V1ConfigMap>(kinds.configMaps, 'w1-widget')?.data).toEqual({ color: 'red', size: '3' });

    env.server.patch(widgets, 'w1', { spec: { size: 5 } });
    await env.server.waitFor(() => find<V1ConfigMap>(kinds.configMaps, 'w1-widget')?.data?.['size'] === '5');
    await env.server.waitFor(() => {
      const now = find<Widget>(widgets, 'w1');
      return now?.status?.observedGeneration === now?.metadata?.generation;
    });

    env.server.delete(widgets, 'w1');
    await env.server.waitFor(() => find(widgets, 'w1') === undefined); // the finalizer came off after cleanup
    await env.server.waitFor(() => find(kinds.configMaps, 'w1-widget') === undefined); // the garbage collector
  });
});
