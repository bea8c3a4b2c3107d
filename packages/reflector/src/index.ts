export type {
  ListerWatcher,
  ListOptions,
  ReflectorStore,
  RequestContext,
  WatchEvent,
  WatchEventType,
  WatchOptions,
} from './listerWatcher.js';
export type { ExpectedType, ReflectorOptions, ReflectorStats } from './reflector.js';
export {
  DEFAULT_STALL_MARGIN_MS,
  INITIAL_EVENTS_END_ANNOTATION,
  isUnsupportedTableObject,
  Reflector,
} from './reflector.js';
export type { WatchErrorHandler } from './watchErrorHandler.js';
export { defaultWatchErrorHandler } from './watchErrorHandler.js';
export type { ListFunc, ListPagerOptions, PagedList } from './pager.js';
export { DEFAULT_PAGE_SIZE, listAllPages } from './pager.js';
export { compareResourceVersions, isNumericResourceVersion } from './resourceVersion.js';
export { RetryWithDeadline } from './retryWithDeadline.js';
export {
  DEFAULT_MIN_WATCH_TIMEOUT_MS,
  effectiveMinWatchTimeoutMs,
  watchTimeoutSeconds,
} from './watchTimeout.js';
