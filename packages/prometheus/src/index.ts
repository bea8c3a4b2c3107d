export type {
  AddInformerOptions,
  KinformerMetricsOptions,
  MeasuredInformer,
  MeasuredLeaderElector,
  MetricsRegistration,
} from './kinformerMetrics.js';
export { KinformerMetrics, parseInformerName } from './kinformerMetrics.js';
export {
  INFORMER_QUEUED_ITEMS,
  INFORMER_STORE_RESOURCE_VERSION,
  KINFORMER_INFORMER_CACHE_OBJECTS,
  KINFORMER_INFORMER_DELTAS_TOTAL,
  KINFORMER_INFORMER_EVENTS_TOTAL,
  KINFORMER_INFORMER_HANDLER_BUFFER_DEPTH,
  KINFORMER_INFORMER_HANDLER_BUSY_SECONDS_TOTAL,
  KINFORMER_INFORMER_HANDLER_ERRORS_TOTAL,
  KINFORMER_INFORMER_HANDLER_MAX_LATENCY_SECONDS,
  KINFORMER_INFORMER_HANDLER_NOTIFICATIONS_TOTAL,
  KINFORMER_INFORMER_PROCESS_ERRORS_TOTAL,
  KINFORMER_INFORMER_SYNCED,
  KINFORMER_INFORMER_WATCHING,
  KINFORMER_REFLECTOR_BOOKMARKS_TOTAL,
  KINFORMER_REFLECTOR_EXPIRED_TOTAL,
  KINFORMER_REFLECTOR_MALFORMED_TOTAL,
  KINFORMER_REFLECTOR_RELISTS_TOTAL,
  KINFORMER_REFLECTOR_RESYNCS_TOTAL,
  KINFORMER_REFLECTOR_STALLS_TOTAL,
  KINFORMER_REFLECTOR_WATCH_EVENTS_TOTAL,
  KINFORMER_REFLECTOR_WATCH_LISTS_TOTAL,
  KINFORMER_REFLECTOR_WATCH_RESTARTS_TOTAL,
  LEADER_ELECTION_MASTER_STATUS,
  REFLECTOR_LAST_RESOURCE_VERSION,
  REFLECTOR_LISTS_TOTAL,
  REFLECTOR_SHORT_WATCHES_TOTAL,
  REFLECTOR_WATCHES_TOTAL,
} from './metricNames.js';
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
