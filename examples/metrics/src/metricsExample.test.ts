import { waitFor } from '@kinformer/test-tools';
import { WORKQUEUE_METRIC_NAMES } from '@kinformer/workqueue/internal';
import { startMetricsExample, type MetricsExample } from './metricsExample.js';

/** HTTP probes of a real server: re-checked every 10 ms, for up to 20 s on a loaded machine. */
const PROBE = { timeoutMs: 20_000, intervalMs: 10 };

/** The value of one series in a Prometheus text body. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('the metrics example', () => {
  let example: MetricsExample;
  beforeAll(async () => {
    example = await startMetricsExample({ port: 0, pods: 50 });
  });
  afterAll(async () => {
    await example?.close();
  });

  it('is ready once synced and watching, as /readyz?verbose shows check by check', async () => {
    expect((await fetch(`${example.url}/healthz`)).status).toBe(200);
    await waitFor(async () => (await fetch(`${example.url}/readyz`)).status === 200, PROBE);
    const res = await fetch(`${example.url}/readyz?verbose`);
    expect(await res.text()).toBe(
      '[+]ping ok\n[+]informer-sync ok\n[+]informer-watch ok\nreadyz check passed\n',
    );
    expect((await fetch(`${example.url}/readyz/informer-sync`)).status).toBe(200);
    expect((await fetch(`${example.url}/nothing`)).status).toBe(404);
  });

  it('serves informer, reflector and work-queue metrics under client-go names on /metrics', async () => {
    await waitFor(() => example.processed() >= 50, PROBE);
    example.apiServer.patch('pods', 'default/web-0', { metadata: { labels: { rev: '1' } } });
    example.apiServer.delete('pods', 'shop/web-1'); // a MODIFIED (deletionTimestamp), then the DELETED
    const pods = 'name="pods.v1"';
    let text = '';
    await waitFor(async () => {
      text = await (await fetch(`${example.url}/metrics`)).text();
      return (
        sample(text, `kinformer_informer_events_total{${pods},type="delete"}`) === 1 &&
        sample(text, `workqueue_adds_total{name="pods"}`) === 53
      );
    }, PROBE);
    const res = await fetch(`${example.url}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const name of [
      ...WORKQUEUE_METRIC_NAMES, // controller-runtime's names, pinned in the work queue's metrics tests
      'informer_queued_items',
      'informer_store_resource_version',
      'reflector_lists_total',
      'reflector_watches_total',
      'reflector_short_watches_total',
      'reflector_last_resource_version',
      'kinformer_informer_synced',
      'kinformer_informer_watching',
      'kinformer_informer_events_total',
      'kinformer_informer_handler_busy_seconds_total',
    ])
      expect(text).toContain(`# TYPE ${name} `);
    expect(sample(text, `kinformer_informer_events_total{${pods},type="add"}`)).toBe(50);
    expect(sample(text, `kinformer_informer_events_total{${pods},type="update"}`)).toBe(2);
    expect(sample(text, `kinformer_informer_cache_objects{${pods}}`)).toBe(49);
    expect(sample(text, `kinformer_informer_synced{${pods}}`)).toBe(1);
    expect(sample(text, `reflector_lists_total{${pods}}`)).toBe(1);
    expect(sample(text, `informer_queued_items{${pods},group="",version="v1",resource="pods"}`)).toBe(0);
    expect(sample(text, `kinformer_informer_handler_notifications_total{${pods},handler="enqueue"}`)).toBe(
      53,
    );
    expect(sample(text, 'workqueue_work_duration_seconds_count{name="pods"}')).toBeGreaterThanOrEqual(50);
  });
});
