/**
 * One replica of the controller process: its own SharedInformerFactory (started at once, so a
 * follower's caches are warm when it takes over), its own PodsPerNodeController, and a LeaderElector
 * on the shared Lease that runs the controller only while this replica leads.
 */
import { ApiEventRecorder } from '@kinformer/events';
import type { EventRecorder } from '@kinformer/events';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  componentLogger,
  ErrorCodes,
  KinformerError,
  LeaderElector,
  LeaseLock,
  realClock,
  SharedInformerFactory,
} from 'kinformer';
import type { Clock, LeaderElectionRecord, LockOperationOptions, Logger, ResourceLock } from 'kinformer';
import { CONTROLLER_NAME, PodsPerNodeController } from './podsPerNodeController.js';
import type { PodsPerNodeControllerOptions } from './podsPerNodeController.js';

/** How long a graceful stop waits for the recorder's last Events before dropping them. */
const STOP_FLUSH_MS = 1000;

/** Options of {@link Replica}. */
export interface ReplicaOptions {
  kubeConfig: KubeConfig;
  /** This replica's identity in the Lease (unique among replicas, e.g. the pod name). */
  identity: string;
  /** Namespace of the ConfigMaps and of the Lease. */
  namespace: string;
  /** Name of the Lease (default {@link CONTROLLER_NAME}). */
  leaseName?: string;
  /** Leader election timing (defaults: client-go's 15 s / 10 s / 2 s). */
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Controller options other than the factory, KubeConfig and namespace. */
  controller?: Omit<PodsPerNodeControllerOptions, 'factory' | 'kubeConfig' | 'namespace'>;
  /** Called when this replica starts leading and when its controller has stopped (`leading: false`). */
  onLeadershipChange?: (identity: string, leading: boolean) => void;
  /** Called when this replica observes a new holder of the Lease (`''` after a release). */
  onNewLeader?: (holder: string) => void;
  /**
   * Where the controller records Events (default: an `ApiEventRecorder` writing events.k8s.io/v1
   * Events as `pods-per-node-controller`, instance = `identity`, shut down with the replica).
   */
  recorder?: EventRecorder;
  /** Timestamps of {@link terms} (default: the wall clock). */
  clock?: Clock;
  /** The leader elector's clock (default: the wall clock); tests drive the election with a `FakeClock`. */
  electionClock?: Clock;
  /** The elector's jitter randomness, in [0, 1) (default `Math.random`). */
  electionRandom?: () => number;
  logger?: Logger;
}

/** The time this replica led: from `onStartedLeading` until its controller's `run` resolved. */
export interface LeadershipTerm {
  startedAt: number;
  /** Unset while it still leads. */
  stoppedAt?: number;
}

/**
 * A controller replica under Lease leader election.
 *
 * - `start()` starts the informers and campaigns; when elected the controller runs until leadership
 *   ends. A controller runs once, so a replica leads at most once (as a client-go controller process
 *   exits when it loses the lease); `done` resolves when its election ended.
 * - `stop()` is a graceful shutdown: the controller stops first (its in-flight writes finish or are
 *   aborted), then the Lease is released so another replica takes over at its next retry.
 * - `kill()` simulates a crash: the Lease can no longer be written (not renewed, not released) and
 *   everything stops at once; another replica takes over after the lease duration.
 */
export class Replica {
  readonly identity: string;
  readonly factory: SharedInformerFactory;
  readonly controller: PodsPerNodeController;
  readonly elector: LeaderElector;
  /** Leadership terms, in order (at most one: see the class comment). */
  readonly terms: LeadershipTerm[] = [];
  readonly #lock: SeverableLock;
  readonly #ownRecorder: ApiEventRecorder | undefined;
  readonly #all = new AbortController();
  readonly #work = new AbortController();
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #onLeadershipChange: ((identity: string, leading: boolean) => void) | undefined;
  #running: Promise<void> | undefined;
  #done: Promise<void> | undefined;

  constructor(options: ReplicaOptions) {
    this.identity = options.identity;
    this.#clock = options.clock ?? realClock;
    this.#logger = componentLogger(options.logger, { component: 'replica', identity: options.identity });
    this.#onLeadershipChange = options.onLeadershipChange;
    const logger = options.logger === undefined ? {} : { logger: options.logger };
    this.factory = new SharedInformerFactory(options.kubeConfig, logger);
    this.#ownRecorder =
      options.recorder === undefined
        ? new ApiEventRecorder(options.kubeConfig, {
            ...logger,
            reportingController: CONTROLLER_NAME,
            reportingInstance: options.identity,
          })
        : undefined;
    const recorder = options.recorder ?? this.#ownRecorder!;
    this.controller = new PodsPerNodeController({
      ...logger,
      recorder,
      ...options.controller,
      factory: this.factory,
      kubeConfig: options.kubeConfig,
      namespace: options.namespace,
    });
    this.#lock = new SeverableLock(
      new LeaseLock(options.kubeConfig, {
        namespace: options.namespace,
        name: options.leaseName ?? CONTROLLER_NAME,
        identity: options.identity,
        eventRecorder: recorder, // "<identity> became leader" / "stopped leading" Events on the Lease
      }),
    );
    const onNewLeader = options.onNewLeader;
    this.elector = new LeaderElector({
      ...logger,
      lock: this.#lock,
      releaseOnCancel: true,
      ...(options.electionClock === undefined ? {} : { clock: options.electionClock }),
      ...(options.electionRandom === undefined ? {} : { random: options.electionRandom }),
      ...(options.leaseDurationMs === undefined ? {} : { leaseDurationMs: options.leaseDurationMs }),
      ...(options.renewDeadlineMs === undefined ? {} : { renewDeadlineMs: options.renewDeadlineMs }),
      ...(options.retryPeriodMs === undefined ? {} : { retryPeriodMs: options.retryPeriodMs }),
      callbacks: {
        onStartedLeading: (signal) => {
          this.#running = this.#lead(signal);
          return this.#running;
        },
        onStoppedLeading: () => this.#logger.info('stopped leading'),
        ...(onNewLeader === undefined ? {} : { onNewLeader }),
      },
    });
  }

  /** Starts the informers and the election (idempotent). */
  start(): void {
    if (this.#done !== undefined) return;
    this.factory.start(this.#all.signal);
    this.#done = this.elector.run(this.#all.signal).then(
      () => undefined,
      (err: unknown) => this.#logger.error({ err }, 'leader election ended with an error'),
    );
  }

  /** Lease requests this replica has in flight (tests wait for 0 before moving a fake election clock on). */
  get leaseRequestsInFlight(): number {
    return this.#lock.inFlight;
  }

  /** Resolves when the election ended (after `stop`, `kill`, or a lost lease). */
  get done(): Promise<void> {
    return this.#done ?? Promise.resolve();
  }

  /** True while the controller runs (between `onStartedLeading` and the end of its `run`). */
  isLeading(): boolean {
    const term = this.terms.at(-1);
    return term !== undefined && term.stoppedAt === undefined;
  }

  /** Graceful shutdown: stop the controller, then release the Lease, then stop the informers. */
  async stop(): Promise<void> {
    this.#work.abort();
    await this.#running;
    this.#all.abort();
    await this.done;
    await this.factory.shutdown();
    if (this.#ownRecorder !== undefined) {
      // Give the last Events ("stopped leading") a moment to be written, then stop: what is still
      // queued is dropped, as client-go's broadcaster Shutdown does.
      const grace = new AbortController();
      await Promise.race([this.#ownRecorder.flush(), this.#clock.sleep(STOP_FLUSH_MS, grace.signal)]);
      grace.abort();
      await this.#ownRecorder.shutdown();
    }
  }

  /** A crash: from now on the Lease is neither renewed nor released, and everything stops. */
  async kill(): Promise<void> {
    this.#lock.sever();
    this.#all.abort();
    await this.done;
    await this.factory.shutdown();
    await this.#ownRecorder?.shutdown(); // a crash: unwritten Events are lost
  }

  async #lead(leaderSignal: AbortSignal): Promise<void> {
    const term: LeadershipTerm = { startedAt: this.#clock.now() };
    this.terms.push(term);
    this.#logger.info('started leading');
    this.#onLeadershipChange?.(this.identity, true);
    try {
      await this.controller.run(AbortSignal.any([leaderSignal, this.#work.signal]));
    } finally {
      term.stoppedAt = this.#clock.now();
      this.#onLeadershipChange?.(this.identity, false);
    }
  }
}

/** A lock whose writes can be cut off, as a crash (or a network partition) would. */
class SeverableLock implements ResourceLock {
  readonly identity: string;
  readonly #lock: ResourceLock;
  #severed = false;
  /** Operations started and not settled yet. */
  inFlight = 0;

  constructor(lock: ResourceLock) {
    this.#lock = lock;
    this.identity = lock.identity;
  }

  sever(): void {
    this.#severed = true;
  }

  get(options?: LockOperationOptions): Promise<LeaderElectionRecord> {
    return this.#track(() => this.#lock.get(options));
  }

  create(record: LeaderElectionRecord, options?: LockOperationOptions): Promise<void> {
    return this.#track(() => this.#lock.create(record, options));
  }

  update(record: LeaderElectionRecord, options?: LockOperationOptions): Promise<void> {
    return this.#track(() => this.#lock.update(record, options));
  }

  describe(): string {
    return this.#lock.describe();
  }

  recordEvent(message: string): void {
    if (!this.#severed) this.#lock.recordEvent?.(message);
  }

  async #track<T>(op: () => Promise<T>): Promise<T> {
    if (this.#severed) return this.#gone();
    this.inFlight++;
    try {
      return await op();
    } finally {
      this.inFlight--;
    }
  }

  #gone(): Promise<never> {
    return Promise.reject(
      new KinformerError(ErrorCodes.CONNECTION, `replica ${this.identity} was killed: no more requests`),
    );
  }
}
