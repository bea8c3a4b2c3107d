import fc from 'fast-check';
import { serverPod } from '@kinformer/test-tools';
import { FakeApiServer, FakeClock } from './index.js';
import { decodeKubeProtobuf } from './endpoints/protobuf.js';
import { humanDuration } from './endpoints/table.js';
import { request, send, WatchReader, closeAfterEach } from './wire.test.helpers.js';

// What makes FakeApiServer an envtest: CRDs from YAML/JSON, OpenAPI, Tables, aggregated
// discovery, reviews, NamespaceLifecycle, defaulting and field validation, protobuf bodies. Each
// behaviour cites its kube-apiserver source in the file that implements it.

let server: FakeApiServer;
closeAfterEach(() => server);

const T0 = Date.parse('2026-12-01T10:00:00Z');

const WIDGET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'], categories: ['all'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: {
          status: {},
          scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
        },
        additionalPrinterColumns: [
          { name: 'Color', type: 'string', jsonPath: '.spec.color' },
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
          { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  color: { type: 'string', default: 'blue' },
                  replicas: { type: 'integer' },
                  labels: { type: 'object', additionalProperties: { type: 'string' } },
                  free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                },
              },
              status: {
                type: 'object',
                properties: {
                  replicas: { type: 'integer' },
                  conditions: {
                    type: 'array',
                    items: {
                      type: 'object',
                      properties: { type: { type: 'string' }, status: { type: 'string' } },
                    },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};

const WIDGETS_PATH = '/apis/example.com/v1/namespaces/default/widgets';

/** A server serving WIDGET_CRD with one widget, `a`. */
async function startWithWidget(): Promise<void> {
  server = await FakeApiServer.start();
  server.create('customresourcedefinitions', WIDGET_CRD);
  server.create('widgets.example.com', {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'a' },
  });
}

describe('CustomResourceDefinitions (apiextensions.k8s.io/v1)', () => {
  test('a POSTed CRD is served at once: discovery, CRUD, then NamesAccepted and Established in a MODIFIED write', async () => {
    server = await FakeApiServer.start();
    const w = await WatchReader.open(
      `${server.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions?watch=true&resourceVersion=${server.resourceVersion}`,
    );
    await server.waitForWatchers(1);
    const created = await send(
      `${server.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`,
      'POST',
      WIDGET_CRD,
    );
    expect(created.status).toBe(201);
    expect((await w.next()).type).toBe('ADDED');
    const established = await w.next();
    expect(established.type).toBe('MODIFIED');
    expect(established.object).toMatchObject({
      status: {
        conditions: [
          { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts' },
          { type: 'Established', status: 'True', reason: 'InitialNamesAccepted' },
        ],
        acceptedNames: { plural: 'widgets', kind: 'Widget', listKind: 'WidgetList', shortNames: ['wd'] },
        storedVersions: ['v1'],
      },
    });
    const discovery = await request(`${server.url}/apis/example.com/v1`);
    expect(discovery.json.resources).toEqual([
      {
        name: 'widgets',
        singularName: 'widget',
        namespaced: true,
        kind: 'Widget',
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        shortNames: ['wd'],
        categories: ['all'],
      },
      {
        name: 'widgets/status',
        singularName: '',
        namespaced: true,
        kind: 'Widget',
        verbs: ['get', 'patch', 'update'],
      },
      {
        name: 'widgets/scale',
        singularName: '',
        namespaced: true,
        group: 'autoscaling',
        version: 'v1',
        kind: 'Scale',
        verbs: ['get', 'patch', 'update'],
      },
    ]);
    const type = server.resources().find((t) => t.resource === 'widgets')!;
    expect(type.subresources).toEqual({
      status: true,
      scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
    });
    const widget = await send(`${server.url}${WIDGETS_PATH}`, 'POST', {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w1' },
      spec: { replicas: 2, extra: 'dropped', labels: { a: 'b' }, free: { any: { thing: 1 } } },
      junk: true,
    });
    expect(widget.status).toBe(201);
    // Pruned to the structural schema, defaulted from it; preserve-unknown-fields keeps its subtree.
    expect(widget.json.spec).toEqual({
      replicas: 2,
      labels: { a: 'b' },
      free: { any: { thing: 1 } },
      color: 'blue',
    });
    expect(widget.json).not.toHaveProperty('junk');
    expect(widget.headers.get('warning')).toBe(
      '299 - "unknown field \\"spec.extra\\"", 299 - "unknown field \\"junk\\""',
    );
    w.close();
  });

  test('an invalid CRD is refused with 422 as ValidateCustomResourceDefinition does', async () => {
    server = await FakeApiServer.start();
    const res = await send(`${server.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, 'POST', {
      ...WIDGET_CRD,
      metadata: { name: 'widgets.other.com' },
    });
    expect(res.status).toBe(422);
    expect(res.json.message).toBe(
      'CustomResourceDefinition.apiextensions.k8s.io "widgets.other.com" is invalid: metadata.name: Invalid value: "widgets.other.com": must be spec.names.plural+"."+spec.group',
    );
    expect((await request(`${server.url}/apis/other.com/v1`)).status).toBe(404);
  });

  test('deleting a CRD deletes its objects (DELETED events), ends their watches and stops serving the group', async () => {
    await startWithWidget();
    const w = await WatchReader.open(
      `${server.url}${WIDGETS_PATH}?watch=true&resourceVersion=${server.resourceVersion}`,
    );
    await server.waitForWatchers(1);
    server.delete('customresourcedefinitions', 'widgets.example.com');
    expect((await w.next()).type).toBe('DELETED');
    expect(await w.readToEnd()).toEqual({ lines: [] });
    expect((await request(`${server.url}${WIDGETS_PATH}`)).text).toBe('404 page not found\n');
    expect(server.resources().some((t) => t.resource === 'widgets')).toBe(false);
  });

  test('updating a CRD (a new printer column) keeps its objects', async () => {
    await startWithWidget();
    await server.waitFor(
      () =>
        server.get<{ status?: unknown } & typeof WIDGET_CRD>(
          'customresourcedefinitions',
          'widgets.example.com',
        ).status !== undefined,
    );
    const crd = server.get<typeof WIDGET_CRD>('customresourcedefinitions', 'widgets.example.com');
    const version = {
      ...crd.spec.versions[0]!,
      additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
    };
    server.update('customresourcedefinitions', { ...crd, spec: { ...crd.spec, versions: [version] } });
    expect(server.list('widgets.example.com').map((o) => o.metadata.name)).toEqual(['a']);
    expect(
      server
        .resources()
        .find((t) => t.resource === 'widgets')
        ?.printerColumns?.map((c) => c.name),
    ).toEqual(['Size']);
  });
});

describe('server-side Tables (as=Table;g=meta.k8s.io;v=v1)', () => {
  const TABLE = { Accept: 'application/json;as=Table;g=meta.k8s.io;v=v1,application/json' };

  test('pods print with printers.go columns; rows carry PartialObjectMetadata by default', async () => {
    const clock = new FakeClock(T0);
    server = await FakeApiServer.start({ clock });
    server.create('pods', {
      ...serverPod('web'),
      spec: {
        nodeName: 'node-1',
        containers: [
          { name: 'a', image: 'x' },
          { name: 'b', image: 'y' },
        ],
      },
      status: {
        phase: 'Running',
        podIP: '10.0.0.7',
        containerStatuses: [
          { name: 'a', ready: true, restartCount: 2, state: { running: {} } },
          { name: 'b', ready: false, restartCount: 1, state: { waiting: { reason: 'CrashLoopBackOff' } } },
        ],
      },
    });
    clock.advance(150_000);
    const res = await request(`${server.url}/api/v1/namespaces/default/pods`, { headers: TABLE });
    expect(res.json.kind).toBe('Table');
    expect(res.json.apiVersion).toBe('meta.k8s.io/v1');
    expect(res.json.metadata).toEqual({ resourceVersion: server.resourceVersion });
    const columns = res.json.columnDefinitions as Array<{ name: string; priority: number }>;
    expect(columns.map((c) => `${c.name}${c.priority ? '*' : ''}`)).toEqual([
      'Name',
      'Ready',
      'Status',
      'Restarts',
      'Age',
      'IP*',
      'Node*',
      'Nominated Node*',
      'Readiness Gates*',
    ]);
    const rows = res.json.rows as Array<{
      cells: unknown[];
      object: { kind: string; metadata: { name: string } };
    }>;
    expect(rows[0]!.cells).toEqual([
      'web',
      '1/2',
      'CrashLoopBackOff',
      '3',
      '2m30s',
      '10.0.0.7',
      'node-1',
      '<none>',
      '<none>',
    ]);
    expect(rows[0]!.object).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'web' } });
    const none = await request(`${server.url}/api/v1/namespaces/default/pods/web?includeObject=None`, {
      headers: TABLE,
    });
    expect(none.json.rows).toEqual([{ cells: expect.any(Array) }]);
  });

  test('deployments, configmaps, secrets, services, namespaces and nodes have their columns; others Name and Age', async () => {
    server = await FakeApiServer.start({ clock: new FakeClock(T0) }); // ages stay 0s
    server.create('deployments.apps', {
      metadata: { name: 'd' },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'd' } },
        template: { spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
      status: { readyReplicas: 1, updatedReplicas: 2, availableReplicas: 1 },
    });
    server.create('configmaps', { metadata: { name: 'cm' }, data: { a: '1', b: '2' } });
    server.create('secrets', { metadata: { name: 's' }, type: 'Opaque', data: { k: 'dg==' } });
    server.create('services', {
      metadata: { name: 'svc' },
      spec: {
        type: 'NodePort',
        clusterIP: '10.96.0.9',
        ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }],
        selector: { app: 'd' },
      },
    });
    server.create('nodes', {
      metadata: { name: 'n1', labels: { 'node-role.kubernetes.io/control-plane': '' } },
      status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kubeletVersion: 'v1.34.0' } },
    });
    server.create('leases.coordination.k8s.io', { metadata: { name: 'l' } });
    const cells = async (path: string): Promise<unknown[]> =>
      (
        (await request(`${server.url}${path}`, { headers: TABLE })).json.rows as Array<{ cells: unknown[] }>
      )[0]!.cells;
    expect(await cells('/apis/apps/v1/namespaces/default/deployments')).toEqual([
      'd',
      '1/3',
      2,
      1,
      '0s',
      'c',
      'nginx',
      'app=d',
    ]);
    expect(await cells('/api/v1/namespaces/default/configmaps')).toEqual(['cm', 2, '0s']);
    expect(await cells('/api/v1/namespaces/default/secrets')).toEqual(['s', 'Opaque', 1, '0s']);
    expect(await cells('/api/v1/namespaces/default/services')).toEqual([
      'svc',
      'NodePort',
      '10.96.0.9',
      '<none>',
      '80:30080/TCP',
      '0s',
      'app=d',
    ]);
    expect(await cells('/api/v1/namespaces')).toEqual(['default', 'Active', '0s']);
    expect((await cells('/api/v1/nodes')).slice(0, 5)).toEqual([
      'n1',
      'Ready',
      'control-plane',
      '0s',
      'v1.34.0',
    ]);
    expect(await cells('/apis/coordination.k8s.io/v1/namespaces/default/leases')).toEqual(['l', '0s']);
  });

  test('a CRD prints its additionalPrinterColumns (typed cells, a date as an age); a watch sends one-row Tables', async () => {
    const clock = new FakeClock(T0);
    server = await FakeApiServer.start({ clock });
    server.create('customresourcedefinitions', WIDGET_CRD);
    server.create('widgets.example.com', {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'a' },
      spec: { color: 'red', replicas: 3 },
      status: {
        conditions: [
          { type: 'Synced', status: 'False' },
          { type: 'Ready', status: 'True' },
        ],
      },
    });
    clock.advance(3_600_000);
    const res = await request(`${server.url}${WIDGETS_PATH}`, { headers: TABLE });
    expect(
      (res.json.columnDefinitions as Array<{ name: string; type: string }>).map((c) => `${c.name}:${c.type}`),
    ).toEqual(['Name:string', 'Color:string', 'Replicas:integer', 'Ready:string', 'Age:date']);
    expect((res.json.rows as Array<{ cells: unknown[] }>)[0]!.cells).toEqual(['a', 'red', 3, 'True', '60m']);
    const w = await WatchReader.open(
      `${server.url}${WIDGETS_PATH}?watch=true&resourceVersion=${server.resourceVersion}`,
      { headers: TABLE },
    );
    await server.waitForWatchers(1);
    server.patch('widgets.example.com', 'default/a', { spec: { color: 'green' } });
    const event = await w.next();
    expect(event.type).toBe('MODIFIED');
    expect(event.object).toMatchObject({
      kind: 'Table',
      rows: [{ cells: ['a', 'green', 3, 'True', '60m'] }],
    });
    w.close();
  });

  test('humanDuration matches apimachinery duration.HumanDuration at its boundaries', () => {
    const s = 1000;
    expect(
      [
        0,
        119,
        120,
        125,
        600,
        3 * 3600 - 1,
        3 * 3600,
        7 * 3600 + 60 * 5,
        47 * 3600,
        48 * 3600,
        50 * 3600,
        9 * 86400,
        800 * 86400,
      ].map((x) => humanDuration(x * s)),
    ).toEqual(['0s', '119s', '2m', '2m5s', '10m', '179m', '3h', '7h5m', '47h', '2d', '2d2h', '9d', '2y70d']);
  });
});

describe('discovery and reviews', () => {
  test('aggregated discovery (apidiscovery.k8s.io/v2) lists every group with resources, categories and subresources', async () => {
    server = await FakeApiServer.start();
    const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
    const apis = await request(`${server.url}/apis`, { headers: { Accept: accept } });
    expect(apis.headers.get('content-type')).toBe(
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
    );
    expect(apis.json.kind).toBe('APIGroupDiscoveryList');
    const items = apis.json.items as Array<{
      metadata: { name: string };
      versions: Array<{ resources: Array<Record<string, unknown>> }>;
    }>;
    const apps = items.find((i) => i.metadata.name === 'apps')!;
    expect(apps.versions[0]!.resources.find((r) => r.resource === 'deployments')).toEqual({
      resource: 'deployments',
      responseKind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      scope: 'Namespaced',
      singularResource: 'deployment',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['deploy'],
      categories: ['all'],
      subresources: [
        {
          subresource: 'status',
          responseKind: { group: 'apps', version: 'v1', kind: 'Deployment' },
          verbs: ['get', 'patch', 'update'],
        },
        {
          subresource: 'scale',
          responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
          verbs: ['get', 'patch', 'update'],
        },
      ],
    });
    const core = await request(`${server.url}/api`, { headers: { Accept: accept } });
    const coreItems = core.json.items as Array<{ metadata: Record<string, unknown> }>;
    expect(coreItems).toHaveLength(1);
    expect(coreItems[0]!.metadata.name).toBeUndefined();
    // Without the aggregated media type: the legacy documents.
    expect((await request(`${server.url}/apis`)).json.kind).toBe('APIGroupList');
  });

  test('SelfSubjectAccessReview is allowed, SelfSubjectReview names the caller; neither is stored', async () => {
    server = await FakeApiServer.start();
    const ssar = await send(`${server.url}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, 'POST', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { verb: 'create', resource: 'pods', namespace: 'default' } },
    });
    expect(ssar.status).toBe(201);
    expect(ssar.json).toMatchObject({
      spec: { resourceAttributes: { verb: 'create' } },
      status: { allowed: true },
    });
    const ssr = await send(`${server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, 'POST', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
    });
    expect(ssr.json).toMatchObject({
      status: {
        userInfo: { username: 'kinformer-fake-admin', groups: ['system:masters', 'system:authenticated'] },
      },
    });
    expect(
      (await request(`${server.url}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`)).status,
    ).toBe(405);
  });

  test('the system namespaces exist from the start, at the initial revision and without events', async () => {
    server = await FakeApiServer.start({ initialResourceVersion: 10 });
    expect(server.list('namespaces').map((n) => [n.metadata.name, n.metadata.resourceVersion])).toEqual([
      ['default', '10'],
      ['kube-node-lease', '10'],
      ['kube-public', '10'],
      ['kube-system', '10'],
    ]);
    expect(server.resourceVersion).toBe('10');
    expect(server.create('configmaps', { metadata: { name: 'x' } }).metadata.resourceVersion).toBe('11');
  });
});

describe('OpenAPI', () => {
  test('/openapi/v3 indexes each group/version; a document has the kinds with x-kubernetes-group-version-kind and PATCH with fieldValidation', async () => {
    server = await FakeApiServer.start();
    server.create('customresourcedefinitions', WIDGET_CRD);
    const index = await request(`${server.url}/openapi/v3`);
    const paths = index.json.paths as Record<string, { serverRelativeURL: string }>;
    expect(paths['api/v1']!.serverRelativeURL).toMatch(/^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}$/);
    expect(Object.keys(paths)).toEqual(expect.arrayContaining(['apis/apps/v1', 'apis/example.com/v1']));
    const core = await request(`${server.url}${paths['api/v1']!.serverRelativeURL}`);
    const schemas = (core.json.components as { schemas: Record<string, Record<string, unknown>> }).schemas;
    expect(schemas['io.k8s.api.core.v1.Pod']).toMatchObject({
      'x-kubernetes-group-version-kind': [{ group: '', version: 'v1', kind: 'Pod' }],
      properties: { spec: { $ref: '#/components/schemas/io.k8s.api.core.v1.PodSpec' } },
    });
    expect(schemas['io.k8s.api.core.v1.Container']!.properties).toMatchObject({
      image: { type: 'string' },
      ports: { type: 'array', items: { $ref: '#/components/schemas/io.k8s.api.core.v1.ContainerPort' } },
    });
    const patch = (core.json.paths as Record<string, { patch: { parameters: Array<{ name: string }> } }>)[
      '/api/v1/namespaces/{namespace}/pods/{name}'
    ]!.patch;
    expect(patch).toMatchObject({
      'x-kubernetes-group-version-kind': { group: '', version: 'v1', kind: 'Pod' },
    });
    expect(patch.parameters.map((p) => p.name)).toContain('fieldValidation');
    const crd = await request(`${server.url}/openapi/v3/apis/example.com/v1`);
    const widget = (
      crd.json.components as { schemas: Record<string, { properties: Record<string, unknown> }> }
    ).schemas['com.example.v1.Widget']!;
    expect(widget.properties.spec).toMatchObject({
      properties: { color: { type: 'string', default: 'blue' } },
    });
    const v2 = await request(`${server.url}/openapi/v2`, { headers: { Accept: 'application/json' } });
    expect(v2.json.swagger).toBe('2.0');
    expect((v2.json.definitions as Record<string, unknown>)['io.k8s.api.apps.v1.Deployment']).toBeDefined();
    const proto = await request(`${server.url}/openapi/v2`, {
      headers: { Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' },
    });
    expect(proto.status).toBe(406);
  });
});

describe('admission, defaulting and field validation (HTTP writes)', () => {
  test('NamespaceLifecycle: a create into a namespace that does not exist is 404; with namespaceLifecycle: false it is stored', async () => {
    server = await FakeApiServer.start();
    const res = await send(`${server.url}/api/v1/namespaces/nope/configmaps`, 'POST', {
      metadata: { name: 'x' },
    });
    expect(res.status).toBe(404);
    expect(res.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces \\"nope\\" not found","reason":"NotFound","details":{"name":"nope","kind":"namespaces"},"code":404}\n',
    );
    await send(`${server.url}/api/v1/namespaces`, 'POST', { metadata: { name: 'nope' } });
    expect(
      (await send(`${server.url}/api/v1/namespaces/nope/configmaps`, 'POST', { metadata: { name: 'x' } }))
        .status,
    ).toBe(201);
    await server.close();
    server = await FakeApiServer.start({ namespaceLifecycle: false });
    expect(
      (await send(`${server.url}/api/v1/namespaces/nope/configmaps`, 'POST', { metadata: { name: 'x' } }))
        .status,
    ).toBe(201);
  });

  test('a created pod is defaulted and Pending; a namespace is Active with its label and finalizer', async () => {
    server = await FakeApiServer.start();
    const created = await send(`${server.url}/api/v1/namespaces/default/pods`, 'POST', {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }] }] },
      status: { phase: 'Running' },
    });
    expect(created.json.status).toEqual({ phase: 'Pending', qosClass: 'BestEffort' });
    expect(created.json.spec).toMatchObject({
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
      serviceAccountName: 'default',
      containers: [
        {
          imagePullPolicy: 'Always',
          terminationMessagePath: '/dev/termination-log',
          ports: [{ containerPort: 80, protocol: 'TCP' }],
        },
      ],
    });
    const ns = await send(`${server.url}/api/v1/namespaces`, 'POST', { metadata: { name: 'team' } });
    expect(ns.json).toMatchObject({
      metadata: { labels: { 'kubernetes.io/metadata.name': 'team' } },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    });
  });

  test('each server allocates service cluster IPs of its own: two servers in one process hand out the same first IP', async () => {
    server = await FakeApiServer.start();
    const other = await FakeApiServer.start();
    try {
      const svc = { metadata: { name: 's' }, spec: { ports: [{ port: 80 }] } };
      const first = await send(`${server.url}/api/v1/namespaces/default/services`, 'POST', svc);
      const second = await send(`${server.url}/api/v1/namespaces/default/services`, 'POST', {
        ...svc,
        metadata: { name: 's2' },
      });
      const elsewhere = await send(`${other.url}/api/v1/namespaces/default/services`, 'POST', svc);
      const ip = (res: typeof first): unknown => (res.json.spec as { clusterIP?: unknown }).clusterIP;
      expect(ip(first)).toMatch(/^10\.96\.\d+\.\d+$/);
      expect(ip(second)).not.toBe(ip(first));
      expect(ip(elsewhere)).toBe(ip(first));
    } finally {
      await other.close();
    }
  });

  test('unknown fields: dropped with a Warning by default, 400 under fieldValidation=Strict, silent under Ignore', async () => {
    server = await FakeApiServer.start();
    const body = { metadata: { name: 'cm' }, data: { a: '1' }, spec: { nope: 1 } };
    const strict = await send(
      `${server.url}/api/v1/namespaces/default/configmaps?fieldValidation=Strict`,
      'POST',
      body,
    );
    expect(strict.status).toBe(400);
    expect(strict.json.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "spec"',
    );
    const warn = await send(`${server.url}/api/v1/namespaces/default/configmaps`, 'POST', body);
    expect(warn.status).toBe(201);
    expect(warn.headers.get('warning')).toBe('299 - "unknown field \\"spec\\""');
    expect(warn.json).not.toHaveProperty('spec');
    const patched = await send(
      `${server.url}/api/v1/namespaces/default/configmaps/cm?fieldValidation=Strict`,
      'PATCH',
      { data: { b: '2' }, metadata: { labelz: {} } },
      'application/merge-patch+json',
    );
    expect(patched.status).toBe(400);
    expect(patched.json.message).toContain('unknown field "metadata.labelz"');
    const ignored = await send(
      `${server.url}/api/v1/namespaces/default/configmaps?fieldValidation=Ignore`,
      'POST',
      {
        ...body,
        metadata: { name: 'cm2' },
      },
    );
    expect(ignored.headers.get('warning')).toBeNull();
  });

  test('a body in a media type the server cannot read is 415 UnsupportedMediaType', async () => {
    server = await FakeApiServer.start();
    const res = await request(`${server.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/cbor' },
      body: new Uint8Array([0xa0]),
    });
    expect(res.status).toBe(415);
    expect(res.json).toMatchObject({ reason: 'UnsupportedMediaType', code: 415 });
  });

  test('a ConfigMap in protobuf (as kubectl create configmap sends it) is decoded and stored', async () => {
    server = await FakeApiServer.start();
    const res = await request(`${server.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf' },
      body: protoConfigMap('cm', { a: 'b', 'c.txt': 'héllo' }),
    });
    expect(res.status).toBe(201);
    expect(server.get('configmaps', 'cm')).toMatchObject({
      metadata: { name: 'cm' },
      data: { a: 'b', 'c.txt': 'héllo' },
    });
  });

  test('property: any ConfigMap data round-trips through the protobuf decoder', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.dictionary(fc.string({ minLength: 1 }), fc.string()),
        (name, data) => {
          const decoded = decodeKubeProtobuf(protoConfigMap(name, data));
          expect(decoded).toEqual({
            kind: 'ConfigMap',
            apiVersion: 'v1',
            metadata: { name },
            ...(Object.keys(data).length === 0 ? {} : { data: { ...data } }),
          });
        },
      ),
      // Regression: a data key named `__proto__` was dropped by the map decoder.
      { examples: [[' ', JSON.parse('{"__proto__":""}') as Record<string, string>]] },
    );
  });
});

// A minimal protobuf encoder for the test: the kube envelope around a ConfigMap.
function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 127) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}
function field(num: number, bytes: Uint8Array | number[]): number[] {
  return [...varint(num * 8 + 2), ...varint(bytes.length), ...bytes];
}
function str(s: string): number[] {
  return [...new TextEncoder().encode(s)];
}
function protoConfigMap(name: string, data: Record<string, string>): Uint8Array {
  const meta = field(1, str(name));
  const entries = Object.entries(data).flatMap(([k, v]) =>
    field(2, [...field(1, str(k)), ...field(2, str(v))]),
  );
  const raw = [...field(1, meta), ...entries];
  const typeMeta = [...field(1, str('v1')), ...field(2, str('ConfigMap'))];
  return new Uint8Array([0x6b, 0x38, 0x73, 0x00, ...field(1, typeMeta), ...field(2, raw)]);
}
