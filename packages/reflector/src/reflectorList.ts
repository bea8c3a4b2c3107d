import { ErrorCodes, KinformerError, type KubeObject, type Logger } from '@kinformer/core';
import { isExpiredError, isTooLargeResourceVersionError } from '@kinformer/core/internal';
import type { ListerWatcher, ListOptions, ReflectorStore } from './listerWatcher.js';
import { relistResourceVersion, type ListState } from './listState.js';
import { DEFAULT_PAGE_SIZE, listAllPages, type PagedList } from './pager.js';
import type { ReflectorStats } from './reflectorOptions.js';
import {
  codeOf,
  faultSummary,
  isRejectedResourceVersionError,
  isUnsupportedTableObject,
  messageOf,
} from './reflectorErrors.js';
import { ABORTED, raceAbort } from './watchStream.js';

/** What a LIST needs from its reflector. */
export interface ListHost<T extends KubeObject> {
  readonly listerWatcher: ListerWatcher<T>;
  readonly store: ReflectorStore<T>;
  readonly logger: Logger;
  readonly counters: ReflectorStats;
  readonly listState: ListState;
  /** `ReflectorOptions.pageSize`. */
  readonly explicitPageSize: number | undefined;
  /** Keeps the request's promise until it settles (`run` waits for it). */
  track(request: Promise<unknown>): void;
}

/** client-go's `list`: paginated LIST, `store.replace`. Returns false when the signal aborted. */
export async function listOnce<T extends KubeObject>(
  host: ListHost<T>,
  signal: AbortSignal,
): Promise<boolean> {
  const state = host.listState;
  const resourceVersion = relistResourceVersion(state);
  let pageSize: number;
  if (host.explicitPageSize !== undefined) pageSize = host.explicitPageSize;
  else if (state.paginatedResult) pageSize = DEFAULT_PAGE_SIZE;
  else if (resourceVersion !== '' && resourceVersion !== '0') pageSize = 0;
  else pageSize = DEFAULT_PAGE_SIZE;

  let result: PagedList<T> | typeof ABORTED;
  try {
    result = await pagedList(host, { resourceVersion }, pageSize, signal);
  } catch (err) {
    if (signal.aborted) return false;
    const expired = isExpiredError(err);
    const rejected = isRejectedResourceVersionError(err, resourceVersion);
    if (!expired && !rejected && !isTooLargeResourceVersionError(err)) {
      // The watch error handler reports it (the default one logs at error); keep this at debug.
      host.logger.debug({ err: faultSummary(err), code: codeOf(err), resourceVersion }, 'failed to list');
      throw err;
    }
    if (expired) host.counters.expired410++;
    if (rejected) {
      // Not in client-go: a resourceVersion the server cannot parse (a non-numeric one that came in
      // a watch event) would otherwise be asked for again on every relist, and refused forever.
      host.logger.warn(
        { code: codeOf(err), message: messageOf(err), resourceVersion },
        'the server rejected the list resourceVersion; retrying at once with a consistent read',
      );
    } else {
      host.logger.debug(
        { code: codeOf(err), resourceVersion },
        'the list resourceVersion is unavailable; retrying at once with a consistent read',
      );
    }
    state.rvUnavailable = true;
    try {
      result = await pagedList(host, { resourceVersion: relistResourceVersion(state) }, pageSize, signal);
    } catch (retryErr) {
      if (signal.aborted) return false;
      if (isExpiredError(retryErr)) host.counters.expired410++;
      host.logger.debug({ err: faultSummary(retryErr), code: codeOf(retryErr) }, 'failed to list');
      throw retryErr;
    }
  }
  if (result === ABORTED) return false;

  const { list, paginated } = result;
  if (resourceVersion === '0' && paginated) state.paginatedResult = true;
  state.rvUnavailable = false;
  if (isUnsupportedTableObject(list)) {
    throw new KinformerError(
      ErrorCodes.BAD_RESPONSE,
      `unsupported list kind ${String(list.apiVersion)}/${String(list.kind)}`,
    );
  }
  const listRV = list.metadata?.resourceVersion ?? '';
  host.store.replace(list.items, listRV);
  state.lastSyncRV = listRV;
  state.populated = true;
  host.logger.debug(
    { items: list.items.length, resourceVersion: listRV, requests: result.requests },
    'listed',
  );
  return true;
}

function pagedList<T extends KubeObject>(
  host: ListHost<T>,
  options: ListOptions,
  pageSize: number,
  signal: AbortSignal,
): Promise<PagedList<T> | typeof ABORTED> {
  host.counters.lists++;
  if (host.listState.populated) host.counters.relists++;
  const lw = host.listerWatcher;
  const request = listAllPages((opts, context) => lw.list(opts, context), options, { signal, pageSize });
  host.track(request);
  return raceAbort(request, signal);
}
