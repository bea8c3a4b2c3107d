import type { V1ConfigMap } from '@kubernetes/client-node';
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
