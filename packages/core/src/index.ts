import './nodeVersionCheck.js'; // first: fails with one line on a too-old Node, before anything else loads
export type {
  GroupVersionResource,
  KubeList,
  KubeObject,
  ListMeta,
  ObjectMeta,
  OwnerReference,
  ShardInfo,
  Status,
  StatusCause,
} from './types.js';
export { groupVersionString, gvrString, hasObjectMeta, resourceVersionOf } from './types.js';
export { DeletedFinalStateUnknown, isDeletedFinalStateUnknown } from './deletedFinalStateUnknown.js';
export type { ExplicitKey, KeyFunc } from './keys.js';
export { deletionHandlingMetaNamespaceKeyFunc, metaNamespaceKeyFunc, splitMetaNamespaceKey } from './keys.js';
export type { ErrorCode, KinformerErrorOptions } from './errors.js';
export {
  abortError,
  ErrorCodes,
  isExpiredError,
  isKinformerError,
  isTooLargeResourceVersionError,
  isTooLargeResourceVersionStatus,
  isTooManyRequestsError,
  KinformerError,
} from './errors.js';
export type {
  LabelRequirement,
  LabelSelector,
  LabelSelectorObject,
  LabelSelectorOperator,
} from './labelSelector.js';
export { labelSelectorFromObject, parseLabelSelector } from './labelSelector.js';
export type { FieldRequirement, FieldSelector, FieldSelectorOperator } from './fieldSelector.js';
export { parseFieldSelector } from './fieldSelector.js';
export type { ShardField, ShardRange, ShardSelector } from './shardSelector.js';
export {
  parseShardSelector,
  SHARD_HASH_SPACE_END,
  shardBound,
  shardHash,
  shardSelectorFromRanges,
  splitHashSpace,
} from './shardSelector.js';
export type { Clock, Timer } from './clock.js';
export { realClock } from './clock.js';
export type { Backoff, BackoffOptions } from './backoff.js';
export { ExponentialBackoff } from './backoff.js';
export type { CreateLoggerOptions, LogFormat, Logger } from './logger.js';
export {
  componentLogger,
  createLogger,
  DEFAULT_LOG_LEVEL,
  getDefaultLogger,
  REDACT_PATHS,
} from './logger.js';
export type { Censor } from './logRedaction.js';
export { isSecretKey, redactForLog, redactString } from './logRedaction.js';
export { errorText, formatLogLine } from './logFormat.js';
export { deepFreeze, defaultFreezeObjects } from './freeze.js';
export {
  jsonNestingExceeds,
  MAX_OBJECT_DEPTH,
  objectDepth,
  objectTooDeepError,
  validateResourceVersion,
} from './wireValidation.js';
