import { ErrorCodes, KinformerError, type KubeList, type ListMeta } from '@kinformer/core';
import { abortError } from '@kinformer/core/internal';
import { isExpiredError } from '@kinformer/core/internal';
import type { ListOptions, RequestContext } from './listerWatcher.js';

/** client-go's `pager.PageSize`: the default LIST chunk size. */
export const DEFAULT_PAGE_SIZE = 500;

/**
 * Pages asked for ahead of the one being awaited, at most: two, so that the server builds the next
 * pages while this one is decoded even when a page takes it longer than it takes the client.
 */
const PAGES_AHEAD = 2;

/** One LIST call: the shape of {@link ListerWatcher.list}. */
export type ListFunc<T> = (options: ListOptions, context: RequestContext) => Promise<KubeList<T>>;

/** Options of {@link listAllPages}. */
export interface ListPagerOptions {
  /** Cancels the whole list. Checked between pages and passed to every request. */
  signal: AbortSignal;
  /** `limit` of each page when `options.limit` is unset. `0` asks for one unpaginated list. Default 500. */
  pageSize?: number;
  /**
   * When a continuation page fails with 410 Expired (its continue token outlived the server's history),
   * issue one unpaginated list at the originally requested resourceVersion instead of failing. Default true.
   */
  fullListIfExpired?: boolean;
  /**
   * Ask for the next page while the current one is still arriving, when the ListerWatcher announces
   * the page's continue token early (`RequestContext.onListMeta`; `createListWatch` does): at most two
   * pages ahead, so at most three requests are open and two more pages are held. Default true.
   */
  prefetch?: boolean;
}

/** The outcome of {@link listAllPages}. */
export interface PagedList<T> {
  /**
   * The list. A single-page answer is returned as the server sent it; pages are merged into one list
   * whose `metadata.resourceVersion` is the first page's. The caller owns `list.items`.
   */
  list: KubeList<T>;
  /** True when more than one page was fetched (the server honoured `limit`). */
  paginated: boolean;
  /** LIST requests made (a page asked for ahead and then cancelled counts too). */
  requests: number;
}

/**
 * client-go's `ListPager.List`: fetches every page of a LIST, following `continue` tokens.
 *
 * - The first request carries `options` plus `limit` (= `pageSize` when `options.limit` is unset).
 * - Continuation requests carry the token and clear `resourceVersion` (to `""`) and
 *   `resourceVersionMatch`, which the server forbids together with `continue`.
 * - A 410 Expired on a continuation page (and only there) triggers one unpaginated list (no `limit`, no
 *   `continue`) at the originally requested `resourceVersion`/`resourceVersionMatch`, when
 *   `fullListIfExpired` (the default).
 * - Any other error rejects as is; an aborted signal rejects with `ERR_ABORTED`.
 */
export async function listAllPages<T>(
  list: ListFunc<T>,
  options: ListOptions,
  pager: ListPagerOptions,
): Promise<PagedList<T>> {
  const { signal } = pager;
  const pageSize = pager.pageSize ?? DEFAULT_PAGE_SIZE;
  const fullListIfExpired = pager.fullListIfExpired ?? true;
  const prefetch = pager.prefetch ?? true;
  let opts: ListOptions = { ...options };
  if (opts.limit === undefined || opts.limit === 0) {
    if (pageSize > 0) opts.limit = pageSize;
    else delete opts.limit;
  }
  let merged: T[] | undefined;
  let first: KubeList<T> | undefined;
  let paginated = false;
  let requests = 0;

  const start = (pageOptions: ListOptions): PendingPage<T> => {
    requests++;
    const page = pendingPage(list, pageOptions, signal, prefetch, (hint) => {
      if (page.hint !== undefined) return;
      page.hint = hint;
      askAhead();
    });
    return page;
  };
  // Up to PAGES_AHEAD pages after the one being awaited (`current`: the loop sets it and awaits it with
  // no await in between, so a hint never sees a page that is not awaited yet), each once the page
  // before it has announced its continue token. Nothing once the awaited page has arrived (the loop
  // decides what comes next) or past a page that was cancelled.
  const askAhead = (): void => {
    let page = current;
    if (page.arrived || signal.aborted) return;
    for (let k = 0; k < PAGES_AHEAD; k++) {
      if (page.next === undefined) {
        if (page.hint === undefined || page.controller.signal.aborted) return;
        page.next = start(continuation(page.options, page.hint));
      }
      page = page.next;
    }
  };

  let current: PendingPage<T> = start(opts);
  try {
    for (;;) {
      if (signal.aborted) throw abortError(signal);
      askAhead();
      let page: KubeList<T>;
      try {
        page = await current.promise;
      } catch (err) {
        current.arrived = true;
        if (signal.aborted || !fullListIfExpired || !isExpiredError(err) || !opts.continue) throw err;
        await cancel(current.next);
        current.next = undefined;
        // The continue token expired while we paged: one full list at the requested version instead.
        const full: ListOptions = { ...options };
        delete full.limit;
        delete full.continue;
        requests++;
        const result = await list(full, { signal });
        checkList(result);
        return { list: result, paginated, requests };
      }
      current.arrived = true;
      checkList(page);
      const cont = page.metadata?.continue;
      if (!cont && merged === undefined) return { list: page, paginated, requests };
      if (merged === undefined) {
        merged = [];
        first = page;
      }
      for (const item of page.items) merged.push(item);
      if (!cont) return { list: mergedList(first ?? page, merged), paginated, requests };
      opts = continuation(opts, cont);
      paginated = true;
      let next = current.next;
      current.next = undefined;
      if (next !== undefined && next.options.continue !== cont) {
        // Asked for with a token the page did not end with (a hint that was wrong): ask again.
        await cancel(next);
        next = undefined;
      }
      current = next ?? start(opts);
    }
  } finally {
    // Only a page asked for ahead that is no longer wanted (an error, an abort, a wrong hint) is left.
    await cancel(current.next);
  }
}

/** A LIST request under way; `hint` is the continue token its metadata announced before its items. */
interface PendingPage<T> {
  readonly options: ListOptions;
  readonly promise: Promise<KubeList<T>>;
  readonly controller: AbortController;
  hint?: string;
  /** The loop has its outcome: no more pages are asked for ahead of it. */
  arrived: boolean;
  /** The page asked for ahead with this page's `hint`. */
  next: PendingPage<T> | undefined;
}

function pendingPage<T>(
  list: ListFunc<T>,
  options: ListOptions,
  signal: AbortSignal,
  prefetch: boolean,
  onHint: (token: string) => void,
): PendingPage<T> {
  // Its own controller (aborted with the list's), so that a page asked for ahead can be cancelled alone.
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let settled = false;
  const announce = (metadata: ListMeta): void => {
    const token = metadata.continue;
    // Later, not now: a ListerWatcher may announce before `list` returns its promise. Never once the
    // page has arrived: the loop has moved on, and a request started then would be nobody's.
    if (typeof token === 'string' && token !== '')
      queueMicrotask(() => {
        if (!settled) onHint(token);
      });
  };
  const context: RequestContext = prefetch
    ? { signal: controller.signal, onListMeta: announce }
    : { signal: controller.signal };
  const promise = (async () => {
    try {
      return await list(options, context);
    } finally {
      settled = true;
      signal.removeEventListener('abort', onAbort);
    }
  })();
  // A page asked for ahead may fail before anyone awaits it; the loop sees the rejection when it does.
  promise.catch(() => {});
  return { options, promise, controller, arrived: false, next: undefined };
}

/** Cancels a page asked for ahead, and the pages asked for after it, and waits until their requests have settled. */
async function cancel<T>(page: PendingPage<T> | undefined): Promise<void> {
  for (let p = page; p !== undefined; p = p.next) p.controller.abort();
  for (let p = page; p !== undefined; p = p.next) await p.promise.catch(() => {});
}

/** The options of the page after one that ended with `token`. */
function continuation(options: ListOptions, token: string): ListOptions {
  const next: ListOptions = { ...options, continue: token, resourceVersion: '' };
  delete next.resourceVersionMatch;
  return next;
}

function mergedList<T>(first: KubeList<T>, items: T[]): KubeList<T> {
  const metadata: ListMeta = {};
  const rv = first.metadata?.resourceVersion;
  if (rv !== undefined) metadata.resourceVersion = rv;
  const out: KubeList<T> = { metadata, items };
  if (first.apiVersion !== undefined) out.apiVersion = first.apiVersion;
  if (first.kind !== undefined) out.kind = first.kind;
  return out;
}

function checkList(list: unknown): asserts list is KubeList<unknown> {
  if (typeof list !== 'object' || list === null || !Array.isArray((list as KubeList<unknown>).items)) {
    throw new KinformerError(ErrorCodes.BAD_RESPONSE, 'the LIST answer has no items array', {
      details: { type: list === null ? 'null' : typeof list },
    });
  }
}
