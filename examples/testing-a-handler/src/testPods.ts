import type { V1Pod } from '@kubernetes/client-node';

/**
 * A pod for the tests and the demo, from its key (`default/web-1`): running, or with `crash` its
 * container waiting for that reason (`CrashLoopBackOff`). `resourceVersion` is for FakeListerWatcher
 * scripts (FakeApiServer assigns its own).
 */
export function testPod(key: string, options: { crash?: string; resourceVersion?: string } = {}): V1Pod {
  const [namespace, name] = key.split('/') as [string, string];
  const { crash, resourceVersion } = options;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace, name, ...(resourceVersion === undefined ? {} : { resourceVersion }) },
    spec: { containers: [{ name: 'app', image: 'example.com/app:1' }] },
    status: {
      phase: 'Running',
      containerStatuses: [
        {
          name: 'app',
          image: 'example.com/app:1',
          imageID: '',
          ready: crash === undefined,
          restartCount: crash === undefined ? 0 : 3,
          state: crash === undefined ? { running: {} } : { waiting: { reason: crash } },
        },
      ],
    },
  };
}
