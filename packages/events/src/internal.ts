/**
 * `@kinformer/events/internal`: building blocks the other `@kinformer/*` packages share (constants, decoders,
 * helpers). Not public API: no compatibility promise, not re-exported by `kinformer`.
 */
export {
  type CorrelatedEvent,
  type CorrelateResult,
  type CorrelatorOptions,
  DEFAULT_AGGREGATE_INTERVAL_MS,
  DEFAULT_AGGREGATE_MAX_EVENTS,
  DEFAULT_LRU_CACHE_SIZE,
  DEFAULT_SPAM_BURST,
  DEFAULT_SPAM_QPS,
  eventAggregatorByReason,
  eventAggregatorByReasonMessage,
  type EventAggregatorKeyFunc,
  type EventAggregatorMessageFunc,
  EventCorrelator,
  eventKey,
  eventName,
  eventSpamKey,
  type EventSpamKeyFunc,
} from './eventCorrelator.js';
export { type JsonPatchOperation, seriesPatch, toEventsV1Event } from './eventSink.js';
export type { FakeRecorderNextOptions } from './fakeRecorder.js';
