export type {
  ListerWatcher,
  ListOptions,
  ReflectorStore,
  RequestContext,
  WatchEvent,
  WatchEventType,
  WatchOptions,
} from './listerWatcher.js';
