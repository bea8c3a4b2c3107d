import { ErrorCodes, KinformerError } from '@kinformer/core';
import type { Registry } from 'prom-client';

/**
 * Throws `ERR_INVALID_OPTION` when one of `metricNames` is already in `registry` (checked before
 * anything is registered, so a failed constructor leaves the registry as it was).
 * @internal
 */
export function assertMetricNamesFree(registry: Registry, metricNames: readonly string[]): void {
  const taken = metricNames.filter((name) => registry.getSingleMetric(name) !== undefined);
  if (taken.length > 0)
    throw new KinformerError(
      ErrorCodes.INVALID_OPTION,
      `metric ${taken.join(', ')} is already registered in this registry: create one KinformerMetrics per registry`,
      { details: { metrics: taken } },
    );
}
