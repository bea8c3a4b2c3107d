import type { GroupVersionResource } from '@kinformer/core';
import type { InformerStats } from '@kinformer/informer';
import type { ReflectorStats } from '@kinformer/reflector';
import type { MetricsProvider } from '@kinformer/workqueue';
import { Counter, Gauge, register as globalRegistry, type Registry } from 'prom-client';
import { assertMetricNamesFree } from './assertMetricNamesFree.js';
import * as names from './metricNames.js';
import { workqueueMetricsProvider } from './workqueueMetrics.js';

/**
 * What the metrics read from an informer: a `SharedIndexInformer` (from the factory or built by
 * hand) has all of it. Everything is read when Prometheus scrapes, never on the event path.
 */
export interface MeasuredInformer {
  /** The informer's name (the factory's key, `pods.v1`, `deployments.v1.apps`). */
  readonly name: string;
  stats(): InformerStats;
  reflectorStats(): ReflectorStats | undefined;
  hasSynced(): boolean;
  isWatching(): boolean;
  lastSyncResourceVersion(): string;
  getStore(): { size(): number };
}

/** What `leader_election_master_status` reads: a `LeaderElector` has it. */
export interface MeasuredLeaderElector {
  isLeader(): boolean;
}

/** Options of {@link KinformerMetrics.addInformer}. */
export interface AddInformerOptions {
  /** The `name` label. Default: the informer's `name`. */
  name?: string;
  /**
   * The `group`/`version`/`resource` labels of the `informer_*` metrics. Default: parsed from the
   * informer's name when it has the factory's form (`resource.version[.group]`), otherwise empty.
   */
  resource?: GroupVersionResource;
}

/** Options of {@link KinformerMetrics}. */
export interface KinformerMetricsOptions {
  /** Where the metrics are registered. Default: prom-client's global `register`. */
  registry?: Registry;
}

/** Undoes an `add…` call: the source's series disappear from the next scrape. Idempotent. */
export interface MetricsRegistration {
  remove(): void;
}

type Labels = Record<string, string>;
type Sample = readonly [labels: Labels, value: number];

interface InformerEntry {
  readonly informer: MeasuredInformer;
  readonly labels: Labels;
  readonly gvrLabels: Labels;
}

interface Family<S> {
  readonly name: string;
  readonly help: string;
  readonly type: 'gauge' | 'counter';
  readonly labelNames: readonly string[];
  samples(source: S): Iterable<Sample>;
}

const NAME = ['name'] as const;
const GVR = ['name', 'group', 'version', 'resource'] as const;
const HANDLER = ['name', 'handler'] as const;

const one = <S>(value: (s: S) => number | undefined) =>
  function* (s: S & { labels: Labels }): Iterable<Sample> {
    const v = value(s);
    if (v !== undefined && Number.isFinite(v)) yield [s.labels, v];
  };

const perHandler = (value: (h: InformerStats['handlers'][number]) => number) =>
  function* (e: InformerEntry & { stats: InformerStats }): Iterable<Sample> {
    for (const h of e.stats.handlers) yield [{ ...e.labels, handler: h.name }, value(h)];
  };

interface InformerSnapshot extends InformerEntry {
  readonly stats: InformerStats;
  readonly reflector: ReflectorStats | undefined;
}

const reflectorCounter = (
  name: string,
  help: string,
  field: Exclude<keyof ReflectorStats, 'shardFilterMode'>,
): Family<InformerSnapshot> => ({
  name,
  help,
  type: 'counter',
  labelNames: NAME,
  samples: one((s: InformerSnapshot) => s.reflector?.[field]),
});

/** The 15 least significant digits of a numeric resourceVersion (client-go's `informer_store_resource_version`). */
function resourceVersionNumber(rv: string, digits = Infinity): number | undefined {
  if (!/^\d+$/.test(rv)) return undefined;
  return Number(digits === Infinity ? rv : rv.slice(-digits));
}

const INFORMER_FAMILIES: ReadonlyArray<Family<InformerSnapshot>> = [
  {
    name: names.INFORMER_QUEUED_ITEMS,
    help: 'Number of items currently queued in the FIFO.',
    type: 'gauge',
    labelNames: GVR,
    *samples(s) {
      yield [s.gvrLabels, s.stats.queueDepth];
    },
  },
  {
    name: names.INFORMER_STORE_RESOURCE_VERSION,
    help: 'The 15 least significant digits of the resource version of the store.',
    type: 'gauge',
    labelNames: GVR,
    *samples(s) {
      const v = resourceVersionNumber(s.informer.lastSyncResourceVersion(), 15);
      if (v !== undefined) yield [s.gvrLabels, v];
    },
  },
  {
    name: names.KINFORMER_INFORMER_SYNCED,
    help: 'Whether the informer has synced: 1 once its initial list is in the cache.',
    type: 'gauge',
    labelNames: NAME,
    samples: one((s: InformerSnapshot) => (s.informer.hasSynced() ? 1 : 0)),
  },
  {
    name: names.KINFORMER_INFORMER_WATCHING,
    help: 'Whether the informer has a watch open: 1 while it does.',
    type: 'gauge',
    labelNames: NAME,
    samples: one((s: InformerSnapshot) => (s.informer.isWatching() ? 1 : 0)),
  },
  {
    name: names.KINFORMER_INFORMER_CACHE_OBJECTS,
    help: 'Objects in the informer cache.',
    type: 'gauge',
    labelNames: NAME,
    samples: one((s: InformerSnapshot) => s.informer.getStore().size()),
  },
  {
    name: names.KINFORMER_INFORMER_EVENTS_TOTAL,
    help: 'Cache changes handed to the handlers, by type (add, update, delete).',
    type: 'counter',
    labelNames: ['name', 'type'],
    *samples(s) {
      const events = s.stats.events;
      for (const type of ['add', 'update', 'delete'] as const)
        yield [{ ...s.labels, type }, events?.[type] ?? 0];
    },
  },
  {
    name: names.KINFORMER_INFORMER_DELTAS_TOTAL,
    help: 'Deltas applied to the informer cache.',
    type: 'counter',
    labelNames: NAME,
    samples: one((s: InformerSnapshot) => s.stats.deltasProcessed),
  },
  {
    name: names.KINFORMER_INFORMER_PROCESS_ERRORS_TOTAL,
    help: 'Deltas the informer cache refused (a key or index function threw): logged and skipped.',
    type: 'counter',
    labelNames: NAME,
    samples: one((s: InformerSnapshot) => s.stats.processErrors),
  },
  {
    name: names.KINFORMER_INFORMER_HANDLER_NOTIFICATIONS_TOTAL,
    help: 'Notifications an event handler has processed (whether or not it failed).',
    type: 'counter',
    labelNames: HANDLER,
    samples: perHandler((h) => h.dispatched),
  },
  {
    name: names.KINFORMER_INFORMER_HANDLER_ERRORS_TOTAL,
    help: 'Event handler calls that threw or rejected.',
    type: 'counter',
    labelNames: HANDLER,
    samples: perHandler((h) => h.errors),
  },
  {
    name: names.KINFORMER_INFORMER_HANDLER_BUSY_SECONDS_TOTAL,
    help: 'Seconds spent in an event handler (until an async handler settled).',
    type: 'counter',
    labelNames: HANDLER,
    samples: perHandler((h) => h.busyMs / 1000),
  },
  {
    name: names.KINFORMER_INFORMER_HANDLER_MAX_LATENCY_SECONDS,
    help: 'The longest single event handler call so far, seconds.',
    type: 'gauge',
    labelNames: HANDLER,
    samples: perHandler((h) => h.maxLatencyMs / 1000),
  },
  {
    name: names.KINFORMER_INFORMER_HANDLER_BUFFER_DEPTH,
    help: "Notifications waiting in an event handler's buffer.",
    type: 'gauge',
    labelNames: HANDLER,
    samples: perHandler((h) => h.bufferDepth),
  },
  reflectorCounter(names.REFLECTOR_LISTS_TOTAL, 'Total number of API lists done by the reflectors', 'lists'),
  reflectorCounter(
    names.REFLECTOR_WATCHES_TOTAL,
    'Total number of API watches done by the reflectors',
    'watchStarts',
  ),
  reflectorCounter(
    names.REFLECTOR_SHORT_WATCHES_TOTAL,
    'Total number of short API watches done by the reflectors',
    'veryShortWatches',
  ),
  {
    name: names.REFLECTOR_LAST_RESOURCE_VERSION,
    help: 'Last resource version seen for the reflectors',
    type: 'gauge',
    labelNames: NAME,
    samples: one((s: InformerSnapshot) => resourceVersionNumber(s.informer.lastSyncResourceVersion())),
  },
  reflectorCounter(
    names.KINFORMER_REFLECTOR_RELISTS_TOTAL,
    'Lists after the store had been populated once.',
    'relists',
  ),
  reflectorCounter(
    names.KINFORMER_REFLECTOR_WATCH_LISTS_TOTAL,
    'Streaming-list (sendInitialEvents) requests sent.',
    'watchLists',
  ),
  reflectorCounter(
    names.KINFORMER_REFLECTOR_WATCH_RESTARTS_TOTAL,
    'Watches started again without relisting (clean close, 429, connection failure, stall).',
    'watchRestarts',
  ),
  reflectorCounter(names.KINFORMER_REFLECTOR_EXPIRED_TOTAL, '410 Expired/Gone answers seen.', 'expired410'),
  reflectorCounter(
    names.KINFORMER_REFLECTOR_WATCH_EVENTS_TOTAL,
    'Watch events received, bookmarks included.',
    'events',
  ),
  reflectorCounter(names.KINFORMER_REFLECTOR_BOOKMARKS_TOTAL, 'BOOKMARK events received.', 'bookmarks'),
  reflectorCounter(
    names.KINFORMER_REFLECTOR_MALFORMED_TOTAL,
    'Malformed or unknown watch lines; each ended a watch.',
    'malformed',
  ),
  reflectorCounter(names.KINFORMER_REFLECTOR_STALLS_TOTAL, 'Watches aborted by stall detection.', 'stalls'),
  reflectorCounter(names.KINFORMER_REFLECTOR_RESYNCS_TOTAL, 'Periodic resyncs of the store.', 'resyncs'),
  reflectorCounter(
    names.KINFORMER_REFLECTOR_BACKOFFS_TOTAL,
    'Failures that made the reflector wait a backoff step.',
    'backoffs',
  ),
  {
    name: names.KINFORMER_REFLECTOR_BACKOFF_SECONDS_TOTAL,
    help: 'Seconds the reflector spent waiting in backoff.',
    type: 'counter',
    labelNames: NAME,
    samples: one((s: InformerSnapshot) =>
      s.reflector === undefined ? undefined : s.reflector.backoffMs / 1000,
    ),
  },
  reflectorCounter(
    names.KINFORMER_REFLECTOR_SHARD_DROPPED_TOTAL,
    'With a shardSelector: objects outside the shard ranges dropped on the client (the server did not filter).',
    'shardDropped',
  ),
  {
    name: names.KINFORMER_REFLECTOR_SHARD_FILTER_MODE,
    help: 'With a shardSelector: 1 for the side that filters (mode="server" once a LIST echoed shardInfo, else "client").',
    type: 'gauge',
    labelNames: ['name', 'mode'],
    *samples(s: InformerSnapshot): Iterable<Sample> {
      const mode = s.reflector?.shardFilterMode;
      if (mode === undefined) return;
      yield [{ ...s.labels, mode: 'server' }, mode === 'server' ? 1 : 0];
      yield [{ ...s.labels, mode: 'client' }, mode === 'client' ? 1 : 0];
    },
  },
];

/**
 * Prometheus metrics (prom-client) for kinformer: informers, their reflectors, leader electors and
 * work queues, under client-go's and controller-runtime's names where those exist (see the README
 * for the table). Informer, reflector and leader metrics are **read at scrape time** (prom-client
 * `collect`) from `stats()`, `reflectorStats()` and friends: nothing is added to the event path,
 * and a removed informer's series vanish. Work-queue metrics are pushed by the queue through
 * {@link KinformerMetrics.workqueueMetricsProvider}, as client-go does.
 *
 * One instance per registry: the constructor registers every metric and throws
 * `ERR_INVALID_OPTION` when one of the names is already registered there.
 *
 * ```ts
 * const metrics = new KinformerMetrics();
 * metrics.addInformer(factory.core.v1.pods().informer);
 * const queue = new RateLimitingQueue<string>({ name: 'pods', metricsProvider: metrics.workqueueMetricsProvider });
 * ```
 */
export class KinformerMetrics {
  /** The registry the metrics are in. */
  readonly registry: Registry;
  readonly #informers = new Set<InformerEntry>();
  readonly #leaders = new Map<MeasuredLeaderElector, string>();
  readonly #registered: string[] = [];
  #workqueue: MetricsProvider | undefined;

  constructor(options: KinformerMetricsOptions = {}) {
    this.registry = options.registry ?? globalRegistry;
    assertMetricNamesFree(this.registry, [
      ...INFORMER_FAMILIES.map((f) => f.name),
      names.LEADER_ELECTION_MASTER_STATUS,
    ]);
    for (const family of INFORMER_FAMILIES) this.#register(family, () => this.#snapshots());
    this.#register<{ labels: Labels; leader: MeasuredLeaderElector }>(
      {
        name: names.LEADER_ELECTION_MASTER_STATUS,
        help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
        type: 'gauge',
        labelNames: NAME,
        samples: one((s: { leader: MeasuredLeaderElector }) => (s.leader.isLeader() ? 1 : 0)),
      },
      () => [...this.#leaders].map(([leader, name]) => ({ leader, labels: { name } })),
    );
  }

  /**
   * Adds an informer's metrics (informer, handler and reflector families) to every later scrape.
   * Adding the same informer twice gives two registrations; give them different `name`s.
   */
  addInformer(informer: MeasuredInformer, options: AddInformerOptions = {}): MetricsRegistration {
    const name = options.name ?? informer.name;
    const gvr = options.resource ?? parseInformerName(informer.name);
    const entry: InformerEntry = {
      informer,
      labels: { name },
      gvrLabels: {
        name,
        group: gvr?.group ?? '',
        version: gvr?.version ?? '',
        resource: gvr?.resource ?? '',
      },
    };
    this.#informers.add(entry);
    return { remove: () => void this.#informers.delete(entry) };
  }

  /** Reports `leader_election_master_status{name}` for an elector; `name` is the lease's name. */
  addLeaderElector(elector: MeasuredLeaderElector, name: string): MetricsRegistration {
    this.#leaders.set(elector, name);
    return { remove: () => void this.#leaders.delete(elector) };
  }

  /**
   * A work-queue `MetricsProvider` registering client-go's seven `workqueue_*` metrics (label
   * `name`, controller-runtime's buckets) in this registry on first use. Pass it as a queue's
   * `metricsProvider` with a `name`.
   */
  get workqueueMetricsProvider(): MetricsProvider {
    if (this.#workqueue === undefined) {
      const { provider, metricNames } = workqueueMetricsProvider(this.registry);
      this.#workqueue = provider;
      this.#registered.push(...metricNames);
    }
    return this.#workqueue;
  }

  /** Removes every metric this instance registered from the registry. */
  unregister(): void {
    for (const name of this.#registered.splice(0)) this.registry.removeSingleMetric(name);
    this.#informers.clear();
    this.#leaders.clear();
    this.#workqueue = undefined;
  }

  *#snapshots(): Iterable<InformerSnapshot> {
    for (const entry of this.#informers)
      yield { ...entry, stats: entry.informer.stats(), reflector: entry.informer.reflectorStats() };
  }

  #register<S>(family: Family<S>, sources: () => Iterable<S>): void {
    const config = {
      name: family.name,
      help: family.help,
      labelNames: family.labelNames,
      registers: [this.registry],
    };
    // prom-client calls `collect` on every scrape: the family's samples replace the last scrape's.
    const collect = <M extends { reset(): void }>(
      write: (metric: M, labels: Labels, value: number) => void,
    ) =>
      function (this: M): void {
        this.reset();
        for (const source of sources())
          for (const [labels, value] of family.samples(source)) write(this, labels, value);
      };
    if (family.type === 'counter')
      new Counter({ ...config, collect: collect<Counter>((m, labels, value) => m.inc(labels, value)) });
    else new Gauge({ ...config, collect: collect<Gauge>((m, labels, value) => m.set(labels, value)) });
    this.#registered.push(family.name);
  }
}

/** `pods.v1` → `{ resource: 'pods', version: 'v1' }`; `deployments.v1.apps?namespace=x` → group `apps`. */
export function parseInformerName(name: string): GroupVersionResource | undefined {
  const base = name.split('?', 1)[0]!;
  const [resource, version, ...group] = base.split('.');
  if (!resource || !version) return undefined;
  return group.length === 0 ? { resource, version } : { resource, version, group: group.join('.') };
}
