import type { JsonObject } from '../../api/json.js';
import type { ResourceStrategy } from '../strategy.js';

/**
 * Leases, as `pkg/registry/coordination/lease/strategy.go`: `AllowUnconditionalUpdate` is false (set
 * on the definition in `resourceRegistry.ts`), and `spec.acquireTime`/`renewTime` are `MicroTime`, so
 * storage writes them with microseconds whatever precision the client sent.
 */

const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/** `metav1.MicroTime` format (microseconds, `Z`). */
function microTime(value: unknown): unknown {
  if (typeof value !== 'string' || MICRO_TIME.test(value)) return value;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? value : new Date(ms).toISOString().replace(/Z$/, '000Z');
}

export const leaseStrategy: ResourceStrategy = {
  normalize: (obj) => {
    if (typeof obj.spec !== 'object' || obj.spec === null) return;
    const spec = { ...(obj.spec as JsonObject) };
    if (spec.acquireTime !== undefined) spec.acquireTime = microTime(spec.acquireTime);
    if (spec.renewTime !== undefined) spec.renewTime = microTime(spec.renewTime);
    obj.spec = spec;
  },
};
