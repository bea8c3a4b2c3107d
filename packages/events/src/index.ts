export type {
  CorrelatedEvent,
  CorrelateResult,
  CorrelatorOptions,
  EventAggregatorKeyFunc,
  EventAggregatorMessageFunc,
  EventSpamKeyFunc,
  EventType,
  ObjectReference,
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
export type { EventSink, JsonPatchOperation } from './eventSink.js';
export { eventsV1Sink, seriesPatch, toEventsV1Event } from './eventSink.js';
export type {
  ApiEventRecorderOptions,
  EventObject,
  EventOptions,
  EventRecorder,
  EventRecorderStats,
} from './eventRecorder.js';
export { ApiEventRecorder, referenceTo } from './eventRecorder.js';
export type { FakeRecorderNextOptions, FakeRecorderOptions } from './fakeRecorder.js';
export { FakeRecorder } from './fakeRecorder.js';
