/**
 * `@kinformer/core/testing`: what tests of clock-driven code need. Not part of the main entry, so
 * that production code cannot pick up a fake by accident. `@kinformer/testing` re-exports
 * `FakeClock`.
 */
export { FakeClock, flush } from './clock.js';
