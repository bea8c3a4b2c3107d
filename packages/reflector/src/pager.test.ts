import { ErrorCodes, KinformerError, type KubeList } from '@kinformer/core';
import type { ListOptions } from './listerWatcher.js';
import fc from 'fast-check';
import { listAllPages, type ListFunc, type PagedList } from './pager.js';

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

/** `listAllPages` over {@link pagedServer} (5 items at list RV `rv`, the page after `failAt` expired). */
async function listPaged(
  rv: string,
  options: ListOptions,
  pager: { pageSize?: number; failAt?: string; count?: number },
): Promise<{ calls: ListOptions[]; result: PagedList<Item> }> {
  const calls: ListOptions[] = [];
  const server = pagedServer(items(0, pager.count ?? 5), rv, calls, pager.failAt);
  const signal = new AbortController().signal;
  const result = await listAllPages(
    server,
    options,
    pager.pageSize === undefined ? { signal } : { signal, pageSize: pager.pageSize },
  );
  return { calls, result };
}

describe('listAllPages (client-go tools/pager)', () => {
  it('follows continue tokens, clearing resourceVersion and resourceVersionMatch, and merges pages under the first RV', async () => {
    const { calls, result } = await listPaged(
      '42',
      { resourceVersion: '40', resourceVersionMatch: 'NotOlderThan' },
      { pageSize: 2 },
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
    const { calls, result } = await listPaged('7', { resourceVersion: '0' }, { count: 3 });
    expect(calls).toEqual([{ resourceVersion: '0', limit: 500 }]);
    expect(result).toMatchObject({ paginated: false, requests: 1 });
    expect(result.list.items).toHaveLength(3);
  });

  it('sends no limit when pageSize is 0', async () => {
    const { calls } = await listPaged('7', { resourceVersion: '5' }, { count: 3, pageSize: 0 });
    expect(calls).toEqual([{ resourceVersion: '5' }]);
  });

  it('falls back to one full list at the requested RV when a continuation page expires', async () => {
    const { calls, result } = await listPaged(
      '9',
      { resourceVersion: '8', resourceVersionMatch: 'NotOlderThan' },
      { pageSize: 2, failAt: '2' },
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

describe('listAllPages: the next page asked for while this one arrives (onListMeta)', () => {
  /** A page request the test settles by hand; `hint` is what its metadata announces early. */
  interface Call {
    options: ListOptions;
    signal: AbortSignal;
    announce: (token: string) => void;
    resolve: (list: KubeList<Item>) => void;
    reject: (err: Error) => void;
    settled: boolean;
  }

  function manualServer(): { list: ListFunc<Item>; calls: Call[]; open: () => number } {
    const calls: Call[] = [];
    const list: ListFunc<Item> = (options, context) =>
      new Promise<KubeList<Item>>((resolve, reject) => {
        const call: Call = {
          options: { ...options },
          signal: context.signal,
          announce: (token) => context.onListMeta?.({ resourceVersion: '9', continue: token }),
          resolve: (l) => {
            call.settled = true;
            resolve(l);
          },
          reject: (e) => {
            call.settled = true;
            reject(e);
          },
          settled: false,
        };
        context.signal.addEventListener('abort', () => call.reject(new Error('aborted')), { once: true });
        calls.push(call);
      });
    return { list, calls, open: () => calls.filter((c) => !c.settled).length };
  }

  const page = (from: number, to: number, cont?: string): KubeList<Item> => ({
    metadata: cont === undefined ? { resourceVersion: '9' } : { resourceVersion: '9', continue: cont },
    items: items(from, to),
  });
  const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

  it('asks for pages 2 and 3 as tokens are announced, before page 1 has arrived, and merges in order', async () => {
    const server = manualServer();
    const done = listAllPages(
      server.list,
      { resourceVersion: '0' },
      { signal: new AbortController().signal },
    );
    await tick();
    expect(server.calls).toHaveLength(1);
    server.calls[0]!.announce('a');
    await tick();
    expect(server.calls).toHaveLength(2);
    expect(server.calls[1]!.options).toEqual({ resourceVersion: '', limit: 500, continue: 'a' });
    // Page 2 announces its own token while page 1 is still awaited: page 3 goes out (two ahead).
    server.calls[1]!.announce('b');
    await tick();
    expect(server.calls).toHaveLength(3);
    expect(server.calls[2]!.options.continue).toBe('b');
    // Page 3's token would be a third page ahead: not yet.
    server.calls[2]!.announce('c');
    await tick();
    expect(server.calls).toHaveLength(3);
    server.calls[0]!.resolve(page(0, 2, 'a'));
    await tick();
    // Page 2 is now the one awaited and page 3's token is known: page 4 goes out at once.
    expect(server.calls).toHaveLength(4);
    expect(server.calls[3]!.options.continue).toBe('c');
    server.calls[1]!.resolve(page(2, 4, 'b'));
    server.calls[2]!.resolve(page(4, 5, 'c'));
    server.calls[3]!.resolve(page(5, 6));
    const result = await done;
    expect(result.list.items).toEqual(items(0, 6));
    expect(result.requests).toBe(4);
    expect(server.open()).toBe(0);
  });

  it('a wrong token cancels every page asked for after it', async () => {
    const server = manualServer();
    const done = listAllPages(server.list, {}, { signal: new AbortController().signal });
    await tick();
    server.calls[0]!.announce('wrong');
    await tick();
    server.calls[1]!.announce('x');
    await tick();
    expect(server.calls).toHaveLength(3);
    server.calls[0]!.resolve(page(0, 1, 'right'));
    await tick();
    await tick();
    expect(server.calls[1]!.signal.aborted).toBe(true);
    expect(server.calls[2]!.signal.aborted).toBe(true);
    expect(server.calls[3]!.options.continue).toBe('right');
    server.calls[3]!.resolve(page(1, 2));
    expect((await done).list.items).toEqual(items(0, 2));
    expect(server.open()).toBe(0);
  });

  it('a token announced by a page as it is cancelled starts nothing', async () => {
    const server = manualServer();
    // Page 2's metadata comes in with its cancellation, before its request has settled.
    const list: ListFunc<Item> = (options, context) => {
      if (options.continue === 'wrong')
        context.signal.addEventListener('abort', () => context.onListMeta?.({ continue: 'x' }), {
          once: true,
        });
      return server.list(options, context);
    };
    const done = listAllPages(list, {}, { signal: new AbortController().signal });
    await tick();
    server.calls[0]!.announce('wrong');
    await tick();
    server.calls[0]!.resolve(page(0, 1, 'right'));
    await tick();
    await tick();
    expect(server.calls.map((c) => c.options.continue)).toEqual([undefined, 'wrong', 'right']);
    server.calls[2]!.resolve(page(1, 2));
    expect((await done).list.items).toEqual(items(0, 2));
    expect(server.open()).toBe(0);
  });

  it('takes a token announced before list() has returned its promise (a synchronous ListerWatcher)', async () => {
    const calls: Array<string | undefined> = [];
    const list: ListFunc<Item> = (options, context) => {
      calls.push(options.continue);
      const k = options.continue === undefined ? 0 : Number(options.continue);
      const cont = k < 2 ? String(k + 1) : undefined;
      if (cont !== undefined) context.onListMeta?.({ continue: cont });
      return Promise.resolve(page(k, k + 1, cont));
    };
    const result = await listAllPages(list, {}, { signal: new AbortController().signal });
    expect(result.list.items).toEqual(items(0, 3));
    expect(calls).toEqual([undefined, '1', '2']);
    expect(result.requests).toBe(3);
  });

  it('ignores a token announced after its page has arrived (no request that nobody awaits)', async () => {
    const server = manualServer();
    const done = listAllPages(server.list, {}, { signal: new AbortController().signal });
    await tick();
    server.calls[0]!.resolve(page(0, 1, 'a'));
    await tick();
    expect(server.calls).toHaveLength(2);
    server.calls[0]!.announce('a');
    server.calls[1]!.resolve(page(1, 2));
    await tick();
    server.calls[1]!.announce('b');
    expect((await done).list.items).toEqual(items(0, 2));
    await tick();
    expect(server.calls).toHaveLength(2);
    expect(server.open()).toBe(0);
  });

  it('cancels a page asked for with a token the page did not end with, and asks again', async () => {
    const server = manualServer();
    const done = listAllPages(server.list, {}, { signal: new AbortController().signal });
    await tick();
    server.calls[0]!.announce('wrong');
    server.calls[0]!.resolve(page(0, 2, 'right'));
    await tick();
    expect(server.calls[1]!.signal.aborted).toBe(true);
    expect(server.calls[2]!.options.continue).toBe('right');
    server.calls[2]!.resolve(page(2, 3));
    expect((await done).list.items).toEqual(items(0, 3));
    expect(server.open()).toBe(0);
  });

  it('cancels the page ahead and waits for it when the current page fails', async () => {
    const server = manualServer();
    const done = listAllPages(server.list, {}, { signal: new AbortController().signal });
    await tick();
    server.calls[0]!.announce('a');
    server.calls[0]!.reject(new KinformerError(ErrorCodes.CONNECTION, 'reset'));
    await expect(done).rejects.toMatchObject({ code: ErrorCodes.CONNECTION });
    expect(server.calls[1]!.signal.aborted).toBe(true);
    expect(server.open()).toBe(0);
  });

  it('falls back to one full list when a continuation page expires, cancelling the page ahead', async () => {
    const server = manualServer();
    const done = listAllPages(
      server.list,
      { resourceVersion: '5' },
      { signal: new AbortController().signal },
    );
    await tick();
    server.calls[0]!.resolve(page(0, 2, 'a'));
    await tick();
    server.calls[1]!.announce('b');
    await tick();
    expect(server.calls).toHaveLength(3);
    server.calls[1]!.reject(expired());
    await tick();
    await tick();
    expect(server.calls[2]!.signal.aborted).toBe(true);
    expect(server.calls[3]!.options).toEqual({ resourceVersion: '5' });
    server.calls[3]!.resolve(page(0, 4));
    expect((await done).list.items).toEqual(items(0, 4));
    expect(server.open()).toBe(0);
  });

  it('an abort cancels every request', async () => {
    const server = manualServer();
    const controller = new AbortController();
    const done = listAllPages(server.list, {}, { signal: controller.signal });
    await tick();
    server.calls[0]!.announce('a');
    controller.abort();
    await expect(done).rejects.toThrow();
    expect(server.calls.every((c) => c.signal.aborted)).toBe(true);
    expect(server.open()).toBe(0);
  });

  it('prefetch: false keeps one request at a time', async () => {
    const server = manualServer();
    const done = listAllPages(server.list, {}, { signal: new AbortController().signal, prefetch: false });
    await tick();
    server.calls[0]!.announce('a');
    await tick();
    expect(server.calls).toHaveLength(1);
    server.calls[0]!.resolve(page(0, 1, 'a'));
    await tick();
    server.calls[1]!.resolve(page(1, 2));
    expect((await done).list.items).toEqual(items(0, 2));
  });

  it('property: whatever the hints and the order requests settle in, the list is the sequential one and at most three requests are open', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            size: fc.integer({ min: 0, max: 3 }),
            hint: fc.constantFrom('none', 'right', 'wrong', 'late'),
          }),
          {
            minLength: 1,
            maxLength: 8,
          },
        ),
        fc.array(fc.boolean(), { maxLength: 40 }),
        async (pages, coin) => {
          const server = manualServer();
          let maxOpen = 0;
          const offsets: number[] = [];
          let at = 0;
          for (const p of pages) {
            offsets.push(at);
            at += p.size;
          }
          const token = (k: number): string => `t${k}`;
          const pageOf = (options: ListOptions): number =>
            options.continue === undefined ? 0 : Number(options.continue.slice(1));
          const done = listAllPages(server.list, {}, { signal: new AbortController().signal });
          let flips = 0;
          const handled = new Set<Call>();
          const announced = new Set<Call>();
          for (let step = 0; step < 200; step++) {
            await tick();
            maxOpen = Math.max(maxOpen, server.open());
            const open = server.calls.filter((c) => !c.settled && !handled.has(c));
            if (open.length === 0) break;
            // Settle or announce the oldest or the newest open request, as the coin says.
            const call =
              coin[flips++ % Math.max(1, coin.length)] === true ? open[open.length - 1]! : open[0]!;
            const k = pageOf(call.options);
            const spec = pages[k];
            if (spec === undefined) {
              // Asked for with the wrong token: left open, the pager must cancel it.
              handled.add(call);
              continue;
            }
            const last = k === pages.length - 1;
            const cont = last ? undefined : token(k + 1);
            if (!announced.has(call) && (spec.hint === 'right' || spec.hint === 'wrong')) {
              // Announcing is a step of its own: other requests may move before this one settles.
              announced.add(call);
              if (spec.hint === 'wrong') call.announce('t999');
              else if (!last) call.announce(cont!);
              continue;
            }
            handled.add(call);
            call.resolve(page(offsets[k]!, offsets[k]! + spec.size, cont));
            if (!last && spec.hint === 'late') call.announce(cont!);
          }
          const result = await done;
          expect(result.list.items).toEqual(items(0, at));
          expect(maxOpen).toBeLessThanOrEqual(3);
          expect(server.open()).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });
});
