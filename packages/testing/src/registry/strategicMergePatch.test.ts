import { FakeApiServer } from '../index.js';
import { applyStrategicMergePatch, patchSchemaFor } from './strategicMergePatch.js';
import { serverPod, WIDGETS } from '@kinformer/test-tools';
import { send } from '../wire.test.helpers.js';

// Strategic merge patch as apimachinery's pkg/util/strategicpatch applies it, with the
// patchStrategy/patchMergeKey tags of k8s.io/api (core/v1/types.go: Container.Ports by
// containerPort, Env by name, VolumeMounts by mountPath; PodSpec.Containers, InitContainers,
// EphemeralContainers, Volumes, ImagePullSecrets by name; PodStatus.Conditions by type;
// ObjectMeta.Finalizers merged as a set, OwnerReferences by uid; ServiceSpec.Ports by port;
// Tolerations untagged, so replaced). Custom resources refuse it with 415 (apiextensions-apiserver
// crdHandler's supportedTypes), as kube-apiserver does.

const POD = patchSchemaFor('', 'pods');

const base = {
  metadata: { name: 'p', finalizers: ['a.io/x'] },
  spec: {
    containers: [
      { name: 'app', image: 'app:1', ports: [{ containerPort: 80 }], env: [{ name: 'A', value: '1' }] },
      { name: 'side', image: 'side:1' },
    ],
    tolerations: [{ key: 'k1', operator: 'Exists' }],
    volumes: [{ name: 'data', emptyDir: {} }],
  },
  status: { conditions: [{ type: 'Ready', status: 'False' }] },
};

describe('strategic merge patch (strategicpatch.StrategicMergePatch)', () => {
  test('lists tagged merge are merged by their merge key, untagged lists are replaced, the target is not modified', () => {
    const before = JSON.stringify(base);
    const out = applyStrategicMergePatch(
      base,
      {
        metadata: { finalizers: ['b.io/y'] },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'app:2',
              ports: [{ containerPort: 443 }],
              env: [
                { name: 'A', value: '2' },
                { name: 'B', value: 'b' },
              ],
            },
            { name: 'new', image: 'new:1' },
          ],
          tolerations: [{ key: 'k2', operator: 'Exists' }],
        },
        status: {
          conditions: [
            { type: 'Ready', status: 'True' },
            { type: 'Scheduled', status: 'True' },
          ],
        },
      },
      POD,
    );
    // Items named by the patch in the patch's order, new ones before the server-only ones.
    expect(out).toEqual({
      metadata: { name: 'p', finalizers: ['b.io/y', 'a.io/x'] },
      spec: {
        containers: [
          {
            name: 'app',
            image: 'app:2',
            ports: [{ containerPort: 443 }, { containerPort: 80 }],
            env: [
              { name: 'A', value: '2' },
              { name: 'B', value: 'b' },
            ],
          },
          { name: 'new', image: 'new:1' },
          { name: 'side', image: 'side:1' },
        ],
        tolerations: [{ key: 'k2', operator: 'Exists' }],
        volumes: [{ name: 'data', emptyDir: {} }],
      },
      status: {
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'Scheduled', status: 'True' },
        ],
      },
    });
    expect(JSON.stringify(base)).toBe(before);
  });

  test('$patch: delete removes one element, $patch: replace replaces a list or a map, $deleteFromPrimitiveList and $retainKeys', () => {
    const out = applyStrategicMergePatch(
      base,
      {
        metadata: { '$deleteFromPrimitiveList/finalizers': ['a.io/x'] },
        spec: {
          containers: [{ name: 'side', $patch: 'delete' }],
          volumes: [{ $patch: 'replace' }, { name: 'cfg', configMap: { name: 'c' } }],
        },
        status: { $patch: 'replace', phase: 'Running' },
      },
      POD,
    ) as typeof base;
    expect(out.metadata).toEqual({ name: 'p', finalizers: [] });
    expect(out.spec.containers.map((c) => c.name)).toEqual(['app']);
    expect(out.spec.volumes).toEqual([{ name: 'cfg', configMap: { name: 'c' } }]);
    expect(out.status).toEqual({ phase: 'Running' });
    const retained = applyStrategicMergePatch(
      { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } },
      { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } },
      patchSchemaFor('apps', 'deployments'),
    );
    expect(retained).toEqual({ spec: { strategy: { type: 'Recreate' } } });
  });

  test('a list element without its merge key is a 400 PatchError', () => {
    expect(() => applyStrategicMergePatch(base, { spec: { containers: [{ image: 'x' }] } }, POD)).toThrow(
      expect.objectContaining({ httpStatus: 400 }),
    );
  });

  test('over HTTP: a deployment template container is merged by name; CRDs answer 415 without strategic merge among the accepted types', async () => {
    const server = await FakeApiServer.start({
      resources: [WIDGETS],
    });
    try {
      server.create('deployments.apps', {
        metadata: { name: 'd' },
        spec: { template: { spec: serverPod('x').spec } },
      });
      const res = await send(
        `${server.url}/apis/apps/v1/namespaces/default/deployments/d`,
        'PATCH',
        { spec: { template: { spec: { containers: [{ name: 'sidecar', image: 'envoy' }] } } } },
        'application/strategic-merge-patch+json',
      );
      expect(res.status).toBe(200);
      // New items of a merged list come first (normalizeElementOrder); the result is defaulted.
      const spec = res.json.spec as {
        template: { spec: { containers: Array<{ name: string; image: string }> } };
      };
      expect(spec.template.spec.containers.map((c) => [c.name, c.image])).toEqual([
        ['sidecar', 'envoy'],
        ['c', 'nginx'],
      ]);
      server.create('widgets.example.com', {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: 'w' },
      });
      const crd = await send(
        `${server.url}/apis/example.com/v1/namespaces/default/widgets/w`,
        'PATCH',
        { spec: {} },
        'application/strategic-merge-patch+json',
      );
      expect(crd.status).toBe(415);
      expect(crd.text).toBe(
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml","reason":"UnsupportedMediaType","code":415}\n',
      );
      expect(() => server.patch('widgets.example.com', 'default/w', {}, { type: 'strategic' })).toThrow(
        expect.objectContaining({ httpStatus: 415 }),
      );
    } finally {
      await server.close();
    }
  });

  test('new items of a merged list come first; server-only items keep their live order between the patched ones (normalizeElementOrder)', () => {
    const live = { spec: { containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } };
    const added = applyStrategicMergePatch(
      live,
      { spec: { containers: [{ name: 'new' }] } },
      POD,
    ) as typeof live;
    expect(added.spec.containers.map((c) => c.name)).toEqual(['new', 'a', 'b', 'c']);
    const touched = applyStrategicMergePatch(
      live,
      { spec: { containers: [{ name: 'b', image: 'x' }, { name: 'n2' }] } },
      POD,
    ) as typeof live;
    expect(touched.spec.containers.map((c) => c.name)).toEqual(['a', 'b', 'n2', 'c']);
    const finalizers = applyStrategicMergePatch(
      { metadata: { finalizers: ['x', 'y'] } },
      { metadata: { finalizers: ['z'] } },
      POD,
    );
    expect(finalizers).toEqual({ metadata: { finalizers: ['z', 'x', 'y'] } });
  });

  test('$setElementOrder orders the patched list, with or without the list in the patch', () => {
    const live = { spec: { containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } };
    const reordered = applyStrategicMergePatch(
      live,
      { spec: { '$setElementOrder/containers': [{ name: 'c' }, { name: 'b' }, { name: 'a' }] } },
      POD,
    ) as typeof live;
    expect(reordered.spec.containers.map((c) => c.name)).toEqual(['c', 'b', 'a']);
    // kubectl apply's patch: the whole order, and only the changed item in the list.
    const applied = applyStrategicMergePatch(
      live,
      {
        spec: {
          '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }, { name: 'd' }, { name: 'c' }],
          containers: [{ name: 'd', image: 'new' }],
        },
      },
      POD,
    ) as typeof live;
    expect(applied.spec.containers.map((c) => c.name)).toEqual(['b', 'a', 'd', 'c']);
    expect(applied).not.toHaveProperty(['spec', '$setElementOrder/containers']);
  });
});
