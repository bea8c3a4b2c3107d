import type { GroupVersionResource, Status } from '@kinformer/core';
import type {
  FailNextOptions,
  FailureHandle,
  FakeApiServer,
  RequestVerb,
  StallHandle,
  WatchFaultOptions,
  WatchInjection,
} from '@kinformer/testing';
import { CHURN_RESOURCES } from './churn.js';
import type { Prng } from './prng.js';

/**
 * The faults the soak injects, covering everything `FakeApiServer.faults` offers:
 *
 * | kind | what the server does |
 * |---|---|
 * | `watch-drop` | destroys open watch connections (no terminating chunk) |
 * | `watch-end` | ends open watches cleanly, as a `timeoutSeconds` expiry |
 * | `watch-410` | an in-stream `ERROR` 410 Expired on open watches, then a clean end |
 * | `watch-410-upfront` | the next watch requests get an HTTP 410 up front (legacy servers) |
 * | `watch-500` | an in-stream `ERROR` 500 InternalError on open watches |
 * | `list-410` | the next LISTs get 410 Expired |
 * | `continue-410` | the next LIST continuation page finds its token compacted (410 with a fresh token) |
 * | `compact` | history compaction: every resourceVersion handed out so far is too old |
 * | `throttle-429` | the next requests get 429 with `Retry-After: 1` (Status body) |
 * | `throttle-429-apf` | the same as API Priority and Fairness sends it (plain text) |
 * | `error-500` / `error-503` | the next requests get 500 / 503 (`Retry-After: 1`) |
 * | `timeout-504` / `too-large-rv-504` | the next LISTs get a 504 request timeout / too-large-resourceVersion |
 * | `stall` | open (and new) watches stop writing, for 50 ms – 3 s, then flow again |
 * | `stall-then-drop` | a stall that ends with the connections destroyed (a half-open link that breaks) |
 * | `malformed-line` / `unknown-event-type` / `null-object` / `truncated-line` | a bad line on open (or the next) watches |
 * | `restart` / `restart-lose-history` | the server restarts; with lost history every client must relist |
 */
export type FaultKind =
  | 'watch-drop'
  | 'watch-end'
  | 'watch-410'
  | 'watch-410-upfront'
  | 'watch-500'
  | 'list-410'
  | 'continue-410'
  | 'compact'
  | 'throttle-429'
  | 'throttle-429-apf'
  | 'error-500'
  | 'error-503'
  | 'timeout-504'
  | 'too-large-rv-504'
  | 'stall'
  | 'stall-then-drop'
  | 'malformed-line'
  | 'unknown-event-type'
  | 'null-object'
  | 'truncated-line'
  | 'restart'
  | 'restart-lose-history';

/** Every {@link FaultKind}, in report order. */
export const FAULT_KINDS: readonly FaultKind[] = Object.freeze([
  'watch-drop',
  'watch-end',
  'watch-410',
  'watch-410-upfront',
  'watch-500',
  'list-410',
  'continue-410',
  'compact',
  'throttle-429',
  'throttle-429-apf',
  'error-500',
  'error-503',
  'timeout-504',
  'too-large-rv-504',
  'stall',
  'stall-then-drop',
  'malformed-line',
  'unknown-event-type',
  'null-object',
  'truncated-line',
  'restart',
  'restart-lose-history',
]);

/** Default relative weights: every fault equally likely, except the costliest (full relists of everything). */
export const DEFAULT_FAULT_WEIGHTS: Readonly<Record<FaultKind, number>> = Object.freeze({
  'watch-drop': 3,
  'watch-end': 2,
  'watch-410': 2,
  'watch-410-upfront': 1,
  'watch-500': 1,
  'list-410': 1,
  'continue-410': 1,
  compact: 1,
  'throttle-429': 2,
  'throttle-429-apf': 1,
  'error-500': 1,
  'error-503': 1,
  'timeout-504': 1,
  'too-large-rv-504': 1,
  stall: 2,
  'stall-then-drop': 1,
  'malformed-line': 1,
  'unknown-event-type': 1,
  'null-object': 1,
  'truncated-line': 1,
  restart: 1,
  'restart-lose-history': 1,
});

/**
 * How long a request-failure fault (`failNext` rules, the continue trap) lasts, ms: it fails the
 * matching requests sent within this window and is then dropped, whatever is left of its count. A real
 * server fails the requests that arrive while it is overloaded or restarting; a rule that waited for
 * "the next request, whenever it comes" saved its failures for the informer that asks least often (one
 * in backoff, the others all watching) and spent them on its every retry: twelve LISTs in a row failed
 * and `all/widgets` had no watch for 378 s in the ten-minute soak at a fault every 2 s.
 */
export const FAILURE_WINDOW_MS = 1_000;

/**
 * Compacts the server the next time a LIST continuation page is requested within
 * {@link FAILURE_WINDOW_MS} of arming, so that the page's continue token is too old (410). Shared by
 * the soak's counting ListerWatchers, which call {@link ContinueTrap.beforeContinue} before sending a
 * page with a `continue` token. A trap not sprung within its window is dropped.
 */
export class ContinueTrap {
  /** Continuation pages that found their token compacted. */
  sprung = 0;
  readonly #server: FakeApiServer;
  readonly #now: () => number;
  readonly #windowMs: number;
  /** When each armed trap's window ends (`now()` ms). */
  #deadlines: number[] = [];

  constructor(server: FakeApiServer, options: { now?: () => number; windowMs?: number } = {}) {
    this.#server = server;
    this.#now = options.now ?? (() => performance.now());
    this.#windowMs = options.windowMs ?? FAILURE_WINDOW_MS;
  }

  /** Traps armed whose window has not ended. */
  get armed(): number {
    this.#expire();
    return this.#deadlines.length;
  }

  /** Arms one trap for the next window. */
  arm(): void {
    this.#deadlines.push(this.#now() + this.#windowMs);
  }

  /** Drops every armed trap. */
  disarm(): void {
    this.#deadlines = [];
  }

  beforeContinue(): void {
    if (this.armed <= 0) return;
    this.#deadlines.shift();
    this.sprung++;
    this.#server.faults.compact();
  }

  #expire(): void {
    const now = this.#now();
    if (this.#deadlines.some((d) => d <= now)) this.#deadlines = this.#deadlines.filter((d) => d > now);
  }
}

/**
 * At most this many failure rules (`failNext`) are in force at once in one scope (all resources, or
 * one resource). Each lasts {@link FAILURE_WINDOW_MS}; at high fault rates the cap keeps a storm from
 * failing every request of a scope for good (seed 102 with `--fault-interval 100ms` once showed a 50 s
 * outage before rules had a window).
 */
export const MAX_PENDING_FAILURES = 2;

interface TimedAction {
  at: number;
  run: () => void;
}

/** Counters of one fault kind. */
export interface FaultCount {
  /** Times it was injected. */
  injected: number;
  /**
   * Failure rules not injected because {@link MAX_PENDING_FAILURES} earlier ones for the same scope
   * were still waiting for a request (see there).
   */
  skipped: number;
  /**
   * What it hit: open watches affected, or requests failed for the counted failure rules (a rule not
   * consumed before the churn stopped is cancelled and hits nothing).
   */
  hits: number;
}

/**
 * Draws faults from a {@link Prng} and applies them to a {@link FakeApiServer}. Call {@link tick}
 * once per tick of the run loop: it runs the timed actions that are due (stall releases) and, with
 * probability `1 / meanTicks`, injects one fault of a kind drawn by weight. Half the faults aimed
 * at watches or requests target one resource type, the others all of them.
 */
export class FaultScheduler {
  readonly counts: Record<FaultKind, FaultCount>;
  readonly #server: FakeApiServer;
  readonly #prng: Prng;
  readonly #trap: ContinueTrap;
  readonly #weights: Readonly<Record<FaultKind, number>>;
  readonly #probability: number;
  readonly #tickMs: number;
  readonly #maxPending: number;
  readonly #timed: TimedAction[] = [];
  readonly #rules: Array<{ kind: FaultKind; scope: string; count: number; handle: FailureHandle }> = [];
  readonly #stalls = new Set<StallHandle>();
  #tick = 0;

  /**
   * @param meanTicks the mean number of ticks between two faults (≥ 1).
   * @param tickMs the length of a tick, ms (to turn stall durations into ticks).
   * @param maxPendingFailures failure rules that may wait per scope (default {@link MAX_PENDING_FAILURES}).
   */
  constructor(
    server: FakeApiServer,
    prng: Prng,
    trap: ContinueTrap,
    options: {
      meanTicks: number;
      tickMs: number;
      weights?: Partial<Record<FaultKind, number>>;
      maxPendingFailures?: number;
    },
  ) {
    this.#server = server;
    this.#prng = prng;
    this.#trap = trap;
    this.#weights = { ...DEFAULT_FAULT_WEIGHTS, ...options.weights };
    this.#probability = 1 / Math.max(1, options.meanTicks);
    this.#tickMs = options.tickMs;
    this.#maxPending = options.maxPendingFailures ?? MAX_PENDING_FAILURES;
    this.counts = Object.fromEntries(
      FAULT_KINDS.map((k) => [k, { injected: 0, skipped: 0, hits: 0 }]),
    ) as Record<FaultKind, FaultCount>;
  }

  /** The kind of the last fault injected, if any. */
  lastFault: FaultKind | undefined;

  /** Faults injected so far. */
  get injected(): number {
    let n = 0;
    for (const k of FAULT_KINDS) n += this.counts[k].injected;
    return n;
  }

  /**
   * Runs due timed actions, then maybe injects a fault. Resolves once the fault is in place.
   * `elapsed`: how many ticks of wall time this one stands for (a loaded machine runs the loop late;
   * the chance of a fault then grows to `1 - (1 - p)^elapsed`, so faults keep their rate in wall time;
   * 0 for a tick the loop runs to catch up with time already counted: no fault).
   */
  async tick(elapsed = 1): Promise<void> {
    const ticks = Math.max(0, Math.floor(elapsed));
    const now = (this.#tick += ticks);
    for (let i = 0; i < this.#timed.length;) {
      const action = this.#timed[i]!;
      if (action.at <= now) {
        this.#timed[i] = this.#timed[this.#timed.length - 1]!;
        this.#timed.pop();
        action.run();
      } else {
        i++;
      }
    }
    const chance = ticks === 1 ? this.#probability : 1 - (1 - this.#probability) ** ticks;
    if (this.#prng.chance(chance)) await this.inject(this.#prng.weighted(this.#weights));
  }

  /** Injects one fault of `kind` now. */
  async inject(kind: FaultKind): Promise<void> {
    const faults = this.#server.faults;
    const prng = this.#prng;
    const c = this.counts[kind];
    c.injected++;
    this.lastFault = kind;
    const scope = this.#scope();
    switch (kind) {
      case 'watch-drop':
        c.hits += faults.dropWatches(scope);
        return;
      case 'watch-end':
        c.hits += faults.endWatches(scope);
        return;
      case 'watch-410':
        c.hits += faults.injectIntoWatches({ error: expiredStatus(this.#server) }, scope);
        return;
      case 'watch-500':
        c.hits += faults.injectIntoWatches({ error: internalStatus() }, scope);
        return;
      case 'watch-410-upfront':
        this.#failNext(kind, { status: 410, verbs: ['watch'] }, scope);
        return;
      case 'list-410':
        this.#failNext(kind, { status: 410, verbs: ['list'] }, scope);
        return;
      case 'continue-410':
        this.#trap.arm();
        return;
      case 'compact':
        faults.compact();
        c.hits++;
        return;
      case 'throttle-429':
        this.#failNext(kind, { status: 429, retryAfterSeconds: 1, verbs: this.#verbs() }, scope);
        return;
      case 'throttle-429-apf':
        this.#failNext(
          kind,
          { status: 429, plainText: true, retryAfterSeconds: 1, verbs: this.#verbs() },
          scope,
        );
        return;
      case 'error-500':
        this.#failNext(kind, { status: 500, verbs: this.#verbs() }, scope);
        return;
      case 'error-503':
        this.#failNext(kind, { status: 503, retryAfterSeconds: 1, verbs: this.#verbs() }, scope);
        return;
      case 'timeout-504':
        this.#failNext(kind, { status: 504, verbs: ['list'] }, scope);
        return;
      case 'too-large-rv-504':
        this.#failNext(kind, { status: 504, tooLargeResourceVersion: true, verbs: ['list'] }, scope);
        return;
      case 'stall':
      case 'stall-then-drop': {
        const before = this.#server.openWatchCount(scope.resource);
        const handle = faults.stallWatches(scope);
        c.hits += before;
        this.#stalls.add(handle);
        const ticks = Math.max(1, Math.round(prng.between(50, 3000) / this.#tickMs));
        const drop = kind === 'stall-then-drop';
        this.#timed.push({
          at: this.#tick + ticks,
          run: () => {
            if (drop) faults.dropWatches(scope);
            handle.release();
            this.#stalls.delete(handle);
          },
        });
        return;
      }
      case 'malformed-line':
      case 'unknown-event-type':
      case 'null-object':
      case 'truncated-line': {
        const injection: WatchInjection = kind;
        if (prng.chance(0.3)) {
          faults.injectIntoWatches(injection, { ...scope, target: 'next' });
        } else {
          c.hits += faults.injectIntoWatches(injection, scope);
        }
        return;
      }
      case 'restart':
      case 'restart-lose-history':
        c.hits += this.#server.openWatchCount();
        await faults.restart({ loseHistory: kind === 'restart-lose-history' });
        return;
    }
  }

  /**
   * Stops injecting: releases every stall, cancels the failure rules and injections not consumed and
   * disarms the continue trap. Counts the requests the failure rules hit.
   */
  stop(): void {
    for (const rule of this.#rules) {
      this.counts[rule.kind].hits += rule.handle.failed;
      rule.handle.cancel();
    }
    this.#rules.length = 0;
    this.#timed.length = 0;
    for (const stall of this.#stalls) stall.release();
    this.#stalls.clear();
    this.#server.faults.reset();
    this.counts['continue-410'].hits = this.#trap.sprung;
    this.#trap.disarm();
  }

  #failNext(kind: FaultKind, options: FailNextOptions, scope: WatchFaultOptions): void {
    const count = this.#prng.between(1, 3);
    const scopeKey = scope.resource === undefined ? '*' : JSON.stringify(scope.resource);
    // Forget the rules used up or expired; count the requests they failed.
    for (let i = 0; i < this.#rules.length;) {
      const rule = this.#rules[i]!;
      if (rule.handle.remaining === 0) {
        this.counts[rule.kind].hits += rule.handle.failed;
        this.#rules[i] = this.#rules[this.#rules.length - 1]!;
        this.#rules.pop();
      } else {
        i++;
      }
    }
    let pending = 0;
    for (const rule of this.#rules) if (rule.scope === scopeKey) pending++;
    if (pending >= this.#maxPending) {
      this.counts[kind].injected--;
      this.counts[kind].skipped++;
      return;
    }
    const handle = this.#server.faults.failNext({ ...options, ...scope, count, forMs: FAILURE_WINDOW_MS });
    this.#rules.push({ kind, scope: scopeKey, count, handle });
  }

  #verbs(): RequestVerb[] {
    return [this.#prng.pick<RequestVerb>(['list', 'watch'])];
  }

  #scope(): WatchFaultOptions {
    if (this.#prng.chance(0.5)) return {};
    const gvr: GroupVersionResource = this.#prng.pick(CHURN_RESOURCES).gvr;
    return {
      resource: {
        ...(gvr.group === undefined ? {} : { group: gvr.group }),
        version: gvr.version,
        resource: gvr.resource,
      },
    };
  }
}

function expiredStatus(server: FakeApiServer): Status {
  const rv = Number(server.resourceVersion);
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `too old resource version: ${rv - 1} (${rv})`,
    reason: 'Expired',
    code: 410,
  };
}

function internalStatus(): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'etcdserver: leader changed (injected by the soak)',
    reason: 'InternalError',
    code: 500,
  };
}
