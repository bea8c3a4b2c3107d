import fc from 'fast-check';
import { ErrorCodes, type GroupVersionResource, type KubeObject, type Status } from '@kinformer/core';
import { isAlreadyExists, isConflict, isNotFound, ObjectClient, typedResource } from '@kinformer/client-node';
import { FakeApiServer } from '@kinformer/testing';
import { kinformerRejection } from '@kinformer/test-tools';
import type { V1ConfigMap, V1Deployment, V1Pod } from '@kubernetes/client-node';

// ObjectClient against FakeApiServer over HTTP: every verb, dry run, the status and scale
// subresources, server-side apply, delete options, errors carrying the server's Status, and the
// onWrite hook.

let server: FakeApiServer;
afterEach(() => server?.close());

const pods = typedResource<V1Pod>({ version: 'v1', resource: 'pods' });
const configMaps = typedResource<V1ConfigMap>({ version: 'v1', resource: 'configmaps' });
const deployments = typedResource<V1Deployment>({ group: 'apps', version: 'v1', resource: 'deployments' });
const ns = 'default';

const deployment = (name: string, replicas: number): V1Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: ns },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});

/** An apply configuration of deployment `web`: only the fields its manager owns. */
const webApplied = (fields: { spec: { replicas: number } } | Pick<V1Deployment, 'status'>): V1Deployment =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: ns },
    ...fields,
  }) as V1Deployment;

async function start(options: ConstructorParameters<typeof ObjectClient>[1] = {}): Promise<ObjectClient> {
  server = await FakeApiServer.start();
  return new ObjectClient(server.kubeConfig(), { fieldManager: 'test-controller', ...options });
}

describe('ObjectClient', () => {
  test('create, get, list (one page, selectors), update, patch (merge, json, strategic), delete', async () => {
    const client = await start();
    const created = await client.create(configMaps, {
      metadata: { name: 'a', namespace: ns, labels: { app: 'x' } },
      data: { k: '1' },
    });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    await client.create(configMaps, { metadata: { name: 'b', namespace: ns } });
    expect((await client.get(configMaps, { namespace: ns, name: 'a' })).data).toEqual({ k: '1' });
    const page = await client.list(configMaps, { namespace: ns, labelSelector: 'app=x' });
    expect(page.items.map((c) => c.metadata?.name)).toEqual(['a']);
    expect(page.metadata.resourceVersion).toBe(server.resourceVersion);
    const limited = await client.list(configMaps, { namespace: ns, limit: 1 });
    expect([limited.items.length, typeof limited.metadata.continue]).toEqual([1, 'string']);
    const updated = await client.update(configMaps, { ...created, data: { k: '2' } });
    expect(updated.data).toEqual({ k: '2' });
    const merged = await client.patch(configMaps, { namespace: ns, name: 'a' }, { data: { m: '1' } });
    expect(merged.data).toEqual({ k: '2', m: '1' });
    const json = await client.patch(
      configMaps,
      { namespace: ns, name: 'a' },
      [{ op: 'remove', path: '/data/k' }],
      { type: 'json' },
    );
    expect(json.data).toEqual({ m: '1' });
    await client.create(pods, {
      metadata: { name: 'p', namespace: ns },
      spec: { containers: [{ name: 'c', image: 'a' }] },
    });
    const strategic = await client.patch(
      pods,
      { namespace: ns, name: 'p' },
      { spec: { containers: [{ name: 's', image: 'b' }] } },
      { type: 'strategic' },
    );
    expect(strategic.spec?.containers.map((c) => c.name)).toEqual(['s', 'c']); // new items first, as kube's strategic merge
    const deleted = await client.delete(configMaps, { namespace: ns, name: 'b' });
    expect(deleted).toMatchObject({ kind: 'Status', status: 'Success' });
    expect(server.list('configmaps').map((c) => c.metadata.name)).toEqual(['a']);
    // Writes record the client's field manager.
    expect(
      server.get<V1ConfigMap & KubeObject>('configmaps', 'a').metadata?.managedFields?.map((m) => m.manager),
    ).toEqual(['test-controller']);
  });

  test('failures carry the Status; Conflict and AlreadyExists are told apart', async () => {
    const client = await start();
    const a = await client.create(configMaps, { metadata: { name: 'a', namespace: ns } });
    const exists = await kinformerRejection(
      client.create(configMaps, { metadata: { name: 'a', namespace: ns } }),
    );
    expect([
      exists.code,
      exists.httpStatus,
      exists.status?.reason,
      isAlreadyExists(exists),
      isConflict(exists),
    ]).toEqual([ErrorCodes.CONFLICT, 409, 'AlreadyExists', true, false]);
    await client.update(configMaps, { ...a, data: { x: '1' } });
    const stale = await kinformerRejection(client.update(configMaps, { ...a, data: { x: '2' } }));
    expect([stale.code, stale.status?.reason, isConflict(stale), isAlreadyExists(stale)]).toEqual([
      ErrorCodes.CONFLICT,
      'Conflict',
      true,
      false,
    ]);
    expect(stale.status?.message).toBe(
      'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again',
    );
    const missing = await kinformerRejection(client.get(configMaps, { namespace: ns, name: 'zz' }));
    expect([missing.code, isNotFound(missing), missing.status?.details]).toEqual([
      ErrorCodes.NOT_FOUND,
      true,
      { name: 'zz', kind: 'configmaps' },
    ]);
    const precondition = await kinformerRejection(
      client.delete(configMaps, { namespace: ns, name: 'a' }, { preconditions: { uid: 'nope' } }),
    );
    expect([precondition.code, precondition.status?.reason]).toEqual([ErrorCodes.CONFLICT, 'Conflict']);
    const invalid = await kinformerRejection(client.create(configMaps, { metadata: { namespace: ns } }));
    expect([invalid.code, invalid.status?.reason]).toEqual([ErrorCodes.INVALID, 'Invalid']);
    const noManager = new ObjectClient(server.kubeConfig());
    expect(
      (
        await kinformerRejection(
          noManager.apply(configMaps, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'a', namespace: ns },
          }),
        )
      ).code,
    ).toBe(ErrorCodes.INVALID_OPTION);
  });

  test('server-side apply: create, conflict (409 with the managers and fields), force', async () => {
    const client = await start();
    const created = await client.apply(deployments, deployment('web', 2));
    expect(created.metadata?.managedFields).toMatchObject([
      { manager: 'test-controller', operation: 'Apply' },
    ]);
    await client.apply(deployments, webApplied({ spec: { replicas: 2 } }), {
      fieldManager: 'hpa',
    });
    const conflict = await kinformerRejection(client.apply(deployments, deployment('web', 3)));
    expect([conflict.code, isConflict(conflict), conflict.status?.message]).toEqual([
      ErrorCodes.CONFLICT,
      true,
      'Apply failed with 1 conflict: conflict with "hpa": .spec.replicas',
    ]);
    expect(conflict.status?.details?.causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "hpa"', field: '.spec.replicas' },
    ]);
    const forced = await client.apply(deployments, deployment('web', 3), { force: true });
    expect(forced.spec?.replicas).toBe(3);
  });

  test('status: updateStatus, patchStatus and applyStatus change only the status; a status via the object is dropped', async () => {
    const client = await start();
    const d = await client.create(deployments, deployment('web', 1));
    const withStatus = await client.update(deployments, { ...d, status: { replicas: 9 } });
    expect(withStatus.status).toEqual({});
    const s1 = await client.updateStatus(deployments, {
      ...withStatus,
      spec: { ...withStatus.spec!, replicas: 5 },
      status: { replicas: 1 },
    });
    expect([s1.spec?.replicas, s1.status?.replicas]).toEqual([1, 1]);
    const s2 = await client.patchStatus(
      deployments,
      { namespace: ns, name: 'web' },
      { status: { readyReplicas: 1 } },
    );
    expect(s2.status).toEqual({ replicas: 1, readyReplicas: 1 });
    const s3 = await client.applyStatus(deployments, webApplied({ status: { availableReplicas: 1 } }));
    expect(s3.status).toMatchObject({ availableReplicas: 1 });
    expect(
      s3.metadata?.managedFields?.find((m) => m.manager === 'test-controller' && m.operation === 'Apply'),
    ).toMatchObject({ subresource: 'status' });
  });

  test('scale: getScale and updateScale (a number, or a Scale with a resourceVersion precondition)', async () => {
    const client = await start();
    await client.create(deployments, deployment('web', 1));
    const scale = await client.getScale(deployments, { namespace: ns, name: 'web' });
    expect(scale).toMatchObject({
      kind: 'Scale',
      spec: { replicas: 1 },
      status: { replicas: 0, selector: 'app=web' },
    });
    expect((await client.updateScale(deployments, { namespace: ns, name: 'web' }, 4)).spec?.replicas).toBe(4);
    const stale = await kinformerRejection(
      client.updateScale(deployments, { namespace: ns, name: 'web' }, { ...scale, spec: { replicas: 2 } }),
    );
    expect(isConflict(stale)).toBe(true);
    expect(server.get<V1Deployment & KubeObject>('deployments.apps', 'web').spec?.replicas).toBe(4);
  });

  test('delete: propagation policy reaches the garbage collector; pods answer with the object', async () => {
    const client = await start();
    const owner = await client.create(configMaps, { metadata: { name: 'owner', namespace: ns } });
    const ref = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'owner',
      uid: owner.metadata!.uid!,
      blockOwnerDeletion: true,
    };
    await client.create(configMaps, { metadata: { name: 'dep', namespace: ns, ownerReferences: [ref] } });
    const orphaned = await client.delete(
      configMaps,
      { namespace: ns, name: 'owner' },
      { propagationPolicy: 'Orphan' },
    );
    expect((orphaned as V1ConfigMap).metadata?.finalizers).toEqual(['orphan']);
    expect(server.get('configmaps', 'dep').metadata.ownerReferences).toBeUndefined();
    await client.create(pods, { metadata: { name: 'p', namespace: ns }, spec: { containers: [] } });
    const pod = await client.delete(pods, { namespace: ns, name: 'p' }, { gracePeriodSeconds: 0 });
    expect((pod as V1Pod).kind).toBe('Pod');
  });

  test('dryRun on every write: the answer of the real write, nothing stored, no onWrite', async () => {
    const writes: Array<[string, string | undefined]> = [];
    const client = await start({
      onWrite: (gvr, obj) =>
        writes.push([gvr.resource, (obj as { metadata?: { name?: string } }).metadata?.name]),
    });
    const d = await client.create(deployments, deployment('web', 1));
    expect(writes).toEqual([['deployments', 'web']]);
    const rv = server.resourceVersion;
    const key = { namespace: ns, name: 'web' };
    const dry = { dryRun: true };
    const answers = [
      await client.create(deployments, deployment('other', 1), dry),
      await client.update(deployments, { ...d, spec: { ...d.spec!, replicas: 2 } }, dry),
      await client.patch(deployments, key, { spec: { replicas: 3 } }, dry),
      await client.apply(deployments, deployment('web', 4), { ...dry, force: true }),
      await client.updateStatus(deployments, { ...d, status: { replicas: 1 } }, dry),
      await client.patchStatus(deployments, key, { status: { replicas: 2 } }, dry),
      await client.applyStatus(deployments, webApplied({ status: { replicas: 3 } }), dry),
      await client.updateScale(deployments, key, 7, dry),
      await client.delete(deployments, key, dry),
    ];
    expect(answers.map((a) => (a as { spec?: { replicas?: number } }).spec?.replicas)).toEqual([
      1,
      2,
      3,
      4,
      1,
      1,
      1,
      7,
      undefined,
    ]);
    expect(server.resourceVersion).toBe(rv);
    expect(server.list('deployments.apps').map((o) => o.metadata.name)).toEqual(['web']);
    expect(writes).toHaveLength(1);
  });

  test('property: onWrite sees every successful write, in order, with the object the server returned', async () => {
    const seen: Array<[GroupVersionResource, KubeObject | Status]> = [];
    const client = await start({ onWrite: (gvr, obj) => seen.push([gvr, obj]) });
    await client.create(configMaps, { metadata: { name: 'c', namespace: ns }, data: {} });
    const op = fc.oneof(
      fc.record({ kind: fc.constant('patch' as const), value: fc.string({ maxLength: 3 }) }),
      fc.record({ kind: fc.constant('stale' as const) }),
      fc.record({ kind: fc.constant('dry' as const), value: fc.string({ maxLength: 3 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 8 }), async (ops) => {
        seen.length = 0;
        const returned: string[] = [];
        for (const o of ops) {
          const key = { namespace: ns, name: 'c' };
          if (o.kind === 'patch')
            returned.push(
              (await client.patch(configMaps, key, { data: { v: o.value } })).metadata!.resourceVersion!,
            );
          else if (o.kind === 'dry')
            await client.patch(configMaps, key, { data: { v: `${o.value}x` } }, { dryRun: true });
          else
            await client
              .update(configMaps, { metadata: { name: 'c', namespace: ns, resourceVersion: '1' } })
              .catch((err: unknown) => expect(isConflict(err)).toBe(true));
        }
        return (
          JSON.stringify(seen.map(([, obj]) => obj.metadata?.resourceVersion)) === JSON.stringify(returned)
        );
      }),
      { numRuns: 25 },
    );
  });

  test('an aborted call rejects with ERR_ABORTED', async () => {
    const client = await start();
    const controller = new AbortController();
    controller.abort();
    expect(
      (
        await kinformerRejection(
          client.get(configMaps, { namespace: ns, name: 'x' }, { signal: controller.signal }),
        )
      ).code,
    ).toBe(ErrorCodes.ABORTED);
  });
});
