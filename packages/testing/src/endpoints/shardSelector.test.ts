import { parseShardSelector, shardSelectorFromRanges, splitHashSpace } from '@kinformer/core';
import type { KubeObject } from '@kinformer/core';
import { FakeApiServer } from '../index.js';
import { serverPod } from '@kinformer/test-tools';
import { request, WatchReader, closeAfterEach } from '../wire.test.helpers.js';

// KEP-5866 `shardSelector` over real HTTP: parsing and 400s, filtering of LIST, WATCH and watch-list,
// the `shardInfo` echo, and the gate switch (see shardSelectorParam.ts for the apiserver sources).

let server: FakeApiServer;

closeAfterEach(() => server);

const LOWER = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
const lower = parseShardSelector(LOWER);
const q = (selector: string): string => `shardSelector=${encodeURIComponent(selector)}`;

interface PodList {
  metadata: { resourceVersion: string; continue?: string; shardInfo?: { selector?: string } };
  items: Array<KubeObject & { metadata: { name: string; uid: string } }>;
}

async function seed(
  n: number,
  options: Parameters<typeof FakeApiServer.start>[0] = {},
): Promise<KubeObject[]> {
  server = await FakeApiServer.start(options);
  const out: KubeObject[] = [];
  for (let i = 0; i < n; i++) out.push(server.create('pods', serverPod(`p-${String(i).padStart(3, '0')}`)));
  return out;
}

const names = (objs: readonly KubeObject[]): string[] => objs.map((o) => o.metadata!.name!).sort();

describe('shardSelector on LIST', () => {
  test('returns exactly the objects whose uid hash is in range and echoes shardInfo', async () => {
    const all = await seed(60);
    const res = await request(`${server.url}/api/v1/namespaces/default/pods?${q(LOWER)}`);
    expect(res.status).toBe(200);
    const list = res.json as unknown as PodList;
    expect(list.metadata.shardInfo).toEqual({ selector: LOWER });
    const expected = all.filter((o) => lower.matches(o));
    expect(expected.length).toBeGreaterThan(10);
    expect(expected.length).toBeLessThan(50);
    expect(names(list.items)).toEqual(names(expected));
  });

  test('pages of a sharded list carry shardInfo and together hold the range', async () => {
    const all = await seed(40);
    const seen: KubeObject[] = [];
    let cont = '';
    for (let pages = 0; pages < 40; pages++) {
      const res = await request(
        `${server.url}/api/v1/pods?limit=5&${q(LOWER)}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
      );
      const list = res.json as unknown as PodList;
      expect(list.metadata.shardInfo?.selector).toBe(LOWER);
      seen.push(...list.items);
      cont = list.metadata.continue ?? '';
      if (cont === '') break;
    }
    expect(names(seen)).toEqual(names(all.filter((o) => lower.matches(o))));
  });

  test('the echo is the normalised selector (spacing of the request does not matter)', async () => {
    await seed(3);
    const res = await request(
      `${server.url}/api/v1/pods?${q("shardRange(object.metadata.uid,'0x0000000000000000','0x8000000000000000')")}`,
    );
    expect((res.json as unknown as PodList).metadata.shardInfo).toEqual({ selector: LOWER });
  });

  test('filters by namespace hash when the field is the namespace', async () => {
    server = await FakeApiServer.start();
    const namespaces = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    for (const ns of namespaces) {
      server.create('namespaces', { metadata: { name: ns } });
      server.create('pods', serverPod(`${ns}/p`));
    }
    const [first] = splitHashSpace(2).map((r) => shardSelectorFromRanges('object.metadata.namespace', [r]));
    const res = await request(`${server.url}/api/v1/pods?${q(first!.toString())}`);
    const got = (res.json as unknown as PodList).items.map((i) => i.metadata.namespace).sort();
    expect(got).toEqual(namespaces.filter((ns) => first!.matches({ metadata: { namespace: ns } })));
  });

  test.each([
    [
      '  ',
      'invalid shard selector: empty shard selector is not allowed; omit the parameter for unfiltered lists',
    ],
    [
      "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
      'invalid shard selector: unsupported field path "object.metadata.name"; supported: object.metadata.uid, object.metadata.namespace',
    ],
    [
      "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
      'invalid shard selector: hexStart must be a 0x-prefixed 16-digit hex value, got "0x0" (did you mean "0x0000000000000000"?)',
    ],
  ])('answers 400 BadRequest for %j', async (selector, message) => {
    await seed(1);
    for (const url of [
      `${server.url}/api/v1/pods?${q(selector)}`,
      `${server.url}/api/v1/pods?watch=1&${q(selector)}`,
    ]) {
      const res = await request(url);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400, message });
    }
  });

  test('an empty parameter is no selector', async () => {
    const all = await seed(5);
    const list = (await request(`${server.url}/api/v1/pods?shardSelector=`)).json as unknown as PodList;
    expect(list.items).toHaveLength(all.length);
    expect(list.metadata.shardInfo).toBeUndefined();
  });

  test('with the gate off the parameter is ignored: the full list, no shardInfo, no 400', async () => {
    const all = await seed(20, { shardedListAndWatch: false });
    const res = await request(`${server.url}/api/v1/pods?${q(LOWER)}`);
    const list = res.json as unknown as PodList;
    expect(list.metadata.shardInfo).toBeUndefined();
    expect(list.items).toHaveLength(all.length);
    expect((await request(`${server.url}/api/v1/pods?${q('garbage')}`)).status).toBe(200);
    server.shardedListAndWatch = true;
    expect((await request(`${server.url}/api/v1/pods?${q('garbage')}`)).status).toBe(400);
  });
});

describe('shardSelector on WATCH and watch-list', () => {
  test('a watch delivers only in-range objects', async () => {
    await seed(0);
    const rv = server.resourceVersion;
    const watch = await WatchReader.open(
      `${server.url}/api/v1/pods?watch=1&resourceVersion=${rv}&${q(LOWER)}`,
    );
    try {
      const created: KubeObject[] = [];
      for (let i = 0; i < 30; i++) created.push(server.create('pods', serverPod(`w-${i}`)));
      const inRange = created.filter((o) => lower.matches(o));
      const events = await watch.take(inRange.length);
      expect(events.map((e) => e.type)).toEqual(inRange.map(() => 'ADDED'));
      expect(names(events.map((e) => e.object as KubeObject))).toEqual(names(inRange));
      await watch.expectQuiet(50);
    } finally {
      watch.close();
    }
  });

  test('a watch-list streams only in-range initial events, then the initial-events-end bookmark', async () => {
    const all = await seed(30);
    const inRange = all.filter((o) => lower.matches(o));
    const watch = await WatchReader.open(
      `${server.url}/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&${q(LOWER)}`,
    );
    try {
      const events = await watch.take(inRange.length + 1);
      expect(names(events.slice(0, -1).map((e) => e.object as KubeObject))).toEqual(names(inRange));
      expect(events.at(-1)!.type).toBe('BOOKMARK');
    } finally {
      watch.close();
    }
  });

  test('with the gate off a watch delivers every object', async () => {
    await seed(0, { shardedListAndWatch: false });
    const watch = await WatchReader.open(
      `${server.url}/api/v1/pods?watch=1&resourceVersion=${server.resourceVersion}&${q(LOWER)}`,
    );
    try {
      for (let i = 0; i < 10; i++) server.create('pods', serverPod(`w-${i}`));
      expect(await watch.take(10)).toHaveLength(10);
    } finally {
      watch.close();
    }
  });
});
