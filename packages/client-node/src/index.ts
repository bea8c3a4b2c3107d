export type { ListWatchOptions } from './createListWatch.js';
export { createListWatch } from './createListWatch.js';
export { kubeConfigListerWatchers } from './kubeConfigListerWatchers.js';
export type { ApiResource } from './resourcePath.js';
export { apiError } from './apiError.js';
export { requestOptions } from './requestOptions.js';
export type { CallOptions, ObjectClientOptions, ObjectKey, ResourceOf, ListPage } from './objectClient.js';
export { isAlreadyExists, isConflict, isNotFound, ObjectClient, typedResource } from './objectClient.js';
