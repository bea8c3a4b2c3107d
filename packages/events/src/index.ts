export type { EventType, ObjectReference } from './eventCorrelator.js';
export type { EventSink } from './eventSink.js';
export { eventsV1Sink } from './eventSink.js';
export type {
  ApiEventRecorderOptions,
  EventObject,
  EventOptions,
  EventRecorder,
  EventRecorderStats,
} from './eventRecorder.js';
export { ApiEventRecorder, referenceTo } from './eventRecorder.js';
export type { FakeRecorderOptions } from './fakeRecorder.js';
export { FakeRecorder } from './fakeRecorder.js';
