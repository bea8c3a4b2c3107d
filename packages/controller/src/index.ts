export { Controller, type ControllerOptions } from './controller.js';
export { processDeltas } from './processDeltas.js';
export { filteringResourceEventHandler, type ResourceEventHandler } from './resourceEventHandler.js';
export {
  type IndexerInformerOptions,
  type InformerOptions,
  newIndexerInformer,
  newInformer,
  type QueueKind,
} from './newInformer.js';
