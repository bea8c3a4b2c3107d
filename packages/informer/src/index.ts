export type { ResourceEventHandler } from '@kinformer/controller';
export { filteringResourceEventHandler } from '@kinformer/controller';
export type {
  HandlerOptions,
  HandlerStats,
  InformerEventMap,
  InformerStats,
  ResourceEventHandlerRegistration,
  SharedIndexInformerOptions,
} from './sharedIndexInformer.js';
export { MINIMUM_RESYNC_PERIOD_MS, SharedIndexInformer } from './sharedIndexInformer.js';
export type { ReadonlyIndexer, ReadonlyStore } from './readonlyIndexer.js';
export { dropManagedFields } from './dropManagedFields.js';
export type { InformerSynced, WaitForCacheSyncOptions } from './waitForCacheSync.js';
export { waitForCacheSync } from './waitForCacheSync.js';
export type {
  ForResourceOptions,
  InformerAndLister,
  ListerWatcherFactory,
  ListerWatcherRequest,
  PartialObjectMetadata,
  ScopeOptions,
  SelectorOptions,
  SharedInformerFactoryOptions,
  TweakListOptions,
} from './sharedInformerFactory.js';
export { informerKey, SharedInformerFactory } from './sharedInformerFactory.js';
export type {
  AppsV1Informers,
  BatchV1Informers,
  CoordinationV1Informers,
  CoreV1Informers,
  DiscoveryV1Informers,
  NetworkingV1Informers,
  RbacV1Informers,
  TypedInformerAccessor,
  TypedInformerGroups,
} from './typedInformers.js';
