import type { MetricsProvider } from '@kinformer/workqueue';

/** The `result` label of `controller_runtime_reconcile_total` (controller-runtime's values). */
export type ReconcileResultLabel = 'success' | 'error' | 'requeue' | 'requeue_after';

/**
 * Where the runtime reports, with controller-runtime's metric names (so its Grafana dashboards
 * render): `@kinformer/prometheus`'s `controllerRuntimeMetrics()` implements it on prom-client.
 * Every method is called on the reconcile path: keep them cheap and never throw.
 */
export interface RuntimeMetrics {
  /** `controller_runtime_reconcile_total{controller, result}`. */
  reconcileTotal(controller: string, result: ReconcileResultLabel): void;
  /** `controller_runtime_reconcile_errors_total{controller}`. */
  reconcileErrors(controller: string): void;
  /** `controller_runtime_terminal_reconcile_errors_total{controller}`. */
  terminalReconcileErrors(controller: string): void;
  /** `controller_runtime_reconcile_time_seconds{controller}` (histogram). */
  reconcileTime(controller: string, seconds: number): void;
  /** `controller_runtime_max_concurrent_reconciles{controller}`. */
  maxConcurrentReconciles(controller: string, value: number): void;
  /** `controller_runtime_active_workers{controller}`. */
  activeWorkers(controller: string, value: number): void;
  /** The workqueue metrics (`workqueue_depth{name}` …), one queue per controller named after it. */
  workqueue?: MetricsProvider;
  /** What `/metrics` serves (a prom-client `Registry`). */
  registry?: { readonly contentType: string; metrics(): Promise<string> };
}
