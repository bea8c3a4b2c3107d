import type { MetricsProvider } from '@kinformer/workqueue';
import type { MetricSpec } from '@kinformer/workqueue/internal';
import { Registry } from 'prom-client';
import { assertMetricNamesFree } from './assertMetricNamesFree.js';
import { collectorsIn } from './collectors.js';
import { workqueueMetricsProvider } from './workqueueMetrics.js';

/** The `result` label of `controller_runtime_reconcile_total` (controller-runtime's values). */
export type ControllerRuntimeResult = 'success' | 'error' | 'requeue' | 'requeue_after';

/**
 * What {@link controllerRuntimeMetrics} returns: `@kinformer/runtime`'s `RuntimeMetrics` (matched
 * structurally, so this package does not depend on the runtime), plus the registry for `/metrics`.
 */
export interface ControllerRuntimeMetrics {
  reconcileTotal(controller: string, result: ControllerRuntimeResult): void;
  reconcileErrors(controller: string): void;
  terminalReconcileErrors(controller: string): void;
  reconcileTime(controller: string, seconds: number): void;
  maxConcurrentReconciles(controller: string, value: number): void;
  activeWorkers(controller: string, value: number): void;
  /** client-go's `workqueue_*` metrics, one queue per controller (label `name`). */
  readonly workqueue: MetricsProvider;
  /** Where the metrics are: serve it on `/metrics` (the Manager does with `probes`). */
  readonly registry: Registry;
}

/** Options of {@link controllerRuntimeMetrics}. */
export interface ControllerRuntimeMetricsOptions {
  /** Where to register (default: a new `Registry`). */
  registry?: Registry;
  /**
   * The workqueue provider to use instead of registering client-go's `workqueue_*` metrics here
   * (e.g. `kinformerMetrics.workqueueMetricsProvider` when both share one registry).
   */
  workqueue?: MetricsProvider;
}

/** controller-runtime's metrics (pkg/internal/controller/metrics/metrics.go): name and help text. */
export const CONTROLLER_RUNTIME_METRICS = Object.freeze({
  reconcileTotal: {
    name: 'controller_runtime_reconcile_total',
    help: 'Total number of reconciliations per controller',
  },
  reconcileErrors: {
    name: 'controller_runtime_reconcile_errors_total',
    help: 'Total number of reconciliation errors per controller',
  },
  terminalReconcileErrors: {
    name: 'controller_runtime_terminal_reconcile_errors_total',
    help: 'Total number of terminal reconciliation errors per controller',
  },
  reconcileTime: {
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Length of time per reconciliation per controller',
  },
  maxConcurrentReconciles: {
    name: 'controller_runtime_max_concurrent_reconciles',
    help: 'Maximum number of concurrent reconciles per controller',
  },
  activeWorkers: {
    name: 'controller_runtime_active_workers',
    help: 'Number of currently used workers per controller',
  },
} as const satisfies Record<string, MetricSpec>);

/** controller-runtime's `ReconcileTime` buckets, in seconds. */
export const CONTROLLER_RUNTIME_RECONCILE_TIME_BUCKETS: readonly number[] = Object.freeze([
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
  1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
]);

const RESULTS: readonly ControllerRuntimeResult[] = ['success', 'error', 'requeue', 'requeue_after'];

/**
 * controller-runtime's controller metrics on prom-client, with its exact names, help texts, labels
 * and buckets (so its Grafana dashboards and alerts work unchanged), for `@kinformer/runtime`'s
 * Manager:
 *
 * ```ts
 * const metrics = controllerRuntimeMetrics();
 * const mgr = new Manager(kubeConfig, { metrics, probes: { port: 8080 } }); // GET /metrics
 * ```
 *
 * Like controller-runtime, a controller's counters start at 0 for every `result` when it starts
 * (its `max_concurrent_reconciles` is set), so `rate()` works from the first scrape. Throws
 * `ERR_INVALID_OPTION` when a name is already registered in `registry`.
 */
export function controllerRuntimeMetrics(
  options: ControllerRuntimeMetricsOptions = {},
): ControllerRuntimeMetrics {
  const registry = options.registry ?? new Registry();
  const M = CONTROLLER_RUNTIME_METRICS;
  assertMetricNamesFree(
    registry,
    Object.values(M).map((metric) => metric.name),
  );
  const workqueue = options.workqueue ?? workqueueMetricsProvider(registry).provider;
  const { counter, gauge, histogram } = collectorsIn(registry, ['controller']);
  const total = counter(M.reconcileTotal, ['controller', 'result']);
  const errors = counter(M.reconcileErrors);
  const terminal = counter(M.terminalReconcileErrors);
  const time = histogram(M.reconcileTime, CONTROLLER_RUNTIME_RECONCILE_TIME_BUCKETS);
  const workers = gauge(M.maxConcurrentReconciles);
  const active = gauge(M.activeWorkers);
  return {
    reconcileTotal: (controller, result) => total.inc({ controller, result }),
    reconcileErrors: (controller) => errors.inc({ controller }),
    terminalReconcileErrors: (controller) => terminal.inc({ controller }),
    reconcileTime: (controller, seconds) => time.observe({ controller }, seconds),
    maxConcurrentReconciles: (controller, value) => {
      // controller-runtime's initMetrics (pkg/internal/controller/controller.go): every series of the
      // controller exists from its start.
      for (const result of RESULTS) total.inc({ controller, result }, 0);
      errors.inc({ controller }, 0);
      terminal.inc({ controller }, 0);
      workers.set({ controller }, value);
    },
    activeWorkers: (controller, value) => active.set({ controller }, value),
    workqueue,
    registry,
  };
}
