/**
 * `@kinformer/runtime/testing`: run a Manager against the embedded `FakeApiServer`, the envtest of
 * TypeScript without etcd or kube-apiserver binaries.
 *
 * ```ts
 * await using env = await TestEnv.start();
 * const mgr = env.manager({ name: 'my-operator' });
 * mgr.controller('x').for(kinds.deployments).reconcile(reconcile);
 * env.run(mgr);
 * await env.server.waitFor(() => …);
 * ```
 */
import { kubeConfigListerWatchers, ObjectClient } from '@kinformer/client-node';
import { createLogger, ErrorCodes, KinformerError } from '@kinformer/core';
import type { KubeObject } from '@kinformer/core';
import type { ListerWatcherFactory } from '@kinformer/informer';
import { FakeApiServer } from '@kinformer/testing';
import type { FakeApiServerOptions } from '@kinformer/testing';
import type { KubeConfig } from '@kubernetes/client-node';
import { Manager } from './manager.js';
import type { ManagerOptions } from './manager.js';
import { laggingWatch } from './laggingWatch.js';
import { objectClientLeaseStore } from './hashSharding.js';
import type { RangeLeaseStore } from './rangeCoordinator.js';

/** Options of {@link TestEnv.start}. */
export interface TestEnvOptions {
  /** Options of the FakeApiServer it starts (ignored when `server` is given). */
  server?: FakeApiServerOptions;
  /** Use this server instead of starting one (it is not closed by {@link TestEnv.stop}). */
  existingServer?: FakeApiServer;
  /**
   * Deliver every watch event to the Managers' informers this long after the server sent it (lists
   * are not delayed): a watch cache that runs behind, as kube-apiserver's does under load. Default 0.
   */
  informerLagMs?: number;
  /** How long {@link TestEnv.stop} waits for each Manager to stop before giving up on it. Default 10 s. */
  stopTimeoutMs?: number;
}

/**
 * A FakeApiServer and the Managers started on it. {@link stop} (or `await using`) stops every
 * Manager (bounded, so a failing test never hangs the runner) and closes the server. Managers log
 * nothing below `error` unless given a logger (`KINFORMER_LOG_LEVEL` still applies), so expected,
 * retried faults stay out of the test output.
 */
export class TestEnv {
  readonly server: FakeApiServer;
  readonly kubeConfig: KubeConfig;
  readonly #ownServer: boolean;
  readonly #stopTimeoutMs: number;
  readonly #informerLagMs: number;
  readonly #runs: Array<{ stop: AbortController; done: Promise<unknown>; manager: Manager }> = [];

  private constructor(server: FakeApiServer, own: boolean, stopTimeoutMs: number, informerLagMs: number) {
    this.server = server;
    this.#informerLagMs = informerLagMs;
    this.kubeConfig = server.kubeConfig();
    this.#ownServer = own;
    this.#stopTimeoutMs = stopTimeoutMs;
  }

  static async start(options: TestEnvOptions = {}): Promise<TestEnv> {
    const server = options.existingServer ?? (await FakeApiServer.start(options.server ?? {}));
    return new TestEnv(
      server,
      options.existingServer === undefined,
      options.stopTimeoutMs ?? 10_000,
      options.informerLagMs ?? 0,
    );
  }

  /** A Manager on this server (not started; call {@link run}). */
  manager(options: ManagerOptions = {}): Manager {
    return new Manager(this.kubeConfig, {
      gracefulShutdownMs: 5_000,
      logger: createLogger({ level: process.env['KINFORMER_LOG_LEVEL'] || 'error' }),
      ...(this.#informerLagMs > 0 ? { listerWatcherFactory: this.#laggingFactory() } : {}),
      ...options,
    });
  }

  #laggingFactory(): ListerWatcherFactory {
    const base = kubeConfigListerWatchers(this.kubeConfig);
    const lag = this.#informerLagMs;
    return (gvr, request) => laggingWatch<KubeObject>(base(gvr, request), lag);
  }

  /**
   * Starts `manager` in the background. Returns a function that stops it and resolves when it has
   * stopped (with its error, if `start` rejected: a lost lease).
   */
  run(manager: Manager): () => Promise<unknown> {
    const stop = new AbortController();
    const done = manager.start(stop.signal).then(
      () => undefined,
      (err: unknown) => err,
    );
    const entry = { stop, done, manager };
    this.#runs.push(entry);
    return async () => {
      stop.abort();
      return await this.#bounded(done);
    };
  }

  /** Stops every Manager started with {@link run}, then closes the server (if this env started it). */
  async stop(): Promise<void> {
    for (const r of this.#runs) r.stop.abort();
    await Promise.all(this.#runs.map((r) => this.#bounded(r.done)));
    this.#runs.length = 0;
    if (this.#ownServer) await this.server.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  async #bounded(p: Promise<unknown>): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<unknown>((resolve) => {
      timer = setTimeout(
        () => resolve(new Error(`a Manager did not stop within ${this.#stopTimeoutMs} ms`)),
        this.#stopTimeoutMs,
      );
    });
    try {
      return await Promise.race([p, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * A Manager's connection to the server that a test can cut: while {@link cut} is true, every Lease
 * request of `hashSharding` and every LIST and WATCH its informers start fail with
 * `ERR_CONNECTION`, and setting it ends every watch open through it with that error (a partition;
 * cut forever and stop the Manager: a kill -9, nothing released). Pass {@link leases} as
 * `hashSharding.leases` and {@link listerWatcherFactory} as the Manager's.
 */
export class SeverableConnection {
  readonly leases: RangeLeaseStore;
  readonly listerWatcherFactory: ListerWatcherFactory;
  #cut = false;
  readonly #open = new Set<() => void>();

  constructor(kubeConfig: KubeConfig, ring: { namespace: string; name: string }) {
    const guard = (): void => {
      if (this.#cut) throw severed();
    };
    const base = kubeConfigListerWatchers(kubeConfig);
    this.listerWatcherFactory = (gvr, request) => {
      const lw = base(gvr, request);
      return {
        list: async (o, c) => (guard(), lw.list(o, c)),
        watch: async (o, c) => {
          guard();
          return this.#severable(await lw.watch(o, c));
        },
        ...(lw.watchListSupported === undefined ? {} : { watchListSupported: lw.watchListSupported }),
      };
    };
    const store = objectClientLeaseStore(
      new ObjectClient(kubeConfig),
      ring.namespace,
      ring.name,
      this.listerWatcherFactory,
    );
    this.leases = {
      list: async (signal) => (guard(), store.list(signal)),
      create: async (lease, signal) => (guard(), store.create(lease, signal)),
      update: async (lease, signal) => (guard(), store.update(lease, signal)),
      watch: (signal, onChange) => store.watch!(signal, onChange),
    };
  }

  /** True while cut off. Setting it to true also ends every open watch. */
  get cut(): boolean {
    return this.#cut;
  }

  set cut(value: boolean) {
    this.#cut = value;
    if (value) for (const end of [...this.#open]) end();
  }

  /** `events`, ending with `ERR_CONNECTION` as soon as the connection is cut. */
  #severable<E>(events: AsyncIterable<E>): AsyncIterable<E> {
    const open = this.#open;
    return {
      [Symbol.asyncIterator]: () => {
        const it = events[Symbol.asyncIterator]();
        let end!: () => void;
        const ended = new Promise<never>((_, reject) => {
          end = () => {
            open.delete(end);
            reject(severed());
            void it.return?.();
          };
        });
        ended.catch(() => undefined);
        open.add(end);
        return {
          next: async () => {
            const r = await Promise.race([it.next(), ended]);
            if (r.done === true) open.delete(end);
            return r;
          },
          return: async () => {
            open.delete(end);
            return (await it.return?.()) ?? { done: true, value: undefined };
          },
        };
      },
    };
  }
}

function severed(): KinformerError {
  return new KinformerError(ErrorCodes.CONNECTION, 'cut off from the API server');
}
