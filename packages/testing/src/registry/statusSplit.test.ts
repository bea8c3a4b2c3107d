import { WIDGETS } from '@kinformer/test-tools';
import fc from 'fast-check';
import type { KubeObject } from '@kinformer/core';
import { FakeApiServer } from '../index.js';
import { send, type WireResponse, closeAfterEach } from '../wire.test.helpers.js';

// The main resource / status split of kube's REST strategies (pkg/registry/*/strategy.go:
// PrepareForCreate resets the status; PrepareForUpdate of the main resource keeps the stored status
// (`newX.Status = oldX.Status`); the status strategy keeps everything else (`newX.Spec = oldX.Spec`)
// and, by kind, some metadata: pods keep ownerReferences and deletionTimestamp, deployments,
// replicasets and statefulsets their labels; custom resources keep all metadata
// (apiextensions customresource/status_strategy.go). metadata.generation moves only on spec changes.

let server: FakeApiServer;
closeAfterEach(() => server);

const PODS = '/api/v1/namespaces/default/pods';
const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';

function put(path: string, body: unknown): Promise<WireResponse> {
  return send(`${server.url}${path}`, 'PUT', body);
}
function merge(path: string, body: unknown): Promise<WireResponse> {
  return send(`${server.url}${path}`, 'PATCH', body, 'application/merge-patch+json');
}
type Obj = {
  metadata: Record<string, unknown>;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
};

describe('status and main resource', () => {
  test('a create resets the status a client sent (pods: Pending; deployments: empty; CRs with status: none)', async () => {
    server = await FakeApiServer.start({ resources: [{ ...WIDGETS, subresources: { status: {} } }] });
    const p = await send(`${server.url}${PODS}`, 'POST', {
      metadata: { name: 'p' },
      spec: { containers: [] },
      status: { phase: 'Running' },
    });
    expect(p.json.status).toEqual({ phase: 'Pending', qosClass: 'BestEffort' }); // and the QOS class
    const d = await send(`${server.url}${DEPLOYS}`, 'POST', {
      metadata: { name: 'd' },
      spec: { replicas: 1 },
      status: { replicas: 9 },
    });
    expect(d.json.status).toEqual({});
    const w = await send(`${server.url}/apis/example.com/v1/namespaces/default/widgets`, 'POST', {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { size: 1 },
      status: { ready: true },
    });
    expect(w.json).not.toHaveProperty('status');
    expect((w.json.metadata as { generation: number }).generation).toBe(1);
  });

  test('a status change through the main resource is dropped; a spec change through /status is dropped', async () => {
    server = await FakeApiServer.start();
    await send(`${server.url}${DEPLOYS}`, 'POST', {
      metadata: { name: 'd', labels: { a: '1' } },
      spec: { replicas: 1 },
    });
    const statusWrite = await merge(`${DEPLOYS}/d/status`, { status: { replicas: 1 } });
    const rv = (statusWrite.json.metadata as { resourceVersion: string }).resourceVersion;
    const main = await merge(`${DEPLOYS}/d`, { spec: { replicas: 2 }, status: { replicas: 5 } });
    expect(main.json).toMatchObject({
      spec: { replicas: 2 },
      status: { replicas: 1 },
      metadata: { generation: 2 },
    });
    const viaStatus = await merge(`${DEPLOYS}/d/status`, {
      metadata: { labels: { a: '2' }, annotations: { note: 'x' } },
      spec: { replicas: 3 },
      status: { replicas: 2 },
    });
    // deploymentStatusStrategy: spec and labels kept, annotations may change.
    expect(viaStatus.json).toMatchObject({
      spec: { replicas: 2 },
      status: { replicas: 2 },
      metadata: { generation: 2, labels: { a: '1' }, annotations: { note: 'x' } },
    });
    expect(Number((viaStatus.json.metadata as { resourceVersion: string }).resourceVersion)).toBeGreaterThan(
      Number(rv),
    );
    // A main-resource write that only changes status changes nothing: no new resourceVersion.
    const noop = await merge(`${DEPLOYS}/d`, { status: { replicas: 40 } });
    expect((noop.json.metadata as { resourceVersion: string }).resourceVersion).toBe(
      (viaStatus.json.metadata as { resourceVersion: string }).resourceVersion,
    );
  });

  test('pods: /status may change labels but not ownerReferences or the spec', async () => {
    server = await FakeApiServer.start();
    server.create('pods', {
      metadata: { name: 'p', ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: 'u1' }] },
      spec: { containers: [] },
    });
    const res = await merge(`${PODS}/p/status`, {
      metadata: { labels: { l: '1' }, ownerReferences: null },
      spec: { nodeName: 'n' },
      status: { phase: 'Running' },
    });
    expect(res.json).toMatchObject({
      metadata: { labels: { l: '1' }, ownerReferences: [{ uid: 'u1' }] },
      status: { phase: 'Running' },
    });
    expect((res.json.spec as Record<string, unknown>).nodeName).toBeUndefined();
  });

  test('custom resources: /status exists only when declared; it keeps all metadata; without it status is part of the object', async () => {
    server = await FakeApiServer.start({
      resources: [
        { ...WIDGETS, subresources: { status: {} } },
        { ...WIDGETS, resource: 'gizmos', kind: 'Gizmo' },
      ],
    });
    const base = '/apis/example.com/v1/namespaces/default';
    const w = server.create<KubeObject & { spec: unknown }>('widgets', {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { size: 1 },
    });
    const res = await put(`${base}/widgets/w/status`, {
      ...w,
      metadata: { ...w.metadata, labels: { x: 'y' } },
      spec: { size: 5 },
      status: { ready: true },
    });
    expect(res.json).toMatchObject({
      spec: { size: 1 },
      status: { ready: true },
      metadata: { generation: 1 },
    });
    expect(res.json.metadata).not.toHaveProperty('labels');
    server.create('gizmos', {
      apiVersion: 'example.com/v1',
      kind: 'Gizmo',
      metadata: { name: 'g' },
      spec: { size: 1 },
    } as never);
    expect((await merge(`${base}/gizmos/g/status`, { status: { ready: true } })).status).toBe(404);
    // Without a status subresource, status is written through the object and moves the generation.
    const g = await merge(`${base}/gizmos/g`, { status: { ready: true } });
    expect(g.json).toMatchObject({ status: { ready: true }, metadata: { generation: 2 } });
    // A type without a status subresource has no /status route.
    server.create('configmaps', { metadata: { name: 'c' } });
    expect((await merge('/api/v1/namespaces/default/configmaps/c/status', {})).status).toBe(404);
  });

  test('property: generation moves by exactly one on each write that changes the spec, never otherwise', async () => {
    server = await FakeApiServer.start();
    await send(`${server.url}${DEPLOYS}`, 'POST', { metadata: { name: 'd' }, spec: { replicas: 1 } });
    const write = fc.record({
      path: fc.constantFrom('', '/status'),
      replicas: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
      label: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }),
      ready: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 8 }), async (writes) => {
        for (const w of writes) {
          const before = server.get<Obj & { apiVersion: string; kind: string }>('deployments.apps', 'd');
          const patch: Record<string, unknown> = {};
          if (w.replicas !== undefined) patch.spec = { replicas: w.replicas };
          if (w.label !== undefined) patch.metadata = { annotations: { l: w.label } };
          if (w.ready !== undefined) patch.status = { readyReplicas: w.ready };
          await merge(`${DEPLOYS}/d${w.path}`, patch);
          const after = server.get<Obj & { apiVersion: string; kind: string }>('deployments.apps', 'd');
          const specChanged =
            w.path === '' && w.replicas !== undefined && w.replicas !== before.spec?.replicas;
          const expected = (before.metadata.generation as number) + (specChanged ? 1 : 0);
          if (after.metadata.generation !== expected) return false;
          if (w.path === '' && JSON.stringify(after.status) !== JSON.stringify(before.status)) return false;
          if (w.path === '/status' && JSON.stringify(after.spec) !== JSON.stringify(before.spec))
            return false;
        }
        return true;
      }),
      { numRuns: 40 },
    );
  });

  test('the in-process API writes what it is given (seeding), status included', async () => {
    server = await FakeApiServer.start();
    const p = server.create('pods', {
      metadata: { name: 'p' },
      spec: { containers: [] },
      status: { phase: 'Running' },
    } as never);
    expect((p as unknown as Obj).status).toEqual({ phase: 'Running' });
  });
});
