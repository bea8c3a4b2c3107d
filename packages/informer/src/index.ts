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
  InformerFactoryOptions,
  ListerWatcherFactory,
  ListerWatcherRequest,
  PartialObjectMetadata,
  ScopeOptions,
  SelectorOptions,
  TweakListOptions,
} from './informerFactory.js';
export { InformerFactory } from './informerFactory.js';
