export { createListWatch, type ListWatchOptions } from './createListWatch.js';
export { kubeConfigListerWatchers } from './kubeConfigListerWatchers.js';
export type { ApiResource } from './resourcePath.js';
export { apiError } from './apiError.js';
export { requestOptions } from './requestOptions.js';
export {
  type CallOptions,
  isAlreadyExists,
  isConflict,
  isNotFound,
  type ListPage,
  ObjectClient,
  type ObjectClientOptions,
  type ObjectKey,
  type ResourceOf,
  typedResource,
} from './objectClient.js';
