import { newIndexer, type Indexer, type Indexers } from '@kinformer/cache';
import { processDeltas } from '@kinformer/controller';
import {
  isKinformerError,
  metaNamespaceKeyFunc,
  type Backoff,
  type Clock,
  type KubeObject,
  type Logger,
} from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import { DeltaFIFO, RealFIFO, type DeltaType, type Queue } from '@kinformer/delta-fifo';
import {
  defaultWatchErrorHandler,
  Reflector,
  type ListerWatcher,
  type ReflectorOptions,
} from '@kinformer/reflector';
import {
  FakeApiServer,
  type FakeApiServerOptions,
  type RecordedRequest,
  type ResourceRef,
} from '@kinformer/testing';
import { KubeConfig, type User } from '@kubernetes/client-node';
import { RecordingBackoff, waitFor, type ServerPod, type WaitForOptions } from '@kinformer/test-tools';

// Helpers of the integration suites (the generic ones — waits, log capture, backoffs — are
// @kinformer/test-tools'): a reflector wired to a
// FIFO that is drained into an Indexer (what an informer does, without the informer), and compact
// views of the cache, the server's objects and the requests the server received.

// --------------------------------------------------------------------------------- objects, views

/** A pod as a user would create it (`serverPod` of `@kinformer/test-tools`). */
export type Pod = ServerPod;

/** The pods of namespace `default`, as `createListWatch` takes them. */
export const PODS = { version: 'v1', resource: 'pods', namespace: 'default' } as const;

/** `[key, resourceVersion]` pairs, sorted by key. */
export type Versions = Array<[string, string]>;

function versionsOf(objects: readonly KubeObject[]): Versions {
  return objects
    .map((o): [string, string] => [metaNamespaceKeyFunc(o), o.metadata?.resourceVersion ?? ''])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** What a cache holds: keys and resourceVersions. */
export function cacheVersions(store: { list(): KubeObject[] }): Versions {
  return versionsOf(store.list());
}

/** The keys a cache holds, sorted. */
export function cacheKeys(store: { list(): KubeObject[] }): string[] {
  return cacheVersions(store).map(([key]) => key);
}

/** What the server holds for a resource (in one namespace, if given): keys and resourceVersions. */
export function serverVersions(
  server: FakeApiServer,
  resource: ResourceRef = 'pods',
  namespace?: string,
): Versions {
  return versionsOf(server.list(resource, namespace));
}

/**
 * The requests for one resource as compact strings, e.g. `list rv=0 limit=500 → 200`,
 * `watch rv=12 → 200`, `list continue limit=2 → 410`. Query parameters the reflector always sends
 * (`allowWatchBookmarks`, `timeoutSeconds`, `watch`) are left out unless missing.
 */
export function requestLog(server: FakeApiServer, resource = 'pods'): string[] {
  return server.requests
    .filter((r) => r.resource === resource && (r.verb === 'list' || r.verb === 'watch'))
    .map(describeRequest);
}

/** One request as {@link requestLog} writes it. */
export function describeRequest(r: RecordedRequest): string {
  const q = r.query;
  let s = `${r.verb ?? r.method} rv=${q.resourceVersion ?? ''}`;
  if (q.continue !== undefined) s += ' continue';
  if (q.limit !== undefined) s += ` limit=${q.limit}`;
  if (r.verb === 'watch' && q.allowWatchBookmarks !== 'true') s += ' (no bookmarks)';
  if (q.resourceVersionMatch !== undefined) s += ` match=${q.resourceVersionMatch}`;
  if (q.sendInitialEvents !== undefined) s += ` sendInitialEvents=${q.sendInitialEvents}`;
  return `${s} → ${r.status ?? '?'}`;
}

// ---------------------------------------------------------------------------------------- cleanup

const disposers: Array<() => Promise<void> | void> = [];

/** Registers something to undo in {@link disposeAll} (servers, reflectors, proxies). Returns `value`. */
export function track<V>(value: V, dispose: (value: V) => Promise<void> | void): V {
  disposers.push(() => dispose(value));
  return value;
}

/** A KubeConfig for the server at `url` (its certificate not verified) as `user`. */
export function kubeConfigFor(url: string, user: Partial<User> = {}): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

/** Starts a FakeApiServer that {@link disposeAll} closes. */
export async function startServer(options?: FakeApiServerOptions): Promise<FakeApiServer> {
  return track(await FakeApiServer.start(options), (s) => s.close());
}

/** Undoes everything registered with {@link track}, newest first. Call it in `afterEach`. */
export async function disposeAll(): Promise<void> {
  const errors: unknown[] = [];
  for (const dispose of disposers.splice(0).reverse()) {
    try {
      await dispose();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length > 0) throw errors[0];
}

// --------------------------------------------------------------------------- reflector + FIFO + cache

/** One delta as the drain loop applied it. */
export interface AppliedDelta {
  type: DeltaType;
  key: string;
  resourceVersion: string | undefined;
}

/** Options of {@link startReflector}. */
export interface StartReflectorOptions<T extends KubeObject> {
  /** The queue between the reflector and the cache (default `DeltaFIFO`). */
  queue?: 'DeltaFIFO' | 'RealFIFO';
  /** Indexes of the cache. */
  indexers?: Indexers<T>;
  /** Default: a new {@link FakeClock} (time moves only when the test says). */
  clock?: Clock;
  /** Default: a {@link RecordingBackoff} that retries at once. */
  backoff?: Backoff;
  logger?: Logger;
  /** More reflector options (`expectedType`, `pageSize`, `stallMarginMs`…). */
  reflector?: Omit<ReflectorOptions<T>, 'clock' | 'backoff' | 'logger' | 'watchErrorHandler'>;
}

/** A running reflector whose FIFO is drained into an Indexer, with everything a test asserts on. */
export interface ReflectorHarness<T extends KubeObject> {
  readonly reflector: Reflector<T>;
  readonly queue: Queue<T>;
  readonly indexer: Indexer<T>;
  readonly clock: Clock;
  readonly backoff: Backoff;
  /** Every delta applied to the indexer, in order. */
  readonly applied: AppliedDelta[];
  /** Every error the reflector handed to its watchErrorHandler, in order. */
  readonly handlerErrors: unknown[];
  /** The codes of {@link handlerErrors} (`undefined` for non-kinformer errors). */
  handlerErrorCodes(): Array<string | undefined>;
  /** Aborts the reflector and the drain loop and waits for both. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts `new Reflector(lw, fifo)` and a loop that pops the FIFO into an Indexer with the
 * controller's `processDeltas` — the data path of an informer without its handlers. The FIFO's
 * `knownObjects` is the indexer, as in an informer. Stopped by {@link disposeAll}.
 */
export function startReflector<T extends KubeObject>(
  lw: ListerWatcher<T>,
  options: StartReflectorOptions<T> = {},
): ReflectorHarness<T> {
  const indexer = newIndexer<T>(undefined, options.indexers ?? {});
  const queue: Queue<T> =
    options.queue === 'RealFIFO'
      ? new RealFIFO<T>({ knownObjects: indexer })
      : new DeltaFIFO<T>({ knownObjects: indexer });
  const clock = options.clock ?? new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const backoff = options.backoff ?? new RecordingBackoff();
  const handlerErrors: unknown[] = [];
  const applied: AppliedDelta[] = [];
  const reflector = new Reflector<T>(lw, queue, {
    random: () => 0,
    ...options.reflector,
    clock,
    backoff,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    watchErrorHandler: (r, err) => {
      handlerErrors.push(err);
      defaultWatchErrorHandler(r, err);
    },
  });
  const controller = new AbortController();
  const signal = controller.signal;
  const record = (type: DeltaType, obj: unknown): void => {
    const o = obj as T;
    applied.push({ type, key: keyOf(o), resourceVersion: o.metadata?.resourceVersion });
  };
  const running = reflector.run(signal);
  const draining = (async () => {
    while (!signal.aborted) {
      try {
        await queue.pop(
          (deltas, isInInitialList) => {
            for (const d of deltas) record(d.type, d.object);
            return processDeltas({}, indexer, deltas, isInInitialList);
          },
          { signal },
        );
      } catch (err) {
        if (signal.aborted || queue.isClosed()) return;
        throw err;
      }
    }
  })();
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      controller.abort();
      queue.close();
      await running;
      await draining;
    })();
    return stopped;
  };
  track(undefined, stop);
  return {
    reflector,
    queue,
    indexer,
    clock,
    backoff,
    applied,
    handlerErrors,
    handlerErrorCodes: () => handlerErrors.map((e) => (isKinformerError(e) ? e.code : undefined)),
    stop,
  };
}

function keyOf(obj: KubeObject): string {
  try {
    return metaNamespaceKeyFunc(obj);
  } catch {
    return (obj as { key?: string }).key ?? '?';
  }
}

/** Waits until the harness' cache holds exactly the server's objects (keys and resourceVersions). */
export async function waitForCacheToMatch<T extends KubeObject>(
  h: ReflectorHarness<T>,
  server: FakeApiServer,
  resource: ResourceRef = 'pods',
  options: WaitForOptions & { namespace?: string } = {},
): Promise<void> {
  let expected = serverVersions(server, resource, options.namespace);
  await waitFor(
    () => {
      expected = serverVersions(server, resource, options.namespace);
      return JSON.stringify(cacheVersions(h.indexer)) === JSON.stringify(expected);
    },
    {
      ...options,
      describe: () => ({
        cache: cacheVersions(h.indexer),
        server: expected,
        requests: requestLog(
          server,
          typeof resource === 'string' ? resource.split('.')[0] : resource.resource,
        ),
        handlerErrors: h.handlerErrorCodes(),
        stats: h.reflector.stats(),
      }),
    },
  );
}
