export { filteringResourceEventHandler, type ResourceEventHandler } from '@kinformer/controller';
export {
  type HandlerOptions,
  type HandlerStats,
  type InformerStats,
  type ResourceEventHandlerRegistration,
  SharedIndexInformer,
  type SharedIndexInformerOptions,
} from './sharedIndexInformer.js';
export type { ReadonlyIndexer, ReadonlyStore } from './readonlyIndexer.js';
export { dropManagedFields } from './dropManagedFields.js';
export { type InformerSynced, waitForCacheSync, type WaitForCacheSyncOptions } from './waitForCacheSync.js';
export {
  type ForResourceOptions,
  type InformerAndLister,
  InformerFactory,
  type InformerFactoryOptions,
  type ListerWatcherFactory,
  type PartialObjectMetadata,
  type ScopeOptions,
} from './informerFactory.js';
