/**
 * An informer factory on the embedded FakeApiServer, a work queue fed by its pods informer, and one
 * HTTP server answering `/metrics` (prom-client), `/healthz` and `/readyz` (kube-style).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1Pod } from '@kubernetes/client-node';
import { KinformerMetrics } from '@kinformer/prometheus';
import {
  createHealthHandler,
  createMetricsHandler,
  pingCheck,
  syncedCheck,
  watchingCheck,
} from '@kinformer/prometheus/health';
import { FakeApiServer } from '@kinformer/testing';
import {
  deletionHandlingMetaNamespaceKeyFunc,
  metaNamespaceKeyFunc,
  RateLimitingQueue,
  SharedInformerFactory,
} from 'kinformer';
import { Registry } from 'prom-client';

export interface MetricsExampleOptions {
  /** Port of the metrics/health server; 0 picks a free one. Default 8080. */
  port?: number;
  /** Pods seeded on the embedded server. Default 200. */
  pods?: number;
}

/** A running example: where it listens, the API server (to write to), and how to stop it. */
export interface MetricsExample {
  /** `http://127.0.0.1:<port>`: GET `/metrics`, `/healthz`, `/readyz?verbose`. */
  readonly url: string;
  readonly apiServer: FakeApiServer;
  readonly factory: SharedInformerFactory;
  /** Keys the worker has processed. */
  readonly processed: () => number;
  close(): Promise<void>;
}

export async function startMetricsExample(options: MetricsExampleOptions = {}): Promise<MetricsExample> {
  const apiServer = await FakeApiServer.start({ recordRequests: false });
  for (let i = 0; i < (options.pods ?? 200); i++)
    apiServer.create('pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `web-${i}`, namespace: i % 2 ? 'shop' : 'default', labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'nginx' }] },
    });

  // Metrics: one KinformerMetrics per registry (here our own, not prom-client's global one).
  const registry = new Registry();
  const metrics = new KinformerMetrics({ registry });

  const factory = new SharedInformerFactory(apiServer.kubeConfig());
  const { informer } = factory.core.v1.pods();
  metrics.addInformer(informer);

  // A work queue fed by the informer, with a worker: the workqueue_* metrics.
  const queue = new RateLimitingQueue<string>({
    name: 'pods',
    metricsProvider: metrics.workqueueMetricsProvider,
  });
  const enqueue = (pod: V1Pod): void => queue.add(metaNamespaceKeyFunc(pod));
  informer.addEventHandler(
    {
      onAdd: enqueue,
      onUpdate: (_old, pod) => enqueue(pod),
      onDelete: (pod) => queue.add(deletionHandlingMetaNamespaceKeyFunc(pod)),
    },
    { name: 'enqueue' },
  );
  let processed = 0;
  const worker = (async () => {
    for (;;) {
      const { item, shutdown } = await queue.get();
      if (shutdown) return;
      processed++;
      queue.forget(item);
      queue.done(item);
    }
  })();

  // Health: live while the process answers; ready once synced and watching.
  const health = createHealthHandler({
    healthz: [pingCheck],
    readyz: [pingCheck, syncedCheck([informer]), watchingCheck([informer])],
    onFailure: (endpoint, report) =>
      console.warn(
        `${endpoint} failed: ${report.checks
          .filter((c) => !c.ok)
          .map((c) => `${c.name}: ${c.reason}`)
          .join('; ')}`,
      ),
  });
  const scrape = createMetricsHandler(registry);
  const server = http.createServer((req, res) => {
    if (!health(req, res) && !scrape(req, res)) res.writeHead(404).end('not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8080, '127.0.0.1', resolve);
  });

  const stop = new AbortController();
  factory.start(stop.signal);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    apiServer,
    factory,
    processed: () => processed,
    async close() {
      stop.abort();
      queue.shutdown();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await factory.shutdown();
      await worker;
      metrics.unregister();
      await apiServer.close();
    },
  };
}
