export type {
  ListerWatcher,
  ListOptions,
  ReflectorStore,
  RequestContext,
  WatchEvent,
  WatchEventType,
  WatchOptions,
} from './listerWatcher.js';
export type { ReflectorOptions, ReflectorStats } from './reflectorOptions.js';
export { Reflector } from './reflector.js';
export { reflectorBackoff } from './recovery.js';
export type { ShardFilterMode } from './shardFilter.js';
export type { ReflectorInfo, WatchErrorHandler } from './watchErrorHandler.js';
export { defaultWatchErrorHandler } from './watchErrorHandler.js';
