import {
  abortError,
  ErrorCodes,
  isExpiredError,
  KinformerError,
  type KubeList,
  type ListMeta,
} from '@kinformer/core';
import type { ListOptions, RequestContext } from './listerWatcher.js';

/** client-go's `pager.PageSize`: the default LIST chunk size. */
export const DEFAULT_PAGE_SIZE = 500;

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
  /** LIST requests made. */
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
  let opts: ListOptions = { ...options };
  if (opts.limit === undefined || opts.limit === 0) {
    if (pageSize > 0) opts.limit = pageSize;
    else delete opts.limit;
  }
  let merged: T[] | undefined;
  let first: KubeList<T> | undefined;
  let paginated = false;
  let requests = 0;
  for (;;) {
    if (signal.aborted) throw abortError(signal);
    let page: KubeList<T>;
    try {
      requests++;
      page = await list(opts, { signal });
    } catch (err) {
      if (signal.aborted || !fullListIfExpired || !isExpiredError(err) || !opts.continue) throw err;
      // The continue token expired while we paged: one full list at the requested version instead.
      const full: ListOptions = { ...options };
      delete full.limit;
      delete full.continue;
      requests++;
      const result = await list(full, { signal });
      checkList(result);
      return { list: result, paginated, requests };
    }
    checkList(page);
    const cont = page.metadata?.continue;
    if (!cont && merged === undefined) return { list: page, paginated, requests };
    if (merged === undefined) {
      merged = [];
      first = page;
    }
    for (const item of page.items) merged.push(item);
    if (!cont) return { list: mergedList(first ?? page, merged), paginated, requests };
    opts = { ...opts, continue: cont, resourceVersion: '' };
    delete opts.resourceVersionMatch;
    paginated = true;
  }
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
