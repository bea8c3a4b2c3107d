import './nodeVersionCheck.js'; // first: fails with one line on a too-old Node, before anything else loads
export type {
  GroupVersionResource,
  KubeList,
  KubeObject,
  ListMeta,
  ObjectMeta,
  OwnerReference,
  Status,
} from './types.js';
export { DeletedFinalStateUnknown, isDeletedFinalStateUnknown } from './deletedFinalStateUnknown.js';
export type { KeyFunc } from './keys.js';
export { deletionHandlingMetaNamespaceKeyFunc, metaNamespaceKeyFunc, splitMetaNamespaceKey } from './keys.js';
export type { ErrorCode, KinformerErrorOptions } from './errors.js';
export { ErrorCodes, isKinformerError, KinformerError } from './errors.js';
export type { LabelSelector, LabelSelectorObject } from './labelSelector.js';
export { labelSelectorFromObject, parseLabelSelector } from './labelSelector.js';
export type { FieldSelector } from './fieldSelector.js';
export { parseFieldSelector } from './fieldSelector.js';
export type { ShardRange, ShardSelector } from './shardSelector.js';
export { parseShardSelector, shardHash, shardSelectorFromRanges, splitHashSpace } from './shardSelector.js';
export type { Clock } from './clock.js';
export { realClock } from './clock.js';
export type { Backoff, BackoffOptions } from './backoff.js';
export { ExponentialBackoff } from './backoff.js';
export type { CreateLoggerOptions, Logger } from './logger.js';
export { createLogger } from './logger.js';
export { deepFreeze } from './freeze.js';
