import { FakeClock } from '@kinformer/core/testing';
import { settle, serverPod, WIDGETS } from '@kinformer/test-tools';
import { FakeApiServer } from '../index.js';
import { decodeToken, request, closeAfterEach } from '../wire.test.helpers.js';

// LIST over real HTTP: the §10 checklist rows L1–L9 of apiserver-protocol.md, plus the
// resourceVersion/validation rules of §3.2–§3.5.

let server: FakeApiServer;

closeAfterEach(() => server);

async function withPods(
  names: Array<[string, string]>,
  options: Parameters<typeof FakeApiServer.start>[0] = {},
): Promise<void> {
  server = await FakeApiServer.start(options);
  for (const [ns, name] of names) server.create('pods', serverPod(`${ns}/${name}`));
}

interface PodList {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: Array<
    Record<string, unknown> & { metadata: { name: string; namespace: string; resourceVersion: string } }
  >;
}

const names = (list: PodList): string[] =>
  list.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`);

describe('L1: GET a collection', () => {
  test('answers a PodList at the current revision with items sorted by key and without kind/apiVersion', async () => {
    await withPods([
      ['kube-system', 'dns'],
      ['default', 'web-b'],
      ['default', 'web-a'],
    ]);
    server.bumpResourceVersion(3); // list RV is the global revision, larger than every item's
    const res = await request(`${server.url}/api/v1/pods`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('cache-control')).toBe('no-cache, private');
    expect(res.text.endsWith('}\n')).toBe(true);
    expect(res.text.startsWith('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":')).toBe(
      true,
    );
    const list = res.json as unknown as PodList;
    expect(list.metadata).toEqual({ resourceVersion: server.resourceVersion });
    expect(names(list)).toEqual(['default/web-a', 'default/web-b', 'kube-system/dns']);
    for (const item of list.items) {
      expect(item).not.toHaveProperty('kind');
      expect(item).not.toHaveProperty('apiVersion');
      expect(Number(item.metadata.resourceVersion)).toBeLessThan(Number(list.metadata.resourceVersion));
    }
  });

  test('answers "items":[] for an empty collection, and for a namespace that does not exist', async () => {
    server = await FakeApiServer.start();
    const all = await request(`${server.url}/api/v1/pods`);
    expect(all.text).toBe(
      `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"${server.resourceVersion}"},"items":[]}\n`,
    );
    const missing = await request(`${server.url}/api/v1/namespaces/nope/pods`);
    expect(missing.status).toBe(200);
    expect(missing.json.items).toEqual([]);
  });

  test('lists one namespace of a namespaced type and group types under /apis', async () => {
    server = await FakeApiServer.start();
    server.create('configmaps', { metadata: { name: 'a', namespace: 'ns1' } });
    server.create('configmaps', { metadata: { name: 'b', namespace: 'ns2' } });
    server.create('deployments.apps', { metadata: { name: 'd', namespace: 'ns1' }, spec: {} });
    const cms = await request(`${server.url}/api/v1/namespaces/ns2/configmaps`);
    expect((cms.json.items as PodList['items']).map((i) => i.metadata.name)).toEqual(['b']);
    const deps = await request(`${server.url}/apis/apps/v1/namespaces/ns1/deployments`);
    expect(deps.json.kind).toBe('DeploymentList');
    expect(deps.json.apiVersion).toBe('apps/v1');
    expect((deps.json.items as PodList['items']).map((i) => i.metadata.name)).toEqual(['d']);
  });

  test('items of custom resources carry kind and apiVersion, as unstructured lists do', async () => {
    server = await FakeApiServer.start({
      resources: [WIDGETS],
    });
    server.create('widgets.example.com', { metadata: { name: 'w' }, spec: { color: 'red' } });
    const res = await request(`${server.url}/apis/example.com/v1/namespaces/default/widgets`);
    expect(res.json.kind).toBe('WidgetList');
    expect((res.json.items as Array<Record<string, unknown>>)[0]).toMatchObject({
      kind: 'Widget',
      apiVersion: 'example.com/v1',
    });
  });

  test('pretty-prints for ?pretty=true', async () => {
    await withPods([['default', 'a']]);
    const res = await request(`${server.url}/api/v1/pods?pretty=true`);
    expect(res.text).toContain('\n  "kind": "PodList"');
    expect(res.text.endsWith('}')).toBe(true);
  });
});

describe('L2: resourceVersion=0', () => {
  test('ignores limit and returns every item without continue', async () => {
    await withPods([
      ['default', 'a'],
      ['default', 'b'],
      ['default', 'c'],
    ]);
    const list = (await request(`${server.url}/api/v1/pods?resourceVersion=0&limit=1`))
      .json as unknown as PodList;
    expect(names(list)).toEqual(['default/a', 'default/b', 'default/c']);
    expect(list.metadata).toEqual({ resourceVersion: server.resourceVersion });
  });

  test('with resourceVersionMatch=NotOlderThan also ignores limit', async () => {
    await withPods([
      ['default', 'a'],
      ['default', 'b'],
    ]);
    const list = (
      await request(`${server.url}/api/v1/pods?resourceVersion=0&resourceVersionMatch=NotOlderThan&limit=1`)
    ).json as unknown as PodList;
    expect(list.items).toHaveLength(2);
    expect(list.metadata.continue).toBeUndefined();
  });
});

describe('L3: pagination with limit', () => {
  test('returns one item, a continue token, remainingItemCount and the same list RV on every page', async () => {
    await withPods([
      ['default', 'a'],
      ['default', 'b'],
      ['default', 'c'],
    ]);
    const rv = server.resourceVersion;
    const p1 = (await request(`${server.url}/api/v1/pods?limit=1`)).json as unknown as PodList;
    expect(names(p1)).toEqual(['default/a']);
    expect(p1.metadata.resourceVersion).toBe(rv);
    expect(p1.metadata.remainingItemCount).toBe(2);
    expect(decodeToken(p1.metadata.continue!)).toEqual({
      v: 'meta.k8s.io/v1',
      rv: Number(rv),
      start: 'default/a\u0000',
    });
    expect(p1.metadata.continue).not.toMatch(/[=+/]/);
    const p2 = (await request(`${server.url}/api/v1/pods?limit=1&continue=${p1.metadata.continue}`))
      .json as unknown as PodList;
    expect(names(p2)).toEqual(['default/b']);
    expect(p2.metadata.resourceVersion).toBe(rv);
    expect(p2.metadata.remainingItemCount).toBe(1);
    const p3 = (await request(`${server.url}/api/v1/pods?limit=1&continue=${p2.metadata.continue}`))
      .json as unknown as PodList;
    expect(names(p3)).toEqual(['default/c']);
    expect(p3.metadata).toEqual({ resourceVersion: rv });
  });

  test('a namespaced list encodes the start key without the namespace', async () => {
    await withPods([
      ['default', 'a'],
      ['default', 'b'],
    ]);
    const p1 = (await request(`${server.url}/api/v1/namespaces/default/pods?limit=1`))
      .json as unknown as PodList;
    expect(decodeToken(p1.metadata.continue!).start).toBe('a\u0000');
    const p2 = (
      await request(`${server.url}/api/v1/namespaces/default/pods?limit=1&continue=${p1.metadata.continue}`)
    ).json as unknown as PodList;
    expect(names(p2)).toEqual(['default/b']);
  });

  test('continue pages show the snapshot at the token RV although the collection changed meanwhile', async () => {
    await withPods([
      ['default', 'a'],
      ['default', 'b'],
      ['default', 'c'],
      ['default', 'd'],
    ]);
    const p1 = (await request(`${server.url}/api/v1/pods?limit=2`)).json as unknown as PodList;
    const bBefore = server.get('pods', 'default/b');
    server.delete('pods', 'default/c');
    server.create('pods', serverPod('bb'));
    server.patch('pods', 'default/d', { metadata: { labels: { changed: 'yes' } } });
    const p2 = (await request(`${server.url}/api/v1/pods?limit=2&continue=${p1.metadata.continue}`))
      .json as unknown as PodList;
    expect(names(p2)).toEqual(['default/c', 'default/d']);
    expect(p2.items[1]!.metadata).not.toHaveProperty('labels');
    expect(p2.metadata.resourceVersion).toBe(p1.metadata.resourceVersion);
    expect(bBefore.metadata?.name).toBe('b');
    // A fresh list sees the new state.
    const now = (await request(`${server.url}/api/v1/pods`)).json as unknown as PodList;
    expect(names(now)).toEqual(['default/a', 'default/b', 'default/bb', 'default/d']);
  });

  test('with a selector, returns at most limit matches and no remainingItemCount', async () => {
    server = await FakeApiServer.start();
    for (const n of ['a', 'b', 'c', 'd', 'e'])
      server.create('pods', serverPod(n, { labels: { keep: n === 'c' ? 'no' : 'yes' } }));
    const p1 = (await request(`${server.url}/api/v1/pods?limit=2&labelSelector=keep%3Dyes`))
      .json as unknown as PodList;
    expect(names(p1)).toEqual(['default/a', 'default/b']);
    expect(p1.metadata.remainingItemCount).toBeUndefined();
    const p2 = (
      await request(
        `${server.url}/api/v1/pods?limit=2&labelSelector=keep%3Dyes&continue=${p1.metadata.continue}`,
      )
    ).json as unknown as PodList;
    expect(names(p2)).toEqual(['default/d', 'default/e']);
    expect(p2.metadata.continue).toBeUndefined();
  });
});

describe('L4: continue and compaction', () => {
  test('a continue token at or after compactedRV pages at the token RV', async () => {
    await withPods([
      ['default', 'a'],
      ['default', 'b'],
    ]);
    const p1 = (await request(`${server.url}/api/v1/pods?limit=1`)).json as unknown as PodList;
    server.create('pods', serverPod('c'));
    const p2 = (await request(`${server.url}/api/v1/pods?limit=1&continue=${p1.metadata.continue}`))
      .json as unknown as PodList;
    expect(names(p2)).toEqual(['default/b']);
    expect(p2.metadata.resourceVersion).toBe(p1.metadata.resourceVersion);
  });

  test('below compactedRV answers 410 Expired with a fresh rv:-1 token that continues at the current revision', async () => {
    await withPods([
      ['default', 'a'],
      ['default', 'b'],
      ['default', 'c'],
    ]);
    const p1 = (await request(`${server.url}/api/v1/pods?limit=1`)).json as unknown as PodList;
    server.faults.compact();
    server.create('pods', serverPod('bb'));
    const expired = await request(`${server.url}/api/v1/pods?limit=1&continue=${p1.metadata.continue}`);
    expect(expired.status).toBe(410);
    const token = (expired.json.metadata as { continue: string }).continue;
    expect(decodeToken(token)).toEqual({ v: 'meta.k8s.io/v1', rv: -1, start: 'default/a\u0000' });
    expect(expired.text).toBe(
      `{"kind":"Status","apiVersion":"v1","metadata":{"continue":"${token}"},"status":"Failure","message":"The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.","reason":"Expired","code":410}\n`,
    );
    const rest = (await request(`${server.url}/api/v1/pods?continue=${token}`)).json as unknown as PodList;
    expect(names(rest)).toEqual(['default/b', 'default/bb', 'default/c']);
    expect(rest.metadata.resourceVersion).toBe(server.resourceVersion);
  });

  test('history eviction makes old continue tokens expire too', async () => {
    await withPods(
      [
        ['default', 'a'],
        ['default', 'b'],
      ],
      { historySize: 2 },
    );
    const p1 = (await request(`${server.url}/api/v1/pods?limit=1`)).json as unknown as PodList;
    for (const n of ['x', 'y', 'z']) server.create('configmaps', { metadata: { name: n } });
    const res = await request(`${server.url}/api/v1/pods?limit=1&continue=${p1.metadata.continue}`);
    expect(res.status).toBe(410);
  });
});

describe('L5: resourceVersion with continue', () => {
  test('answers 400 "specifying resource version is not allowed when using continue"', async () => {
    await withPods([
      ['default', 'a'],
      ['default', 'b'],
    ]);
    const p1 = (await request(`${server.url}/api/v1/pods?limit=1`)).json as unknown as PodList;
    const res = await request(
      `${server.url}/api/v1/pods?limit=1&resourceVersion=5&continue=${p1.metadata.continue}`,
    );
    expect(res.status).toBe(400);
    expect(res.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"specifying resource version is not allowed when using continue","reason":"BadRequest","code":400}\n',
    );
    // resourceVersion=0 is allowed with continue.
    const ok = await request(
      `${server.url}/api/v1/pods?limit=1&resourceVersion=0&continue=${p1.metadata.continue}`,
    );
    expect(ok.status).toBe(200);
  });

  test('a continue token that does not decode is 400 invalid continue token', async () => {
    server = await FakeApiServer.start();
    const bad = await request(
      `${server.url}/api/v1/pods?continue=${Buffer.from('{"v":"meta.k8s.io/v1","rv":0,"start":"a"}').toString('base64url')}`,
    );
    expect(bad.status).toBe(400);
    expect(bad.json.message).toBe(
      'invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
    );
    const empty = await request(
      `${server.url}/api/v1/pods?continue=${Buffer.from('{"v":"meta.k8s.io/v1","rv":3,"start":""}').toString('base64url')}`,
    );
    expect(empty.json.message).toBe(
      'invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)',
    );
    const version = await request(
      `${server.url}/api/v1/pods?continue=${Buffer.from('{"v":"v9","rv":3,"start":"a"}').toString('base64url')}`,
    );
    expect(version.json.message).toBe(
      'invalid continue token: continue key is not valid: server does not recognize this encoded version v9',
    );
    const garbage = await request(`${server.url}/api/v1/pods?continue=!!!`);
    expect(garbage.status).toBe(400);
    expect(garbage.json.message).toMatch(/^invalid continue token: continue key is not valid: /);
  });
});

describe('L6: resourceVersionMatch validation', () => {
  test('resourceVersionMatch=Exact without resourceVersion is 422 Invalid with the exact Status', async () => {
    server = await FakeApiServer.start();
    const res = await request(`${server.url}/api/v1/pods?resourceVersionMatch=NotOlderThan`);
    expect(res.status).toBe(422);
    expect(res.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ListOptions.meta.k8s.io \\"\\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"ListOptions","causes":[{"reason":"FieldValueForbidden","message":"Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided","field":"resourceVersionMatch"}]},"code":422}\n',
    );
    const exact = await request(`${server.url}/api/v1/pods?resourceVersionMatch=Exact`);
    expect(exact.status).toBe(422);
  });

  test('Exact with resourceVersion=0 is 422', async () => {
    server = await FakeApiServer.start();
    const res = await request(`${server.url}/api/v1/pods?resourceVersionMatch=Exact&resourceVersion=0`);
    expect(res.status).toBe(422);
    expect(res.json.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
    );
  });

  test('an unknown match value is 422 NotSupported; several errors are joined in brackets', async () => {
    server = await FakeApiServer.start();
    const res = await request(`${server.url}/api/v1/pods?resourceVersionMatch=Foo&resourceVersion=1`);
    expect(res.json.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Foo": supported values: "Exact", "NotOlderThan", ""',
    );
    expect((res.json.details as { causes: unknown[] }).causes).toEqual([
      {
        reason: 'FieldValueNotSupported',
        message: 'Unsupported value: "Foo": supported values: "Exact", "NotOlderThan", ""',
        field: 'resourceVersionMatch',
      },
    ]);
    const two = await request(`${server.url}/api/v1/pods?resourceVersionMatch=Foo`);
    expect(two.json.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Unsupported value: "Foo": supported values: "Exact", "NotOlderThan", ""]',
    );
  });

  test('sendInitialEvents on a list is 422', async () => {
    server = await FakeApiServer.start();
    const res = await request(`${server.url}/api/v1/pods?sendInitialEvents=false`);
    expect(res.status).toBe(422);
    expect(res.json.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list',
    );
  });

  test('a resourceVersion or limit that does not parse is 400', async () => {
    server = await FakeApiServer.start();
    const rv = await request(`${server.url}/api/v1/pods?resourceVersion=abc`);
    expect(rv.status).toBe(400);
    expect(rv.json.message).toBe(
      'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
    );
    const negative = await request(`${server.url}/api/v1/pods?resourceVersion=-1`);
    expect(negative.status).toBe(400);
    const limit = await request(`${server.url}/api/v1/pods?limit=abc`);
    expect(limit.status).toBe(400);
    expect(limit.json.reason).toBe('BadRequest');
  });
});

describe('L7: resourceVersion in the future', () => {
  test('waits (3 s by default) then answers 504 Timeout with the ResourceVersionTooLarge cause and Retry-After: 1', async () => {
    const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
    server = await FakeApiServer.start({ clock });
    const rv = Number(server.resourceVersion) + 100;
    const pending = request(`${server.url}/api/v1/pods?resourceVersion=${rv}`);
    await server.waitFor(() => clock.pendingTimers() === 1);
    clock.advance(2_999);
    await settle(20);
    expect(server.requests[0]!.status).toBeUndefined();
    clock.advance(1);
    const res = await pending;
    expect(res.status).toBe(504);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.text).toBe(
      `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: Too large resource version: ${rv}, current: ${server.resourceVersion}","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}\n`,
    );
  });

  test('answers as soon as the revision reaches the requested one during the wait', async () => {
    server = await FakeApiServer.start({ freshnessWaitMs: 5_000 });
    const target = Number(server.resourceVersion) + 2;
    const pending = request(`${server.url}/api/v1/pods?resourceVersion=${target}`);
    await server.waitForRequest((r) => r.verb === 'list');
    server.create('pods', serverPod('a'));
    server.create('pods', serverPod('b'));
    const res = await pending;
    expect(res.status).toBe(200);
    expect((res.json as unknown as PodList).metadata.resourceVersion).toBe(String(target));
    expect(names(res.json as unknown as PodList)).toEqual(['default/a', 'default/b']);
  });
});

describe('L8: exact resourceVersion', () => {
  test('below compactedRV answers 410 Expired "The resourceVersion for the provided list is too old."', async () => {
    await withPods([['default', 'a']]);
    const old = server.resourceVersion;
    server.faults.compact();
    const res = await request(`${server.url}/api/v1/pods?resourceVersion=${old}&resourceVersionMatch=Exact`);
    expect(res.status).toBe(410);
    expect(res.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"The resourceVersion for the provided list is too old.","reason":"Expired","code":410}\n',
    );
  });

  test('within the history serves the state at exactly that revision', async () => {
    await withPods([['default', 'a']]);
    const at = server.resourceVersion;
    server.create('pods', serverPod('b'));
    server.patch('pods', 'default/a', { metadata: { labels: { v: '2' } } });
    const exact = (
      await request(`${server.url}/api/v1/pods?resourceVersion=${at}&resourceVersionMatch=Exact`)
    ).json as unknown as PodList;
    expect(exact.metadata.resourceVersion).toBe(at);
    expect(names(exact)).toEqual(['default/a']);
    expect(exact.items[0]!.metadata).not.toHaveProperty('labels');
    // Legacy exact: resourceVersion=N with a limit and no match.
    const legacy = (await request(`${server.url}/api/v1/pods?resourceVersion=${at}&limit=10`))
      .json as unknown as PodList;
    expect(legacy.metadata.resourceVersion).toBe(at);
    expect(names(legacy)).toEqual(['default/a']);
    // Not older than N (no limit): the current state.
    const notOlder = (await request(`${server.url}/api/v1/pods?resourceVersion=${at}`))
      .json as unknown as PodList;
    expect(notOlder.metadata.resourceVersion).toBe(server.resourceVersion);
    expect(names(notOlder)).toEqual(['default/a', 'default/b']);
  });
});

describe('L9: label and field selectors', () => {
  beforeEach(async () => {
    server = await FakeApiServer.start();
    server.create(
      'pods',
      serverPod('web-1', {
        labels: { app: 'web', env: 'prod' },
        spec: { nodeName: 'n1' },
        status: { phase: 'Running' },
      }),
    );
    server.create(
      'pods',
      serverPod('web-2', {
        labels: { app: 'web', env: 'staging', canary: 'true' },
        spec: { nodeName: 'n2' },
        status: { phase: 'Pending' },
      }),
    );
    server.create(
      'pods',
      serverPod('other/db-1', {
        labels: { app: 'db', env: 'prod' },
        spec: { nodeName: 'n1' },
        status: { phase: 'Running' },
      }),
    );
  });

  const select = async (query: string): Promise<string[]> => {
    const res = await request(`${server.url}/api/v1/pods?${query}`);
    expect(res.status).toBe(200);
    return names(res.json as unknown as PodList);
  };

  test('filters by label equality, inequality, set operators and existence', async () => {
    expect(await select('labelSelector=app%3Dweb')).toEqual(['default/web-1', 'default/web-2']);
    expect(await select('labelSelector=app%21%3Dweb')).toEqual(['other/db-1']);
    expect(
      await select(`labelSelector=${encodeURIComponent('app=web,env in (prod,staging),!canary')}`),
    ).toEqual(['default/web-1']);
    expect(await select(`labelSelector=${encodeURIComponent('env notin (staging)')}`)).toEqual([
      'default/web-1',
      'other/db-1',
    ]);
    expect(await select('labelSelector=canary')).toEqual(['default/web-2']);
  });

  test('filters by field selectors of pods, and metadata.namespace narrows a cluster-wide list', async () => {
    expect(await select('fieldSelector=spec.nodeName%3Dn1')).toEqual(['default/web-1', 'other/db-1']);
    expect(await select('fieldSelector=status.phase%21%3DRunning')).toEqual(['default/web-2']);
    expect(await select('fieldSelector=metadata.namespace%3Dother')).toEqual(['other/db-1']);
    expect(
      await select('fieldSelector=metadata.name%3Dweb-2,spec.nodeName%3Dn2&labelSelector=app%3Dweb'),
    ).toEqual(['default/web-2']);
    expect(await select('fieldSelector=spec.host%3Dn2')).toEqual(['default/web-2']);
  });

  test('an unsupported field label is 400 with the kind-specific message', async () => {
    const podRes = await request(`${server.url}/api/v1/pods?fieldSelector=spec.foo%3Dx`);
    expect(podRes.status).toBe(400);
    expect(podRes.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"field label not supported: spec.foo","reason":"BadRequest","code":400}\n',
    );
    const cm = await request(`${server.url}/api/v1/configmaps?fieldSelector=data.x%3Dy`);
    expect(cm.status).toBe(400);
    expect(cm.json.message).toBe(
      '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
    const node = await request(`${server.url}/api/v1/nodes?fieldSelector=metadata.namespace%3Dx`);
    expect(node.json.message).toBe('field label not supported: metadata.namespace');
  });

  test('selector syntax errors are 400', async () => {
    const field = await request(`${server.url}/api/v1/pods?fieldSelector=spec.nodeName`);
    expect(field.status).toBe(400);
    expect(field.json.message).toBe("invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'");
    const label = await request(`${server.url}/api/v1/pods?labelSelector=${encodeURIComponent('app in (')}`);
    expect(label.status).toBe(400);
    expect(label.json.reason).toBe('BadRequest');
  });

  test('nodes select on spec.unschedulable and custom resources on their selectable fields', async () => {
    server.create('nodes', { metadata: { name: 'n1' }, spec: { unschedulable: true } });
    server.create('nodes', { metadata: { name: 'n2' }, spec: {} });
    const nodes = await request(`${server.url}/api/v1/nodes?fieldSelector=spec.unschedulable%3Dfalse`);
    expect((nodes.json.items as PodList['items']).map((i) => i.metadata.name)).toEqual(['n2']);
    server.registerResource({ ...WIDGETS, selectableFields: ['.spec.color'] });
    server.create('widgets.example.com', { metadata: { name: 'red' }, spec: { color: 'red' } });
    server.create('widgets.example.com', { metadata: { name: 'blue' }, spec: { color: 'blue' } });
    const widgets = await request(
      `${server.url}/apis/example.com/v1/widgets?fieldSelector=spec.color%3Dblue`,
    );
    expect((widgets.json.items as PodList['items']).map((i) => i.metadata.name)).toEqual(['blue']);
  });
});

describe('metadata-only lists (§8)', () => {
  test('Accept as=PartialObjectMetadataList answers a PartialObjectMetadataList whose items carry only metadata', async () => {
    await withPods([['default', 'a']]);
    const res = await request(`${server.url}/api/v1/pods`, {
      headers: {
        Accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
      },
    });
    expect(res.status).toBe(200);
    expect(res.json.kind).toBe('PartialObjectMetadataList');
    expect(res.json.apiVersion).toBe('meta.k8s.io/v1');
    const item = (res.json.items as Array<Record<string, unknown>>)[0]!;
    expect(Object.keys(item)).toEqual(['kind', 'apiVersion', 'metadata']);
    expect(item).toMatchObject({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { name: 'a', namespace: 'default' },
    });
  });

  test('asking for PartialObjectMetadata (not the list form) on a list is 406; Table is served; protobuf alone is 406', async () => {
    server = await FakeApiServer.start();
    const res = await request(`${server.url}/api/v1/pods`, {
      headers: { Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' },
    });
    expect(res.status).toBe(406);
    expect(res.json.reason).toBe('NotAcceptable');
    const table = await request(`${server.url}/api/v1/pods`, {
      headers: { Accept: 'application/json;as=Table;g=meta.k8s.io;v=v1,application/json' },
    });
    expect(table.json.kind).toBe('Table');
    const proto = await request(`${server.url}/api/v1/pods`, {
      headers: { Accept: 'application/vnd.kubernetes.protobuf' },
    });
    expect(proto.status).toBe(406);
  });
});

describe('Table selectors', () => {
  test("a Deployment's Selector column is FormatLabelSelector's form: requirements sorted by key", async () => {
    server = await FakeApiServer.start();
    const labels = { tier: 'web', app: 'shop' };
    server.create('deployments.apps', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        selector: {
          matchLabels: labels,
          matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['qa', 'dev'] }],
        },
        template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    } as never);
    const res = await request(`${server.url}/apis/apps/v1/namespaces/default/deployments`, {
      headers: { Accept: 'application/json;as=Table;g=meta.k8s.io;v=v1' },
    });
    const table = res.json as unknown as {
      columnDefinitions: Array<{ name: string }>;
      rows: Array<{ cells: unknown[] }>;
    };
    const at = table.columnDefinitions.findIndex((c) => c.name === 'Selector');
    expect(at).toBeGreaterThan(0);
    expect(table.rows[0]!.cells[at]).toBe('app=shop,env notin (dev,qa),tier=web');
  });
});
