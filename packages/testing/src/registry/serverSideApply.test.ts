import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '@kinformer/core/testing';
import { FakeApiServer } from '../index.js';
import { request, send, type WireResponse, closeAfterEach } from '../wire.test.helpers.js';

// Server-side apply as kube-apiserver does it: handlers/patch.go applyPatcher (create on apply,
// 201), apimachinery managedfields/internal (fieldmanager.go, structuredmerge.go,
// skipnonapplied.go, conflict.go, managedfields.go) and structured-merge-diff merge/update.go
// (Updater.Apply: merge, prune, update with conflicts).

let server: FakeApiServer;
closeAfterEach(() => server);

const T0 = Date.parse('2026-12-01T10:00:00Z');
const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';
const CMS = '/api/v1/namespaces/default/configmaps';

function apply(path: string, body: unknown, query: string): Promise<WireResponse> {
  return send(`${server.url}${path}?${query}`, 'PATCH', body, 'application/apply-patch+yaml');
}

const deployment = (
  replicas: number,
  image = 'nginx:1',
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', labels: { app: 'web' } },
  spec: {
    replicas,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'nginx', image }] },
    },
    ...extra,
  },
});

type Entry = { manager: string; operation: string; subresource?: string; fieldsV1: Record<string, unknown> };
const managers = (obj: Record<string, unknown>): Entry[] =>
  (obj.metadata as { managedFields?: Entry[] }).managedFields ?? [];

describe('server-side apply', () => {
  test('creates a missing object (201) and records the applier (operation Apply) with the fieldsV1 of its configuration', async () => {
    server = await FakeApiServer.start({ clock: new FakeClock(T0) });
    const res = await apply(`${DEPLOYS}/web`, deployment(2), 'fieldManager=ci');
    expect(res.status).toBe(201);
    expect(res.json.spec).toMatchObject({ replicas: 2 });
    expect(res.json.status).toEqual({}); // deploymentStrategy.PrepareForCreate
    expect(managers(res.json)).toEqual([
      {
        manager: 'ci',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: '2026-12-01T10:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:spec': {
            'f:replicas': {},
            'f:selector': { 'f:matchLabels': { 'f:app': {} } },
            'f:template': {
              'f:metadata': { 'f:labels': { 'f:app': {} } },
              'f:spec': {
                'f:containers': { 'k:{"name":"nginx"}': { '.': {}, 'f:image': {}, 'f:name': {} } },
              },
            },
          },
        },
      },
    ]);
  });

  test('an apply that creates runs NamespaceLifecycle: a missing namespace is 404 and nothing is stored', async () => {
    server = await FakeApiServer.start();
    const res = await apply(
      '/apis/apps/v1/namespaces/nope/deployments/web',
      deployment(1),
      'fieldManager=ci',
    );
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({
      kind: 'Status',
      reason: 'NotFound',
      details: { kind: 'namespaces', name: 'nope' },
    });
    expect(server.list('deployments.apps', 'nope')).toEqual([]);
  });

  test('server.apply() runs NamespaceLifecycle as the PATCH does; with namespaceLifecycle: false it creates', async () => {
    server = await FakeApiServer.start();
    const config = { ...deployment(1), metadata: { name: 'web', namespace: 'nope' } };
    expect(() => server.apply('deployments.apps', config, { fieldManager: 'ci' })).toThrow(
      expect.objectContaining({ status: expect.objectContaining({ code: 404, reason: 'NotFound' }) }),
    );
    expect(server.list('deployments.apps', 'nope')).toEqual([]);
    await server.close();
    server = await FakeApiServer.start({ namespaceLifecycle: false });
    expect(server.apply('deployments.apps', config, { fieldManager: 'ci' }).metadata.namespace).toBe('nope');
  });

  test('an apply is decoded like a create: unknown fields dropped with a Warning, 400 under Strict; the result is defaulted', async () => {
    server = await FakeApiServer.start();
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', bogus: 1 },
      spec: { containers: [{ name: 'c', image: 'nginx:1' }], nope: true },
    };
    const strict = await apply(
      '/api/v1/namespaces/default/pods/p',
      pod,
      'fieldManager=ci&fieldValidation=Strict',
    );
    expect(strict.status).toBe(400);
    expect(strict.json.message).toBe(
      'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "metadata.bogus", unknown field "spec.nope"',
    );
    expect(server.list('pods')).toEqual([]);
    const created = await apply('/api/v1/namespaces/default/pods/p', pod, 'fieldManager=ci');
    expect(created.status).toBe(201);
    expect(created.headers.get('warning')).toBe(
      '299 - "unknown field \\"metadata.bogus\\"", 299 - "unknown field \\"spec.nope\\""',
    );
    expect(created.json.metadata).not.toHaveProperty('bogus');
    expect(created.json.spec).not.toHaveProperty('nope');
    // SetDefaults_PodSpec and the create-time admission defaults, as for a POST.
    expect(created.json.spec).toMatchObject({
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      priority: 0,
    });
    expect(JSON.stringify(managers(created.json))).not.toContain('nope');
    // An apply that updates is decoded the same way.
    const updated = await apply(
      '/api/v1/namespaces/default/pods/p',
      pod,
      'fieldManager=ci&fieldValidation=Strict',
    );
    expect(updated.status).toBe(400);
    // In process: dropped too.
    const inProcess = server.apply(
      'configmaps',
      { metadata: { name: 'cm' }, data: { a: '1' }, spec: {} },
      {
        fieldManager: 'ci',
      },
    );
    expect(inProcess).not.toHaveProperty('spec');
  });

  test('re-applying the same configuration writes nothing; a YAML body works as JSON does', async () => {
    server = await FakeApiServer.start();
    await apply(`${DEPLOYS}/web`, deployment(2), 'fieldManager=ci');
    const rv = server.resourceVersion;
    const yaml = [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata: {name: web, labels: {app: web}}',
      'spec:',
      '  replicas: 2',
      '  selector: {matchLabels: {app: web}}',
      '  template:',
      '    metadata: {labels: {app: web}}',
      '    spec:',
      '      containers:',
      '      - {name: nginx, image: "nginx:1"}',
    ].join('\n');
    const again = await request(`${server.url}${DEPLOYS}/web?fieldManager=ci`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
      body: yaml,
    });
    expect(again.status).toBe(200);
    expect(server.resourceVersion).toBe(rv);
    expect((again.json.metadata as { resourceVersion: string }).resourceVersion).toBe(rv);
  });

  test("changing another manager's field is a 409 naming the managers and fields; force takes the fields", async () => {
    server = await FakeApiServer.start();
    await apply(`${DEPLOYS}/web`, deployment(2), 'fieldManager=ci');
    // Another applier takes spec.replicas (same value: shared), then sets it.
    const hpa = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { replicas: 2 },
    };
    expect((await apply(`${DEPLOYS}/web`, hpa, 'fieldManager=hpa')).status).toBe(200);
    const conflict = await apply(`${DEPLOYS}/web`, { ...hpa, spec: { replicas: 5 } }, 'fieldManager=hpa');
    expect(conflict.status).toBe(409);
    expect(conflict.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Apply failed with 1 conflict: conflict with "ci": .spec.replicas',
      reason: 'Conflict',
      details: {
        causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "ci"', field: '.spec.replicas' }],
      },
      code: 409,
    });
    // Two fields owned by an updater (PUT): both listed, with "using <apiVersion>".
    const live = server.get('deployments.apps', 'web');
    const put = await request(`${server.url}${DEPLOYS}/web?fieldManager=editor`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        ...live,
        metadata: { ...live.metadata, annotations: { a: '1' } },
        spec: { ...(live as unknown as { spec: object }).spec, paused: true },
      }),
    });
    expect(put.status).toBe(200);
    const two = await apply(
      `${DEPLOYS}/web`,
      { ...hpa, metadata: { name: 'web', annotations: { a: '2' } }, spec: { replicas: 2, paused: false } },
      'fieldManager=hpa',
    );
    expect(two.status).toBe(409);
    expect(two.json.message).toBe(
      'Apply failed with 2 conflicts: conflicts with "editor" using apps/v1:\n- .metadata.annotations.a\n- .spec.paused',
    );
    const forced = await apply(
      `${DEPLOYS}/web`,
      { ...hpa, spec: { replicas: 5 } },
      'fieldManager=hpa&force=true',
    );
    expect(forced.status).toBe(200);
    expect(forced.json.spec).toMatchObject({ replicas: 5 });
    const ci = managers(forced.json).find((m) => m.manager === 'ci')!;
    const hpaEntry = managers(forced.json).find((m) => m.manager === 'hpa')!;
    expect(ci.fieldsV1['f:spec']).not.toHaveProperty('f:replicas');
    expect(hpaEntry.fieldsV1).toEqual({ 'f:spec': { 'f:replicas': {} } });
  });

  test('a field left out of the next apply is removed unless another manager owns it', async () => {
    server = await FakeApiServer.start();
    const cm = (data?: Record<string, string>): Record<string, unknown> => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      ...(data === undefined ? {} : { data }),
    });
    await apply(`${CMS}/c`, cm({ a: '1', b: '2', shared: 'x' }), 'fieldManager=one');
    await apply(`${CMS}/c`, cm({ shared: 'x' }), 'fieldManager=two');
    const res = await apply(`${CMS}/c`, cm({ a: '1' }), 'fieldManager=one');
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ a: '1', shared: 'x' });
    // Fields another writer set with an update stay too (the applier never owned them).
    await send(
      `${server.url}${CMS}/c?fieldManager=kubectl-edit`,
      'PATCH',
      { data: { edited: 'y' } },
      'application/merge-patch+json',
    );
    // (An empty `data: {}` would be a field of its own; leaving `data` out owns nothing.)
    const after = await apply(`${CMS}/c`, cm(), 'fieldManager=one');
    expect(after.json.data).toEqual({ shared: 'x', edited: 'y' });
    expect(managers(after.json).map((m) => [m.manager, m.operation])).toEqual([
      ['two', 'Apply'],
      ['kubectl-edit', 'Update'],
    ]);
  });

  test('list elements merge by the strategic-merge-patch keys; an element dropped by its only applier goes', async () => {
    server = await FakeApiServer.start();
    const pod = (containers: Array<Record<string, unknown>>): Record<string, unknown> => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers },
    });
    const PODS = '/api/v1/namespaces/default/pods';
    await apply(`${PODS}/p`, pod([{ name: 'app', image: 'a:1' }]), 'fieldManager=one');
    await apply(`${PODS}/p`, pod([{ name: 'sidecar', image: 's:1' }]), 'fieldManager=two');
    const both = server.get<{ spec: { containers: unknown[] } } & { apiVersion: string; kind: string }>(
      'pods',
      'p',
    );
    // Merged by name, then defaulted (SetDefaults_Container) as every write is.
    expect(both.spec.containers).toEqual([
      expect.objectContaining({ name: 'app', image: 'a:1', imagePullPolicy: 'IfNotPresent' }),
      expect.objectContaining({ name: 'sidecar', image: 's:1' }),
    ]);
    await apply(`${PODS}/p`, pod([{ name: 'sidecar', image: 's:1' }]), 'fieldManager=one');
    // "one" now applies only the sidecar (shared with "two"): app was its own, so it is pruned.
    expect(
      server.get<{ spec: { containers: unknown[] } } & { apiVersion: string; kind: string }>('pods', 'p').spec
        .containers,
    ).toEqual([expect.objectContaining({ name: 'sidecar', image: 's:1' })]);
  });

  test('custom resources merge lists atomically unless listTypes declares them', async () => {
    server = await FakeApiServer.start();
    const exIo = { group: 'ex.io', version: 'v1', namespaced: true, customResource: true } as const;
    server.registerResource({ ...exIo, resource: 'widgets', kind: 'Widget' });
    server.registerResource({
      ...exIo,
      resource: 'gadgets',
      kind: 'Gadget',
      listTypes: { 'spec.ports': { type: 'map', keys: ['port'] }, 'spec.tags': { type: 'set' } },
    });
    const body = (kind: string, ports: number[], tags: string[]): Record<string, unknown> => ({
      apiVersion: 'ex.io/v1',
      kind,
      metadata: { name: 'x' },
      spec: { ports: ports.map((port) => ({ port })), tags },
    });
    for (const [resource, kind] of [
      ['widgets', 'Widget'],
      ['gadgets', 'Gadget'],
    ] as const) {
      const path = `/apis/ex.io/v1/namespaces/default/${resource}/x`;
      expect((await apply(path, body(kind, [80], ['a']), 'fieldManager=one')).status).toBe(201);
    }
    const atomic = await apply(
      '/apis/ex.io/v1/namespaces/default/widgets/x',
      body('Widget', [443], ['b']),
      'fieldManager=two',
    );
    expect(atomic.status).toBe(409); // the whole list is one field owned by "one"
    const merged = await apply(
      '/apis/ex.io/v1/namespaces/default/gadgets/x',
      body('Gadget', [443], ['b']),
      'fieldManager=two',
    );
    expect(merged.status).toBe(200);
    expect(merged.json.spec).toEqual({ ports: [{ port: 80 }, { port: 443 }], tags: ['a', 'b'] });
  });

  test('updates by other verbs record Update managers (POST, PUT, merge patch, status), by fieldManager or User-Agent', async () => {
    // A fake clock: both writes happen in the same second, so the managers sort by name (a real second
    // boundary between them on a loaded machine would sort them by time instead).
    server = await FakeApiServer.start({ clock: new FakeClock(T0) });
    const created = await request(`${server.url}${DEPLOYS}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'User-Agent': 'my-controller/v1.2 (linux)' },
      body: JSON.stringify(deployment(1)),
    });
    expect(managers(created.json).map((m) => [m.manager, m.operation])).toEqual([
      ['my-controller', 'Update'],
    ]);
    // The status of a create is reset, so nobody owns it; a /status write records its own manager.
    const status = await send(
      `${server.url}${DEPLOYS}/web/status?fieldManager=ctl`,
      'PATCH',
      { status: { replicas: 1 } },
      'application/merge-patch+json',
    );
    expect(managers(status.json).map((m) => [m.manager, m.subresource, Object.keys(m.fieldsV1)])).toEqual([
      // sortEncodedManagedFields: by operation, time, then name.
      ['ctl', 'status', ['f:status']],
      ['my-controller', undefined, ['f:metadata', 'f:spec']],
    ]);
  });

  test('fieldManager is required (422), the apiVersion must be the resource’s (400), managedFields may not be applied (400)', async () => {
    server = await FakeApiServer.start();
    const missing = await apply(`${DEPLOYS}/web`, deployment(1), '');
    expect([missing.status, missing.json.message]).toEqual([
      422,
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    ]);
    const wrong = await apply(
      `${DEPLOYS}/web`,
      { ...deployment(1), apiVersion: 'apps/v1beta1' },
      'fieldManager=a',
    );
    expect([wrong.status, wrong.json.message]).toEqual([
      400,
      'Incorrect version specified in apply patch. Specified patch version: apps/v1beta1, expected: apps/v1',
    ]);
    const withManaged = await apply(
      `${DEPLOYS}/web`,
      { ...deployment(1), metadata: { name: 'web', managedFields: [] } },
      'fieldManager=a',
    );
    expect([withManaged.status, withManaged.json.message]).toEqual([
      400,
      'metadata.managedFields must be nil',
    ]);
    const force = await send(`${server.url}${CMS}/x?force=true`, 'PATCH', {}, 'application/merge-patch+json');
    expect(force.status).toBe(422);
  });

  test('an object created without managed fields is owned by before-first-apply, whose fields conflict', async () => {
    server = await FakeApiServer.start();
    server.create('configmaps', { metadata: { name: 'c' }, data: { a: '1' } });
    const res = await apply(
      `${CMS}/c`,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '2' } },
      'fieldManager=ci',
    );
    expect(res.status).toBe(409);
    expect(res.json.message).toBe(
      'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a',
    );
  });
});

function kubectlAvailable(): Promise<boolean> {
  return new Promise((resolve) =>
    execFile('kubectl', ['version', '--client'], (err) => resolve(err === null)),
  );
}

function kubectl(kubeconfig: string, args: string[], input?: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', kubeconfig, ...args],
      { timeout: 30_000 },
      (err, stdout, stderr) =>
        resolve({ code: err === null ? 0 : ((err as { code?: number }).code ?? 1), out: stdout + stderr }),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

describe('kubectl apply --server-side against the fake', () => {
  test('apply, conflict with kubectl scale, --force-conflicts, server dry runs that change nothing', async () => {
    if (!(await kubectlAvailable())) return; // kubectl is optional on the machine running the tests
    server = await FakeApiServer.start();
    const dir = mkdtempSync(join(tmpdir(), 'kinformer-ssa-'));
    try {
      const kubeconfig = join(dir, 'config');
      writeFileSync(kubeconfig, server.kubeConfig().exportConfig());
      const manifest = (image: string): string => JSON.stringify(deployment(2, image));
      const first = await kubectl(
        kubeconfig,
        ['apply', '--server-side', '--validate=false', '-f', '-'],
        manifest('nginx:1'),
      );
      expect(first).toEqual({ code: 0, out: 'deployment.apps/web serverside-applied\n' });
      expect(managers(server.get('deployments.apps', 'web'))).toMatchObject([
        { manager: 'kubectl', operation: 'Apply' },
      ]);
      expect((await kubectl(kubeconfig, ['scale', 'deployment/web', '--replicas=5'])).code).toBe(0);
      const conflict = await kubectl(
        kubeconfig,
        ['apply', '--server-side', '--validate=false', '-f', '-'],
        manifest('nginx:1'),
      );
      expect(conflict.code).not.toBe(0);
      expect(conflict.out).toContain(
        'Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas',
      );
      const rv = server.resourceVersion;
      const dry = await kubectl(
        kubeconfig,
        ['apply', '--server-side', '--force-conflicts', '--dry-run=server', '--validate=false', '-f', '-'],
        manifest('nginx:2'),
      );
      expect(dry.out).toBe('deployment.apps/web serverside-applied (server dry run)\n');
      expect((await kubectl(kubeconfig, ['delete', 'deployment/web', '--dry-run=server'])).code).toBe(0);
      const diff = await kubectl(
        kubeconfig,
        ['diff', '--server-side', '--force-conflicts', '-f', '-'],
        manifest('nginx:2'),
      );
      expect(diff.out).toContain('+      - image: nginx:2');
      expect(server.resourceVersion).toBe(rv);
      const forced = await kubectl(
        kubeconfig,
        ['apply', '--server-side', '--force-conflicts', '--validate=false', '-f', '-'],
        manifest('nginx:2'),
      );
      expect(forced.code).toBe(0);
      const live = server.get<{ spec: { replicas: number } } & { apiVersion: string; kind: string }>(
        'deployments.apps',
        'web',
      );
      expect(live.spec.replicas).toBe(2);
      expect(managers(live).map((m) => m.manager)).toEqual(['kubectl']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
