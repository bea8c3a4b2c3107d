export type { ResourceEventHandler } from '@kinformer/controller';
export { filteringResourceEventHandler } from '@kinformer/controller';
export type {
  HandlerOptions,
  HandlerStats,
  InformerStats,
  ResourceEventHandlerRegistration,
  SharedIndexInformerOptions,
} from './sharedIndexInformer.js';
export { SharedIndexInformer } from './sharedIndexInformer.js';
export type { ReadonlyIndexer, ReadonlyStore } from './readonlyIndexer.js';
export { dropManagedFields } from './dropManagedFields.js';
export type { InformerSynced, WaitForCacheSyncOptions } from './waitForCacheSync.js';
export { waitForCacheSync } from './waitForCacheSync.js';
export type {
  ForResourceOptions,
  InformerAndLister,
  InformerFactoryOptions,
  ListerWatcherFactory,
  PartialObjectMetadata,
  ScopeOptions,
} from './informerFactory.js';
export { InformerFactory } from './informerFactory.js';
