import type { KubeObject, Logger } from '@kinformer/core';
import { deletionHandlingMetaNamespaceKeyFunc, isDeletedFinalStateUnknown } from '@kinformer/core';
import { FakeApiServer } from '@kinformer/testing';
import { CHURN_OPS, ChurnGenerator, WIDGETS_DEFINITION, type ChurnOp } from './churn.js';
import type { ListWatchCounters } from './countingListerWatcher.js';
import {
  ContinueTrap,
  FAULT_KINDS,
  FaultScheduler,
  MAX_PENDING_FAILURES,
  type FaultCount,
  type FaultKind,
} from './faultScheduler.js';
import { inScope, labelsOf, rvOf, type Violation } from './handlerRecorder.js';
import { LagTracker, type LagSummary } from './lagTracker.js';
import { InformerSet, SOAK_INDEXERS, type InformerUnderTest } from './informerSet.js';
import { findGc, formatBytes, heapAfterGc, HeapSampler } from './memory.js';
import { Prng } from './prng.js';

/** Options of {@link runChaos}. Durations are in milliseconds. */
export interface ChaosOptions {
  /** Seed of every random choice (writes and faults). */
  seed: number;
  /** How long the churn and the faults last (default 30 000). The checks come after. */
  durationMs?: number;
  /** Objects alive at once across pods, configmaps and widgets (default 2 000). */
  objects?: number;
  /** Writes per second while churning (default 1 000); bursts of 100–500 writes come on top. */
  writesPerSecond?: number;
  /** Mean time between two faults (default 250). */
  faultIntervalMs?: number;
  /**
   * The churn goes on past `durationMs` until this many faults were injected, for at most three times
   * `durationMs` (default 0). Faults come per tick of the run loop, and a loaded machine runs fewer
   * ticks: a test that asserts what the run did sets this instead of trusting the clock.
   */
  minFaults?: number;
  /** Relative weights of the fault kinds (merged over the defaults; 0 disables a kind). */
  faultWeights?: Partial<Record<FaultKind, number>>;
  /** Failure rules that may wait for a request per scope (default `MAX_PENDING_FAILURES`, 2). */
  maxPendingFailures?: number;
  /** Length of one tick of the run loop (default 10). */
  tickMs?: number;
  /** How long to wait for quiescence after the churn stopped before declaring failure (default 60 000). */
  quiesceTimeoutMs?: number;
  /** The longest an informer may go without a watch while faults rain before it counts as not recovering (default 30 000). */
  maxOutageMs?: number;
  /**
   * Memory budget: the heap after GC at the end may exceed the heap after GC before the informers
   * started by at most `bytesPerCachedObject` × cached objects + `memorySlackBytes`
   * (defaults 4 KiB and 48 MiB; see docs/reliability.md).
   */
  bytesPerCachedObject?: number;
  memorySlackBytes?: number;
  /**
   * Runs of 60 s or more also check that the heap after GC at the end exceeds the one at 30 % of the
   * churn (steady state: object count and server history are constant by then) by at most this
   * much (default 32 MiB).
   */
  steadyGrowthLimitBytes?: number;
  /** Events kept by the server for watch resumption (default 10 000, the FakeApiServer default). */
  historySize?: number;
  logger?: Logger;
  /**
   * Self-test: make one informer's transport drop every `every`-th watch event (a bug the soak must
   * catch). Never set in a real run.
   */
  selfTest?: { dropWatchEvents: { informer: string; every: number } };
  /**
   * Freshness bound: the run fails when the 99th percentile of per-write delivery lag (server write →
   * handler of an unscoped informer) exceeds it. Default: 3 000 ms when faults come at most once a
   * second (`faultIntervalMs` ≥ 1 000), 30 000 ms (the backoff's cap) in a storm of faults, where
   * failure rules pile up faster than requests consume them (see docs/reliability.md).
   */
  maxLagP99Ms?: number;
  /** Called about every `progressIntervalMs` (default 5 000) while churning. */
  onProgress?: (progress: ChaosProgress) => void;
  progressIntervalMs?: number;
}

/** A progress line while churning. */
export interface ChaosProgress {
  elapsedMs: number;
  writes: number;
  faults: number;
  events: number;
  heapUsedBytes: number;
  /** Age of the oldest write no handler has seen yet, ms. */
  currentLagMs: number;
  /** The last fault injected, if any. */
  lastFault: string | undefined;
}

/** What one informer did and saw. */
export interface InformerReport {
  name: string;
  /** Objects in its cache at the end. */
  cached: number;
  requests: ListWatchCounters;
  /** Events received by each handler (`fast`, `slow`, `late`, `removed`). */
  handlerEvents: Record<string, number>;
  /** Deletes that reached the handlers as `DeletedFinalStateUnknown` tombstones (fast handler). */
  tombstones: number;
  /** The longest time without an open watch after the initial sync, ms. */
  maxOutageMs: number;
  /** Watch open and resourceVersion equal to the server's at the end. */
  recovered: boolean;
}

/** The outcome of a run. `mismatches` is the number that must be zero. */
export interface ChaosReport {
  seed: number;
  durationMs: number;
  objects: number;
  writes: number;
  churn: Record<ChurnOp, number>;
  faults: Record<FaultKind, FaultCount>;
  faultsInjected: number;
  initialSyncMs: number;
  /** Time from the end of the churn until every informer was quiescent (the settle time). */
  quiescenceMs: number;
  quiescent: boolean;
  /** Per-write delivery lag to the handlers of the three unscoped informers, while faults ran. */
  lag: LagSummary;
  /** List and watch requests per second and informer, averaged over the churn. */
  requestsPerSecond: number;
  informers: InformerReport[];
  /** Handler events, all handlers together. */
  events: number;
  /** Cache entries compared with the server, all informers together. */
  cacheObjectsChecked: number;
  /** Keys whose final handler state was compared with the server, all handlers together. */
  handlerKeysChecked: number;
  memory: {
    gcAvailable: boolean;
    baselineBytes: number;
    /** Heap after GC at 30 % of the churn (NaN when the run ended before). */
    midBytes: number;
    finalBytes: number;
    maxHeapBytes: number;
    budgetBytes: number;
    /** Whether the steady-state growth (end − 30 %) was checked: runs of 60 s or more, with GC. */
    steadyGrowthChecked: boolean;
    withinBudget: boolean;
  };
  mismatches: number;
  mismatchCounts: Record<string, number>;
  /** The first mismatches, as examples. */
  samples: Violation[];
  /**
   * For each informer that did not recover or had too long an outage: its requests during the
   * longest outage (or the last ones), `+ms since the churn started` first.
   */
  traces: Record<string, string[]>;
}

const SAMPLE_LIMIT = 40;
/** How far behind the soak server's watch cache serves RV=0 reads, ms. */
const WATCH_CACHE_LAG_MS = 100;

/**
 * Runs one chaos soak: a {@link FakeApiServer} with `objects` objects, seven informers (see
 * `InformerSet`) with two handlers each, random churn and random faults for `durationMs`; then
 * stops the faults, waits for quiescence and checks every cache and every handler's event stream
 * against the server, memory and recovery. Resolves with the report (never rejects for a mismatch:
 * look at `report.mismatches`). Everything it started is stopped and closed before it resolves.
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const seed = options.seed >>> 0;
  const durationMs = options.durationMs ?? 30_000;
  const objects = options.objects ?? 2_000;
  const tickMs = options.tickMs ?? 10;
  const writesPerTick = ((options.writesPerSecond ?? 1_000) * tickMs) / 1000;
  const root = new Prng(seed);
  const churnPrng = root.fork(1);
  const faultPrng = root.fork(2);
  const burstPrng = root.fork(3);

  const mismatchCounts: Record<string, number> = {};
  const samples: Violation[] = [];
  const mismatch = (v: Violation): void => {
    mismatchCounts[v.kind] = (mismatchCounts[v.kind] ?? 0) + 1;
    if (samples.length < SAMPLE_LIMIT) samples.push(v);
  };

  const server = await FakeApiServer.start({
    recordRequests: false,
    bookmarkIntervalMs: 200,
    resources: [WIDGETS_DEFINITION],
    // kube-apiserver's timing, scaled down (off by default in unit tests): RV=0 reads from a watch cache
    // that lags, watches without timeoutSeconds ended after [min, 2·min), slow watchers closed.
    watchCacheLag: { lagMs: WATCH_CACHE_LAG_MS, progressNotifyIntervalMs: 1_000 },
    minRequestTimeoutMs: 20_000,
    slowConsumers: { bufferEvents: 20_000 },
    ...(options.historySize === undefined ? {} : { historySize: options.historySize }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  const gc = findGc();
  const sampler = new HeapSampler();
  let informers: InformerSet | undefined;
  const lag = new LagTracker();
  try {
    const churn = new ChurnGenerator(server, churnPrng, {
      objects,
      onWrite: (resource, rv) => lag.wrote(resource, rv),
    });
    churn.populate();
    // The initial lists (RV=0, served by the lagging watch cache) must already hold what was just
    // written: the checks expect exactly the server's objects as initial adds.
    await new Promise<void>((resolve) => setTimeout(resolve, WATCH_CACHE_LAG_MS + 100));
    const baselineBytes = heapAfterGc(gc);
    sampler.start(250);

    const trap = new ContinueTrap(server);
    informers = new InformerSet(server, trap, options.logger === undefined ? {} : { logger: options.logger });
    // No churn and no faults until the initial sync: the initial list is exactly what the server has now.
    for (const i of informers.informers) {
      const initial = expectedObjects(server, i).size;
      for (const r of i.recorders) r.expectedInitialAdds = initial;
    }
    for (const i of informers.informers) if (i.group === 'all') observeLag(i, lag);
    const drop = options.selfTest?.dropWatchEvents;
    if (drop !== undefined) {
      const target = informers.informers.find((i) => i.name === drop.informer);
      if (target === undefined) throw new RangeError(`selfTest: no informer ${drop.informer}`);
      target.listerWatcher.dropEvery = drop.every;
    }
    const syncStart = Date.now();
    informers.start();
    if (!(await informers.waitForSync(60_000))) {
      mismatch({
        where: 'all informers',
        kind: 'initial-sync-timeout',
        key: '-',
        detail: 'not synced within 60 s (before any fault)',
      });
    }
    const initialSyncMs = Date.now() - syncStart;

    // ---- churn and faults
    const faults = new FaultScheduler(server, faultPrng, trap, {
      meanTicks: (options.faultIntervalMs ?? 250) / tickMs,
      tickMs,
      ...(options.faultWeights === undefined ? {} : { weights: options.faultWeights }),
      ...(options.maxPendingFailures === undefined ? {} : { maxPendingFailures: options.maxPendingFailures }),
    });
    const outages = new OutageTracker(informers.informers);
    const start = Date.now();
    const end = start + durationMs;
    const progressEvery = options.progressIntervalMs ?? 5_000;
    let nextProgress = start + progressEvery;
    let carry = 0;
    let phase = 0;
    let midBytes: number | undefined;
    const minFaults = options.minFaults ?? 0;
    const hardEnd = start + 3 * durationMs;
    const churning = (): boolean => {
      const now = Date.now();
      return now < end || (faults.injected < minFaults && now < hardEnd);
    };
    let faultTicks = 0;
    for (let tick = 1; churning(); tick++) {
      const elapsed = Date.now() - start;
      if (phase === 0 && elapsed >= durationMs * 0.1) {
        informers.addLateHandlers();
        phase = 1;
      } else if (phase === 1 && elapsed >= durationMs * 0.15) {
        informers.addTemporaryHandlers();
        phase = 2;
      } else if (phase === 2 && elapsed >= durationMs * 0.25) {
        informers.removeTemporaryHandlers();
        phase = 3;
      } else if (phase === 3 && elapsed >= durationMs * 0.3) {
        midBytes = heapAfterGc(gc);
        phase = 4;
      } else if (phase === 4 && elapsed >= durationMs * 0.4) {
        informers.startLateInformer();
        phase = 5;
      }
      carry += writesPerTick;
      let writes = Math.floor(carry);
      carry -= writes;
      if (burstPrng.chance(0.002)) writes += burstPrng.between(100, 500);
      for (let i = 0; i < writes; i++) churn.step();
      // Faults keep their wall-time rate: a tick run late stands for the wall-time ticks since the last
      // counted one, and the ticks the loop then runs back to back to catch up stand for none.
      const due = Math.max(tick, Math.floor((Date.now() - start) / tickMs));
      await faults.tick(due - faultTicks);
      faultTicks = due;
      outages.sample();
      const now = Date.now();
      if (options.onProgress !== undefined && now >= nextProgress) {
        nextProgress += progressEvery;
        options.onProgress({
          elapsedMs: now - start,
          writes: churn.writes,
          faults: faults.injected,
          events: totalEvents(informers.informers),
          heapUsedBytes: sampler.sample(),
          currentLagMs: lag.currentLagMs(),
          lastFault: faults.lastFault,
        });
      }
      const wait = start + tick * tickMs - Date.now();
      await new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, wait)));
    }
    const churnMs = Date.now() - start;
    faults.stop();
    // Very short runs may end before the handler phases: complete them.
    if (phase < 1) informers.addLateHandlers();
    if (phase < 2) informers.addTemporaryHandlers();
    if (phase < 3) informers.removeTemporaryHandlers();
    if (phase < 5) informers.startLateInformer();
    if (churn.errors > 0) {
      for (const s of churn.errorSamples)
        mismatch({ where: 'churn', kind: 'churn-error', key: '-', detail: s });
      mismatchCounts['churn-error'] = churn.errors;
    }

    // ---- quiescence
    const quiesceStart = Date.now();
    const quiescent = await waitForQuiescence(
      server,
      informers.informers,
      options.quiesceTimeoutMs ?? 60_000,
      outages,
    );
    const quiescenceMs = Date.now() - quiesceStart;
    outages.finish();
    // Once quiescent every informer is at the server's version: writes whose last version reached the
    // cache only as a tombstone (a delete seen by a relist) count as delivered now.
    if (quiescent) {
      for (const i of informers.informers)
        if (i.group === 'all') lag.seen(i.resource.name, Number(server.resourceVersion));
    }
    const lagSummary = lag.summary();
    const maxLagP99Ms = options.maxLagP99Ms ?? defaultMaxLagP99Ms(options.faultIntervalMs ?? 250);
    if (lagSummary.p99Ms > maxLagP99Ms) {
      mismatch({
        where: 'unscoped informers',
        kind: 'lag',
        key: '-',
        detail: `p99 delivery lag ${Math.round(lagSummary.p99Ms)} ms exceeds ${maxLagP99Ms} ms`,
      });
    }
    if (!quiescent) {
      for (const i of informers.informers) {
        const reason = notQuiescentReason(server, i);
        if (reason !== undefined)
          mismatch({ where: i.name, kind: 'not-quiescent', key: '-', detail: reason });
      }
    }

    // ---- checks
    let cacheObjectsChecked = 0;
    let handlerKeysChecked = 0;
    const traces: Record<string, string[]> = {};
    const informerReports: InformerReport[] = [];
    const maxOutageMs = options.maxOutageMs ?? 30_000;
    for (const i of informers.informers) {
      const expected = expectedObjects(server, i);
      cacheObjectsChecked += compareCache(i, expected, mismatch);
      compareIndexes(i, mismatch);
      i.registrations.forEach((registration, n) => {
        if (!registration.hasSynced()) {
          mismatch({
            where: i.recorders[n]!.where,
            kind: 'registration-not-synced',
            key: '-',
            detail: 'hasSynced() is false at the end',
          });
        }
      });
      for (const r of i.recorders) handlerKeysChecked += r.checkFinal(expected);
      const removed = i.removed;
      for (const r of removed === undefined ? i.recorders : [...i.recorders, removed.recorder]) {
        for (const [kind, n] of Object.entries(r.violationCounts))
          mismatchCounts[kind] = (mismatchCounts[kind] ?? 0) + n;
        for (const s of r.samples) if (samples.length < SAMPLE_LIMIT) samples.push(s);
      }
      let thrown = 0;
      for (const r of i.recorders) thrown += r.thrown;
      const handlerErrors = i.informer.stats().handlerErrors;
      if (handlerErrors !== thrown) {
        mismatch({
          where: i.name,
          kind: 'handler-errors',
          key: '-',
          detail: `informer counted ${handlerErrors} handler failures; the handlers failed ${thrown} times`,
        });
      }
      if (removed !== undefined && removed.recorder.total > removed.eventsAtRemoval) {
        mismatch({
          where: removed.recorder.where,
          kind: 'event-after-remove',
          key: '-',
          detail: `${removed.recorder.total - removed.eventsAtRemoval} events after remove()`,
        });
      }
      const recovered =
        i.informer.isWatching() && i.informer.lastSyncResourceVersion() === server.resourceVersion;
      const outage = outages.max(i);
      if (!recovered) {
        mismatch({
          where: i.name,
          kind: 'not-recovered',
          key: '-',
          detail: `watching ${String(i.informer.isWatching())}, rv ${i.informer.lastSyncResourceVersion()} vs server ${server.resourceVersion}`,
        });
      }
      if (outage > maxOutageMs) {
        mismatch({
          where: i.name,
          kind: 'long-outage',
          key: '-',
          detail: `no watch for ${outage} ms (limit ${maxOutageMs} ms)`,
        });
      }
      if (!recovered || outage > maxOutageMs) {
        // What the informer's requests were during its longest outage (or at the end), for diagnosis.
        const window = outages.longest(i);
        const from = recovered && window !== undefined ? window.from - 1_000 : 0;
        const to = recovered && window !== undefined ? window.to : Number.POSITIVE_INFINITY;
        traces[i.name] = i.listerWatcher
          .trace()
          .filter((e) => e.at >= from && e.at <= to)
          .map((e) => `+${e.at - start} ms ${e.what}`);
      }
      informerReports.push({
        name: i.name,
        cached: i.informer.getStore().list().length,
        requests: i.listerWatcher.counters,
        handlerEvents: Object.fromEntries(
          [...i.recorders, ...(removed === undefined ? [] : [removed.recorder])].map((r) => [
            r.where.slice(r.where.lastIndexOf(' ') + 1),
            r.total,
          ]),
        ),
        tombstones: i.recorders[0]!.events.tombstones,
        maxOutageMs: outage,
        recovered,
      });
    }

    // ---- memory
    sampler.stop();
    const finalBytes = heapAfterGc(gc);
    let cachedObjects = 0;
    for (const r of informerReports) cachedObjects += r.cached;
    const budgetBytes =
      cachedObjects * (options.bytesPerCachedObject ?? 4 * 1024) +
      (options.memorySlackBytes ?? 48 * 1024 * 1024);
    let withinBudget = finalBytes - baselineBytes <= budgetBytes;
    if (!withinBudget) {
      mismatch({
        where: 'process',
        kind: 'memory',
        key: '-',
        detail: `heap after GC grew by ${formatBytes(finalBytes - baselineBytes)}, budget ${formatBytes(budgetBytes)}`,
      });
    }
    const steadyGrowthLimit = options.steadyGrowthLimitBytes ?? 32 * 1024 * 1024;
    const steadyChecked = midBytes !== undefined && churnMs >= 60_000 && gc !== undefined;
    if (steadyChecked && finalBytes - midBytes! > steadyGrowthLimit) {
      withinBudget = false;
      mismatch({
        where: 'process',
        kind: 'memory',
        key: '-',
        detail: `heap after GC grew by ${formatBytes(finalBytes - midBytes!)} between 30 % of the churn and the end (limit ${formatBytes(steadyGrowthLimit)}): a leak`,
      });
    }

    let mismatches = 0;
    for (const n of Object.values(mismatchCounts)) mismatches += n;
    let requests = 0;
    for (const r of informerReports) requests += r.requests.listRequests + r.requests.watchRequests;
    return {
      seed,
      durationMs: churnMs,
      objects,
      writes: churn.writes,
      churn: { ...churn.counts },
      faults: faults.counts,
      faultsInjected: faults.injected,
      initialSyncMs,
      quiescenceMs,
      quiescent,
      lag: lagSummary,
      requestsPerSecond: requests / Math.max(1, informerReports.length) / (churnMs / 1000),
      informers: informerReports,
      events: totalEvents(informers.informers),
      cacheObjectsChecked,
      handlerKeysChecked,
      memory: {
        gcAvailable: gc !== undefined,
        baselineBytes,
        midBytes: midBytes ?? Number.NaN,
        finalBytes,
        maxHeapBytes: sampler.max,
        budgetBytes,
        steadyGrowthChecked: steadyChecked,
        withinBudget,
      },
      mismatches,
      mismatchCounts,
      samples,
      traces,
    };
  } finally {
    sampler.stop();
    await informers?.stop();
    await server.close();
  }
}

/** The default p99 delivery-lag bound for a run with a fault every `faultIntervalMs` on average. */
export function defaultMaxLagP99Ms(faultIntervalMs: number): number {
  return faultIntervalMs >= 1_000 ? 3_000 : 30_000;
}

/** Registers a handler that tells `lag` which version of its resource the informer's handlers have reached. */
function observeLag(i: InformerUnderTest, lag: LagTracker): void {
  const stream = i.resource.name;
  const seen = (obj: KubeObject): void => lag.seen(stream, Number(obj.metadata?.resourceVersion));
  i.informer.addEventHandler(
    {
      onAdd: seen,
      onUpdate: (_old, obj) => seen(obj),
      onDelete: (obj) => seen(isDeletedFinalStateUnknown(obj) ? obj.obj : obj),
    },
    { name: 'lag' },
  );
}

/** Records, per informer, how long it went without an open watch. */
class OutageTracker {
  readonly #informers: readonly InformerUnderTest[];
  readonly #since = new Map<InformerUnderTest, number>();
  readonly #max = new Map<InformerUnderTest, { ms: number; from: number; to: number }>();

  constructor(informers: readonly InformerUnderTest[]) {
    this.#informers = informers;
  }

  sample(): void {
    const now = Date.now();
    for (const i of this.#informers) {
      const since = this.#since.get(i);
      if (!i.informer.isWatching()) {
        if (since === undefined) this.#since.set(i, now);
      } else if (since !== undefined) {
        this.#close(i, since, now);
        this.#since.delete(i);
      }
    }
  }

  /** Closes the outages still open. */
  finish(): void {
    const now = Date.now();
    for (const [i, since] of this.#since) this.#close(i, since, now);
    this.#since.clear();
  }

  max(i: InformerUnderTest): number {
    return this.#max.get(i)?.ms ?? 0;
  }

  /** When the longest outage began and ended (wall-clock ms), if there was one. */
  longest(i: InformerUnderTest): { from: number; to: number } | undefined {
    return this.#max.get(i);
  }

  #close(i: InformerUnderTest, from: number, to: number): void {
    const ms = to - from;
    if (ms > (this.#max.get(i)?.ms ?? 0)) this.#max.set(i, { ms, from, to });
  }
}

/** Why an informer is not quiescent yet, or `undefined` when it is. */
function notQuiescentReason(server: FakeApiServer, i: InformerUnderTest): string | undefined {
  const informer = i.informer;
  if (!informer.isWatching()) return 'no watch open';
  const rv = informer.lastSyncResourceVersion();
  if (rv !== server.resourceVersion) return `resourceVersion ${rv}, server at ${server.resourceVersion}`;
  const stats = informer.stats();
  if (stats.queueDepth > 0) return `${stats.queueDepth} items queued`;
  for (const h of stats.handlers)
    if (h.bufferDepth > 0) return `handler ${h.name} has ${h.bufferDepth} notifications buffered`;
  for (const r of i.recorders) if (r.inFlight > 0) return `${r.where} is handling an event`;
  return undefined;
}

/**
 * Waits until every informer is watching, at the server's resourceVersion, with an empty queue and
 * idle handlers, for three polls in a row (50 ms apart). False after `timeoutMs`.
 */
async function waitForQuiescence(
  server: FakeApiServer,
  informers: readonly InformerUnderTest[],
  timeoutMs: number,
  outages: OutageTracker,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let stable = 0;
  while (Date.now() < deadline) {
    outages.sample();
    const quiet = informers.every((i) => notQuiescentReason(server, i) === undefined);
    stable = quiet ? stable + 1 : 0;
    if (stable >= 3) return true;
    await new Promise<void>((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** The server's objects of the informer's resource within its scope, by key. */
function expectedObjects(server: FakeApiServer, i: InformerUnderTest): Map<string, KubeObject> {
  const out = new Map<string, KubeObject>();
  for (const obj of server.list<KubeObject>(i.resource.gvr, i.scope.namespace)) {
    if (inScope(i.scope, obj)) out.set(deletionHandlingMetaNamespaceKeyFunc(obj), obj);
  }
  return out;
}

/** Compares the informer's cache with `expected` (keys, resourceVersions, labels). Returns the entries checked. */
function compareCache(
  i: InformerUnderTest,
  expected: ReadonlyMap<string, KubeObject>,
  mismatch: (v: Violation) => void,
): number {
  const store = i.informer.getStore();
  let checked = 0;
  for (const [key, obj] of expected) {
    checked++;
    const cached = store.getByKey(key);
    if (cached === undefined) {
      mismatch({ where: i.name, kind: 'cache-missing', key, detail: `server has rv ${rvOf(obj)}` });
    } else if (rvOf(cached) !== rvOf(obj)) {
      mismatch({
        where: i.name,
        kind: 'cache-stale',
        key,
        detail: `cache has rv ${rvOf(cached)}, server ${rvOf(obj)}`,
      });
    } else if (labelsOf(cached) !== labelsOf(obj)) {
      mismatch({
        where: i.name,
        kind: 'cache-labels',
        key,
        detail: `cache has ${labelsOf(cached)}, server ${labelsOf(obj)}`,
      });
    }
  }
  for (const key of store.listKeys()) {
    if (!expected.has(key)) {
      checked++;
      mismatch({
        where: i.name,
        kind: 'cache-extra',
        key,
        detail: `cached at rv ${rvOf(store.getByKey(key)!)}; the server does not have it in scope`,
      });
    }
  }
  return checked;
}

/**
 * Checks every index of the informer's cache against its contents: for each index, the values
 * listed are exactly those some cached object has, and each value's keys are exactly those objects.
 */
function compareIndexes(i: InformerUnderTest, mismatch: (v: Violation) => void): void {
  const indexer = i.informer.getIndexer();
  const objects = indexer.list();
  for (const [name, fn] of Object.entries(SOAK_INDEXERS)) {
    if (!(name in indexer.getIndexers())) {
      mismatch({ where: i.name, kind: 'index-mismatch', key: name, detail: 'index missing' });
      continue;
    }
    const expected = new Map<string, string[]>();
    for (const obj of objects) {
      const key = deletionHandlingMetaNamespaceKeyFunc(obj);
      for (const value of fn(obj)) {
        const keys = expected.get(value);
        if (keys === undefined) expected.set(value, [key]);
        else keys.push(key);
      }
    }
    const values = indexer.listIndexFuncValues(name).sort();
    const expectedValues = [...expected.keys()].sort();
    if (values.join('\n') !== expectedValues.join('\n')) {
      mismatch({
        where: i.name,
        kind: 'index-mismatch',
        key: name,
        detail: `values [${values.join(', ')}], expected [${expectedValues.join(', ')}]`,
      });
    }
    for (const [value, keys] of expected) {
      const actual = indexer.indexKeys(name, value).sort();
      keys.sort();
      if (actual.join('\n') !== keys.join('\n')) {
        mismatch({
          where: i.name,
          kind: 'index-mismatch',
          key: `${name}=${value}`,
          detail: `${actual.length} keys indexed, ${keys.length} expected`,
        });
      }
    }
  }
}

function totalEvents(informers: readonly InformerUnderTest[]): number {
  let n = 0;
  for (const i of informers) for (const r of i.recorders) n += r.total;
  return n;
}

// ------------------------------------------------------------------------------------------- report

function ms(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(2)} s` : `${Math.round(n)} ms`;
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

function codes(counts: Record<string, number>): string {
  const entries = Object.entries(counts);
  if (entries.length === 0) return '-';
  return entries
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([code, n]) => `${code.replace(/^ERR_/, '')} ${n}`)
    .join(', ');
}

/** The report as the text `pnpm soak` prints. */
export function formatReport(r: ChaosReport): string {
  const lines: string[] = [];
  lines.push(`seed ${r.seed}   churn ${(r.durationMs / 1000).toFixed(1)} s   objects ${fmt(r.objects)}`);
  lines.push(`writes ${fmt(r.writes)}: ${CHURN_OPS.map((op) => `${op} ${fmt(r.churn[op])}`).join(', ')}`);
  let skipped = 0;
  for (const k of FAULT_KINDS) skipped += r.faults[k].skipped;
  lines.push(
    `faults ${fmt(r.faultsInjected)} (injected/hit)${skipped === 0 ? '' : `; ${fmt(skipped)} failure rules not injected (${MAX_PENDING_FAILURES} already pending)`}:`,
  );
  const faultCells = FAULT_KINDS.map((k) => `${k} ${r.faults[k].injected}/${r.faults[k].hits}`);
  for (let i = 0; i < faultCells.length; i += 4) lines.push(`  ${faultCells.slice(i, i + 4).join('   ')}`);
  lines.push(
    `initial sync ${r.initialSyncMs} ms; quiescent ${r.quiescent ? 'yes' : 'NO'} after ${r.quiescenceMs} ms (settle)`,
  );
  const l = r.lag;
  lines.push(
    `delivery lag (write → handler, ${fmt(l.writes)} writes): p50 ${ms(l.p50Ms)}  p90 ${ms(l.p90Ms)}  p99 ${ms(l.p99Ms)}  max ${ms(l.maxMs)}; ` +
      `${fmt(l.over1s)} over 1 s, ${fmt(l.over10s)} over 10 s, ${fmt(l.undelivered)} undelivered; ` +
      `${r.requestsPerSecond.toFixed(2)} requests/s per informer`,
  );
  lines.push('informers:');
  const header = [
    'informer',
    'cached',
    'events fast/slow/late/removed',
    'tombstones',
    'lists (relists, pages)',
    'watches (streaming lists)',
    'max outage',
    'errors',
  ];
  const rows = r.informers.map((i) => {
    const c = i.requests;
    const errors = { ...c.listErrors };
    for (const [k, v] of Object.entries(c.watchErrors)) errors[k] = (errors[k] ?? 0) + v;
    for (const [k, v] of Object.entries(c.streamErrors)) errors[k] = (errors[k] ?? 0) + v;
    return [
      i.name + (i.recovered ? '' : ' (NOT RECOVERED)'),
      fmt(i.cached),
      ['fast', 'slow', 'late', 'removed'].map((h) => fmt(i.handlerEvents[h] ?? 0)).join('/'),
      fmt(i.tombstones),
      `${fmt(c.listRequests)} (${fmt(c.relists)}, ${fmt(c.continuePages)})`,
      `${fmt(c.watchRequests)} (${fmt(c.streamingLists)})`,
      `${i.maxOutageMs} ms`,
      codes(errors),
    ];
  });
  const widths = header.map((h, col) => Math.max(h.length, ...rows.map((row) => row[col]!.length)));
  const render = (cells: string[]): string =>
    `  ${cells.map((c, col) => (col === cells.length - 1 ? c : c.padEnd(widths[col]!))).join('  ')}`;
  lines.push(render(header));
  for (const row of rows) lines.push(render(row));
  lines.push(`events handled ${fmt(r.events)}`);
  lines.push(
    `objects checked: ${fmt(r.cacheObjectsChecked)} cache entries, ${fmt(r.handlerKeysChecked)} handler keys`,
  );
  const m = r.memory;
  lines.push(
    `memory: heap after GC ${formatBytes(m.baselineBytes)} before informers, ${Number.isNaN(m.midBytes) ? '-' : formatBytes(m.midBytes)} at 30 %, ` +
      `${formatBytes(m.finalBytes)} at the end (growth ${formatBytes(m.finalBytes - m.baselineBytes)}, budget ${formatBytes(m.budgetBytes)}` +
      `${m.steadyGrowthChecked ? `; since 30 %: ${formatBytes(m.finalBytes - m.midBytes)}` : ''}${m.gcAvailable ? '' : '; no GC available'}); ` +
      `peak heap ${formatBytes(m.maxHeapBytes)}`,
  );
  lines.push(`mismatches ${r.mismatches}${r.mismatches === 0 ? '' : `: ${codes(r.mismatchCounts)}`}`);
  for (const s of r.samples) lines.push(`  ${s.where}: ${s.kind} ${s.key}: ${s.detail}`);
  for (const [name, trace] of Object.entries(r.traces)) {
    lines.push(`requests of ${name} during its longest outage:`);
    for (const t of trace) lines.push(`  ${t}`);
  }
  lines.push(r.mismatches === 0 ? 'PASS' : `FAIL (seed ${r.seed})`);
  return lines.join('\n');
}
