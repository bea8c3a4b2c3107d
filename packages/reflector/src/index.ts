export type {
  ListerWatcher,
  ListOptions,
  ReflectorStore,
  RequestContext,
  WatchEvent,
  WatchEventType,
  WatchOptions,
} from './listerWatcher.js';
export type { ExpectedType, ReflectorOptions, ReflectorStats } from './reflectorOptions.js';
export { DEFAULT_STALL_MARGIN_MS, Reflector } from './reflector.js';
export type { ShardFilterMode } from './shardFilter.js';
export { REFLECTOR_BACKOFF, reflectorBackoff } from './recovery.js';
export { INITIAL_EVENTS_END_ANNOTATION } from './watchStream.js';
export type { ReflectorInfo, WatchErrorHandler } from './watchErrorHandler.js';
export { defaultWatchErrorHandler } from './watchErrorHandler.js';
export type { ListFunc, ListPagerOptions, PagedList } from './pager.js';
export { DEFAULT_PAGE_SIZE, listAllPages } from './pager.js';
