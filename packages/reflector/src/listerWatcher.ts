import type { KubeList, KubeObject, ListMeta } from '@kinformer/core';

/** Query options of a LIST request (the reflector sets them; selectors belong to the ListerWatcher). */
export interface ListOptions {
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  limit?: number;
  continue?: string;
  timeoutSeconds?: number;
  /** KEP-5866 `shardSelector` (set by a reflector with `shardSelector`); a ListerWatcher sends it as is. */
  shardSelector?: string;
}

/** Query options of a WATCH request. */
export interface WatchOptions {
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
  /** KEP-5866 `shardSelector` (set by a reflector with `shardSelector`); a ListerWatcher sends it as is. */
  shardSelector?: string;
}

/** The event types a watch stream yields. `ERROR` events are thrown as errors instead (see {@link ListerWatcher.watch}). */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

/**
 * One watch event. For `BOOKMARK` the object carries only `metadata.resourceVersion` (and, for the
 * end of a streaming list, the annotation `k8s.io/initial-events-end: "true"`).
 */
export type WatchEvent<T> =
  { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T } | { type: 'BOOKMARK'; object: KubeObject };

/** Per-call context: the signal that cancels the request (and ends a watch stream). */
export interface RequestContext {
  signal: AbortSignal;
  /**
   * Given to `list` by the pager. A ListerWatcher may call it once with the page's `metadata` as soon
   * as it knows it, before the items have arrived (kube-apiserver writes `metadata` first): with a
   * `continue` token there, the pager asks for the next page while this one is still arriving and
   * being decoded (at most one page ahead). Calling it is optional; the page `list` resolves with is
   * what counts (a next page asked for with another token is cancelled and asked for again).
   */
  onListMeta?: (metadata: ListMeta) => void;
}

/**
 * Lists and watches one resource (already scoped to its namespace and selectors).
 *
 * - `list` resolves with one page (or the whole list when `limit` is unset) or rejects with a
 *   `KinformerError` carrying the server's Status.
 * - `watch` resolves once the server accepted the watch (HTTP 200); an HTTP error up front rejects.
 *   The stream then yields events in order. It ends (iteration completes) when the server closes it
 *   cleanly or the signal aborts. It throws a `KinformerError` for an in-stream `ERROR` event
 *   (`KinformerError.fromStatus`), a malformed line (`ERR_MALFORMED_WATCH_EVENT`), an unknown event
 *   type (`ERR_UNKNOWN_EVENT_TYPE`), an over-long line (`ERR_WATCH_LINE_TOO_LARGE`) or a broken
 *   connection (`ERR_CONNECTION`). Breaking out of the iteration closes the request.
 */
export interface ListerWatcher<T extends KubeObject = KubeObject> {
  list(options: ListOptions, context: RequestContext): Promise<KubeList<T>>;
  watch(options: WatchOptions, context: RequestContext): Promise<AsyncIterable<WatchEvent<T>>>;
  /**
   * `false` when the source cannot serve `sendInitialEvents` streaming lists (client-go's
   * `IsWatchListSemanticsUnSupported`). Absent means supported.
   */
  readonly watchListSupported?: boolean;
}

/** What a reflector writes into (a DeltaFIFO, a RealFIFO, or a plain store). All calls are synchronous. */
export interface ReflectorStore<T> {
  add(obj: T): void;
  update(obj: T): void;
  delete(obj: T): void;
  replace(items: T[], resourceVersion: string): void;
  resync(): void;
  /** Called with the resourceVersion of every watch event, bookmarks included (not after a LIST). */
  updateResourceVersion?(resourceVersion: string): void;
  /** Called for every watch BOOKMARK. */
  bookmark?(resourceVersion: string): void;
}
