import { realClock, type Clock, type Status } from '@kinformer/core';
import type { ObjectStore } from '../storage/objectStore.js';
import type { ResourceRef, ResourceType } from '../registry/resourceRegistry.js';
import {
  conflictError,
  expiredError,
  forbiddenError,
  genericNotFoundError,
  internalError,
  invalidError,
  invalidField,
  LIST_TOO_OLD,
  makeStatus,
  notFoundError,
  serviceUnavailableError,
  timeoutError,
  tooLargeResourceVersionStatus,
  tooManyRequestsError,
  tooOldWatchStatus,
  unauthorizedError,
} from '../api/statusErrors.js';
import type { Watcher, WatchInjection } from '../endpoints/watchHandler.js';

/** The verb of a request, as the real server's request-info resolver names it. */
export type RequestVerb =
  'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'discovery';

/** HTTP statuses {@link FakeApiServerFaults.failNext} can answer with. */
export type InjectedStatus = 400 | 401 | 403 | 404 | 409 | 410 | 422 | 429 | 500 | 503 | 504;

/** Options of {@link FakeApiServerFaults.failNext}. */
export interface FailNextOptions {
  /** The HTTP status to answer with. */
  status: InjectedStatus;
  /** How many matching requests fail (default 1). */
  count?: number;
  /**
   * How long the rule lasts, in ms on the server's clock: matching requests sent within this window
   * fail (at most `count` of them), and whatever is left of `count` when it ends is dropped. A real
   * server fails the requests that arrive while it is overloaded or restarting; without a window a
   * rule waits for "the next request, whenever it comes" and so saves its failures for the client
   * that asks least often (a reflector in backoff). Default: no window, the rule waits.
   */
  forMs?: number;
  /** Only requests with one of these verbs (default: any API request except discovery). */
  verbs?: readonly RequestVerb[];
  /** Only requests for this resource type. */
  resource?: ResourceRef;
  /**
   * `details.retryAfterSeconds` and the `Retry-After` header. Defaults: 1 for 429, 5 for 503, 1 for
   * a too-large-RV 504; none otherwise. `0` omits it.
   */
  retryAfterSeconds?: number;
  /**
   * 429 only: answer like API Priority and Fairness does — `text/plain; charset=utf-8`,
   * `X-Content-Type-Options: nosniff`, body `Too many requests, please try again later.\n`.
   */
  plainText?: boolean;
  /** 504 only: the too-large-resourceVersion form (§5.9) instead of the request-timeout form. */
  tooLargeResourceVersion?: boolean;
  /** Replaces the default message of the Status. */
  message?: string;
  /** Replaces the whole Status body (its `code` should match `status`). */
  body?: Status;
}

/** A pending {@link FakeApiServerFaults.failNext} rule. */
export interface FailureHandle {
  /** Requests still to fail (0 once the rule's window ended or it was cancelled). */
  readonly remaining: number;
  /** Requests it failed so far. */
  readonly failed: number;
  /** Drops the rule. */
  cancel(): void;
}

/** Options naming which watches a fault applies to. */
export interface WatchFaultOptions {
  /** Only watches of this resource type (default: all). */
  resource?: ResourceRef;
}

/** Options of {@link FakeApiServerFaults.stallWatches}. */
export interface StallOptions extends WatchFaultOptions {
  /** Also stall watches opened while the stall holds (default true). */
  includeNew?: boolean;
}

/** A stall in force; {@link StallHandle.release} lets the queued events flow. */
export interface StallHandle {
  release(): void;
}

/** Options of {@link FakeApiServerFaults.injectIntoWatches}. */
export interface InjectOptions extends WatchFaultOptions {
  /** `open` (default): the watches open now. `next`: the next `count` watches, right after they start. */
  target?: 'open' | 'next';
  /** With `target: 'next'`: how many watches (default 1). */
  count?: number;
}

/** Options of {@link FakeApiServerFaults.restart}. */
export interface RestartOptions {
  /**
   * Forget the event history (and bump the revision), so that every client must relist: their next
   * watch from an old resourceVersion gets 410. Objects and the revision counter persist either way.
   */
  loseHistory?: boolean;
}

/** What the request that hit a failure rule was. */
export interface FailureContext {
  verb: RequestVerb;
  type: ResourceType | undefined;
  namespace: string | undefined;
  name: string | undefined;
  /** The request's `resourceVersion` parameter (`''` when absent). */
  resourceVersion: string;
}

/** An injected failure, ready to write. */
export interface FailureResponse {
  httpStatus: number;
  headers: Record<string, string>;
  body: string;
  status?: Status;
}

interface FailureRule {
  options: FailNextOptions;
  type: ResourceType | undefined;
  remaining: number;
  failed: number;
  /** Clock ms at which the rule's window ends (`forMs`), or infinity. */
  expiresAt: number;
}

interface NextInjection {
  injection: WatchInjection;
  type: ResourceType | undefined;
  remaining: number;
}

interface Stall {
  type: ResourceType | undefined;
  includeNew: boolean;
  active: boolean;
}

/** What the faults act on (the server). */
export interface FaultHost {
  readonly store: ObjectStore;
  resolve(ref: ResourceRef): ResourceType;
  watchers(): Iterable<Watcher>;
  restartConnections(): Promise<void>;
  /** The server's clock (for `forMs` windows). Default: the wall clock. */
  readonly clock?: Clock;
}

/**
 * Fault injection for tests (`server.faults`). Every fault is explicit and one-shot or counted;
 * {@link reset} clears them all.
 */
export class FakeApiServerFaults {
  readonly #host: FaultHost;
  #rules: FailureRule[] = [];
  #injections: NextInjection[] = [];
  #stalls: Stall[] = [];

  /** @internal Created by the server. */
  constructor(host: FaultHost) {
    this.#host = host;
  }

  /**
   * Fails the next `count` matching API requests with `status`, answered up front with the real
   * server's Status body for that code (e.g. 410 `Expired` on a watch — the legacy "up-front 410" —,
   * 429 `storage is (re)initializing` with `Retry-After`, or the APF plain-text 429 with
   * `plainText: true`). Rules are checked in the order they were added.
   */
  failNext(options: FailNextOptions): FailureHandle {
    const forMs = options.forMs;
    const rule: FailureRule = {
      options,
      type: options.resource === undefined ? undefined : this.#host.resolve(options.resource),
      remaining: Math.max(1, Math.floor(options.count ?? 1)),
      failed: 0,
      expiresAt: forMs === undefined ? Number.POSITIVE_INFINITY : this.#now() + Math.max(0, forMs),
    };
    this.#rules.push(rule);
    const expire = (): void => {
      if (rule.remaining > 0 && rule.expiresAt <= this.#now()) {
        rule.remaining = 0;
        this.#rules = this.#rules.filter((r) => r !== rule);
      }
    };
    return {
      get remaining() {
        expire();
        return rule.remaining;
      },
      get failed() {
        return rule.failed;
      },
      cancel: () => {
        rule.remaining = 0;
        this.#rules = this.#rules.filter((r) => r !== rule);
      },
    };
  }

  /** @internal The failure for this request, consuming one count of the first matching rule. */
  takeFailure(context: FailureContext): FailureResponse | undefined {
    const now = this.#now();
    if (this.#rules.some((r) => r.expiresAt <= now)) {
      for (const r of this.#rules) if (r.expiresAt <= now) r.remaining = 0;
      this.#rules = this.#rules.filter((r) => r.remaining > 0);
    }
    for (const rule of this.#rules) {
      const verbs = rule.options.verbs;
      if (verbs === undefined ? context.verb === 'discovery' : !verbs.includes(context.verb)) continue;
      if (rule.type !== undefined && rule.type !== context.type) continue;
      rule.remaining--;
      rule.failed++;
      if (rule.remaining <= 0) this.#rules = this.#rules.filter((r) => r !== rule);
      return renderFailure(rule.options, context, this.#host.store);
    }
    return undefined;
  }

  #now(): number {
    return (this.#host.clock ?? realClock).now();
  }

  #watchers(resource: ResourceRef | undefined): Watcher[] {
    const type = resource === undefined ? undefined : this.#host.resolve(resource);
    return [...this.#host.watchers()].filter((w) => w.open && (type === undefined || w.table.type === type));
  }

  /** Destroys the connections of open watches abruptly (no terminating chunk). Returns how many. */
  dropWatches(options: WatchFaultOptions = {}): number {
    const watchers = this.#watchers(options.resource);
    for (const w of watchers) w.drop();
    return watchers.length;
  }

  /** Ends open watches cleanly, as a `timeoutSeconds` expiry would. Returns how many. */
  endWatches(options: WatchFaultOptions = {}): number {
    const watchers = this.#watchers(options.resource);
    for (const w of watchers) w.terminate();
    return watchers.length;
  }

  /**
   * Stalls watch streams: nothing is written (no events, no bookmarks, no end) and the sockets stay
   * open, until `release()`; then the queued events flow in order.
   */
  stallWatches(options: StallOptions = {}): StallHandle {
    const stall: Stall = {
      type: options.resource === undefined ? undefined : this.#host.resolve(options.resource),
      includeNew: options.includeNew ?? true,
      active: true,
    };
    this.#stalls.push(stall);
    const stalled = this.#watchers(options.resource);
    for (const w of stalled) w.stall();
    return {
      release: () => {
        if (!stall.active) return;
        stall.active = false;
        this.#stalls = this.#stalls.filter((s) => s !== stall);
        for (const w of this.#host.watchers()) {
          if (
            w.stalled &&
            (stall.type === undefined || w.table.type === stall.type) &&
            !this.stallsNewWatches(w)
          )
            w.release();
        }
      },
    };
  }

  /** Releases every stall. */
  releaseStalls(): void {
    this.#stalls = [];
    for (const w of this.#host.watchers()) w.release();
  }

  /** @internal True when a stall in force applies to watches opened now. */
  stallsNewWatches(watcher: Watcher): boolean {
    return this.#stalls.some(
      (s) => s.active && s.includeNew && (s.type === undefined || s.type === watcher.table.type),
    );
  }

  /**
   * Makes watch streams send a malformed line, an event of unknown type, an event with a null
   * object, a line cut in half followed by a connection reset, or an in-stream ERROR (see
   * {@link WatchInjection}), on the open watches or the next ones. Returns how many open watches
   * were affected (0 for `target: 'next'`).
   */
  injectIntoWatches(injection: WatchInjection, options: InjectOptions = {}): number {
    if (options.target === 'next') {
      this.#injections.push({
        injection,
        type: options.resource === undefined ? undefined : this.#host.resolve(options.resource),
        remaining: Math.max(1, Math.floor(options.count ?? 1)),
      });
      return 0;
    }
    const watchers = this.#watchers(options.resource);
    for (const w of watchers) w.inject(injection);
    return watchers.length;
  }

  /** @internal Injections due on a watch that just started. */
  takeNextInjections(watcher: Watcher): WatchInjection[] {
    const out: WatchInjection[] = [];
    for (const pending of this.#injections) {
      if (pending.remaining > 0 && (pending.type === undefined || pending.type === watcher.table.type)) {
        pending.remaining--;
        out.push(pending.injection);
      }
    }
    if (out.length > 0) this.#injections = this.#injections.filter((p) => p.remaining > 0);
    return out;
  }

  /**
   * Compacts the history: the revision moves on and every resourceVersion and continue token handed
   * out before is too old (exact lists and continues get 410, watches an in-stream 410). Returns the
   * new oldest servable resourceVersion.
   */
  compact(): string {
    return String(this.#host.store.compact());
  }

  /**
   * Simulates an API server restart: open watches end, every connection closes (clients see the
   * stream end and reconnect to the same URL). Objects persist and the revision keeps increasing;
   * with `loseHistory` the history is gone too, so clients must relist.
   */
  async restart(options: RestartOptions = {}): Promise<void> {
    if (options.loseHistory) this.#host.store.compact();
    await this.#host.restartConnections();
  }

  /** Clears pending failures and injections and releases every stall. */
  reset(): void {
    for (const rule of this.#rules) rule.remaining = 0;
    this.#rules = [];
    this.#injections = [];
    this.releaseStalls();
  }
}

const APF_BODY = 'Too many requests, please try again later.\n';

function statusFor(options: FailNextOptions, context: FailureContext, store: ObjectStore): Status {
  const { type, verb, namespace, name } = context;
  const retry = options.retryAfterSeconds;
  switch (options.status) {
    case 400:
      return makeStatus({
        code: 400,
        reason: 'BadRequest',
        message: 'the server rejected our request due to an error in our request',
      });
    case 401:
      return unauthorizedError().status!;
    case 403:
      return type
        ? forbiddenError(verb, type, namespace, name).status!
        : makeStatus({ code: 403, reason: 'Forbidden', message: 'forbidden', details: {} });
    case 404:
      return type && name ? notFoundError(type, name).status! : genericNotFoundError().status!;
    case 409:
      return type
        ? conflictError(type, name ?? '').status!
        : makeStatus({ code: 409, reason: 'Conflict', message: 'conflict' });
    case 410: {
      if (verb === 'watch') {
        const requested = Number(context.resourceVersion) || 0;
        return tooOldWatchStatus(requested, store.compactedRV);
      }
      return expiredError(LIST_TOO_OLD).status!;
    }
    case 422:
      return invalidError(type?.group ?? '', type?.kind ?? 'Object', name ?? '', [
        invalidField('metadata', '"injected"', 'injected failure'),
      ]).status!;
    case 429:
      return tooManyRequestsError(retry ?? 1).status!;
    case 500:
      return internalError('injected failure').status!;
    case 503:
      return serviceUnavailableError(retry ?? 5).status!;
    case 504:
      if (options.tooLargeResourceVersion) {
        const requested = Number(context.resourceVersion) || store.rev + 1;
        return tooLargeResourceVersionStatus(requested, store.rev);
      }
      return timeoutError().status!;
  }
}

/** The response of an injected failure. */
export function renderFailure(
  options: FailNextOptions,
  context: FailureContext,
  store: ObjectStore,
): FailureResponse {
  const httpStatus = options.status;
  if (httpStatus === 429 && options.plainText) {
    return {
      httpStatus,
      headers: {
        'Content-Type': 'text/plain; charset=utf-8',
        'X-Content-Type-Options': 'nosniff',
        'Retry-After': String(options.retryAfterSeconds ?? 1),
      },
      body: APF_BODY,
    };
  }
  let status = options.body ?? statusFor(options, context, store);
  if (options.message !== undefined && options.body === undefined)
    status = { ...status, message: options.message };
  const retry = options.retryAfterSeconds;
  if (retry !== undefined && options.body === undefined) {
    const details = { ...(status.details ?? {}) };
    if (retry > 0) details.retryAfterSeconds = retry;
    else delete details.retryAfterSeconds;
    status = { ...status, details };
    // Keep `code` last, as the Go struct order wants.
    const { code, ...rest } = status;
    status = code === undefined ? rest : { ...rest, code };
  }
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  const after = status.details?.retryAfterSeconds;
  if (after !== undefined && after > 0) headers['Retry-After'] = String(after);
  return { httpStatus, headers, body: `${JSON.stringify(status)}\n`, status };
}
