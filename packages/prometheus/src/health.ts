/**
 * `@kinformer/prometheus/health`: the `/healthz` and `/readyz` handlers and checks, without
 * prom-client (what `@kinformer/runtime`'s Manager serves). Only here: the package root loads prom-client.
 */
export type {
  CheckedInformer,
  CheckedLeaderElector,
  HealthCheck,
  HealthCheckResult,
  HealthReport,
  WatchingCheckOptions,
} from './healthChecks.js';
export { leaderCheck, pingCheck, runHealthChecks, syncedCheck, watchingCheck } from './healthChecks.js';
export type {
  HealthHandlerOptions,
  HttpRequestLike,
  HttpResponseLike,
  MetricsSource,
  RequestHandler,
} from './httpHandlers.js';
export { createHealthHandler, createMetricsHandler } from './httpHandlers.js';
