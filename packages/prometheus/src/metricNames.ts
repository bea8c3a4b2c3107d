/**
 * The names of the metrics {@link KinformerMetrics} registers. Where client-go or component-base
 * has a metric for the same thing the name is theirs (so existing dashboards and alerts work);
 * everything else starts with `kinformer_`.
 */

// client-go 1.36 / component-base `metrics/prometheus/clientgo/fifo` (labels name, group, version, resource).

/** Gauge `informer_queued_items`: items waiting in the queue between the reflector and the cache. */
export const INFORMER_QUEUED_ITEMS = 'informer_queued_items';
/** Gauge `informer_store_resource_version`: the 15 least significant digits of the last synced resourceVersion. */
export const INFORMER_STORE_RESOURCE_VERSION = 'informer_store_resource_version';

// kinformer's informer metrics (label name; handler metrics add handler, events add type).

/** Gauge `kinformer_informer_synced`: 1 once the initial list is in the cache. */
export const KINFORMER_INFORMER_SYNCED = 'kinformer_informer_synced';
/** Gauge `kinformer_informer_watching`: 1 while a watch is open. */
export const KINFORMER_INFORMER_WATCHING = 'kinformer_informer_watching';
/** Gauge `kinformer_informer_cache_objects`: objects in the cache. */
export const KINFORMER_INFORMER_CACHE_OBJECTS = 'kinformer_informer_cache_objects';
/** Counter `kinformer_informer_events_total{type="add"|"update"|"delete"}`: cache changes by type. */
export const KINFORMER_INFORMER_EVENTS_TOTAL = 'kinformer_informer_events_total';
/** Counter `kinformer_informer_deltas_total`: deltas applied to the cache. */
export const KINFORMER_INFORMER_DELTAS_TOTAL = 'kinformer_informer_deltas_total';
/** Counter `kinformer_informer_process_errors_total`: deltas the cache refused (logged and skipped). */
export const KINFORMER_INFORMER_PROCESS_ERRORS_TOTAL = 'kinformer_informer_process_errors_total';
/** Counter `kinformer_informer_handler_notifications_total`: notifications a handler processed. */
export const KINFORMER_INFORMER_HANDLER_NOTIFICATIONS_TOTAL =
  'kinformer_informer_handler_notifications_total';
/** Counter `kinformer_informer_handler_errors_total`: handler calls that threw or rejected. */
export const KINFORMER_INFORMER_HANDLER_ERRORS_TOTAL = 'kinformer_informer_handler_errors_total';
/**
 * Counter `kinformer_informer_handler_busy_seconds_total`: time spent in a handler. The mean
 * handler latency is `rate(busy_seconds_total) / rate(notifications_total)`.
 */
export const KINFORMER_INFORMER_HANDLER_BUSY_SECONDS_TOTAL = 'kinformer_informer_handler_busy_seconds_total';
/** Gauge `kinformer_informer_handler_max_latency_seconds`: the longest single handler call so far. */
export const KINFORMER_INFORMER_HANDLER_MAX_LATENCY_SECONDS =
  'kinformer_informer_handler_max_latency_seconds';
/** Gauge `kinformer_informer_handler_buffer_depth`: notifications waiting in a handler's buffer. */
export const KINFORMER_INFORMER_HANDLER_BUFFER_DEPTH = 'kinformer_informer_handler_buffer_depth';

// client-go's reflector metrics (tools/cache/reflector_metrics.go; label name), the ones a counter snapshot can give.

/** Counter `reflector_lists_total`: LIST operations started. */
export const REFLECTOR_LISTS_TOTAL = 'reflector_lists_total';
/** Counter `reflector_watches_total`: watch requests sent (streaming lists excluded). */
export const REFLECTOR_WATCHES_TOTAL = 'reflector_watches_total';
/** Counter `reflector_short_watches_total`: watches that closed within a second without any event. */
export const REFLECTOR_SHORT_WATCHES_TOTAL = 'reflector_short_watches_total';
/** Gauge `reflector_last_resource_version`: the last resourceVersion seen, as a number. */
export const REFLECTOR_LAST_RESOURCE_VERSION = 'reflector_last_resource_version';

// kinformer's reflector metrics (label name): the rest of `ReflectorStats`.

/** Counter `kinformer_reflector_relists_total`: lists after the store had been populated once. */
export const KINFORMER_REFLECTOR_RELISTS_TOTAL = 'kinformer_reflector_relists_total';
/** Counter `kinformer_reflector_watch_lists_total`: streaming-list (`sendInitialEvents`) requests. */
export const KINFORMER_REFLECTOR_WATCH_LISTS_TOTAL = 'kinformer_reflector_watch_lists_total';
/** Counter `kinformer_reflector_watch_restarts_total`: watches started again without relisting. */
export const KINFORMER_REFLECTOR_WATCH_RESTARTS_TOTAL = 'kinformer_reflector_watch_restarts_total';
/** Counter `kinformer_reflector_expired_total`: 410 Expired/Gone answers. */
export const KINFORMER_REFLECTOR_EXPIRED_TOTAL = 'kinformer_reflector_expired_total';
/** Counter `kinformer_reflector_watch_events_total`: watch events received, bookmarks included. */
export const KINFORMER_REFLECTOR_WATCH_EVENTS_TOTAL = 'kinformer_reflector_watch_events_total';
/** Counter `kinformer_reflector_bookmarks_total`: BOOKMARK events received. */
export const KINFORMER_REFLECTOR_BOOKMARKS_TOTAL = 'kinformer_reflector_bookmarks_total';
/** Counter `kinformer_reflector_malformed_total`: malformed or unknown watch lines (each ended a watch). */
export const KINFORMER_REFLECTOR_MALFORMED_TOTAL = 'kinformer_reflector_malformed_total';
/** Counter `kinformer_reflector_stalls_total`: watches aborted by stall detection. */
export const KINFORMER_REFLECTOR_STALLS_TOTAL = 'kinformer_reflector_stalls_total';
/** Counter `kinformer_reflector_resyncs_total`: periodic resyncs. */
export const KINFORMER_REFLECTOR_RESYNCS_TOTAL = 'kinformer_reflector_resyncs_total';

/** Counter `kinformer_reflector_backoffs_total`: failures that made the reflector wait a backoff step. */
export const KINFORMER_REFLECTOR_BACKOFFS_TOTAL = 'kinformer_reflector_backoffs_total';
/** Counter `kinformer_reflector_backoff_seconds_total`: time spent waiting in backoff. */
export const KINFORMER_REFLECTOR_BACKOFF_SECONDS_TOTAL = 'kinformer_reflector_backoff_seconds_total';
/** Objects a sharded reflector dropped on the client (KEP-5866 fallback). */
export const KINFORMER_REFLECTOR_SHARD_DROPPED_TOTAL = 'kinformer_reflector_shard_dropped_total';
/** Which side filters a sharded reflector: `mode="server"` or `mode="client"` is 1. */
export const KINFORMER_REFLECTOR_SHARD_FILTER_MODE = 'kinformer_reflector_shard_filter_mode';

// component-base `metrics/prometheus/clientgo/leaderelection` (label name).

/** Gauge `leader_election_master_status`: 1 while this process leads the lease, 0 otherwise. */
export const LEADER_ELECTION_MASTER_STATUS = 'leader_election_master_status';
