/**
 * `PodsPerNodeController`: a complete controller in the style of client-go's workqueue example.
 *
 * Informers (from a SharedInformerFactory) turn pod events into node names on a rate-limited work
 * queue; workers take one node at a time, read the node's pods from the informer's `byNode` index
 * and make the ConfigMap `pods-per-node-<node>` say which pods run there. Failures are retried with
 * per-key exponential backoff and dropped after `maxRetries`.
 */
import type { EventRecorder } from '@kinformer/events';
import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig, V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import {
  apiError,
  componentLogger,
  ErrorCodes,
  isDeletedFinalStateUnknown,
  isKinformerError,
  KinformerError,
  RateLimitingQueue,
  realClock,
  requestOptions,
  waitForCacheSync,
} from 'kinformer';
import type {
  Clock,
  DeletedFinalStateUnknown,
  InformerAndLister,
  Logger,
  RateLimiter,
  ResourceEventHandlerRegistration,
  SharedInformerFactory,
} from 'kinformer';

/** Name of the pods informer's index from node name to the pods bound to it. */
export const BY_NODE_INDEX = 'byNode';
/** The label the controller puts on its ConfigMaps, and selects them by. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** The value of {@link MANAGED_BY_LABEL} (also the Lease name the example uses). */
export const CONTROLLER_NAME = 'pods-per-node-controller';
/** The ConfigMaps' name prefix: node `n1` is summarised in `pods-per-node-n1`. */
export const CONFIGMAP_PREFIX = 'pods-per-node-';

/** The index function of {@link BY_NODE_INDEX}: a bound pod's node, nothing for a pending pod. */
export function podNodeIndexFunc(pod: V1Pod): string[] {
  const node = pod.spec?.nodeName;
  return node ? [node] : [];
}

/** The ConfigMap that summarises `node`. */
export function configMapNameFor(node: string): string {
  return CONFIGMAP_PREFIX + node;
}

/**
 * What the ConfigMap of `node` should hold: `node`, `count` and `pods` (the `namespace/name` keys
 * of the pods bound to the node, sorted, one per line). The node is kept in the data rather than a
 * label because node names may be longer than a label value (63 characters).
 */
export function desiredConfigMapData(node: string, pods: readonly V1Pod[]): Record<string, string> {
  const keys = pods.map((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`).sort();
  return { node, count: String(keys.length), pods: keys.join('\n') };
}

/** What one reconcile did to the node's ConfigMap. */
export type ReconcileOutcome = 'created' | 'updated' | 'deleted' | 'unchanged';

/** One reconcile attempt, as reported to {@link ReconcileHooks.afterReconcile}. */
export interface ReconcileRecord {
  node: string;
  /** 1 for the first attempt, n + 1 after n rate-limited requeues. */
  attempt: number;
  /** The controller clock's time when the attempt started / ended, ms. */
  startedAt: number;
  endedAt: number;
  /** What happened: an outcome, `'failed'`, or `'aborted'` when the controller stopped mid-way. */
  result: ReconcileOutcome | 'failed' | 'aborted';
  /** For `'failed'` and `'aborted'`: why. */
  error?: KinformerError;
}

/** Hooks for tests and demos. */
export interface ReconcileHooks {
  /**
   * Runs at the start of every attempt, before anything is read. Throwing or rejecting fails the
   * attempt as an API error would (a `KinformerError` keeps its code, so `ERR_CONFLICT` takes the
   * conflict path): this is how tests inject failures.
   */
  beforeReconcile?: (node: string, attempt: number) => void | Promise<void>;
  /** Runs after every attempt with its outcome. Must not throw. */
  afterReconcile?: (record: ReconcileRecord) => void;
}

/** Counters of a {@link PodsPerNodeController} (a snapshot). */
export interface PodsPerNodeMetrics {
  /** Reconcile attempts started. */
  reconciles: number;
  /** Attempts that failed (including conflicts). */
  failures: number;
  /** Failed attempts whose cause was a 409 (Conflict or AlreadyExists). */
  conflicts: number;
  /** Keys put back with `addRateLimited` after a failure. */
  requeues: number;
  /** Keys given up after `maxRetries` failed retries. */
  dropped: number;
  /** Successful attempts by outcome. */
  created: number;
  updated: number;
  deleted: number;
  unchanged: number;
  /** Keys waiting in the queue now (not counting those waiting out a backoff). */
  queueDepth: number;
}

/** Options of {@link PodsPerNodeController}. */
export interface PodsPerNodeControllerOptions {
  /** Where the pods and ConfigMaps informers come from (shared with anything else that uses it). */
  factory: SharedInformerFactory;
  /** For the writes (a `CoreV1Api` is made from it): the same cluster as the factory's. */
  kubeConfig: KubeConfig;
  /** The namespace of the ConfigMaps. */
  namespace: string;
  /** Concurrent workers (default 2). A key is never processed by two workers at once. */
  workers?: number;
  /** Failed retries after which a key is dropped (default 5, as client-go's example). */
  maxRetries?: number;
  /** The queue's rate limiter (default `defaultControllerRateLimiter()`: 5 ms doubling, 10 qps overall). */
  rateLimiter?: RateLimiter<string>;
  /** The queue's clock (its backoff timers) and the clock of {@link ReconcileRecord} times. */
  clock?: Clock;
  hooks?: ReconcileHooks;
  /**
   * Where the controller records Kubernetes Events about its ConfigMaps: `Normal Created/Updated/Deleted`
   * after each write, `Warning ReconcileFailed` when a key is dropped after `maxRetries`. An
   * `ApiEventRecorder` in production (the Replica makes one), a `FakeRecorder` in tests; none by default.
   */
  recorder?: EventRecorder;
  logger?: Logger;
}

/**
 * Keeps one ConfigMap per node, `pods-per-node-<node>` in `namespace`, listing the pods bound to
 * that node; deletes it when the node has no pods. Level-triggered: every pod event enqueues the
 * node(s) it touches (old and new node when a pod moves), every event on one of its own ConfigMaps
 * enqueues that ConfigMap's node (so edits and deletes by others are undone), and a reconcile always
 * recomputes the whole ConfigMap from the informer caches.
 *
 * Writes are optimistic: updates and deletes carry the cached `resourceVersion`, so a stale cache
 * gets a 409 and the key is retried with backoff once the cache caught up. A key is retried at most
 * `maxRetries` times, then dropped (logged at error level) until the next event for it.
 *
 * Build it before the factory starts (its handlers must see the initial list), then `run(signal)`;
 * under leader election, `onStartedLeading: (signal) => controller.run(signal)`. A controller runs
 * once: its queue is shut down when `run` ends.
 */
export class PodsPerNodeController {
  readonly namespace: string;
  readonly #pods: InformerAndLister<V1Pod>;
  readonly #configMaps: InformerAndLister<V1ConfigMap>;
  readonly #registrations: ResourceEventHandlerRegistration[];
  readonly #queue: RateLimitingQueue<string>;
  readonly #api: CoreV1Api;
  readonly #factory: SharedInformerFactory;
  readonly #workers: number;
  readonly #maxRetries: number;
  readonly #clock: Clock;
  readonly #hooks: ReconcileHooks;
  readonly #recorder: EventRecorder | undefined;
  readonly #logger: Logger;
  readonly #counts = {
    reconciles: 0,
    failures: 0,
    conflicts: 0,
    requeues: 0,
    dropped: 0,
    created: 0,
    updated: 0,
    deleted: 0,
    unchanged: 0,
  };
  #started = false;

  /**
   * Gets the pods informer (all namespaces) and the ConfigMaps informer (`namespace`, this
   * controller's label only) from the factory, adds the `byNode` index unless the pods informer
   * has it, and registers the handlers. Throws `ERR_INVALID_OPTION` for `workers < 1` or a negative
   * `maxRetries`.
   */
  constructor(options: PodsPerNodeControllerOptions) {
    const workers = options.workers ?? 2;
    const maxRetries = options.maxRetries ?? 5;
    if (!Number.isInteger(workers) || workers < 1)
      throw new KinformerError(ErrorCodes.INVALID_OPTION, `workers must be an integer ≥ 1, got ${workers}`);
    if (!Number.isInteger(maxRetries) || maxRetries < 0)
      throw new KinformerError(
        ErrorCodes.INVALID_OPTION,
        `maxRetries must be an integer ≥ 0, got ${maxRetries}`,
      );
    this.namespace = options.namespace;
    this.#factory = options.factory;
    this.#workers = workers;
    this.#maxRetries = maxRetries;
    this.#clock = options.clock ?? realClock;
    this.#hooks = options.hooks ?? {};
    this.#recorder = options.recorder;
    this.#logger = componentLogger(options.logger, {
      component: CONTROLLER_NAME,
      namespace: options.namespace,
    });
    this.#api = options.kubeConfig.makeApiClient(CoreV1Api);
    this.#queue = new RateLimitingQueue<string>({
      name: CONTROLLER_NAME,
      clock: this.#clock,
      ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });

    // 1. Informers, through the factory: anyone else asking for pods gets the same one.
    this.#pods = options.factory.core.v1.pods();
    if (!(BY_NODE_INDEX in this.#pods.informer.getIndexer().getIndexers())) {
      this.#pods.informer.addIndexers({ [BY_NODE_INDEX]: podNodeIndexFunc });
    }
    this.#configMaps = options.factory.core.v1.configMaps({
      namespace: options.namespace,
      labelSelector: `${MANAGED_BY_LABEL}=${CONTROLLER_NAME}`,
    });

    // 2. Handlers only compute keys and enqueue them: never any work, never any API call.
    const enqueue = (node: string | undefined): void => {
      if (node) this.#queue.add(node);
    };
    const nodeOfPod = (pod: V1Pod | DeletedFinalStateUnknown<V1Pod>): string | undefined =>
      (isDeletedFinalStateUnknown(pod) ? pod.obj : pod).spec?.nodeName;
    const nodeOfConfigMap = (cm: V1ConfigMap | DeletedFinalStateUnknown<V1ConfigMap>): string | undefined =>
      (isDeletedFinalStateUnknown(cm) ? cm.obj : cm).data?.node;
    this.#registrations = [
      this.#pods.informer.addEventHandler(
        {
          onAdd: (pod) => enqueue(nodeOfPod(pod)),
          onUpdate: (oldPod, newPod) => {
            const before = nodeOfPod(oldPod);
            const after = nodeOfPod(newPod);
            enqueue(after);
            if (before !== after) enqueue(before); // it moved (or was just scheduled): both nodes change
          },
          onDelete: (pod) => enqueue(nodeOfPod(pod)), // a tombstone still carries the last known pod
        },
        { name: `${CONTROLLER_NAME}-pods` },
      ),
      this.#configMaps.informer.addEventHandler(
        {
          onAdd: (cm) => enqueue(nodeOfConfigMap(cm)),
          onUpdate: (oldCm, newCm) => {
            enqueue(nodeOfConfigMap(newCm));
            if (nodeOfConfigMap(oldCm) !== nodeOfConfigMap(newCm)) enqueue(nodeOfConfigMap(oldCm));
          },
          onDelete: (cm) => enqueue(nodeOfConfigMap(cm)),
        },
        { name: `${CONTROLLER_NAME}-configmaps` },
      ),
    ];
  }

  /**
   * Starts the factory's informers (those not started yet), waits until both handlers have seen the
   * initial lists, then runs the workers until `signal` aborts. Then it shuts the queue down, lets
   * in-flight reconciles finish (their API requests are aborted with `signal`), removes its handlers
   * and resolves. Keys still queued are not processed after `signal` aborted. Rejects with
   * `ERR_ALREADY_STARTED` on a second call and with `ERR_CACHE_SYNC_FAILED` when the server refuses
   * a list (403, 404); resolves without reconciling when `signal` aborts before the caches synced.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#started)
      throw new KinformerError(ErrorCodes.ALREADY_STARTED, `${CONTROLLER_NAME} already ran; make a new one`);
    this.#started = true;
    const onAbort = (): void => this.#queue.shutDown();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      this.#factory.start(signal);
      this.#logger.info('waiting for informer caches to sync');
      const synced = await waitForCacheSync(signal, ...this.#registrations.map((r) => r.hasSynced));
      if (!synced || signal.aborted) return;
      this.#logger.info(
        { workers: this.#workers, queued: this.#queue.len() },
        'caches synced; starting workers',
      );
      const workers: Promise<void>[] = [];
      for (let i = 0; i < this.#workers; i++) workers.push(this.#worker(signal));
      await Promise.all(workers);
      this.#logger.info('workers stopped');
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.#queue.shutDown();
      for (const registration of this.#registrations) registration.remove();
    }
  }

  /**
   * Makes the ConfigMap of `node` match the pods the cache has for it: creates it, replaces it
   * (conditional on the cached resourceVersion), deletes it when there are no pods, or leaves it
   * when it already matches. Reads only the informer caches; rejects with a `KinformerError`
   * (`ERR_CONFLICT` for 409) when a write fails. `signal` aborts the request in flight.
   */
  async reconcile(node: string, signal: AbortSignal): Promise<ReconcileOutcome> {
    const pods = this.#pods.lister.byIndex(BY_NODE_INDEX, node);
    const name = configMapNameFor(node);
    const what = `configmap ${this.namespace}/${name}`;
    const existing = this.#configMaps.lister.namespace(this.namespace).get(name);
    const options = requestOptions(signal);
    try {
      if (pods.length === 0) {
        if (existing === undefined) return 'unchanged';
        const resourceVersion = existing.metadata?.resourceVersion;
        await this.#api.deleteNamespacedConfigMap(
          {
            name,
            namespace: this.namespace,
            body: { preconditions: resourceVersion === undefined ? {} : { resourceVersion } },
          },
          options,
        );
        return 'deleted';
      }
      const data = desiredConfigMapData(node, pods);
      if (existing === undefined) {
        const body: V1ConfigMap = {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, namespace: this.namespace, labels: { [MANAGED_BY_LABEL]: CONTROLLER_NAME } },
          data,
        };
        await this.#api.createNamespacedConfigMap({ namespace: this.namespace, body }, options);
        return 'created';
      }
      if (sameData(existing.data, data)) return 'unchanged';
      // The cached object is shared and frozen: build a new one. Its resourceVersion makes the
      // replace conditional: 409 when the cache is behind the server.
      const body: V1ConfigMap = { ...existing, metadata: { ...existing.metadata }, data };
      await this.#api.replaceNamespacedConfigMap({ name, namespace: this.namespace, body }, options);
      return 'updated';
    } catch (err) {
      const error = apiError(err, { what, signal });
      if (isKinformerError(error, ErrorCodes.NOT_FOUND) && pods.length === 0) return 'unchanged'; // already gone
      throw error;
    }
  }

  /** What this controller's Events are about: the node's ConfigMap (it need not exist). */
  #configMapReference(node: string): { apiVersion: string; kind: string; name: string; namespace: string } {
    return { apiVersion: 'v1', kind: 'ConfigMap', name: configMapNameFor(node), namespace: this.namespace };
  }

  /** The counters (a snapshot). */
  metrics(): PodsPerNodeMetrics {
    return { ...this.#counts, queueDepth: this.#queue.len() };
  }

  /** How often `node` was requeued after a failure since it last succeeded (or was dropped). */
  numRequeues(node: string): number {
    return this.#queue.numRequeues(node);
  }

  /** client-go's `runWorker`/`processNextWorkItem`: get → reconcile → forget | addRateLimited → done. */
  async #worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const { item: node, shutdown } = await this.#queue.get();
      if (shutdown) return;
      try {
        if (signal.aborted) return; // stopped (leadership lost): leave the rest to the next leader
        await this.#process(node, signal);
      } finally {
        this.#queue.done(node);
      }
    }
  }

  async #process(node: string, signal: AbortSignal): Promise<void> {
    const attempt = this.#queue.numRequeues(node) + 1;
    const startedAt = this.#clock.now();
    this.#counts.reconciles++;
    let record: ReconcileRecord;
    try {
      await this.#hooks.beforeReconcile?.(node, attempt);
      const result = await this.reconcile(node, signal);
      this.#counts[result]++;
      this.#queue.forget(node); // success: the next failure starts from the base delay again
      if (result !== 'unchanged') {
        this.#logger.debug({ node, result, attempt }, 'reconciled');
        this.#recorder?.event(
          this.#configMapReference(node),
          'Normal',
          EVENT_REASONS[result],
          `${result} ConfigMap ${configMapNameFor(node)} for node ${node}`,
          { action: 'Reconcile' },
        );
      }
      record = { node, attempt, startedAt, endedAt: this.#clock.now(), result };
    } catch (err) {
      const error = err instanceof KinformerError ? err : apiError(err, { what: `node ${node}`, signal });
      if (signal.aborted) {
        // Not the key's fault: we stopped. Whoever leads next reconciles it from scratch.
        record = { node, attempt, startedAt, endedAt: this.#clock.now(), result: 'aborted', error };
      } else {
        this.#counts.failures++;
        const conflict = isKinformerError(error, ErrorCodes.CONFLICT);
        if (conflict) this.#counts.conflicts++;
        if (this.#queue.numRequeues(node) < this.#maxRetries) {
          this.#counts.requeues++;
          this.#queue.addRateLimited(node);
          // A conflict is expected when the cache is behind our own last write: debug, not warn.
          const level = conflict ? 'debug' : 'warn';
          this.#logger[level]({ node, attempt, err: error }, 'reconcile failed; requeued with backoff');
        } else {
          this.#counts.dropped++;
          this.#queue.forget(node);
          this.#logger.error(
            { node, attempts: attempt, err: error },
            'dropping node out of the queue after too many retries',
          );
          this.#recorder?.event(
            this.#configMapReference(node),
            'Warning',
            'ReconcileFailed',
            `gave up on node ${node} after ${attempt} attempts: ${error.message}`,
            { action: 'Reconcile' },
          );
        }
        record = { node, attempt, startedAt, endedAt: this.#clock.now(), result: 'failed', error };
      }
    }
    this.#hooks.afterReconcile?.(record);
  }
}

/** The Event reason for each write a reconcile made. */
const EVENT_REASONS = { created: 'Created', updated: 'Updated', deleted: 'Deleted' } as const;

function sameData(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>>,
): boolean {
  if (a === undefined) return false;
  const keys = Object.keys(b);
  if (Object.keys(a).length !== keys.length) return false;
  for (const key of keys) if (a[key] !== b[key]) return false;
  return true;
}
