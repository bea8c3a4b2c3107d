export type { ControllerOptions } from './controller.js';
export { Controller } from './controller.js';
export { processDeltas } from './processDeltas.js';
export type { ResourceEventHandler } from './resourceEventHandler.js';
export { filteringResourceEventHandler } from './resourceEventHandler.js';
export type { IndexerInformerOptions, InformerOptions, QueueKind } from './newInformer.js';
export { newIndexerInformer, newInformer } from './newInformer.js';
