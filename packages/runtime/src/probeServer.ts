import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { Logger } from '@kinformer/core';
import { createHealthHandler, createMetricsHandler, pingCheck } from '@kinformer/prometheus/health';
import type { HealthCheck } from '@kinformer/prometheus/health';
import type { ManagerOptions } from './managerOptions.js';

/**
 * The Manager's probe server: `/healthz` (ping), `/readyz` (`readyz`), and `/metrics` when a
 * registry is given; anything else is a 404. Resolves once it listens.
 */
export async function startProbeServer(
  probes: NonNullable<ManagerOptions['probes']>,
  readyz: HealthCheck[],
  registry: NonNullable<ManagerOptions['metrics']>['registry'] | undefined,
  logger: Logger,
): Promise<Server> {
  const health = createHealthHandler({
    healthz: [pingCheck],
    readyz,
    onFailure: (endpoint, report) =>
      logger.warn(
        { endpoint, failed: report.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.reason ?? ''}`) },
        'probe failed',
      ),
  });
  const metrics = registry === undefined ? undefined : createMetricsHandler(registry);
  const server = createServer((req, res) => {
    if (health(req, res)) return;
    if (metrics !== undefined && metrics(req, res)) return;
    res.statusCode = 404;
    res.end('404 page not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(probes.port, probes.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/** Closes the probe server and its open connections. */
export async function closeProbeServer(server: Server | undefined): Promise<void> {
  if (server === undefined) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
