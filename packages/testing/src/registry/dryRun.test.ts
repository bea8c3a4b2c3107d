import fc from 'fast-check';
import { FakeClock } from '@kinformer/core/testing';
import { FakeApiServer } from '../index.js';
import { closeAfterEach, request, WatchReader, watchReaders } from '../wire.test.helpers.js';
import type { WireResponse } from '../wire.test.helpers.js';

// dryRun=All on every write verb, as kube-apiserver does it: registry/generic/registry/dryrun.go
// (DryRunnableStorage: Create checks existence and copies, GuaranteedUpdate runs the update
// function on the live object, Delete checks the preconditions) — the request is validated and
// answered as the real write would be, nothing is stored, no watch event, the resourceVersion
// stays. Unknown values fail validation (apimachinery meta/v1/validation ValidateDryRun → 422).

let server: FakeApiServer;
const readers = watchReaders();
closeAfterEach(() => server);

const T0 = Date.parse('2026-12-01T10:00:00Z');
const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';
const CMS = '/api/v1/namespaces/default/configmaps';

const deployment = (name: string, replicas = 1): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels: { app: name }, finalizers: name === 'held' ? ['example.com/hold'] : undefined },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});

async function seed(): Promise<void> {
  for (const name of ['web', 'api', 'held'])
    await call('POST', DEPLOYS, deployment(name), 'application/json', 'fieldManager=seed');
  await call('POST', CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } });
}

function call(
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
  query = '',
): Promise<WireResponse> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { 'Content-Type': contentType };
  }
  return request(`${server.url}${path}${query === '' ? '' : `?${query}`}`, init);
}

/** Everything a client could observe of the stored state. */
function state(): string {
  return JSON.stringify([server.resourceVersion, server.list('deployments.apps'), server.list('configmaps')]);
}

async function watchAll(): Promise<WatchReader[]> {
  const out: WatchReader[] = [];
  for (const path of [DEPLOYS, CMS]) {
    const reader = await WatchReader.open(
      `${server.url}${path}?watch=true&resourceVersion=${server.resourceVersion}`,
    );
    readers.push(reader);
    out.push(reader);
  }
  await server.waitForWatchers(2);
  return out;
}

/** A write verb: the request, and what its answer may differ in from the real one. */
interface Verb {
  name: string;
  request: [method: string, path: string, contentType?: string, query?: string];
  body?: () => unknown;
}

/** Sends `verb`'s request, as a dry run (`dryRun=All` added to its query) or for real. */
function send(verb: Verb, dryRun: boolean): Promise<WireResponse> {
  const [method, path, contentType, query] = verb.request;
  const queries = [query, dryRun ? 'dryRun=All' : undefined].filter((q) => q !== undefined);
  return call(method, path, verb.body?.(), contentType, queries.join('&'));
}

const VERBS: Verb[] = [
  { name: 'create', request: ['POST', DEPLOYS], body: () => deployment('new') },
  {
    name: 'update',
    request: ['PUT', `${DEPLOYS}/web`],
    body: () => ({
      ...server.get('deployments.apps', 'web'),
      spec: { ...(deployment('web', 3).spec as object) },
    }),
  },
  {
    name: 'merge patch',
    request: ['PATCH', `${DEPLOYS}/web`, 'application/merge-patch+json'],
    body: () => ({ metadata: { labels: { tier: 'x' } } }),
  },
  {
    name: 'json patch',
    request: ['PATCH', `${CMS}/c`, 'application/json-patch+json'],
    body: () => [{ op: 'add', path: '/data/b', value: '2' }],
  },
  {
    name: 'strategic merge patch',
    request: ['PATCH', `${DEPLOYS}/web`, 'application/strategic-merge-patch+json'],
    body: () => ({ spec: { template: { spec: { containers: [{ name: 'c', image: 'redis' }] } } } }),
  },
  {
    name: 'apply (update)',
    request: ['PATCH', `${DEPLOYS}/web`, 'application/apply-patch+yaml', 'fieldManager=ci&force=true'],
    body: () => deployment('web', 4),
  },
  {
    name: 'apply (create)',
    request: ['PATCH', `${DEPLOYS}/fresh`, 'application/apply-patch+yaml', 'fieldManager=ci'],
    body: () => deployment('fresh', 2),
  },
  {
    name: 'status update',
    request: ['PUT', `${DEPLOYS}/web/status`],
    body: () => ({ ...server.get('deployments.apps', 'web'), status: { replicas: 1 } }),
  },
  {
    name: 'status patch',
    request: ['PATCH', `${DEPLOYS}/web/status`, 'application/merge-patch+json'],
    body: () => ({ status: { readyReplicas: 1 } }),
  },
  {
    name: 'scale update',
    request: ['PUT', `${DEPLOYS}/web/scale`],
    body: () => ({
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'web' },
      spec: { replicas: 7 },
    }),
  },
  {
    name: 'scale patch',
    request: ['PATCH', `${DEPLOYS}/web/scale`, 'application/merge-patch+json'],
    body: () => ({ spec: { replicas: 8 } }),
  },
  { name: 'delete', request: ['DELETE', `${DEPLOYS}/api`] },
  { name: 'delete with finalizers', request: ['DELETE', `${DEPLOYS}/held`] },
  {
    name: 'delete (foreground)',
    request: ['DELETE', `${CMS}/c`],
    body: () => ({ propagationPolicy: 'Foreground' }),
  },
  { name: 'deletecollection', request: ['DELETE', CMS] },
  { name: 'create conflict (409)', request: ['POST', DEPLOYS], body: () => deployment('web') },
  {
    name: 'stale update (409)',
    request: ['PUT', `${CMS}/c`],
    body: () => ({ metadata: { name: 'c', resourceVersion: '1' } }),
  },
  {
    name: 'invalid scale (422)',
    request: ['PUT', `${DEPLOYS}/web/scale`],
    body: () => ({ spec: { replicas: -1 } }),
  },
];

/** The answer without what a dry run cannot know: the new resourceVersion, a create's uid. */
function comparable(res: WireResponse): unknown {
  const strip = (obj: unknown): unknown => {
    if (typeof obj !== 'object' || obj === null) return obj;
    const o = obj as Record<string, unknown>;
    if (Array.isArray(o.items)) return { ...o, metadata: {}, items: o.items.map(strip) };
    const meta = o.metadata as Record<string, unknown> | undefined;
    if (meta === undefined) return o;
    const { resourceVersion: _rv, uid: _uid, ...rest } = meta;
    return { ...o, metadata: rest };
  };
  return [res.status, strip(res.json)];
}

describe('dryRun=All', () => {
  test.each(VERBS.map((v) => [v.name, v] as const))(
    '%s: answered as the real write, nothing stored, no event, resourceVersion unchanged',
    async (_name, verb) => {
      server = await FakeApiServer.start({ clock: new FakeClock(T0) });
      await seed();
      const before = state();
      const watchers = await watchAll();
      const dry = await send(verb, true);
      expect(state()).toBe(before);
      for (const w of watchers) await w.expectQuiet(30);
      const real = await send(verb, false);
      expect(comparable(dry)).toEqual(comparable(real));
      if (real.status < 300 && verb.request[0] !== 'DELETE') expect(state()).not.toBe(before);
    },
  );

  test('a dry-run create has no resourceVersion; a dry-run update keeps the stored one', async () => {
    server = await FakeApiServer.start();
    await seed();
    const rv = server.get('deployments.apps', 'web').metadata.resourceVersion;
    const created = await call('POST', DEPLOYS, deployment('x'), 'application/json', 'dryRun=All');
    expect(created.status).toBe(201);
    expect(created.json.metadata).not.toHaveProperty('resourceVersion');
    expect(created.json.metadata).toHaveProperty('uid');
    const updated = await call(
      'PATCH',
      `${DEPLOYS}/web`,
      { spec: { replicas: 9 } },
      'application/merge-patch+json',
      'dryRun=All',
    );
    expect(updated.json).toMatchObject({
      metadata: { resourceVersion: rv, generation: 2 },
      spec: { replicas: 9 },
    });
  });

  test('an unknown dryRun value is 422 Invalid for every verb', async () => {
    server = await FakeApiServer.start();
    await seed();
    const cases: Array<[string, string, unknown, string, string]> = [
      ['POST', DEPLOYS, deployment('x'), 'application/json', 'CreateOptions'],
      ['PUT', `${CMS}/c`, { metadata: { name: 'c' } }, 'application/json', 'UpdateOptions'],
      ['PATCH', `${CMS}/c`, {}, 'application/merge-patch+json', 'PatchOptions'],
      [
        'PATCH',
        `${CMS}/c`,
        { apiVersion: 'v1', kind: 'ConfigMap' },
        'application/apply-patch+yaml',
        'PatchOptions',
      ],
      ['DELETE', `${CMS}/c`, undefined, 'application/json', 'DeleteOptions'],
    ];
    const before = state();
    for (const [method, path, body, type, kind] of cases) {
      const query = type.includes('apply') ? 'fieldManager=a&dryRun=Some' : 'dryRun=Some';
      const res = await call(method, path, body, type, query);
      expect([method, res.status, res.json.reason, res.json.message]).toEqual([
        method,
        422,
        'Invalid',
        `${kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Some"]: supported values: "All"`,
      ]);
    }
    expect(state()).toBe(before);
  });

  test('property: any sequence of dry-run writes leaves storage, events and resourceVersion as they were', async () => {
    server = await FakeApiServer.start({ clock: new FakeClock(T0) });
    await seed();
    const watchers = await watchAll();
    const before = state();
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...VERBS), { minLength: 1, maxLength: 6 }), async (verbs) => {
        for (const verb of verbs) {
          await send(verb, true);
        }
        return state() === before;
      }),
      { numRuns: 40 },
    );
    for (const w of watchers) await w.expectQuiet(30);
  });
});
