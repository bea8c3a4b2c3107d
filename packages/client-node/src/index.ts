export type { ListWatchOptions } from './createListWatch.js';
export { createListWatch } from './createListWatch.js';
export type { KubeConfigListerWatcherRequest } from './kubeConfigListerWatchers.js';
export { kubeConfigListerWatchers } from './kubeConfigListerWatchers.js';
export type { ApiResource } from './resourcePath.js';
export { collectionPath } from './resourcePath.js';
export type { WatchEventStreamOptions, WatchStreamSummary } from './watchEventStream.js';
export { DEFAULT_MAX_WATCH_LINE_BYTES, WatchEventStream } from './watchEventStream.js';
export type { ApiErrorOptions } from './apiError.js';
export { apiError, statusFromBody } from './apiError.js';
export { requestOptions } from './requestOptions.js';
export { isStatus } from './responseError.js';
export type { ListDecoderOptions } from './listDecoder.js';
export { DEFAULT_MAX_LIST_ITEM_BYTES, ListDecoder } from './listDecoder.js';
export type {
  ApplyCallOptions,
  CallOptions,
  DeleteCallOptions,
  ListCallOptions,
  ListPage,
  ObjectClientOptions,
  ObjectKey,
  PatchCallOptions,
  ResourceOf,
  WriteCallOptions,
} from './objectClient.js';
export { isAlreadyExists, isConflict, isNotFound, ObjectClient, typedResource } from './objectClient.js';
