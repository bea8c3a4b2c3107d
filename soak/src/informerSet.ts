import { metaNamespaceIndexFunc, NAMESPACE_INDEX } from '@kinformer/cache';
import type { IndexFunc } from '@kinformer/cache';
import { createListWatch } from '@kinformer/client-node';
import { ExponentialBackoff, parseLabelSelector } from '@kinformer/core';
import type { KubeObject, Logger } from '@kinformer/core';
import { SharedIndexInformer, waitForCacheSync } from '@kinformer/informer';
import type { ResourceEventHandlerRegistration, SharedIndexInformerOptions } from '@kinformer/informer';
import type { ExpectedType } from '@kinformer/reflector/internal';
import type { FakeApiServer } from '@kinformer/testing';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  CHURN_RESOURCES,
  NAMESPACES,
  SELECTED_LABEL_SELECTOR,
  type ChurnResource,
  type ChurnResourceName,
} from './churn.js';
import { CountingListerWatcher } from './countingListerWatcher.js';
import type { ContinueTrap } from './faultScheduler.js';
import { HandlerRecorder, type InformerScope } from './handlerRecorder.js';

/**
 * The informer groups, each standing for one `SharedInformerFactory` configuration:
 * - `all`: every namespace, pods + configmaps + the widgets CRD, RealFIFO; pods list in pages of 250
 *   (so relists follow continue tokens);
 * - `selected`: label selector `app=web`, pods + configmaps, DeltaFIFO;
 * - `ns`: namespace `ns-a` only, pods + configmaps, streaming lists (`sendInitialEvents`);
 * - `meta`: configmaps as `PartialObjectMetadata` (metadata-only, every namespace).
 */
export type InformerGroup = 'all' | 'selected' | 'ns' | 'meta';

/** One informer of the soak, with what it is checked against. */
export interface InformerUnderTest {
  /** `all/pods`, `selected/configmaps`, `ns/pods`… */
  readonly name: string;
  readonly group: InformerGroup;
  readonly resource: ChurnResource;
  /** Namespace and selector, to filter the server's objects for the comparison. */
  readonly scope: InformerScope;
  readonly informer: SharedIndexInformer<KubeObject>;
  /** The informer's ListerWatcher (requests and failures counted). */
  readonly listerWatcher: CountingListerWatcher<KubeObject>;
  /**
   * The handlers checked at the end: `fast` (synchronous) and `slow` (async, sleeps now and then),
   * registered before the informer starts, and `late`, registered while churn and faults run (it
   * first gets the cached objects as initial adds).
   */
  readonly recorders: HandlerRecorder[];
  /** The registrations of `recorders` (same order). */
  readonly registrations: ResourceEventHandlerRegistration[];
  /** A handler registered and removed while churn and faults run: it must get nothing after `remove()`. */
  removed:
    | { recorder: HandlerRecorder; registration: ResourceEventHandlerRegistration; eventsAtRemoval: number }
    | undefined;
}

/** Options of {@link InformerSet}. */
export interface InformerSetOptions {
  /** Backoff of every reflector: first delay. Default: the reflector's own backoff (100 ms → 30 s). */
  backoffInitialMs?: number;
  /** Backoff of every reflector: cap. Default: the reflector's own backoff. */
  backoffCapMs?: number;
  logger?: Logger;
}

/** The `app` label as an index (an object without one is not indexed). */
export const APP_INDEX = 'app';
/** The `tier` label as an index, added while the informers run (`addIndexers` after start). */
export const TIER_INDEX = 'tier';

function labelIndex(label: string): IndexFunc<KubeObject> {
  return (obj) => {
    const value = obj.metadata?.labels?.[label];
    return value === undefined ? [] : [value];
  };
}

/** Every index the informers end up with: built in, and added mid-run. */
export const SOAK_INDEXERS: Readonly<Record<string, IndexFunc<KubeObject>>> = Object.freeze({
  [NAMESPACE_INDEX]: metaNamespaceIndexFunc,
  [APP_INDEX]: labelIndex('app'),
  [TIER_INDEX]: labelIndex('tier'),
});

const EXPECTED_TYPES: Readonly<Record<ChurnResourceName, ExpectedType>> = {
  pods: { apiVersion: 'v1', kind: 'Pod' },
  configmaps: { apiVersion: 'v1', kind: 'ConfigMap' },
  widgets: { apiVersion: 'example.com/v1', kind: 'Widget' },
};

interface GroupConfig {
  group: InformerGroup;
  resources: readonly ChurnResourceName[];
  namespace?: string;
  labelSelector?: string;
  queue: NonNullable<SharedIndexInformerOptions<KubeObject>['queue']>;
  useWatchList: boolean;
  resyncPeriodMs: number;
  metadataOnly?: boolean;
}

const GROUPS: readonly GroupConfig[] = [
  {
    group: 'all',
    resources: ['pods', 'configmaps', 'widgets'],
    queue: 'RealFIFO',
    useWatchList: false,
    resyncPeriodMs: 0,
  },
  {
    group: 'selected',
    resources: ['pods', 'configmaps'],
    labelSelector: SELECTED_LABEL_SELECTOR,
    queue: 'DeltaFIFO',
    useWatchList: false,
    resyncPeriodMs: 1_000,
  },
  {
    group: 'ns',
    resources: ['pods', 'configmaps'],
    namespace: NAMESPACES[0]!,
    queue: 'RealFIFO',
    useWatchList: true,
    resyncPeriodMs: 0,
  },
  {
    group: 'meta',
    resources: ['configmaps'],
    queue: 'RealFIFO',
    useWatchList: false,
    resyncPeriodMs: 0,
    metadataOnly: true,
  },
];

/**
 * The informers the soak runs against one {@link FakeApiServer}: eight `SharedIndexInformer`s in four
 * groups ({@link InformerGroup}) plus one started mid-run, each with two recording handlers, over `createListWatch` on the
 * server's KubeConfig (real HTTP), with the reflector's default backoff, so that the soak measures
 * the recovery users get.
 *
 * They are built directly rather than through `SharedInformerFactory`, so that each group can use
 * its own queue, page size and watch-list setting; the groups mirror what three factories would
 * build (`namespace`, `tweakListOptions`, `queue`, `metadataOnly`).
 */
export class InformerSet {
  /** Every informer, in creation order (the late informer is appended by {@link startLateInformer}). */
  readonly informers: InformerUnderTest[] = [];
  readonly #controller = new AbortController();
  readonly #runs: Promise<void>[] = [];
  readonly #kubeConfig: KubeConfig;
  readonly #trap: ContinueTrap;
  readonly #options: InformerSetOptions;

  constructor(server: FakeApiServer, trap: ContinueTrap, options: InformerSetOptions = {}) {
    this.#kubeConfig = server.kubeConfig();
    this.#trap = trap;
    this.#options = options;
    for (const g of GROUPS) {
      for (const resourceName of g.resources) this.informers.push(this.#build(g, resourceName, ''));
    }
  }

  #build(g: GroupConfig, resourceName: ChurnResourceName, suffix: string): InformerUnderTest {
    const options = this.#options;
    const resource = CHURN_RESOURCES.find((r) => r.name === resourceName)!;
    const name = `${g.group}/${resource.name}${suffix}`;
    const lw = new CountingListerWatcher<KubeObject>(
      createListWatch<KubeObject>(
        this.#kubeConfig,
        {
          ...(resource.gvr.group === undefined ? {} : { group: resource.gvr.group }),
          version: resource.gvr.version,
          resource: resource.gvr.resource,
          ...(g.namespace === undefined ? {} : { namespace: g.namespace }),
        },
        {
          ...(g.labelSelector === undefined ? {} : { labelSelector: g.labelSelector }),
          ...(g.metadataOnly === true ? { metadataOnly: true } : {}),
          ...(options.logger === undefined ? {} : { logger: options.logger }),
        },
      ),
      this.#trap,
    );
    const informer = new SharedIndexInformer<KubeObject>(lw, {
      name,
      queue: g.queue,
      indexers: {
        [NAMESPACE_INDEX]: SOAK_INDEXERS[NAMESPACE_INDEX]!,
        [APP_INDEX]: SOAK_INDEXERS[APP_INDEX]!,
      },
      resyncPeriodMs: g.resyncPeriodMs,
      objectType:
        g.metadataOnly === true
          ? { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata' }
          : EXPECTED_TYPES[resource.name],
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      reflectorOptions: {
        // The reflector's own default (100 ms → 30 s, reset on progress) unless a run asks otherwise.
        ...(options.backoffInitialMs === undefined && options.backoffCapMs === undefined
          ? {}
          : {
              backoff: new ExponentialBackoff({
                initialMs: options.backoffInitialMs ?? 100,
                capMs: options.backoffCapMs ?? 30_000,
              }),
            }),
        useWatchList: g.useWatchList,
        ...(g.group === 'all' && resource.name === 'pods' ? { pageSize: 250 } : {}),
      },
    });
    const scope: InformerScope = {
      ...(g.namespace === undefined ? {} : { namespace: g.namespace }),
      ...(g.labelSelector === undefined ? {} : { labelSelector: parseLabelSelector(g.labelSelector) }),
    };
    const recorders = [
      new HandlerRecorder({ where: `${name} / fast`, scope, slow: false, throwEvery: 997 }),
      new HandlerRecorder({ where: `${name} / slow`, scope, slow: true, throwEvery: 1009 }),
    ];
    const registrations = [
      informer.addEventHandler(recorders[0]!.handler, { name: 'fast' }),
      informer.addEventHandler(recorders[1]!.handler, { name: 'slow' }),
    ];
    return {
      name,
      group: g.group,
      resource,
      scope,
      informer,
      listerWatcher: lw,
      recorders,
      registrations,
      removed: undefined,
    };
  }

  /**
   * Creates and starts one more informer (pods, all namespaces, named `all/pods#late`) while churn
   * and faults run: its initial sync happens under faults. Returns it.
   */
  startLateInformer(): InformerUnderTest {
    const late = this.#build(GROUPS[0]!, 'pods', '#late');
    late.informer.addIndexers({ [TIER_INDEX]: SOAK_INDEXERS[TIER_INDEX]! });
    this.informers.push(late);
    this.#runs.push(late.informer.run(this.#controller.signal));
    return late;
  }

  /**
   * Registers the `late` handler of every informer and adds the `tier` index (call it while the
   * informers run). The late handler must get exactly the cached objects as initial adds.
   */
  addLateHandlers(): void {
    for (const i of this.informers) {
      const recorder = new HandlerRecorder({ where: `${i.name} / late`, scope: i.scope, slow: false });
      // Synchronous: the adds queued are exactly what the cache holds now.
      recorder.expectedInitialAdds = i.informer.getStore().list().length;
      i.registrations.push(i.informer.addEventHandler(recorder.handler, { name: 'late' }));
      i.recorders.push(recorder);
      i.informer.addIndexers({ [TIER_INDEX]: SOAK_INDEXERS[TIER_INDEX]! });
    }
  }

  /** Registers a handler on every informer, to be removed by {@link removeTemporaryHandlers}. */
  addTemporaryHandlers(): void {
    for (const i of this.informers) {
      const recorder = new HandlerRecorder({ where: `${i.name} / removed`, scope: i.scope, slow: true });
      i.removed = {
        recorder,
        registration: i.informer.addEventHandler(recorder.handler, { name: 'removed' }),
        eventsAtRemoval: -1,
      };
    }
  }

  /** Removes the handlers of {@link addTemporaryHandlers}, noting how many events each had got. */
  removeTemporaryHandlers(): void {
    for (const i of this.informers) {
      if (i.removed === undefined || i.removed.eventsAtRemoval >= 0) continue;
      i.removed.registration.remove();
      // A call in progress (the slow handler awaiting) may still complete and count.
      i.removed.eventsAtRemoval = i.removed.recorder.total + i.removed.recorder.inFlight;
    }
  }

  /** Starts every informer created so far (non-blocking). */
  start(): void {
    const signal = this.#controller.signal;
    for (const i of this.informers) this.#runs.push(i.informer.run(signal));
  }

  /** Resolves true once every informer and every handler registration has synced; false after `timeoutMs`. */
  async waitForSync(timeoutMs: number): Promise<boolean> {
    const signal = AbortSignal.any([this.#controller.signal, AbortSignal.timeout(timeoutMs)]);
    return waitForCacheSync(
      signal,
      ...this.informers.flatMap((i) => [i.informer.hasSynced, ...i.registrations.map((r) => r.hasSynced)]),
    );
  }

  /** Stops every informer and resolves once all have stopped. Rejects if an informer's run rejected. */
  async stop(): Promise<void> {
    this.#controller.abort();
    await Promise.all(this.#runs);
  }
}
