import { WIDGETS } from '@kinformer/test-tools';
import type { KubeObject } from '@kinformer/core';
import { FakeApiServer } from '../index.js';
import { request, send, closeAfterEach } from '../wire.test.helpers.js';
import { selectorString } from './scale.js';

// The scale subresource (autoscaling/v1 Scale): apps' ScaleREST (pkg/registry/apps/deployment/
// storage/storage.go scaleFromDeployment / scaleUpdatedObjectInfo, and the replicaset and
// statefulset twins) and apiextensions' ScaleREST for custom resources that declare
// subresources.scale (pkg/registry/customresource/etcd.go scaleFromCustomResource).

let server: FakeApiServer;
closeAfterEach(() => server);

const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';

describe('/scale', () => {
  test('GET gives the Scale of a deployment; PUT and PATCH set spec.replicas (generation moves, status kept)', async () => {
    server = await FakeApiServer.start();
    const d = server.create<KubeObject>('deployments.apps', {
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        selector: {
          matchLabels: { app: 'web' },
          matchExpressions: [{ key: 'tier', operator: 'In', values: ['b', 'a'] }],
        },
      },
      status: { replicas: 2 },
    } as never);
    const scale = await request(`${server.url}${DEPLOYS}/web/scale`);
    expect(scale.json).toEqual({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: {
        name: 'web',
        namespace: 'default',
        uid: d.metadata.uid,
        resourceVersion: d.metadata.resourceVersion,
        creationTimestamp: d.metadata.creationTimestamp,
      },
      spec: { replicas: 2 },
      status: { replicas: 2, selector: 'app=web,tier in (a,b)' },
    });
    const put = await send(`${server.url}${DEPLOYS}/web/scale`, 'PUT', {
      ...scale.json,
      spec: { replicas: 4 },
    });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ kind: 'Scale', spec: { replicas: 4 }, status: { replicas: 2 } });
    const patched = await send(
      `${server.url}${DEPLOYS}/web/scale`,
      'PATCH',
      { spec: { replicas: 0 } },
      'application/merge-patch+json',
    );
    expect(patched.json).toMatchObject({ spec: {}, status: { replicas: 2 } }); // spec.replicas is omitempty
    const live = server.get<
      { spec: { replicas: number }; status: unknown } & { apiVersion: string; kind: string }
    >('deployments.apps', 'web');
    expect([live.spec.replicas, live.metadata.generation, live.status]).toEqual([0, 3, { replicas: 2 }]);
  });

  test('a stale resourceVersion is 409, negative replicas 422, a missing object 404; configmaps have no /scale', async () => {
    server = await FakeApiServer.start();
    server.create('replicasets.apps', { metadata: { name: 'rs' }, spec: { replicas: 1 } } as never);
    const path = '/apis/apps/v1/namespaces/default/replicasets/rs/scale';
    const stale = await send(`${server.url}${path}`, 'PUT', {
      metadata: { name: 'rs', resourceVersion: '1' },
      spec: { replicas: 3 },
    });
    expect([stale.status, stale.json.reason]).toEqual([409, 'Conflict']);
    const negative = await send(`${server.url}${path}`, 'PUT', {
      metadata: { name: 'rs' },
      spec: { replicas: -1 },
    });
    expect([negative.status, negative.json.message]).toEqual([
      422,
      'Scale.autoscaling "rs" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    ]);
    expect(
      (await request(`${server.url}/apis/apps/v1/namespaces/default/replicasets/none/scale`)).status,
    ).toBe(404);
    server.create('configmaps', { metadata: { name: 'c' } });
    expect((await request(`${server.url}/api/v1/namespaces/default/configmaps/c/scale`)).status).toBe(404);
  });

  test('custom resources that declare scale use their replica and selector paths; others have no /scale', async () => {
    server = await FakeApiServer.start({
      resources: [
        {
          ...WIDGETS,
          subresources: {
            status: {},
            scale: {
              specReplicasPath: '.spec.size',
              statusReplicasPath: '.status.size',
              labelSelectorPath: '.status.selector',
            },
          },
        },
        { ...WIDGETS, resource: 'gizmos', kind: 'Gizmo' },
      ],
    });
    server.create('widgets', {
      metadata: { name: 'w' },
      spec: { size: 1 },
      status: { size: 1, selector: 'app=w' },
    } as never);
    const base = `${server.url}/apis/example.com/v1/namespaces/default`;
    expect((await request(`${base}/widgets/w/scale`)).json).toMatchObject({
      spec: { replicas: 1 },
      status: { replicas: 1, selector: 'app=w' },
    });
    await send(`${base}/widgets/w/scale`, 'PATCH', { spec: { replicas: 6 } }, 'application/merge-patch+json');
    expect(server.get<{ spec: unknown } & { apiVersion: string; kind: string }>('widgets', 'w').spec).toEqual(
      { size: 6 },
    );
    server.create('gizmos', { metadata: { name: 'g' } } as never);
    expect((await request(`${base}/gizmos/g/scale`)).status).toBe(404);
  });

  test('label selectors print as LabelSelectorAsSelector does', () => {
    expect(selectorString({ matchLabels: { b: '2', a: '1' } })).toBe('a=1,b=2');
    expect(
      selectorString({
        matchExpressions: [
          { key: 'z', operator: 'DoesNotExist' },
          { key: 'y', operator: 'Exists' },
          { key: 'x', operator: 'NotIn', values: ['q', 'p'] },
        ],
      }),
    ).toBe('x notin (p,q),y,!z');
    expect(selectorString(undefined)).toBe('');
  });
});
