export type { EventType, ObjectReference } from './eventCorrelator.js';
export { type EventSink, eventsV1Sink } from './eventSink.js';
export {
  ApiEventRecorder,
  type ApiEventRecorderOptions,
  type EventObject,
  type EventOptions,
  type EventRecorder,
  type EventRecorderStats,
  referenceTo,
} from './eventRecorder.js';
export { FakeRecorder, type FakeRecorderOptions } from './fakeRecorder.js';
