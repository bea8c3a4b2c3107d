import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeApiServer } from '@kinformer/testing';

// FakeApiServer against a real client nobody here wrote: kubectl (client-go inside). Each case is
// something a controller's test does through kubectl against a cluster. kubectl must be on PATH;
// without it the cases are skipped with a message, unless KINFORMER_REQUIRE_KUBECTL=1 (CI sets
// it, and .ci/run installs kubectl), which makes its absence a failure.

const kubectlPath = await new Promise<string | undefined>((resolve) =>
  execFile('kubectl', ['version', '--client'], (err) => resolve(err ? undefined : 'kubectl')),
);
const required = process.env.KINFORMER_REQUIRE_KUBECTL === '1';
if (kubectlPath === undefined && !required)
  console.warn('kubectl.test.ts: kubectl is not on PATH, the kubectl cases are skipped');
const suite = kubectlPath !== undefined || required ? describe : describe.skip;

let server: FakeApiServer;
let dir: string;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl against the server with its own kubeconfig and discovery cache. */
function kubectl(args: readonly string[], stdin?: string): Promise<Result> {
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      [...args, '--cache-dir', join(dir, 'cache')],
      { env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig') }, timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
    if (stdin !== undefined) child.stdin?.end(stdin);
  });
}

/** kubectl, expected to succeed; returns stdout. */
async function ok(args: readonly string[], stdin?: string): Promise<string> {
  const r = await kubectl(args, stdin);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

/** The `spec` of a stored object. */
function specOf(resource: string, name: string): Record<string, unknown> {
  return (server.get(resource, name) as { spec?: Record<string, unknown> }).spec ?? {};
}

/** The table kubectl printed, as rows of whitespace-separated cells. */
function rows(stdout: string): string[][] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s{2,}/));
}

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: app
    image: nginx:1.27
    ports:
    - containerPort: 80
`;

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wd], categories: [all]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Color, type: string, jsonPath: .spec.color}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: What the widget should be.
            properties:
              color: {type: string, default: blue, description: The colour.}
              size: {type: integer}
`;

beforeEach(async () => {
  server = await FakeApiServer.start();
  dir = mkdtempSync(join(tmpdir(), 'kinformer-kubectl-'));
  writeFileSync(join(dir, 'kubeconfig'), server.kubeConfig().exportConfig());
});

afterEach(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

suite('kubectl against FakeApiServer', () => {
  test('get prints server-side Tables; get ns lists the system namespaces; get all expands the category', async () => {
    expect(await ok(['apply', '-f', '-'], POD)).toBe('pod/web created\n');
    expect(rows(await ok(['get', 'pods']))).toEqual([
      ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'],
      ['web', '0/1', 'Pending', '0', expect.stringMatching(/^\d+s$/)],
    ]);
    expect(rows(await ok(['get', 'pods', '-o', 'wide']))[0]).toEqual([
      'NAME',
      'READY',
      'STATUS',
      'RESTARTS',
      'AGE',
      'IP',
      'NODE',
      'NOMINATED NODE',
      'READINESS GATES',
    ]);
    expect(rows(await ok(['get', 'ns'])).map((r) => r.slice(0, 2))).toEqual([
      ['NAME', 'STATUS'],
      ['default', 'Active'],
      ['kube-node-lease', 'Active'],
      ['kube-public', 'Active'],
      ['kube-system', 'Active'],
    ]);
    await ok(['create', 'deployment', 'd', '--image=nginx', '--replicas=2']);
    const all = await ok(['get', 'all']);
    expect(all).toContain('pod/web');
    expect(all).toContain('deployment.apps/d');
    expect(all).toMatch(/READY\s+UP-TO-DATE\s+AVAILABLE/);
  }, 60_000);

  test('create and apply -f validate fields on the server: unknown fields are refused; apply again configures', async () => {
    const bad = await kubectl(
      ['create', '-f', '-'],
      POD.replace('  - name: app', '  - name: app\n    colour: red'),
    );
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('strict decoding error: unknown field "spec.containers[0].colour"');
    expect(await ok(['create', '-f', '-'], POD)).toBe('pod/web created\n');
    const again = await kubectl(['create', '-f', '-'], POD);
    expect(again.stderr).toContain('Error from server (AlreadyExists)');
    expect(await ok(['apply', '-f', '-'], POD.replace('app: web', 'app: web2'))).toBe('pod/web configured\n');
    expect(server.get('pods', 'web').metadata.labels).toEqual({ app: 'web2' });
    const missing = await kubectl(['apply', '-n', 'nope', '-f', '-'], POD);
    expect(missing.stderr).toContain('namespaces "nope" not found');
  }, 60_000);

  test('apply -f crd.yaml, wait until established, then use the new kind (defaults, printer columns, explain, short name)', async () => {
    await ok(['apply', '-f', '-'], CRD);
    await ok(['wait', '--for', 'condition=established', 'crd/widgets.example.com', '--timeout=10s']);
    expect(
      await ok(
        ['apply', '-f', '-'],
        'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 3}\n',
      ),
    ).toBe('widget.example.com/w1 created\n');
    expect(rows(await ok(['get', 'wd']))).toEqual([
      ['NAME', 'COLOR', 'AGE'],
      ['w1', 'blue', expect.stringMatching(/^\d+s$/)],
    ]);
    const explain = await ok(['explain', 'widget.spec']);
    expect(explain).toContain('KIND:       Widget');
    expect(explain).toMatch(/color\s+<string>/);
    expect(explain).toContain('The colour.');
    expect(await ok(['get', 'all'])).toContain('widget.example.com/w1');
    const bad = await kubectl(
      ['apply', '-f', '-'],
      'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w2}\nspec: {shape: round}\n',
    );
    expect(bad.stderr).toContain('unknown field "spec.shape"');
    await ok(['delete', 'crd', 'widgets.example.com']);
    expect(server.resources().some((t) => t.resource === 'widgets')).toBe(false);
  }, 60_000);

  test('explain reads the OpenAPI v3 documents of built-in kinds', async () => {
    const explain = await ok(['explain', 'deployment.spec.template.spec.containers']);
    expect(explain).toContain('KIND:       Deployment');
    expect(explain).toMatch(/image\s+<string>/);
    expect(explain).toMatch(/ports\s+<\[\]ContainerPort>/);
  }, 60_000);

  test('create configmap|secret|namespace (protobuf bodies), auth can-i and auth whoami', async () => {
    expect(await ok(['create', 'configmap', 'cm', '--from-literal=a=b'])).toBe('configmap/cm created\n');
    expect(server.get('configmaps', 'cm')).toMatchObject({ data: { a: 'b' } });
    await ok(['create', 'secret', 'generic', 's', '--from-literal=p=q']);
    expect(server.get('secrets', 's')).toMatchObject({ type: 'Opaque', data: { p: 'cQ==' } });
    await ok(['create', 'namespace', 'team']);
    expect(await ok(['auth', 'can-i', 'create', 'pods'])).toBe('yes\n');
    expect(await ok(['auth', 'whoami'])).toContain('kinformer-fake-admin');
  }, 60_000);

  test('delete, wait --for=delete, and get -w see what a cluster shows', async () => {
    await ok(['apply', '-f', '-'], POD);
    const watch = spawn(
      'kubectl',
      ['get', 'pods', '-w', '--output-watch-events', '--cache-dir', join(dir, 'cache')],
      {
        env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig') },
      },
    );
    let out = '';
    watch.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    try {
      await server.waitForWatchers(1, { timeoutMs: 20_000 });
      const waiting = kubectl(['wait', '--for=delete', 'pod/web', '--timeout=20s']);
      await ok(['delete', 'pod', 'web', '--wait=false']);
      expect((await waiting).code).toBe(0);
      await server.waitFor(() => /DELETED\s+web/.test(out), { timeoutMs: 20_000 });
      expect(rows(out).map((r) => r[0])).toEqual(['EVENT', 'ADDED', 'MODIFIED', 'DELETED']);
    } finally {
      watch.kill();
    }
  }, 60_000);
  test('scale: deployments, statefulsets and a CRD through /scale; --current-replicas is a precondition', async () => {
    await ok(['create', 'deployment', 'd', '--image=nginx', '--replicas=2']);
    expect(await ok(['scale', 'deployment/d', '--replicas=3'])).toBe('deployment.apps/d scaled\n');
    expect(specOf('deployments.apps', 'd').replicas).toBe(3);
    const stale = await kubectl(['scale', 'deployment/d', '--current-replicas=2', '--replicas=5']);
    expect(stale.code).not.toBe(0);
    expect(stale.stderr).toContain('Expected replicas to be 2, was 3');
    expect(await ok(['scale', 'deploy', 'd', '--current-replicas=3', '--replicas=0'])).toBe(
      'deployment.apps/d scaled\n',
    );
    expect(specOf('deployments.apps', 'd').replicas).toBe(0);
    await ok(
      ['apply', '-f', '-'],
      `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  selector: {matchLabels: {app: db}}
  serviceName: db
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres}]}
`,
    );
    expect(await ok(['scale', 'sts/db', '--replicas=4'])).toBe('statefulset.apps/db scaled\n');
    expect(specOf('statefulsets.apps', 'db').replicas).toBe(4);
    await ok(
      ['apply', '-f', '-'],
      CRD.replace(
        'subresources: {status: {}}',
        'subresources: {status: {}, scale: {specReplicasPath: .spec.size, statusReplicasPath: .status.size}}',
      ),
    );
    await ok(['wait', '--for', 'condition=established', 'crd/widgets.example.com', '--timeout=10s']);
    await ok(
      ['apply', '-f', '-'],
      'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 1}\n',
    );
    expect(await ok(['scale', 'widget/w1', '--replicas=7'])).toBe('widget.example.com/w1 scaled\n');
    expect(specOf('widgets.example.com', 'w1').size).toBe(7);
    const missing = await kubectl(['scale', 'deployment/nope', '--replicas=1']);
    expect(missing.stderr).toContain('deployments.apps "nope" not found');
  }, 60_000);

  test('diff -f: a server-side dry run (create and patch) shows the change, exits 1, and writes nothing', async () => {
    const fresh = await kubectl(['diff', '-f', '-'], POD);
    expect(fresh.code).toBe(1);
    expect(fresh.stdout.split('\n')).toContain('+  name: web');
    expect(fresh.stdout.split('\n')).toContain('+  - image: nginx:1.27');
    expect(server.list('pods')).toEqual([]);
    await ok(['apply', '-f', '-'], POD);
    const same = await kubectl(['diff', '-f', '-'], POD);
    expect(same).toMatchObject({ code: 0, stdout: '' });
    const rv = server.resourceVersion;
    const changed = await kubectl(['diff', '-f', '-'], POD.replace('app: web', 'app: web2'));
    expect(changed.code).toBe(1);
    expect(changed.stdout.split('\n')).toContain('-    app: web');
    expect(changed.stdout.split('\n')).toContain('+    app: web2');
    expect(changed.stdout).not.toMatch(/^[-+]\s+(resourceVersion|generation|uid):/m);
    await ok(['create', 'deployment', 'd', '--image=nginx', '--replicas=2']);
    const rv2 = server.resourceVersion;
    const deploy = await ok(['get', 'deployment', 'd', '-o', 'yaml']);
    const scaled = await kubectl(['diff', '-f', '-'], deploy.replace('replicas: 2', 'replicas: 5'));
    expect(scaled.code).toBe(1);
    expect(scaled.stdout.split('\n')).toContain('-  replicas: 2');
    expect(scaled.stdout.split('\n')).toContain('+  replicas: 5');
    expect(scaled.stdout.split('\n')).toContain('-  generation: 1');
    expect(scaled.stdout.split('\n')).toContain('+  generation: 2');
    expect(server.resourceVersion).toBe(rv2);
    expect(Number(rv2)).toBeGreaterThan(Number(rv));
    expect(specOf('deployments.apps', 'd').replicas).toBe(2);
    // A custom resource is diffed with a JSON merge patch (no strategic merge for CRDs): defaults
    // apply to the merged object, and an unknown field is a Warning, as for any write.
    await ok(['apply', '-f', '-'], CRD);
    await ok(['wait', '--for', 'condition=established', 'crd/widgets.example.com', '--timeout=10s']);
    const widget = 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 3}\n';
    await ok(['apply', '-f', '-'], widget);
    const rv3 = server.resourceVersion;
    const resized = await kubectl(['diff', '-f', '-'], widget.replace('size: 3', 'size: 4, shape: x'));
    expect(resized.code).toBe(1);
    expect(resized.stdout.split('\n')).toContain('-  size: 3');
    expect(resized.stdout.split('\n')).toContain('+  size: 4');
    expect(resized.stdout.split('\n')).toContain('   color: blue');
    expect(resized.stdout).not.toContain('shape');
    expect(resized.stderr).toContain('Warning: unknown field "spec.shape"');
    expect(server.resourceVersion).toBe(rv3);
  }, 60_000);

  test('rollout status and wait --for=condition follow a Deployment whose status a controller writes', async () => {
    await ok(['create', 'deployment', 'd', '--image=nginx', '--replicas=2']);
    const rollout = kubectl(['rollout', 'status', 'deployment/d', '--timeout=20s']);
    const available = kubectl(['wait', '--for=condition=Available', 'deployment/d', '--timeout=20s']);
    await server.waitForWatchers(2, { timeoutMs: 20_000 });
    const status = (ready: number): Record<string, unknown> => ({
      observedGeneration: 1,
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: ready,
      availableReplicas: ready,
      conditions: [
        {
          type: 'Available',
          status: ready === 2 ? 'True' : 'False',
          reason: 'MinimumReplicasAvailable',
          message: 'Deployment has minimum availability.',
        },
        {
          type: 'Progressing',
          status: 'True',
          reason: 'NewReplicaSetAvailable',
          message: 'ReplicaSet "d-1" has successfully progressed.',
        },
      ],
    });
    server.patch('deployments.apps', 'd', { status: status(1) }, { subresource: 'status' });
    server.patch('deployments.apps', 'd', { status: status(2) }, { subresource: 'status' });
    const [r, w] = await Promise.all([rollout, available]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('deployment "d" successfully rolled out');
    expect(w).toMatchObject({ code: 0, stdout: 'deployment.apps/d condition met\n' });
  }, 60_000);
});
