/**
 * The program behind `pnpm start` in this package: the pods-per-node controller under leader
 * election.
 *
 * - Embedded (no kubeconfig): starts a FakeApiServer, seeds pods across nodes, churns them, runs
 *   several replicas on one Lease, kills the leader part-way (a crash: no release) and shows another
 *   one take over; at the end it checks on the server that the ConfigMaps equal the pods per node.
 * - Cluster (`kubeConfig`): runs one replica with the given identity, writing ConfigMaps into
 *   `namespace`, until `durationMs` or the signal.
 */
import type { EventsV1Event, KubeConfig } from '@kubernetes/client-node';
import { FakeApiServer } from '@kinformer/testing';
import type { ControllerStats, Logger } from 'kinformer';
import { EVENTS_V1_RESOURCE, PodChurn } from './podChurn.js';
import type { ChurnCounts } from './podChurn.js';
import { startReplica } from './replica.js';
import type { Replica } from './replica.js';
import { configMapMismatches } from './verify.js';

/** Options of {@link runControllerDemo}. */
export interface ControllerDemoOptions {
  /** Run against this cluster (one replica, no churn) instead of the embedded server. */
  kubeConfig?: KubeConfig;
  /** Identity in the Lease (default `<hostname>-<pid>`); embedded replicas get `-a`, `-b` … appended. */
  identity?: string;
  /** Namespace of the ConfigMaps and the Lease (default `default`). */
  namespace?: string;
  /** Workers per controller (default 2). */
  workers?: number;
  /** How long to run, ms (default: 15 s embedded; cluster: until the signal). */
  durationMs?: number;
  /** Embedded: replicas on the Lease (default 2). */
  replicas?: number;
  /** Embedded: kill the leader this long after it was first elected, ms (default a third of the duration; 0: never). */
  killLeaderAfterMs?: number;
  /** Embedded: pods to seed (default 300) on this many nodes (default 8). */
  pods?: number;
  nodes?: number;
  /** Embedded: pod changes per second (default 100). */
  churnPerSecond?: number;
  /** Leader election timing (defaults: embedded 3000/2000/400 ms, cluster client-go's 15/10/2 s). */
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Where the narration goes (default stdout). */
  out?: NodeJS.WritableStream;
  /** Interval of the status line, ms (default 1000 embedded, 10 000 against a cluster). */
  statusIntervalMs?: number;
  logger?: Logger;
  signal?: AbortSignal;
}

/** What {@link runControllerDemo} saw. */
export interface ControllerDemoSummary {
  /** Identities in the order they became leader. */
  leaders: string[];
  /** Embedded, when the leader was killed: ms from the kill until the next leader started. */
  takeoverMs?: number;
  /** Per replica. */
  metrics: Record<string, ControllerStats>;
  churn?: ChurnCounts;
  /** Embedded: the controller's Events on the server (Event objects, and occurrences counted in their series). */
  events?: { objects: number; occurrences: number };
  /** Embedded: whether the ConfigMaps on the server equal the pods per node at the end. */
  matchesServer?: boolean;
  mismatches: string[];
}

/** Runs the demo (see the file comment) and resolves with its summary once everything has stopped. */
export async function runControllerDemo(options: ControllerDemoOptions = {}): Promise<ControllerDemoSummary> {
  const out = options.out ?? process.stdout;
  const say = (line: string): void => void out.write(`${line}\n`);
  const namespace = options.namespace ?? 'default';
  const embedded = options.kubeConfig === undefined;
  const durationMs = options.durationMs ?? (embedded ? 15_000 : Number.POSITIVE_INFINITY);
  const baseIdentity = options.identity ?? `${process.env.HOSTNAME ?? 'controller'}-${process.pid}`;
  const t0 = Date.now();
  const at = (): string => `[${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s]`;

  let server: FakeApiServer | undefined;
  let churn: PodChurn | undefined;
  let kubeConfig = options.kubeConfig;
  if (kubeConfig === undefined) {
    server = await FakeApiServer.start({ recordRequests: false });
    server.registerResource(EVENTS_V1_RESOURCE);
    churn = new PodChurn(server, { nodes: options.nodes ?? 8 });
    churn.seed(options.pods ?? 300);
    kubeConfig = server.kubeConfig();
    say(
      `${at()} embedded FakeApiServer at ${server.url}: ${options.pods ?? 300} pods on ${options.nodes ?? 8} nodes`,
    );
  } else {
    say(
      `${at()} cluster ${kubeConfig.getCurrentCluster()?.server ?? '(current context)'}: ConfigMaps go to namespace ${namespace}`,
    );
  }

  // Replicas: each with its own informers, controller and elector, all on one Lease.
  const count = embedded ? Math.max(1, options.replicas ?? 2) : 1;
  const leaders: string[] = [];
  let electedAt: number | undefined;
  const leaderChanged = new EventTarget();
  const replicas: Replica[] = [];
  for (let i = 0; i < count; i++) {
    const identity = count === 1 ? baseIdentity : `${baseIdentity}-${String.fromCharCode(97 + i)}`;
    replicas.push(
      startReplica(kubeConfig, {
        identity,
        namespace,
        workers: options.workers ?? 2,
        leaseDurationMs: options.leaseDurationMs ?? (embedded ? 3000 : 15_000),
        renewDeadlineMs: options.renewDeadlineMs ?? (embedded ? 2000 : 10_000),
        retryPeriodMs: options.retryPeriodMs ?? (embedded ? 400 : 2000),
        onLeadershipChange: (leading) => {
          if (leading) {
            leaders.push(identity);
            electedAt ??= Date.now();
            say(`${at()} ${identity} is the leader: its controller starts`);
          } else {
            say(`${at()} ${identity}: controller stopped`);
          }
          leaderChanged.dispatchEvent(new Event('change'));
        },
      }),
    );
  }
  say(
    `${at()} ${count} replica(s) campaigning for Lease ${namespace}/pods-per-node-controller: ${replicas.map((r) => r.identity).join(', ')}`,
  );

  const stop = new AbortController();
  const onOuterAbort = (): void => stop.abort();
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });
  // A replica whose election ended (lost lease, refused list) does not come back: when none is
  // left, end the run (a real deployment would exit and be restarted).
  void Promise.all(replicas.map((r) => r.done)).then(() => {
    if (stop.signal.aborted) return;
    say(`${at()} leader election ended in every replica`);
    stop.abort();
  });

  const churnTimer =
    churn === undefined
      ? undefined
      : setInterval(() => churn.step(Math.max(1, Math.round((options.churnPerSecond ?? 100) / 10))), 100);

  const status = setInterval(
    () => {
      const leader = replicas.find((r) => r.manager.isLeader());
      if (leader === undefined) {
        say(`${at()} no leader`);
        return;
      }
      const m = stats(leader);
      say(
        `${at()} leader ${leader.identity}: ${m.reconciles} reconciles (${m.succeeded} succeeded, ${m.failed} failed), queue ${m.queued}, retrying ${m.waiting}`,
      );
    },
    options.statusIntervalMs ?? (embedded ? 1000 : 10_000),
  );

  // The crash: kill the first leader part-way, and time the takeover.
  let takeoverMs: number | undefined;
  const killAfter =
    options.killLeaderAfterMs ?? (count > 1 && Number.isFinite(durationMs) ? Math.round(durationMs / 3) : 0);
  const killer = (async () => {
    if (count < 2 || killAfter <= 0) return;
    if (!(await until(() => leaders.length > 0, leaderChanged, stop.signal))) return;
    await sleep(killAfter, stop.signal);
    const victim = replicas.find((r) => r.manager.isLeader());
    if (victim === undefined || stop.signal.aborted) return;
    const killedAt = Date.now();
    say(`${at()} killing ${victim.identity} (a crash: the Lease is not released)`);
    await victim.kill();
    if (
      await until(
        () => replicas.some((r) => r !== victim && r.manager.isLeader()),
        leaderChanged,
        stop.signal,
      )
    ) {
      takeoverMs = Date.now() - killedAt;
      say(`${at()} ${leaders.at(-1)} took over ${(takeoverMs / 1000).toFixed(1)} s after the crash`);
    }
  })();

  await sleep(durationMs, stop.signal);
  if (churnTimer !== undefined) clearInterval(churnTimer);
  stop.abort();
  await killer;

  const summary: ControllerDemoSummary = { leaders, metrics: {}, mismatches: [] };
  if (takeoverMs !== undefined) summary.takeoverMs = takeoverMs;
  if (server !== undefined && churn !== undefined) {
    summary.churn = { ...churn.counts };
    // The controller is level-triggered: once the churn stops it converges. Wait for that (bounded).
    const deadline = Date.now() + 15_000;
    for (;;) {
      summary.mismatches = configMapMismatches(server, namespace);
      if (summary.mismatches.length === 0 || Date.now() > deadline) break;
      await sleep(50);
    }
    summary.matchesServer = summary.mismatches.length === 0;
    const configMaps = server.list('configmaps', namespace).length;
    say(
      summary.matchesServer
        ? `${at()} ✓ the ${configMaps} ConfigMaps match the pods per node on the server (churn: ${churn.counts.created} created, ${churn.counts.moved} moved, ${churn.counts.relabelled} relabelled, ${churn.counts.deleted} deleted)`
        : `${at()} ✗ the ConfigMaps differ from the pods per node: ${summary.mismatches.slice(0, 5).join('; ')}`,
    );
  }
  clearInterval(status);
  await Promise.all(replicas.map((r) => r.stop()));
  for (const r of replicas) {
    const m = (summary.metrics[r.identity] = stats(r));
    if (m.reconciles > 0) {
      say(
        `${at()} ${r.identity}: ${m.reconciles} reconciles, ${m.failed} failed, ${m.aborted} aborted by the stop`,
      );
    }
  }
  if (server !== undefined) {
    const events = server.list<EventsV1Event>('events.events.k8s.io', namespace);
    const occurrences = events.reduce((n, e) => n + (e.series?.count ?? 1), 0);
    summary.events = { objects: events.length, occurrences };
    say(
      `${at()} ${events.length} Events recorded (${occurrences} occurrences, repeats counted in their series)`,
    );
  }
  options.signal?.removeEventListener('abort', onOuterAbort);
  await server?.close();
  say(`${at()} leaders: ${leaders.join(' → ') || 'none'}`);
  return summary;
}

function stats(replica: Replica): ControllerStats {
  return replica.manager.controllers()[0]!.stats();
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const done = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    if (Number.isFinite(ms)) timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Resolves true once `condition()` holds (checked now and on each `change` event), false when `signal` aborts first. */
function until(condition: () => boolean, events: EventTarget, signal: AbortSignal): Promise<boolean> {
  if (condition()) return Promise.resolve(true);
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const finish = (value: boolean): void => {
      events.removeEventListener('change', onChange);
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onChange = (): void => {
      if (condition()) finish(true);
    };
    const onAbort = (): void => finish(false);
    events.addEventListener('change', onChange);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
