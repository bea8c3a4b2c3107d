import type { V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { kinds } from 'kinformer';
import { TestEnv } from '@kinformer/runtime/testing';
import { addConfigMapController, LABEL } from './configMapPerDeployment.js';

function deployment(name: string, labels: Record<string, string>, replicas = 1): V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default', labels },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c', image: `${name}:1` }] },
      },
    },
  };
}

describe('configmap-per-deployment', () => {
  let env: TestEnv;
  beforeEach(async () => {
    env = await TestEnv.start();
  });
  afterEach(() => env.stop());

  const configMap = (name: string): V1ConfigMap | undefined => {
    try {
      return env.server.get<V1ConfigMap>(kinds.configMaps, name);
    } catch {
      return undefined;
    }
  };

  it('keeps one owned ConfigMap per labelled Deployment, with two replicas on one Lease', async () => {
    const lease = {
      namespace: 'default',
      name: 'configmap-per-deployment',
      leaseDurationMs: 3000,
      renewDeadlineMs: 2000,
      retryPeriodMs: 200,
    };
    for (const identity of ['a', 'b']) {
      const mgr = env.manager({ name: 'configmap-per-deployment', leaderElection: { ...lease, identity } });
      addConfigMapController(mgr);
      env.run(mgr);
    }
    const web = env.server.create(kinds.deployments, deployment('web', { [LABEL]: 'yes' }, 2));
    env.server.create(kinds.deployments, deployment('plain', {}));
    await env.server.waitFor(() => configMap('web-info')?.data?.['replicas'] === '2');
    const cm = configMap('web-info')!;
    expect(cm.data).toEqual({ replicas: '2', images: 'web:1' });
    expect(cm.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Deployment', name: 'web', uid: web.metadata.uid, controller: true }),
    ]);

    env.server.patch(kinds.deployments, 'web', { spec: { replicas: 5 } });
    await env.server.waitFor(() => configMap('web-info')?.data?.['replicas'] === '5');
    expect(configMap('plain-info')).toBeUndefined();

    env.server.delete(kinds.configMaps, 'web-info'); // someone deletes it: the controller puts it back
    await env.server.waitFor(() => configMap('web-info') !== undefined);
  });
});
