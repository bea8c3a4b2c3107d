import { controllerRuntimeMetrics } from '@kinformer/prometheus';
import { waitFor } from '@kinformer/test-tools';
import { httpGet } from './http.test.helpers.js';
import { kinds } from './kinds.js';
import type { RuntimeMetrics } from './metrics.js';
import { TerminalError } from './terminalError.js';
import { configMap, perTestEnv } from './testEnv.test.helpers.js';

/** The value of one sample line (`name{labels} value`), or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('controllerRuntimeMetrics on a Manager', () => {
  const env = perTestEnv();

  it("serves controller-runtime's metric names and labels, and the workqueue's, on /metrics", async () => {
    env.server.create(kinds.configMaps, configMap('ok'));
    env.server.create(kinds.configMaps, configMap('flaky'));
    env.server.create(kinds.configMaps, configMap('broken'));
    // The prom-client implementation satisfies the runtime's interface (checked by the compiler).
    const metrics: RuntimeMetrics = controllerRuntimeMetrics();
    const mgr = env.manager({ metrics, probes: { port: 0, host: '127.0.0.1' } });
    let flaky = 0;
    const c = mgr
      .controller('cm-proof')
      .for(kinds.configMaps)
      .concurrency(3)
      .reconcile((ctx) => {
        if (ctx.name === 'broken') throw new TerminalError('invalid');
        if (ctx.name === 'flaky' && ++flaky === 1) throw new Error('once');
        return ctx.name === 'ok' ? { requeueAfterMs: 3_600_000 } : undefined;
      });
    env.run(mgr);
    await waitFor(() => c.stats().succeeded === 2 && c.stats().terminal === 1, 'the reconciles', 10_000);
    await waitFor(() => mgr.probeAddress() !== undefined, 'the probe server');
    const { host, port } = mgr.probeAddress()!;
    const res = await httpGet(host, port, '/metrics');
    expect(res.status).toBe(200);
    const text = res.body;
    const l = 'controller="cm-proof"';
    expect(sample(text, `controller_runtime_reconcile_total{${l},result="success"}`)).toBe(1);
    expect(sample(text, `controller_runtime_reconcile_total{${l},result="requeue_after"}`)).toBe(1);
    expect(sample(text, `controller_runtime_reconcile_total{${l},result="error"}`)).toBe(2);
    expect(sample(text, `controller_runtime_reconcile_total{${l},result="requeue"}`)).toBe(0);
    expect(sample(text, `controller_runtime_reconcile_errors_total{${l}}`)).toBe(2);
    expect(sample(text, `controller_runtime_terminal_reconcile_errors_total{${l}}`)).toBe(1);
    expect(sample(text, `controller_runtime_reconcile_time_seconds_count{${l}}`)).toBe(4);
    expect(sample(text, `controller_runtime_reconcile_time_seconds_bucket{le="60",${l}}`)).toBe(4);
    expect(sample(text, `controller_runtime_max_concurrent_reconciles{${l}}`)).toBe(3);
    expect(sample(text, `controller_runtime_active_workers{${l}}`)).toBe(0);
    expect(text).toContain('# TYPE controller_runtime_reconcile_time_seconds histogram');
    expect(text).toContain(
      '# HELP controller_runtime_reconcile_total Total number of reconciliations per controller',
    );
    // The queue's metrics, named after the controller (client-go's workqueue_* names).
    expect(sample(text, 'workqueue_adds_total{name="cm-proof"}')).toBeGreaterThanOrEqual(4);
    expect(sample(text, 'workqueue_retries_total{name="cm-proof"}')).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'workqueue_depth{name="cm-proof"}')).toBe(0);
    expect(text).toContain('workqueue_queue_duration_seconds_bucket{le=');
  });
});
