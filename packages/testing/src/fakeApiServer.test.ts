import { ErrorCodes, isKinformerError, type KubeObject } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  Watch,
  type V1Lease,
  type V1Pod,
} from '@kubernetes/client-node';
import { FakeApiServer, FakeClock as ReexportedClock, FakeListerWatcher } from './index.js';
import { serverPod, WIDGETS } from '@kinformer/test-tools';
import { request, send, closeAfterEach } from './wire.test.helpers.js';

// CRUD, discovery, leases, request recording, the in-process API and @kubernetes/client-node
// against the fake over real HTTP.

let server: FakeApiServer;

closeAfterEach(() => server);

const PODS = '/api/v1/namespaces/default/pods';

describe('create (POST)', () => {
  test('answers 201 with the stored object: kind/apiVersion, uid, creationTimestamp, resourceVersion from the global counter', async () => {
    const clock = new FakeClock(Date.parse('2026-03-04T05:06:07.891Z'));
    server = await FakeApiServer.start({ clock });
    server.create('configmaps', { metadata: { name: 'other' } });
    const before = Number(server.resourceVersion);
    const res = await send(`${server.url}${PODS}`, 'POST', {
      apiVersion: 'v1',
      kind: 'Pod',
      ...serverPod('a'),
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: {
        name: 'a',
        namespace: 'default',
        resourceVersion: String(before + 1),
        creationTimestamp: '2026-03-04T05:06:07Z',
      },
    });
    // The pod strategy's PrepareForCreate sets the status (defaulting.ts).
    expect(Object.keys(res.json)).toEqual(['kind', 'apiVersion', 'metadata', 'spec', 'status']);
    expect((res.json.metadata as { uid: string }).uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(server.resourceVersion).toBe(String(before + 1));
  });

  test('an existing name is 409 AlreadyExists with the exact Status', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('a'));
    const res = await send(`${server.url}${PODS}`, 'POST', serverPod('a'));
    expect(res.status).toBe(409);
    expect(res.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \\"a\\" already exists","reason":"AlreadyExists","details":{"name":"a","kind":"pods"},"code":409}\n',
    );
    server.create('deployments.apps', { metadata: { name: 'd' }, spec: {} });
    const dep = await send(`${server.url}/apis/apps/v1/namespaces/default/deployments`, 'POST', {
      metadata: { name: 'd' },
    });
    expect(dep.json.message).toBe('deployments.apps "d" already exists');
    expect(dep.json.details).toEqual({ name: 'd', group: 'apps', kind: 'deployments' });
  });

  test('a missing name is 422 Invalid; generateName gets a random suffix', async () => {
    server = await FakeApiServer.start();
    const res = await send(`${server.url}${PODS}`, 'POST', { metadata: {}, spec: {} });
    expect(res.status).toBe(422);
    expect(res.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Pod \\"\\" is invalid: metadata.name: Required value: name or generateName is required","reason":"Invalid","details":{"kind":"Pod","causes":[{"reason":"FieldValueRequired","message":"Required value: name or generateName is required","field":"metadata.name"}]},"code":422}\n',
    );
    const generated = await send(`${server.url}${PODS}`, 'POST', { metadata: { generateName: 'web-' } });
    expect((generated.json.metadata as { name: string }).name).toMatch(/^web-[a-z0-9]{5}$/);
  });

  test('a namespace in the body that differs from the URL is 400', async () => {
    server = await FakeApiServer.start();
    const res = await send(`${server.url}${PODS}`, 'POST', serverPod('other/a'));
    expect(res.status).toBe(400);
    expect(res.json.message).toBe(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
    const bad = await request(`${server.url}${PODS}`, {
      method: 'POST',
      body: '{not json',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(bad.status).toBe(400);
  });
});

describe('get (GET one)', () => {
  test('answers the object with kind/apiVersion; a missing one is 404 NotFound with the exact Status', async () => {
    server = await FakeApiServer.start();
    const created = server.create('pods', serverPod('a'));
    const res = await request(`${server.url}${PODS}/a`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual(created);
    const missing = await request(`${server.url}${PODS}/nope`);
    expect(missing.status).toBe(404);
    expect(missing.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \\"nope\\" not found","reason":"NotFound","details":{"name":"nope","kind":"pods"},"code":404}\n',
    );
  });

  test('metadata-only GET answers PartialObjectMetadata; the list form is 406', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('a', { labels: { x: 'y' } }));
    const res = await request(`${server.url}${PODS}/a`, {
      headers: { Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' },
    });
    expect(res.json).toMatchObject({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { name: 'a', labels: { x: 'y' } },
    });
    expect(res.json).not.toHaveProperty('spec');
    const list = await request(`${server.url}${PODS}/a`, {
      headers: { Accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' },
    });
    expect(list.status).toBe(406);
  });
});

describe('update (PUT)', () => {
  test('a stale metadata.resourceVersion is 409 Conflict; the current one updates and bumps the RV', async () => {
    server = await FakeApiServer.start();
    const created = server.create('pods', serverPod('a'));
    server.patch('pods', 'default/a', { metadata: { labels: { v: '1' } } });
    const stale = await send(`${server.url}${PODS}/a`, 'PUT', created);
    expect(stale.status).toBe(409);
    expect(stale.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on pods \\"a\\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"a","kind":"pods"},"code":409}\n',
    );
    const current = server.get<V1Pod & KubeObject>('pods', 'default/a');
    current.metadata.labels = { v: '2' };
    const ok = await send(`${server.url}${PODS}/a`, 'PUT', current);
    expect(ok.status).toBe(200);
    expect(ok.json.metadata).toMatchObject({
      labels: { v: '2' },
      uid: created.metadata?.uid,
      creationTimestamp: created.metadata?.creationTimestamp,
      resourceVersion: server.resourceVersion,
    });
  });

  test('a no-op update keeps the RV and sends no event; generation moves only with spec', async () => {
    server = await FakeApiServer.start();
    const created = server.create('deployments.apps', { metadata: { name: 'd' }, spec: { replicas: 1 } });
    expect(created.metadata?.generation).toBe(1);
    const rv = server.resourceVersion;
    const same = server.update('deployments.apps', created);
    expect(same.metadata?.resourceVersion).toBe(rv);
    expect(server.resourceVersion).toBe(rv);
    const scaled = server.update('deployments.apps', { ...same, spec: { replicas: 3 } });
    expect(scaled.metadata?.generation).toBe(2);
    const labelled = server.patch('deployments.apps', 'default/d', { metadata: { labels: { a: 'b' } } });
    expect(labelled.metadata?.generation).toBe(2);
  });

  test('a name that differs from the URL is 400; a missing object is 404; /status replaces only the status', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('a'));
    const renamed = await send(`${server.url}${PODS}/a`, 'PUT', serverPod('b'));
    expect(renamed.status).toBe(400);
    expect(renamed.json.message).toBe('the name of the object (b) does not match the name on the URL (a)');
    const missing = await send(`${server.url}${PODS}/zz`, 'PUT', serverPod('zz'));
    expect(missing.status).toBe(404);
    const status = await send(`${server.url}${PODS}/a/status`, 'PUT', {
      metadata: { name: 'a', labels: { ignored: 'yes' } },
      spec: { containers: [] },
      status: { phase: 'Running' },
    });
    expect(status.status).toBe(200);
    expect(status.json).toMatchObject({
      status: { phase: 'Running' },
      spec: { containers: [{ name: 'c' }] },
    });
    // podStatusStrategy.PrepareForUpdate keeps the spec but lets a status write change labels.
    expect((status.json.metadata as Record<string, unknown>).labels).toEqual({ ignored: 'yes' });
  });
});

describe('patch (PATCH)', () => {
  test('merge patch, strategic merge patch (as merge for maps) and JSON patch', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('a', { labels: { keep: 'yes', drop: 'yes' } }));
    const merge = await send(
      `${server.url}${PODS}/a`,
      'PATCH',
      { metadata: { labels: { drop: null, added: '1' } } },
      'application/merge-patch+json',
    );
    expect(merge.status).toBe(200);
    expect((merge.json.metadata as { labels: unknown }).labels).toEqual({ keep: 'yes', added: '1' });
    const strategic = await send(
      `${server.url}${PODS}/a`,
      'PATCH',
      { spec: { nodeName: 'n1' } },
      'application/strategic-merge-patch+json',
    );
    expect(strategic.json.spec).toMatchObject({
      nodeName: 'n1',
      containers: [{ name: 'c', image: 'nginx' }],
    });
    const json = await send(
      `${server.url}${PODS}/a`,
      'PATCH',
      [
        { op: 'test', path: '/spec/nodeName', value: 'n1' },
        { op: 'replace', path: '/spec/containers/0/image', value: 'redis' },
        { op: 'add', path: '/metadata/annotations', value: { 'a/b': 'c' } },
        { op: 'remove', path: '/metadata/labels/keep' },
      ],
      'application/json-patch+json',
    );
    expect(json.status).toBe(200);
    expect(json.json).toMatchObject({
      spec: { containers: [{ image: 'redis' }] },
      metadata: { annotations: { 'a/b': 'c' }, labels: { added: '1' } },
    });
    const failed = await send(
      `${server.url}${PODS}/a`,
      'PATCH',
      [{ op: 'test', path: '/spec/nodeName', value: 'x' }],
      'application/json-patch+json',
    );
    expect(failed.status).toBe(422);
  });

  test('a resourceVersion in the patch is a precondition; other media types are 415; a missing object is 404', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('a'));
    const stale = await send(
      `${server.url}${PODS}/a`,
      'PATCH',
      { metadata: { resourceVersion: '1', labels: { x: 'y' } } },
      'application/merge-patch+json',
    );
    expect(stale.status).toBe(409);
    const apply = await send(`${server.url}${PODS}/a`, 'PATCH', {}, 'application/apply-patch+cbor');
    expect(apply.status).toBe(415);
    expect(apply.json.reason).toBe('UnsupportedMediaType');
    const missing = await send(`${server.url}${PODS}/zz`, 'PATCH', {}, 'application/merge-patch+json');
    expect(missing.status).toBe(404);
  });
});

describe('delete (DELETE)', () => {
  test('most types answer a Success Status naming the resource; pods answer the deleted object', async () => {
    server = await FakeApiServer.start();
    const cm = server.create('configmaps', { metadata: { name: 'cm' } });
    const res = await request(`${server.url}/api/v1/namespaces/default/configmaps/cm`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(res.text).toBe(
      `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"cm","kind":"configmaps","uid":"${cm.metadata?.uid}"}}\n`,
    );
    const p = server.create('pods', serverPod('a'));
    const deleted = await request(`${server.url}${PODS}/a`, { method: 'DELETE' });
    // The pod's last state: marked for deletion (grace 0) in a MODIFIED write, then deleted.
    expect(deleted.json).toEqual({
      ...p,
      metadata: {
        ...p.metadata,
        resourceVersion: String(Number(p.metadata.resourceVersion) + 1),
        generation: 2,
        deletionTimestamp: expect.any(String),
        deletionGracePeriodSeconds: 0,
      },
    });
    expect(server.list('pods')).toEqual([]);
    const missing = await request(`${server.url}${PODS}/a`, { method: 'DELETE' });
    expect(missing.status).toBe(404);
  });

  test('an object with finalizers gets a deletionTimestamp; clearing the finalizers deletes it', async () => {
    server = await FakeApiServer.start();
    server.create('configmaps', { metadata: { name: 'cm', finalizers: ['example.com/hold'] } });
    const res = await request(`${server.url}/api/v1/namespaces/default/configmaps/cm`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(res.json.metadata).toMatchObject({
      deletionTimestamp: expect.any(String),
      deletionGracePeriodSeconds: 0,
    });
    expect(server.list('configmaps')).toHaveLength(1);
    server.patch('configmaps', 'default/cm', { metadata: { finalizers: null } });
    expect(server.list('configmaps')).toEqual([]);
  });

  test('preconditions that do not hold are 409; deletecollection honours selectors', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('a', { labels: { app: 'x' } }));
    server.create('pods', serverPod('b'));
    const res = await request(`${server.url}${PODS}/a`, {
      method: 'DELETE',
      body: JSON.stringify({ preconditions: { uid: 'nope' } }),
    });
    expect(res.status).toBe(409);
    expect(res.json.message).toMatch(
      /^Operation cannot be fulfilled on Pod "a": the UID in the precondition \(nope\) does not match the UID in record \([0-9a-f-]{36}\)\. The object might have been deleted and then recreated$/,
    );
    const col = await request(`${server.url}${PODS}?labelSelector=app%3Dx`, { method: 'DELETE' });
    expect(col.status).toBe(200);
    expect(col.json.kind).toBe('PodList');
    expect(server.list('pods').map((p) => p.metadata?.name)).toEqual(['b']);
  });
});

test('a DELETE with a stale preconditions.resourceVersion is the 409 of rest.BeforeDelete, naming the Kind (registry/rest/delete.go)', async () => {
  // BeforeDelete checks the preconditions before the storage layer and builds
  // NewConflict(GroupResource{Group: gvk.Group, Resource: gvk.Kind}, …): the Kind, not the resource.
  server = await FakeApiServer.start();
  const cm = server.create('configmaps', { metadata: { name: 'cm' } });
  server.patch('configmaps', 'default/cm', { data: { a: '1' } });
  const rv = server.get('configmaps', 'default/cm').metadata.resourceVersion;
  const res = await request(`${server.url}/api/v1/namespaces/default/configmaps/cm`, {
    method: 'DELETE',
    body: JSON.stringify({ preconditions: { resourceVersion: cm.metadata.resourceVersion } }),
  });
  expect(res.status).toBe(409);
  expect(res.text).toBe(
    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on ConfigMap \\"cm\\": the ResourceVersion in the precondition (${cm.metadata.resourceVersion}) does not match the ResourceVersion in record (${rv}). The object might have been modified","reason":"Conflict","details":{"name":"cm","kind":"ConfigMap"},"code":409}\n`,
  );
  server.create('deployments.apps', { metadata: { name: 'd' }, spec: {} });
  const dep = await request(`${server.url}/apis/apps/v1/namespaces/default/deployments/d`, {
    method: 'DELETE',
    body: JSON.stringify({ preconditions: { resourceVersion: '1' } }),
  });
  expect(dep.json.message).toMatch(/^Operation cannot be fulfilled on Deployment\.apps "d": /);
  expect(dep.json.details).toEqual({ name: 'd', group: 'apps', kind: 'Deployment' });
  expect(server.list('configmaps')).toHaveLength(1);
});

describe('paths and discovery', () => {
  /** Asserts that a GET of each of `paths` answers 404 with `contentType` and `body`. */
  async function expectNotFound(paths: string[], contentType: string, body: string): Promise<void> {
    for (const path of paths) {
      const res = await request(`${server.url}${path}`);
      expect([path, res.status, res.headers.get('content-type'), res.text]).toEqual([
        path,
        404,
        contentType,
        body,
      ]);
    }
  }

  test('a path outside every served group/version is a plain-text 404 (util/notfoundhandler)', async () => {
    server = await FakeApiServer.start();
    await expectNotFound(
      ['/nope', '/api/v2/pods', '/apis/nope.io/v1/things', '/apis/apps/v2/deployments'],
      'text/plain; charset=utf-8',
      '404 page not found\n',
    );
  });

  test('an unknown resource or subresource inside a served group/version is a JSON 404 Status (server/handler.go serviceErrorHandler)', async () => {
    // kube-apiserver: go-restful's web service for the group/version misses the route and its
    // service error handler answers NewGenericServerResponse(404): reason NotFound, details {}.
    server = await FakeApiServer.start();
    await expectNotFound(
      [
        '/api/v1/foos',
        '/apis/apps/v1/namespaces/x/foos',
        '/api/v1/watch/foos',
        `${PODS}/a/nope`,
        '/api/v1/pods/name',
      ],
      'application/json',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}\n',
    );
    const method = await request(`${server.url}${PODS}`, { method: 'PUT', body: '{}' });
    expect(method.status).toBe(405);
    expect(method.json.reason).toBe('MethodNotAllowed');
  });

  test('serves /api, /api/v1, /apis, /apis/<g>, /apis/<g>/<v> and /version', async () => {
    server = await FakeApiServer.start();
    const api = await request(`${server.url}/api`);
    expect(api.json).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const v1 = await request(`${server.url}/api/v1`);
    expect(v1.json.groupVersion).toBe('v1');
    expect(v1.json.resources).toContainEqual({
      name: 'pods',
      singularName: 'pod',
      namespaced: true,
      kind: 'Pod',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['po'],
      categories: ['all'],
    });
    expect(v1.json.resources).toContainEqual({
      name: 'pods/status',
      singularName: '',
      namespaced: true,
      kind: 'Pod',
      verbs: ['get', 'patch', 'update'],
    });
    const apis = await request(`${server.url}/apis`);
    expect((apis.json.groups as Array<{ name: string }>).map((g) => g.name)).toEqual(
      expect.arrayContaining([
        'apps',
        'batch',
        'coordination.k8s.io',
        'networking.k8s.io',
        'discovery.k8s.io',
        'rbac.authorization.k8s.io',
      ]),
    );
    const apps = await request(`${server.url}/apis/apps`);
    expect(apps.json).toMatchObject({
      kind: 'APIGroup',
      name: 'apps',
      preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
    });
    const appsV1 = await request(`${server.url}/apis/apps/v1`);
    expect((appsV1.json.resources as Array<{ name: string }>).map((r) => r.name)).toEqual([
      'deployments',
      'deployments/status',
      'deployments/scale',
      'replicasets',
      'replicasets/status',
      'replicasets/scale',
      'statefulsets',
      'statefulsets/status',
      'statefulsets/scale',
      'daemonsets',
      'daemonsets/status',
    ]);
    const rbac = await request(`${server.url}/apis/rbac.authorization.k8s.io/v1`);
    expect(rbac.json.resources).toContainEqual(
      expect.objectContaining({ name: 'clusterroles', namespaced: false }),
    );
    expect((await request(`${server.url}/version`)).json.major).toBe('1');
  });

  test('every default type is served', async () => {
    server = await FakeApiServer.start();
    const paths = [
      '/api/v1/services',
      '/api/v1/configmaps',
      '/api/v1/secrets',
      '/api/v1/nodes',
      '/api/v1/namespaces',
      '/api/v1/events',
      '/api/v1/serviceaccounts',
      '/api/v1/endpoints',
      '/apis/apps/v1/replicasets',
      '/apis/apps/v1/statefulsets',
      '/apis/apps/v1/daemonsets',
      '/apis/batch/v1/jobs',
      '/apis/batch/v1/cronjobs',
      '/apis/networking.k8s.io/v1/ingresses',
      '/apis/discovery.k8s.io/v1/endpointslices',
      '/apis/coordination.k8s.io/v1/leases',
      '/apis/rbac.authorization.k8s.io/v1/roles',
      '/apis/rbac.authorization.k8s.io/v1/rolebindings',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles',
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
    ];
    for (const path of paths)
      expect([path, (await request(`${server.url}${path}`)).status]).toEqual([path, 200]);
  });

  test('cluster-scoped types have no namespace in the path or the object', async () => {
    server = await FakeApiServer.start();
    const res = await send(`${server.url}/api/v1/nodes`, 'POST', {
      metadata: { name: 'n1', namespace: 'ignored' },
    });
    expect(res.status).toBe(201);
    expect(res.json.metadata).not.toHaveProperty('namespace');
    expect((await request(`${server.url}/api/v1/nodes/n1`)).status).toBe(200);
    expect((await request(`${server.url}/api/v1/namespaces/default/nodes`)).status).toBe(404);
  });
});

describe('leases (leader election)', () => {
  const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases';
  const lease = (holder: string, resourceVersion?: string): Record<string, unknown> => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'ctrl', namespace: 'kube-system', ...(resourceVersion ? { resourceVersion } : {}) },
    spec: {
      holderIdentity: holder,
      leaseDurationSeconds: 15,
      renewTime: '2026-01-01T00:00:00.123Z',
      leaseTransitions: 0,
    },
  });

  test('create, get, and update with optimistic concurrency: the loser of a race gets 409', async () => {
    server = await FakeApiServer.start();
    const created = await send(`${server.url}${LEASES}`, 'POST', lease('a'));
    expect(created.status).toBe(201);
    expect((created.json.spec as { renewTime: string }).renewTime).toBe('2026-01-01T00:00:00.123000Z');
    const rv = (created.json.metadata as { resourceVersion: string }).resourceVersion;
    const got = await request(`${server.url}${LEASES}/ctrl`);
    expect(got.json).toEqual(created.json);
    const first = await send(`${server.url}${LEASES}/ctrl`, 'PUT', lease('b', rv));
    const second = await send(`${server.url}${LEASES}/ctrl`, 'PUT', lease('c', rv));
    expect(first.status).toBe(200);
    expect(second.status).toBe(409);
    expect(second.json.message).toBe(
      'Operation cannot be fulfilled on leases.coordination.k8s.io "ctrl": the object has been modified; please apply your changes to the latest version and try again',
    );
    expect(server.get('leases.coordination.k8s.io', 'kube-system/ctrl')).toMatchObject({
      spec: { holderIdentity: 'b' },
    });
  });

  test('an update without resourceVersion is 422, as the lease strategy forbids unconditional updates', async () => {
    server = await FakeApiServer.start();
    server.create('leases.coordination.k8s.io', lease('a'));
    const res = await send(`${server.url}${LEASES}/ctrl`, 'PUT', lease('b'));
    expect(res.status).toBe(422);
    expect(res.json.message).toBe(
      'Lease.coordination.k8s.io "ctrl" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    );
  });
});

describe('in-process API', () => {
  test('create/get/update/patch/delete/list work on any registered type and return copies', async () => {
    server = await FakeApiServer.start();
    server.registerResource({
      group: 'example.com',
      version: 'v1alpha1',
      resource: 'gadgets',
      kind: 'Gadget',
      namespaced: false,
      customResource: true,
    });
    const g = server.create(
      { group: 'example.com', version: 'v1alpha1', resource: 'gadgets' },
      { metadata: { name: 'g' }, spec: { size: 1 } },
    );
    expect(g).toMatchObject({ kind: 'Gadget', apiVersion: 'example.com/v1alpha1', metadata: { name: 'g' } });
    (g as { spec: { size: number } }).spec.size = 99; // the caller owns its copy
    expect(server.get('gadgets', 'g')).toMatchObject({ spec: { size: 1 } });
    const updated = server.update('gadgets.example.com', {
      ...server.get('gadgets', 'g'),
      spec: { size: 2 },
    });
    expect(updated).toMatchObject({ spec: { size: 2 } });
    const patched = server.patch(
      'gadgets.v1alpha1.example.com',
      'g',
      [{ op: 'replace', path: '/spec/size', value: 3 }],
      { type: 'json' },
    );
    expect(patched).toMatchObject({ spec: { size: 3 } });
    expect(server.list('gadgets').map((o) => o.metadata?.name)).toEqual(['g']);
    server.delete('gadgets', 'g');
    expect(server.list('gadgets')).toEqual([]);
  });

  test('errors are KinformerErrors carrying the server Status', async () => {
    server = await FakeApiServer.start();
    const created = server.create('pods', serverPod('a'));
    server.patch('pods', 'default/a', { metadata: { labels: { x: 'y' } } });
    let caught: unknown;
    try {
      server.update('pods', created);
    } catch (err) {
      caught = err;
    }
    expect(isKinformerError(caught, ErrorCodes.CONFLICT)).toBe(true);
    expect(() => server.get('pods', 'default/missing')).toThrow(
      expect.objectContaining({ code: ErrorCodes.NOT_FOUND, httpStatus: 404 }),
    );
    expect(() => server.create('pods', serverPod('a'))).toThrow(
      expect.objectContaining({
        code: ErrorCodes.CONFLICT,
        status: expect.objectContaining({ reason: 'AlreadyExists' }),
      }),
    );
    expect(() => server.create('widgets', {})).toThrow(
      expect.objectContaining({ code: ErrorCodes.NOT_FOUND }),
    );
    expect(server.list('pods', 'elsewhere')).toEqual([]);
  });

  test('one global resourceVersion across types, starting at initialResourceVersion', async () => {
    server = await FakeApiServer.start({ initialResourceVersion: 1000 });
    expect(server.resourceVersion).toBe('1000');
    const a = server.create('pods', serverPod('a'));
    const b = server.create('configmaps', { metadata: { name: 'b' } });
    expect([a.metadata?.resourceVersion, b.metadata?.resourceVersion]).toEqual(['1001', '1002']);
    expect(server.bumpResourceVersion(5)).toBe('1007');
  });
});

describe('observability', () => {
  test('records method, path, query, verb and resource of every request', async () => {
    server = await FakeApiServer.start();
    await request(`${server.url}/api/v1/namespaces/default/pods?limit=500&resourceVersion=0`);
    await request(`${server.url}/apis/apps/v1/deployments?labelSelector=a%3Db`);
    await request(`${server.url}/nope`);
    expect(server.requests.map((r) => ({ ...r }))).toEqual([
      expect.objectContaining({
        method: 'GET',
        path: '/api/v1/namespaces/default/pods',
        query: { limit: '500', resourceVersion: '0' },
        verb: 'list',
        resource: 'pods',
        group: '',
        version: 'v1',
        namespace: 'default',
      }),
      expect.objectContaining({
        verb: 'list',
        resource: 'deployments',
        group: 'apps',
        query: { labelSelector: 'a=b' },
      }),
      expect.objectContaining({ verb: undefined, resource: undefined, path: '/nope' }),
    ]);
    expect(server.requests.map((r) => r.status)).toEqual([200, 200, 404]);
    server.clearRequests();
    expect(server.requests).toEqual([]);
  });

  test('waitFor rejects with ERR_TIMEOUT when the condition never holds', async () => {
    server = await FakeApiServer.start();
    await expect(server.waitFor(() => false, { timeoutMs: 30 })).rejects.toMatchObject({
      code: ErrorCodes.TIMEOUT,
    });
  });
});

describe('@kubernetes/client-node against the fake', () => {
  test('CoreV1Api lists pods and client-node Watch streams events through server.kubeConfig()', async () => {
    server = await FakeApiServer.start();
    server.create('pods', serverPod('a', { labels: { app: 'web' } }));
    server.create('pods', serverPod('other/b'));
    const kc = server.kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const list = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' });
    expect(list.items.map((p) => p.metadata?.name)).toEqual(['a']);
    expect(list.metadata?.resourceVersion).toBe(server.resourceVersion);
    const auth = server.requests[0]!;
    expect(auth).toMatchObject({ verb: 'list', namespace: 'default', query: { labelSelector: 'app=web' } });

    const events: Array<[string, string | undefined]> = [];
    const ended = new Promise<unknown>((resolve) => {
      void new Watch(kc).watch(
        '/api/v1/namespaces/default/pods',
        { resourceVersion: list.metadata?.resourceVersion },
        (type: string, obj: V1Pod) => events.push([type, obj.metadata?.name]),
        resolve,
      );
    });
    await server.waitForWatchers(1);
    server.create('pods', serverPod('c'));
    server.delete('pods', 'default/a');
    await server.waitFor(() => events.length === 3);
    expect(events).toEqual([
      ['ADDED', 'c'],
      ['MODIFIED', 'a'], // deletionTimestamp set: a pod DELETE is graceful, even with grace 0
      ['DELETED', 'a'],
    ]);
    server.faults.endWatches();
    expect(await ended).toBeNull();
  });

  test('CoordinationV1Api creates, reads and replaces a lease, and a stale replace fails with 409', async () => {
    server = await FakeApiServer.start();
    const api = server.kubeConfig().makeApiClient(CoordinationV1Api);
    const body: V1Lease = {
      metadata: { name: 'le', namespace: 'default' },
      spec: { holderIdentity: 'me', leaseDurationSeconds: 15, renewTime: new Date('2026-01-01T00:00:00Z') },
    };
    const created = await api.createNamespacedLease({ namespace: 'default', body });
    expect(created.spec?.holderIdentity).toBe('me');
    const read = await api.readNamespacedLease({ name: 'le', namespace: 'default' });
    // The server re-serialises MicroTime with microseconds; client-node 2.0.1 hands it back as that
    // string at run time, although its type says V1MicroTime (a Date).
    expect(read.spec?.renewTime as unknown).toBe('2026-01-01T00:00:00.000000Z');
    const replaced = await api.replaceNamespacedLease({
      name: 'le',
      namespace: 'default',
      body: { ...read, spec: { ...read.spec, holderIdentity: 'you' } },
    });
    expect(replaced.spec?.holderIdentity).toBe('you');
    await expect(
      api.replaceNamespacedLease({ name: 'le', namespace: 'default', body: read }),
    ).rejects.toMatchObject({ code: 409 });
  });

  test('CustomObjectsApi lists a registered CRD', async () => {
    server = await FakeApiServer.start({
      resources: [WIDGETS],
    });
    server.create('widgets.example.com', {
      metadata: { name: 'w', namespace: 'default' },
      spec: { color: 'red' },
    });
    const api = server.kubeConfig().makeApiClient(CustomObjectsApi);
    const list = (await api.listNamespacedCustomObject({
      group: 'example.com',
      version: 'v1',
      namespace: 'default',
      plural: 'widgets',
    })) as {
      items: Array<{ metadata: { name: string } }>;
    };
    expect(list.items.map((i) => i.metadata.name)).toEqual(['w']);
  });
});

test('close() ends open watches and leaves nothing running', async () => {
  server = await FakeApiServer.start({ bookmarkIntervalMs: 10 });
  const res = await fetch(`${server.url}${PODS}?watch=true&allowWatchBookmarks=true`);
  const reader = res.body!.getReader();
  await server.waitForWatchers(1);
  await server.close();
  for (;;) {
    const { done } = await reader.read().catch(() => ({ done: true }));
    if (done) break;
  }
  expect(server.openWatchCount()).toBe(0);
  await server.close(); // idempotent
  await expect(fetch(`${server.url}/api`)).rejects.toThrow();
});

test('re-exports FakeClock from @kinformer/core and FakeListerWatcher from @kinformer/reflector/testing', () => {
  expect(ReexportedClock).toBe(FakeClock);
  expect(new ReexportedClock(5).now()).toBe(5);
  expect(typeof FakeListerWatcher).toBe('function');
});
