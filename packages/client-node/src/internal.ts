/**
 * `@kinformer/client-node/internal`: building blocks the other `@kinformer/*` packages share (constants, decoders,
 * helpers). Not public API: no compatibility promise, not re-exported by `kinformer`.
 */
export { collectionPath } from './resourcePath.js';
export type { WatchEventStreamOptions, WatchStreamSummary } from './watchEventStream.js';
export { DEFAULT_MAX_WATCH_LINE_BYTES, WatchEventStream } from './watchEventStream.js';
export { statusFromBody } from './apiError.js';
export { isStatus } from './responseError.js';
export type { ListDecoderOptions } from './listDecoder.js';
export { DEFAULT_MAX_LIST_ITEM_BYTES, ListDecoder } from './listDecoder.js';
export type { KubeConfigListerWatcherRequest } from './kubeConfigListerWatchers.js';
export type { ApiErrorOptions } from './apiError.js';
export type {
  ApplyCallOptions,
  DeleteCallOptions,
  ListCallOptions,
  PatchCallOptions,
  WriteCallOptions,
} from './objectClient.js';
