import type { MetricSpec } from '@kinformer/workqueue/internal';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * Makes push-style prom-client metrics in one registry from their {@link MetricSpec} (name and help), one
 * call per metric: `labelNames` is the default label set, which a call may replace.
 * @internal
 */
export function collectorsIn(registry: Registry, labelNames: readonly string[]) {
  const registers = [registry];
  return {
    counter: ({ name, help }: MetricSpec, labels = labelNames) =>
      new Counter({ name, help, labelNames: labels, registers }),
    gauge: ({ name, help }: MetricSpec, labels = labelNames) =>
      new Gauge({ name, help, labelNames: labels, registers }),
    histogram: ({ name, help }: MetricSpec, buckets: readonly number[], labels = labelNames) =>
      new Histogram({ name, help, labelNames: labels, buckets: [...buckets], registers }),
  };
}
