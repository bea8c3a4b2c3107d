import type { KubeObject } from '@kinformer/core';
import type { FailureHandle } from '@kinformer/testing';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { kinds } from './kinds.js';
import type { Kind } from './kinds.js';
import type { Manager } from './manager.js';
import { TestEnv } from './testing.js';

/**
 * The runtime tests' fixture: a fresh {@link TestEnv} (FakeApiServer and a KubeConfig for it) for
 * every test of the enclosing `describe`, stopped after it. Call it in the `describe` body and use
 * what it returns as that test's env: `const env = perTestEnv(); … env.server.create(…)`.
 */
export function perTestEnv(options?: Parameters<typeof TestEnv.start>[0]): TestEnv {
  let current: TestEnv | undefined;
  beforeEach(async () => {
    current = await TestEnv.start(options);
  });
  afterEach(async () => {
    await current?.stop();
    current = undefined;
  });
  // Forwards to the current test's env; methods are bound to it (TestEnv has private fields).
  return new Proxy({} as TestEnv, {
    get(_target, property) {
      if (current === undefined) throw new Error('perTestEnv: used outside a test');
      const value: unknown = Reflect.get(current, property, current);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(current) : value;
    },
  });
}

/** A ConfigMap in `namespace` (default `default`). */
export function configMap(
  name: string,
  data: Record<string, string> = {},
  namespace = 'default',
): V1ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data };
}

/** Adds a controller `name` over `kind` whose reconcile records each key it is called with; returns the record. */
export function recordKeys<T extends KubeObject>(mgr: Manager, kind: Kind<T>, name = 'c'): string[] {
  const seen: string[] = [];
  mgr
    .controller(name)
    .for(kind)
    .reconcile((ctx) => {
      seen.push(ctx.key);
    });
  return seen;
}

/**
 * Stores ConfigMap `default/a`, then refuses every LIST and WATCH of ConfigMaps with a 403 until the
 * returned rule is cancelled: a cache that cannot sync, for readiness tests.
 */
export function refuseConfigMaps(env: TestEnv): FailureHandle {
  env.server.create(kinds.configMaps, configMap('a'));
  return env.server.faults.failNext({
    status: 403,
    verbs: ['list', 'watch'],
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    count: 1_000_000,
  });
}
