export type { ListWatchOptions } from './createListWatch.js';
export { createListWatch } from './createListWatch.js';
export type { ApiResource } from './resourcePath.js';
export { collectionPath } from './resourcePath.js';
export type { WatchEventStreamOptions, WatchStreamSummary } from './watchEventStream.js';
export { DEFAULT_MAX_WATCH_LINE_BYTES, WatchEventStream } from './watchEventStream.js';
