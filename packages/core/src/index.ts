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
export {
  deletionHandlingMetaNamespaceKeyFunc,
  type KeyFunc,
  metaNamespaceKeyFunc,
  splitMetaNamespaceKey,
} from './keys.js';
export {
  type ErrorCode,
  ErrorCodes,
  isKinformerError,
  KinformerError,
  type KinformerErrorOptions,
} from './errors.js';
export {
  type LabelSelector,
  labelSelectorFromObject,
  type LabelSelectorObject,
  parseLabelSelector,
} from './labelSelector.js';
export { type FieldSelector, parseFieldSelector } from './fieldSelector.js';
export {
  parseShardSelector,
  shardHash,
  type ShardRange,
  type ShardSelector,
  shardSelectorFromRanges,
  splitHashSpace,
} from './shardSelector.js';
export { type Clock, realClock } from './clock.js';
export { type Backoff, type BackoffOptions, ExponentialBackoff } from './backoff.js';
export { createLogger, type CreateLoggerOptions, type Logger } from './logger.js';
export { deepFreeze } from './freeze.js';
