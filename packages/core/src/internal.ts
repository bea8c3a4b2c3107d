/**
 * `@kinformer/core/internal`: building blocks the other `@kinformer/*` packages share. Not public
 * API: no compatibility promise, not re-exported by `kinformer`.
 */
export { RingBuffer } from './ringBuffer.js';
export type { WaitForOptions, WakeSource } from './waitFor.js';
export { waitFor } from './waitFor.js';
export { groupVersionString, gvrString, hasObjectMeta } from './types.js';
export {
  isExpiredError,
  isTooLargeResourceVersionError,
  isTooLargeResourceVersionStatus,
  isTooManyRequestsError,
} from './errors.js';
export type { LogFormat } from './logger.js';
export { DEFAULT_LOG_LEVEL, REDACT_PATHS, componentLogger } from './logger.js';
export type { Censor } from './logRedaction.js';
export { isSecretKey, redactForLog, redactString } from './logRedaction.js';
export { errorText, formatLogLine } from './logFormat.js';
export { defaultFreezeObjects } from './freeze.js';
export {
  MAX_OBJECT_DEPTH,
  jsonNestingExceeds,
  objectDepth,
  objectTooDeepError,
  validateResourceVersion,
} from './wireValidation.js';
export type { StatusCause } from './types.js';
export type { ExplicitKey } from './keys.js';
export { abortError } from './errors.js';
export type { LabelRequirement, LabelSelectorOperator } from './labelSelector.js';
export type { FieldRequirement, FieldSelectorOperator } from './fieldSelector.js';
export type { Timer } from './clock.js';
export { resourceVersionOf } from './types.js';
export { getDefaultLogger } from './logger.js';
export type { ShardInfo } from './types.js';
export type { ShardField } from './shardSelector.js';
export { SHARD_HASH_SPACE_END, shardBound } from './shardSelector.js';
