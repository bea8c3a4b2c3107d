import { decodeContinueToken, encodeContinueToken, encodeRaw } from '../storage/continueToken.js';
import {
  invalidResourceVersionMessage,
  parseResourceVersion,
  selectorFilter,
  type ListOptionsQuery,
} from './listOptions.js';
import type { Representation } from './negotiation.js';
import type { ObjectStore, ResourceTable, Snapshot } from '../storage/objectStore.js';
import {
  badRequestError,
  CONTINUE_TOO_OLD,
  expiredError,
  LIST_TOO_OLD,
  statusError,
  tooLargeResourceVersionStatus,
} from '../api/statusErrors.js';
import type { StoredEntry } from '../storage/storedEntry.js';
import type { WatchCacheLag } from '../storage/watchCacheLag.js';

/** Everything a LIST needs. */
export interface ListRequest {
  store: ObjectStore;
  table: ResourceTable;
  /** The namespace of a namespaced path; undefined for all namespaces / cluster-scoped types. */
  namespace: string | undefined;
  query: ListOptionsQuery;
  representation: Representation;
  /** How long a request for a future resourceVersion waits before 504 (the watch cache's 3 s). */
  freshnessWaitMs: number;
  /** A lagging watch cache: `resourceVersion=0` lists read its (older) state. */
  cache?: WatchCacheLag | undefined;
}

/** `ListMeta` of a page, in the real server's key order. */
export interface ListPageMeta {
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
  /** KEP-5866: the applied `shardSelector`. */
  shardInfo?: { selector: string };
}

/** One page of a LIST: the stored objects (in key order) and the list's metadata. */
export interface ListPage {
  readonly items: readonly StoredEntry[];
  readonly metadata: ListPageMeta;
}

/** Index of the first key `>= key` in sorted `keys`. */
export function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The `[lo, hi)` range of `keys` inside `namespace` (all keys when undefined). */
export function namespaceRange(keys: readonly string[], namespace: string | undefined): [number, number] {
  if (namespace === undefined) return [0, keys.length];
  // '0' is the character after '/': every "ns/…" key sorts before "ns0".
  return [lowerBound(keys, `${namespace}/`), lowerBound(keys, `${namespace}0`)];
}

async function waitUntil(request: ListRequest, rv: number): Promise<void> {
  const { store } = request;
  if (rv <= store.rev) return;
  if (!(await store.waitForRevision(rv, request.freshnessWaitMs))) {
    throw statusError(tooLargeResourceVersionStatus(rv, store.rev));
  }
}

/** Serves a LIST ({@link readList}): resolves with the response body (compact JSON plus `\n`). */
export async function serveList(request: ListRequest): Promise<string> {
  return listJson(request, await readList(request));
}

/**
 * Reads a LIST's page with the real server's resourceVersion semantics (§3.2): consistent read when
 * RV is unset, "any" with `limit` ignored for RV `0`, not-older-than, exact (legacy `RV=N&limit=n`
 * included), continue tokens at the token's revision, 410 for revisions below the compaction point
 * (with a fresh `rv:-1` token for continues), 504 after the freshness wait for future revisions.
 * Rejects with a `KinformerError`. A Table is built from the page's objects (`table.ts`).
 */
export async function readList(request: ListRequest): Promise<ListPage> {
  const { store, table, query } = request;
  let snapshot: Snapshot;
  let start = '';
  let limit = query.limit;
  if (query.continueToken !== '') {
    const token = decodeContinueToken(query.continueToken);
    if (token instanceof Error) throw token;
    if (query.resourceVersion !== '' && query.resourceVersion !== '0') {
      throw badRequestError('specifying resource version is not allowed when using continue');
    }
    start = token.start;
    if (token.rv > 0) {
      if (token.rv < store.compactedRV) {
        throw expiredError(CONTINUE_TOO_OLD, { continue: encodeRaw(-1, token.start) });
      }
      await waitUntil(request, token.rv);
      snapshot = store.snapshotAt(table, token.rv);
    } else {
      snapshot = store.current(table);
    }
  } else if (query.resourceVersion === '') {
    snapshot = store.current(table);
    request.cache?.caughtUp(store.rev);
  } else {
    const rv = parseResourceVersion(query.resourceVersion);
    if (rv === undefined)
      throw badRequestError(
        `invalid resource version: ${invalidResourceVersionMessage(query.resourceVersion)}`,
      );
    const exact =
      query.resourceVersionMatch === 'Exact' || (query.resourceVersionMatch === '' && limit > 0 && rv > 0);
    if (exact) {
      if (rv < store.compactedRV) throw expiredError(LIST_TOO_OLD);
      await waitUntil(request, rv);
      snapshot = store.snapshotAt(table, rv);
    } else {
      // Not older than rv; "0" means any, served from the cache with limit ignored.
      if (rv === 0) limit = 0;
      await waitUntil(request, rv);
      snapshot =
        rv === 0 && request.cache !== undefined
          ? store.snapshotAt(table, Math.max(request.cache.cacheRev(), store.compactedRV))
          : store.current(table);
    }
  }
  return pageOf(request, snapshot, start, limit);
}

function pageOf(request: ListRequest, snapshot: Snapshot, start: string, limit: number): ListPage {
  const { query } = request;
  const keys = snapshot.keys();
  const entries = snapshot.entries;
  const prefix = request.namespace === undefined ? '' : `${request.namespace}/`;
  const [lo, hi] = namespaceRange(keys, request.namespace);
  let i = start === '' ? lo : Math.max(lo, lowerBound(keys, prefix + start));
  const filter = selectorFilter(query);
  const items: StoredEntry[] = [];
  while (i < hi && (limit === 0 || items.length < limit)) {
    const entry = entries.get(keys[i]!)!;
    i++;
    if (!filter || filter(entry)) items.push(entry);
  }
  let continueToken: string | undefined;
  let remaining: number | undefined;
  if (limit > 0 && items.length === limit && i < hi) {
    let more = true;
    if (filter) {
      let j = i;
      while (j < hi && !filter(entries.get(keys[j]!)!)) j++;
      more = j < hi;
    } else {
      remaining = hi - i;
    }
    if (more)
      continueToken = encodeContinueToken(snapshot.rev, items[items.length - 1]!.key.slice(prefix.length));
  }
  const metadata: ListPageMeta = { resourceVersion: String(snapshot.rev) };
  if (continueToken !== undefined) metadata.continue = continueToken;
  if (continueToken !== undefined && remaining !== undefined) metadata.remainingItemCount = remaining;
  if (query.shardSelector !== undefined) metadata.shardInfo = { selector: query.shardSelector.toString() };
  return { items, metadata };
}

/** The JSON body of a page in the request's representation (full objects or metadata only). */
function listJson(request: ListRequest, page: ListPage): string {
  const { table } = request;
  const { items } = page;
  const partial = request.representation === 'partial';
  const parts = new Array<string>(items.length);
  for (let k = 0; k < items.length; k++) parts[k] = partial ? items[k]!.partialJson() : items[k]!.itemJson();
  const head = partial
    ? '{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1"'
    : `{"kind":${JSON.stringify(table.type.listKind)},"apiVersion":${JSON.stringify(table.type.apiVersion)}`;
  return `${head},"metadata":${JSON.stringify(page.metadata)},"items":[${parts.join(',')}]}\n`;
}
