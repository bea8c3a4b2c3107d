/**
 * `@kinformer/core/internal`: building blocks the other `@kinformer/*` packages share. Not public
 * API: no compatibility promise, not re-exported by `kinformer`.
 */
export { RingBuffer } from './ringBuffer.js';
export type { WaitForOptions, WakeSource } from './waitFor.js';
export { waitFor } from './waitFor.js';
