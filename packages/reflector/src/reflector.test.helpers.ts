import {
  ErrorCodes,
  KinformerError,
  type KubeList,
  type KubeObject,
  type Logger,
  type Status,
} from '@kinformer/core';
import { FakeClock, flush } from '@kinformer/core/testing';
import type { ListerWatcher, ReflectorStore } from './listerWatcher.js';
import { Reflector, type ReflectorOptions } from './reflector.js';
import { reflectorBackoff } from './recovery.js';
import { FakeListerWatcher, type FakeListerWatcherOptions } from './testing.js';
import { getEventListeners } from 'node:events';
import {
  captureLogs,
  keyOf,
  LEVEL,
  pod,
  RecordingBackoff,
  status,
  type LogLine,
} from '@kinformer/test-tools';

export { pod, status };

/** Builders, a recording store and backoff, and the reflector harness shared by the reflector's tests. */

export interface Pod extends KubeObject {
  spec?: { nodeName?: string };
}

export function podList(resourceVersion: string, items: Pod[] = [], cont?: string): KubeList<Pod> {
  return {
    apiVersion: 'v1',
    kind: 'PodList',
    metadata: cont === undefined ? { resourceVersion } : { resourceVersion, continue: cont },
    items,
  };
}

export function pods(from: number, to: number): Pod[] {
  const out: Pod[] = [];
  for (let i = from; i < to; i++) out.push(pod(`pod-${i}`, String(i)));
  return out;
}

export const expiredStatus = (): Status => status(410, 'Expired', 'too old resource version: 1 (5)');
export const expiredError = (): KinformerError => KinformerError.fromStatus(expiredStatus());
export const tooManyRequests = (retryAfterSeconds?: number): KinformerError =>
  KinformerError.fromStatus(
    status(
      429,
      'TooManyRequests',
      'storage is (re)initializing',
      retryAfterSeconds === undefined ? undefined : { retryAfterSeconds },
    ),
  );
export const internalStatus = (): Status =>
  status(500, 'InternalError', 'Internal error occurred: etcdserver: no leader');
export const connectionRefused = (): KinformerError =>
  new KinformerError(ErrorCodes.CONNECTION, 'connect ECONNREFUSED 127.0.0.1:6443');
export const forbidden = (): KinformerError =>
  KinformerError.fromStatus(
    status(403, 'Forbidden', 'pods is forbidden: User "x" cannot watch resource "pods"'),
  );

export const key = keyOf;

/** A tiny store recording every call (does not depend on @kinformer/cache). */
export class RecordingStore implements ReflectorStore<Pod> {
  readonly ops: string[] = [];
  readonly items = new Map<string, Pod>();
  readonly replaces: Array<{ items: Pod[]; resourceVersion: string }> = [];
  readonly rvUpdates: string[] = [];
  readonly bookmarks: string[] = [];
  resyncs = 0;
  onResync: (() => void) | undefined;

  add(obj: Pod): void {
    this.ops.push(`add ${key(obj)}@${String(obj.metadata?.resourceVersion)}`);
    this.items.set(key(obj), obj);
  }
  update(obj: Pod): void {
    this.ops.push(`update ${key(obj)}@${String(obj.metadata?.resourceVersion)}`);
    this.items.set(key(obj), obj);
  }
  delete(obj: Pod): void {
    this.ops.push(`delete ${key(obj)}@${String(obj.metadata?.resourceVersion)}`);
    this.items.delete(key(obj));
  }
  replace(items: Pod[], resourceVersion: string): void {
    this.ops.push(`replace ${items.length}@${resourceVersion}`);
    this.replaces.push({ items: [...items], resourceVersion });
    this.items.clear();
    for (const item of items) this.items.set(key(item), item);
  }
  resync(): void {
    this.resyncs++;
    this.onResync?.();
  }
  updateResourceVersion(resourceVersion: string): void {
    this.rvUpdates.push(resourceVersion);
  }
  bookmark(resourceVersion: string): void {
    this.bookmarks.push(resourceVersion);
  }
  /** `name@rv` of every stored object, sorted. */
  contents(): string[] {
    return [...this.items.values()]
      .map((p) => `${String(p.metadata?.name)}@${String(p.metadata?.resourceVersion)}`)
      .sort();
  }
}

/**
 * A reflector over a {@link FakeListerWatcher} into `store` (default a {@link RecordingStore}), on a
 * fake clock, with a recording backoff (default: client-go's reflector backoff without jitter).
 */
export function harness(
  options: Partial<ReflectorOptions<Pod>> = {},
  lwOptions: FakeListerWatcherOptions<Pod> = {},
) {
  return harnessWith(new RecordingStore(), options, lwOptions);
}

/** {@link harness} into a store of the test's own. */
export function harnessWith<S extends ReflectorStore<Pod>>(
  store: S,
  options: Partial<ReflectorOptions<Pod>> = {},
  lwOptions: FakeListerWatcherOptions<Pod> = {},
) {
  const clock = options.clock instanceof FakeClock ? options.clock : new FakeClock(1_000_000);
  const lw = new FakeListerWatcher<Pod>(lwOptions);
  const backoff = new RecordingBackoff(options.backoff ?? reflectorBackoff(clock, () => 0));
  const handled: unknown[] = [];
  const reflector = new Reflector<Pod>(lw, store, {
    clock,
    random: () => 0,
    watchErrorHandler: (_r, err) => handled.push(err),
    ...options,
    backoff,
  });
  const controller = new AbortController();
  let running: Promise<void> | undefined;
  return {
    clock,
    lw,
    store,
    backoff,
    handled,
    reflector,
    controller,
    start(): Promise<void> {
      running = reflector.run(controller.signal);
      return running;
    },
    /** Enqueues `lists`, starts the run and returns the first watch it opens. */
    async startWatching(...lists: Parameters<typeof lw.enqueueList>): ReturnType<typeof lw.nextWatch> {
      lw.enqueueList(...lists);
      running = reflector.run(controller.signal);
      return lw.nextWatch();
    },
    /** Aborts the run's signal (without waiting; `stop` waits and checks). */
    abort(): void {
      controller.abort();
    },
    /** Waits until the reflector asked the backoff for its `n`-th delay (it then sleeps on the clock). */
    async backoffCalls(n: number): Promise<void> {
      await lw.waitFor(() => backoff.delays.length >= n, `backoff call #${n}`);
    },
    /** Lets the reflector take its first `n` backoff waits on the fake clock, one after the other. */
    async waitOutBackoffs(n: number): Promise<void> {
      for (let i = 1; i <= n; i++) {
        await lw.waitFor(() => backoff.delays.length >= i, `backoff call #${i}`);
        await clock.tick(backoff.delays[i - 1]);
      }
    },
    /** Aborts and checks that nothing is left behind. */
    async stop(): Promise<void> {
      controller.abort();
      await running;
      expect(clock.pendingTimers()).toBe(0);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    },
  };
}

export type Harness = ReturnType<typeof harness>;
/** A watch stream the harness's FakeListerWatcher served. */
export type Watch = Awaited<ReturnType<Harness['lw']['nextWatch']>>;

export const rvs = (calls: Array<{ resourceVersion?: string }>): Array<string | undefined> =>
  calls.map((c) => c.resourceVersion);

/** A logger whose lines are kept, parsed (`@kinformer/test-tools`). */
export function capturingLogger(level = 'debug'): { logger: Logger; lines: LogLine[] } {
  const { logger, lines } = captureLogs(level);
  return { logger, lines };
}

export const WARN = LEVEL.warn;

/** What {@link outage} measured. */
export interface OutageResult {
  /** Clock ms from the end of the outage to the first request sent after it. */
  behindAfterRecovery: number;
  /** Consecutive failures when the outage ended. */
  failures: number;
  /** LISTs and WATCHes refused during the outage. */
  lists: number;
  watches: number;
  /** The waits the reflector took during the outage, in order. */
  delays: number[];
}

/**
 * A reflector whose first watch delivered; then, for `outageMs`, every WATCH (and, with `failLists`, every
 * LIST) fails with `error()` (default: connection refused), starting with the watch in place, which breaks.
 * Returns how long after the outage ends the next request is sent (the fake server answers at once) and
 * what the reflector sent during it.
 */
export async function outage(options: {
  outageMs: number;
  random: () => number;
  error?: () => KinformerError;
  failLists?: boolean;
}): Promise<OutageResult> {
  const clock = new FakeClock(1_000_000);
  const inner = new FakeListerWatcher<Pod>();
  const error = options.error ?? connectionRefused;
  let outageEnd = Number.NEGATIVE_INFINITY;
  let lists = 0;
  let watches = 0;
  const down = (): boolean => clock.now() < outageEnd;
  const lw: ListerWatcher<Pod> = {
    list: (o, c) => {
      if (down() && options.failLists === true) {
        lists++;
        return Promise.reject(error());
      }
      return inner.list(o, c);
    },
    watch: (o, c) => {
      if (down()) {
        watches++;
        return Promise.reject(error());
      }
      return inner.watch(o, c);
    },
  };
  const backoff = new RecordingBackoff(reflectorBackoff(clock, options.random));
  const reflector = new Reflector<Pod>(lw, new RecordingStore(), {
    clock,
    backoff,
    watchErrorHandler: () => undefined,
  });
  for (let i = 0; i < 4; i++) inner.enqueueList(podList('1'));
  const controller = new AbortController();
  const done = reflector.run(controller.signal);
  const first = await inner.nextWatch();
  first.add(pod('a', '2'));
  await inner.waitFor(() => reflector.lastSyncResourceVersion() === '2', 'first event');
  outageEnd = clock.now() + options.outageMs;
  const before = inner.listCalls.length + inner.watchCalls.length;
  first.breakConnection();
  for (let i = 0; i < 2000 && inner.listCalls.length + inner.watchCalls.length === before; i++) {
    await flush();
    if (!(await clock.tickToNext())) await flush();
  }
  const behindAfterRecovery = clock.now() - outageEnd;
  const failures = reflector.consecutiveFailures();
  controller.abort();
  await done;
  if (clock.pendingTimers() !== 0) throw new Error('timers left behind');
  return { behindAfterRecovery, failures, lists, watches, delays: backoff.delays };
}
