/**
 * Helpers shared by this example's tests (Jest only runs `*.test.ts`).
 */
import { waitFor as waitForCondition } from '@kinformer/test-tools';
import type { FakeApiServer } from '@kinformer/testing';
import { realClock, SharedInformerFactory } from 'kinformer';
import type { Clock } from 'kinformer';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { PodsPerNodeController } from './podsPerNodeController.js';
import type { PodsPerNodeControllerOptions, ReconcileRecord } from './podsPerNodeController.js';
import { configMapMismatches } from './verify.js';

/** Namespace of the ConfigMaps in the tests. */
export const NS = 'kube-system';

/** The wall clock with sub-millisecond `now()` (monotonic), for ordering reconcile intervals. */
export const preciseClock: Clock = { ...realClock, now: () => performance.now() };

/** Waits (real time, bounded: 8 s by default) until `condition()` holds: `@kinformer/test-tools`' `waitFor`. */
export function waitFor(condition: () => boolean, what: string, timeoutMs = 8000): Promise<void> {
  return waitForCondition(condition, what, timeoutMs);
}

/** Waits until the ConfigMaps on the server equal the pods per node; fails with the differences. */
export async function waitForConvergence(server: FakeApiServer, timeoutMs = 8000): Promise<void> {
  let last: string[] = [];
  try {
    await waitFor(
      () => (last = configMapMismatches(server, NS)).length === 0,
      'the ConfigMaps to match the pods',
      timeoutMs,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}: ${last.slice(0, 5).join('; ')}`, { cause: err });
  }
}

/** The data of a ConfigMap on the server, or undefined when it does not exist. */
export function configMapData(server: FakeApiServer, name: string): Record<string, string> | undefined {
  return server.list<V1ConfigMap>('configmaps', NS).find((cm) => cm.metadata?.name === name)?.data;
}

/** A controller on its own factory, running until `stop()`; `records` collects every attempt. */
export interface RunningController {
  controller: PodsPerNodeController;
  factory: SharedInformerFactory;
  records: ReconcileRecord[];
  stop(): Promise<void>;
}

/** Builds a controller against `server`, starts it, and waits until its caches synced. */
export async function startController(
  server: FakeApiServer,
  options: Omit<PodsPerNodeControllerOptions, 'factory' | 'kubeConfig' | 'namespace'> = {},
): Promise<RunningController> {
  const kubeConfig = server.kubeConfig();
  const factory = new SharedInformerFactory(kubeConfig);
  const records: ReconcileRecord[] = [];
  const hooks = options.hooks ?? {};
  const controller = new PodsPerNodeController({
    ...options,
    factory,
    kubeConfig,
    namespace: NS,
    hooks: {
      ...hooks,
      afterReconcile: (record) => {
        records.push(record);
        hooks.afterReconcile?.(record);
      },
    },
  });
  const stop = new AbortController();
  const running = controller.run(stop.signal);
  await factory.waitForCacheSync(stop.signal);
  return {
    controller,
    factory,
    records,
    stop: async () => {
      stop.abort();
      await running;
      await factory.shutdown();
    },
  };
}
