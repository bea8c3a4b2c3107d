/**
 * `@kinformer/events/internal`: building blocks the other `@kinformer/*` packages share (constants, decoders,
 * helpers). Not public API: no compatibility promise, not re-exported by `kinformer`.
 */
export type {
  CorrelateResult,
  CorrelatedEvent,
  CorrelatorOptions,
  EventAggregatorKeyFunc,
  EventAggregatorMessageFunc,
  EventSpamKeyFunc,
} from './eventCorrelator.js';
export {
  DEFAULT_AGGREGATE_INTERVAL_MS,
  DEFAULT_AGGREGATE_MAX_EVENTS,
  DEFAULT_LRU_CACHE_SIZE,
  DEFAULT_SPAM_BURST,
  DEFAULT_SPAM_QPS,
  EventCorrelator,
  eventAggregatorByReason,
  eventAggregatorByReasonMessage,
  eventKey,
  eventName,
  eventSpamKey,
} from './eventCorrelator.js';
export type { JsonPatchOperation } from './eventSink.js';
export { seriesPatch, toEventsV1Event } from './eventSink.js';
export type { FakeRecorderNextOptions } from './fakeRecorder.js';
