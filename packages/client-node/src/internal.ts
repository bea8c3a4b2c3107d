/**
 * `@kinformer/client-node/internal`: building blocks the other `@kinformer/*` packages share (constants, decoders,
 * helpers). Not public API: no compatibility promise, not re-exported by `kinformer`.
 */
export { collectionPath } from './resourcePath.js';
export {
  DEFAULT_MAX_WATCH_LINE_BYTES,
  WatchEventStream,
  type WatchEventStreamOptions,
  type WatchStreamSummary,
} from './watchEventStream.js';
export { type ApiErrorOptions, statusFromBody } from './apiError.js';
export { isStatus } from './responseError.js';
export { DEFAULT_MAX_LIST_ITEM_BYTES, ListDecoder, type ListDecoderOptions } from './listDecoder.js';
export type { KubeConfigListerWatcherRequest } from './kubeConfigListerWatchers.js';
export type {
  ApplyCallOptions,
  DeleteCallOptions,
  ListCallOptions,
  PatchCallOptions,
  WriteCallOptions,
} from './objectClient.js';
