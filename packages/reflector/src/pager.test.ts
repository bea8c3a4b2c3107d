import { ErrorCodes, KinformerError, type KubeList } from '@kinformer/core';
import type { ListOptions } from './listerWatcher.js';
import { listAllPages } from './pager.js';

type Item = { metadata: { name: string } };

const items = (from: number, to: number): Item[] =>
  Array.from({ length: to - from }, (_, i) => ({ metadata: { name: `i${from + i}` } }));
const expired = (): KinformerError =>
  KinformerError.fromStatus({ code: 410, reason: 'Expired', message: 'continue token too old' });

function pagedServer(all: Item[], rv: string, calls: ListOptions[], failAt?: string) {
  return (options: ListOptions): Promise<KubeList<Item>> => {
    calls.push({ ...options });
    if (failAt !== undefined && options.continue === failAt) return Promise.reject(expired());
    const start = options.continue ? Number(options.continue) : 0;
    const end = options.limit ? Math.min(all.length, start + options.limit) : all.length;
    const metadata =
      end < all.length ? { resourceVersion: rv, continue: String(end) } : { resourceVersion: rv };
    return Promise.resolve({ kind: 'ItemList', apiVersion: 'v1', metadata, items: all.slice(start, end) });
  };
}

describe('listAllPages (client-go tools/pager)', () => {
  it('follows continue tokens, clearing resourceVersion and resourceVersionMatch, and merges pages under the first RV', async () => {
    const calls: ListOptions[] = [];
    const result = await listAllPages(
      pagedServer(items(0, 5), '42', calls),
      { resourceVersion: '40', resourceVersionMatch: 'NotOlderThan' },
      {
        signal: new AbortController().signal,
        pageSize: 2,
      },
    );
    expect(calls).toEqual([
      { resourceVersion: '40', resourceVersionMatch: 'NotOlderThan', limit: 2 },
      { resourceVersion: '', limit: 2, continue: '2' },
      { resourceVersion: '', limit: 2, continue: '4' },
    ]);
    expect(result.paginated).toBe(true);
    expect(result.requests).toBe(3);
    expect(result.list).toEqual({
      kind: 'ItemList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '42' },
      items: items(0, 5),
    });
  });

  it('returns a single page as the server sent it, unpaginated', async () => {
    const calls: ListOptions[] = [];
    const server = pagedServer(items(0, 3), '7', calls);
    const result = await listAllPages(
      server,
      { resourceVersion: '0' },
      { signal: new AbortController().signal },
    );
    expect(calls).toEqual([{ resourceVersion: '0', limit: 500 }]);
    expect(result).toMatchObject({ paginated: false, requests: 1 });
    expect(result.list.items).toHaveLength(3);
  });

  it('sends no limit when pageSize is 0', async () => {
    const calls: ListOptions[] = [];
    await listAllPages(
      pagedServer(items(0, 3), '7', calls),
      { resourceVersion: '5' },
      { signal: new AbortController().signal, pageSize: 0 },
    );
    expect(calls).toEqual([{ resourceVersion: '5' }]);
  });

  it('falls back to one full list at the requested RV when a continuation page expires', async () => {
    const calls: ListOptions[] = [];
    const result = await listAllPages(
      pagedServer(items(0, 5), '9', calls, '2'),
      { resourceVersion: '8', resourceVersionMatch: 'NotOlderThan' },
      {
        signal: new AbortController().signal,
        pageSize: 2,
      },
    );
    expect(calls).toEqual([
      { resourceVersion: '8', resourceVersionMatch: 'NotOlderThan', limit: 2 },
      { resourceVersion: '', limit: 2, continue: '2' },
      { resourceVersion: '8', resourceVersionMatch: 'NotOlderThan' },
    ]);
    expect(result.list.items).toHaveLength(5);
    expect(result.requests).toBe(3);
  });

  it('propagates an expired first page, and expired continuation pages when fullListIfExpired is off', async () => {
    const signal = new AbortController().signal;
    await expect(listAllPages(() => Promise.reject(expired()), {}, { signal })).rejects.toMatchObject({
      code: ErrorCodes.RESOURCE_EXPIRED,
    });
    const calls: ListOptions[] = [];
    await expect(
      listAllPages(
        pagedServer(items(0, 5), '9', calls, '2'),
        {},
        { signal, pageSize: 2, fullListIfExpired: false },
      ),
    ).rejects.toMatchObject({ code: ErrorCodes.RESOURCE_EXPIRED });
    expect(calls).toHaveLength(2);
  });

  it('stops between pages when the signal aborts, and rejects a body without items', async () => {
    const controller = new AbortController();
    const calls: ListOptions[] = [];
    const server = pagedServer(items(0, 5), '9', calls);
    const aborting = (options: ListOptions): Promise<KubeList<Item>> => {
      controller.abort();
      return server(options);
    };
    await expect(
      listAllPages(aborting, {}, { signal: controller.signal, pageSize: 2 }),
    ).rejects.toMatchObject({ code: ErrorCodes.ABORTED });
    expect(calls).toHaveLength(1);
    const broken = (): Promise<KubeList<Item>> => Promise.resolve({} as KubeList<Item>);
    await expect(listAllPages(broken, {}, { signal: new AbortController().signal })).rejects.toMatchObject({
      code: ErrorCodes.BAD_RESPONSE,
    });
  });
});
