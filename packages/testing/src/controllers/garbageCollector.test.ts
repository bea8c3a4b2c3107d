import { FakeApiServer } from '../index.js';
import {
  request,
  send,
  WatchReader,
  type WatchLine,
  watchReaders,
  closeAfterEach,
} from '../wire.test.helpers.js';

// The garbage collector (kube-controller-manager pkg/controller/garbagecollector) with the
// registry's deletion finalizers (registry/generic/registry/store.go
// deletionFinalizersForGarbageCollection): background deletes dependents after their owner,
// foreground deletes them first (the owner waits with the foregroundDeletion finalizer), orphan
// removes their owner references (the orphan finalizer). Other finalizers hold an object.

let server: FakeApiServer;
const readers = watchReaders();
closeAfterEach(() => server);

const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';
const RSS = '/apis/apps/v1/namespaces/default/replicasets';
const PODS = '/api/v1/namespaces/default/pods';

type Meta = { uid: string; name: string; resourceVersion: string };
const owned = (
  owner: { metadata: unknown },
  block = true,
): {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: boolean;
  blockOwnerDeletion: boolean;
} => {
  const m = owner.metadata as Meta;
  return {
    apiVersion: 'apps/v1',
    kind: 'Owner',
    name: m.name,
    uid: m.uid,
    controller: true,
    blockOwnerDeletion: block,
  };
};

/** deployment → replicaset → 2 pods, all owned through ownerReferences. */
function tree(finalizerOnPod = false): void {
  const d = server.create('deployments.apps', { metadata: { name: 'd' }, spec: { replicas: 2 } } as never);
  const rs = server.create('replicasets.apps', {
    metadata: { name: 'rs', ownerReferences: [owned(d)] },
    spec: {},
  } as never);
  for (const name of ['p1', 'p2'])
    server.create('pods', {
      metadata: {
        name,
        ownerReferences: [owned(rs)],
        ...(finalizerOnPod && name === 'p1' ? { finalizers: ['example.com/hold'] } : {}),
      },
      spec: { containers: [] },
    } as never);
}

async function watchEvents(): Promise<() => Promise<Array<[string, string, string, string]>>> {
  const rv = server.resourceVersion;
  const ws: WatchReader[] = [];
  for (const path of [DEPLOYS, RSS, PODS]) {
    const w = await WatchReader.open(`${server.url}${path}?watch=true&resourceVersion=${rv}`);
    readers.push(w);
    ws.push(w);
  }
  await server.waitForWatchers(3);
  return async () => {
    const all: WatchLine[] = [];
    for (const w of ws)
      for (;;) {
        const line = await w.nextLine(60).catch(() => undefined);
        if (line === undefined || line === null) break;
        all.push(JSON.parse(line) as WatchLine);
      }
    return all
      .map((e): [string, string, string, string] => {
        const m = e.object.metadata as Meta & { finalizers?: string[] };
        return [m.resourceVersion, e.type, m.name, (m.finalizers ?? []).join(',')];
      })
      .sort((a, b) => Number(a[0]) - Number(b[0]));
  };
}

const names = (events: Array<[string, string, string, string]>): string[] =>
  events.map((e) => `${e[1]} ${e[2]}${e[3] ? ` [${e[3]}]` : ''}`);

describe('garbage collector', () => {
  test('background (the default): the owner goes, then its dependents, down the tree', async () => {
    server = await FakeApiServer.start();
    tree();
    const events = await watchEvents();
    const res = await request(`${server.url}${DEPLOYS}/d`, { method: 'DELETE' });
    expect(res.json).toMatchObject({ kind: 'Status', status: 'Success' });
    // A pod DELETE is a MODIFIED (deletionTimestamp) before the DELETED (pod/strategy.go CheckGracefulDelete).
    expect(names(await events())).toEqual([
      'DELETED d',
      'DELETED rs',
      'MODIFIED p1',
      'DELETED p1',
      'MODIFIED p2',
      'DELETED p2',
    ]);
    expect([server.list('replicasets.apps'), server.list('pods')]).toEqual([[], []]);
  });

  test('foreground: the owner waits (deletionTimestamp, foregroundDeletion) until its blocking dependents are gone', async () => {
    server = await FakeApiServer.start();
    tree(true);
    const events = await watchEvents();
    const res = await send(`${server.url}${DEPLOYS}/d`, 'DELETE', { propagationPolicy: 'Foreground' });
    expect(res.json.metadata).toMatchObject({ finalizers: ['foregroundDeletion'] });
    expect(res.json.metadata).toHaveProperty('deletionTimestamp');
    // p1 has a finalizer of its own: it waits, and so do the replicaset and the deployment.
    expect(names(await events())).toEqual([
      'MODIFIED d [foregroundDeletion]',
      'MODIFIED rs [foregroundDeletion]',
      'MODIFIED p1 [example.com/hold]',
      'MODIFIED p2',
      'DELETED p2',
    ]);
    expect(server.list('deployments.apps').map((o) => o.metadata.name)).toEqual(['d']);
    server.patch('pods', 'p1', { metadata: { finalizers: null } });
    // (An update that empties the finalizers deletes the stored object: its last state is the event's.)
    expect(names(await events())).toEqual([
      'DELETED p1 [example.com/hold]',
      'DELETED rs [foregroundDeletion]',
      'DELETED d [foregroundDeletion]',
    ]);
    expect(server.list('deployments.apps')).toEqual([]);
  });

  test('foreground does not wait for dependents without blockOwnerDeletion', async () => {
    server = await FakeApiServer.start();
    const d = server.create('deployments.apps', { metadata: { name: 'd' } } as never);
    server.create('pods', {
      metadata: { name: 'p', ownerReferences: [owned(d, false)], finalizers: ['example.com/hold'] },
      spec: { containers: [] },
    } as never);
    server.delete('deployments.apps', 'd', { propagationPolicy: 'Foreground' });
    expect(server.list('deployments.apps')).toEqual([]);
    expect(server.get('pods', 'p').metadata).toHaveProperty('deletionTimestamp');
  });

  test('orphan: dependents lose the owner reference and stay; the owner goes', async () => {
    server = await FakeApiServer.start();
    tree();
    const events = await watchEvents();
    const res = await request(`${server.url}${RSS}/rs?propagationPolicy=Orphan`, { method: 'DELETE' });
    expect(res.json.metadata).toMatchObject({ finalizers: ['orphan'] });
    expect(names(await events())).toEqual([
      'MODIFIED rs [orphan]',
      'MODIFIED p1',
      'MODIFIED p2',
      'DELETED rs [orphan]',
    ]);
    expect(server.list('pods').map((p) => [p.metadata.name, p.metadata.ownerReferences])).toEqual([
      ['p1', undefined],
      ['p2', undefined],
    ]);
  });

  test('a dependent with another owner that still exists only loses the reference to the deleted one', async () => {
    server = await FakeApiServer.start();
    const a = server.create('configmaps', { metadata: { name: 'a' } });
    const b = server.create('configmaps', { metadata: { name: 'b' } });
    server.create('secrets', { metadata: { name: 's', ownerReferences: [owned(a), owned(b)] } });
    server.delete('configmaps', 'a');
    expect(server.get('secrets', 's').metadata.ownerReferences).toEqual([owned(b)]);
    server.delete('configmaps', 'b');
    expect(server.list('secrets')).toEqual([]);
  });

  test('an owner held by a finalizer keeps its dependents until the finalizer is removed', async () => {
    server = await FakeApiServer.start();
    const owner = server.create('configmaps', { metadata: { name: 'o', finalizers: ['example.com/x'] } });
    server.create('secrets', { metadata: { name: 's', ownerReferences: [owned(owner)] } });
    server.delete('configmaps', 'o');
    expect(server.list('secrets')).toHaveLength(1);
    server.patch('configmaps', 'o', { metadata: { finalizers: null } });
    expect([server.list('configmaps'), server.list('secrets')]).toEqual([[], []]);
  });

  test('an unknown propagationPolicy is 422; garbageCollector: false leaves dependents alone', async () => {
    server = await FakeApiServer.start({ garbageCollector: false });
    tree();
    const bad = await send(`${server.url}${DEPLOYS}/d`, 'DELETE', { propagationPolicy: 'Sideways' });
    expect([bad.status, bad.json.message]).toEqual([
      422,
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"',
    ]);
    server.delete('deployments.apps', 'd');
    expect(server.list('replicasets.apps')).toHaveLength(1);
  });
});
