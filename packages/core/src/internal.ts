/**
 * `@kinformer/core/internal`: building blocks the other `@kinformer/*` packages share. Not public
 * API: no compatibility promise, not re-exported by `kinformer`.
 */
export { RingBuffer } from './ringBuffer.js';
export { waitFor, type WaitForOptions, type WakeSource } from './waitFor.js';
export {
  groupVersionString,
  gvrString,
  hasObjectMeta,
  resourceVersionOf,
  type ShardInfo,
  type StatusCause,
} from './types.js';
export {
  abortError,
  isExpiredError,
  isTooLargeResourceVersionError,
  isTooLargeResourceVersionStatus,
  isTooManyRequestsError,
} from './errors.js';
export {
  componentLogger,
  DEFAULT_LOG_LEVEL,
  getDefaultLogger,
  type LogFormat,
  REDACT_PATHS,
} from './logger.js';
export { type Censor, isSecretKey, redactForLog, redactString } from './logRedaction.js';
export { errorText, formatLogLine } from './logFormat.js';
export { defaultFreezeObjects } from './freeze.js';
export {
  jsonNestingExceeds,
  MAX_OBJECT_DEPTH,
  objectDepth,
  objectTooDeepError,
  validateResourceVersion,
} from './wireValidation.js';
export type { ExplicitKey } from './keys.js';
export { rejectOnAbort } from './rejectOnAbort.js';
export { type DefinedProps, definedProps } from './definedProps.js';
export type { LabelRequirement, LabelSelectorOperator } from './labelSelector.js';
export type { FieldRequirement, FieldSelectorOperator } from './fieldSelector.js';
export type { Timer } from './clock.js';
export { SHARD_HASH_SPACE_END, shardBound, shardRangeLocator, type ShardField } from './shardSelector.js';
