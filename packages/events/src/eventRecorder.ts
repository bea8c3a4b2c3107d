import { hostname } from 'node:os';
import { ErrorCodes, isKinformerError, KinformerError, realClock } from '@kinformer/core';
import { componentLogger } from '@kinformer/core/internal';
import type { Clock, KubeObject, Logger } from '@kinformer/core';
import type { Timer } from '@kinformer/core/internal';
import type { EventsV1Event, KubeConfig } from '@kubernetes/client-node';
import { EventCorrelator, eventName } from './eventCorrelator.js';
import type { CorrelatedEvent, CorrelatorOptions, EventType, ObjectReference } from './eventCorrelator.js';
import { eventsV1Sink, seriesPatch, toEventsV1Event } from './eventSink.js';
import type { EventSink } from './eventSink.js';

/** What an event is about: an object with `kind` (and `apiVersion`), or a reference to one. */
export type EventObject = KubeObject | ObjectReference;

/** Optional parts of one event. */
export interface EventOptions {
  /** What was done or failed (events.k8s.io `action`, required by the server); default the reason. */
  action?: string;
  /** A second object involved (events.k8s.io `related`), e.g. the Node a Pod was bound to. */
  related?: EventObject;
  /** Annotations of the Event object. */
  annotations?: Readonly<Record<string, string>>;
}

/**
 * Records Kubernetes Events (client-go's `record.EventRecorder`). `event` never throws and never
 * waits: recording is best effort, writing happens in the background.
 */
export interface EventRecorder {
  /**
   * Records that `reason` happened to `regarding`, with a human-readable `note` (client-go's
   * `Event(object, eventtype, reason, message)`). `type` is `Normal` or `Warning`; anything else is
   * logged and dropped, as is an object without `kind` or `name`.
   */
  event(regarding: EventObject, type: EventType, reason: string, note: string, options?: EventOptions): void;
}

/** Options of {@link ApiEventRecorder}. */
export interface ApiEventRecorderOptions {
  /** Who reports the events (events.k8s.io `reportingController`; client-go's `Source.Component`). */
  reportingController: string;
  /** Which instance (`reportingInstance`); default `<reportingController>-<hostname>` as client-go's tools/events. */
  reportingInstance?: string;
  /** Aggregation, counting and spam filter settings (client-go's defaults when left out). */
  correlator?: Omit<CorrelatorOptions, 'clock'>;
  /** Events waiting to be written before new ones are dropped (default 1000, client-go's `maxQueuedEvents`). */
  maxQueuedEvents?: number;
  /** Attempts per event while the server cannot be reached (default 12, client-go's `maxTriesPerEvent`). */
  maxTries?: number;
  /** Wait between attempts (default 10 000 ms; the first wait is a random fraction of it, as client-go). */
  retryDelayMs?: number;
  /** Time of events and retries (default the wall clock). */
  clock?: Clock;
  /** Randomness of the first retry wait, in [0, 1) (default `Math.random`). */
  random?: () => number;
  logger?: Logger;
}

/** Counters of an {@link ApiEventRecorder} (a snapshot). */
export interface EventRecorderStats {
  /** Events given to `event`. */
  recorded: number;
  /** Refused: invalid type, no kind or name, recorder shut down, or the queue full. */
  dropped: number;
  /** Skipped by the spam filter. */
  spamFiltered: number;
  /** Events created on the server. */
  created: number;
  /** Existing Events whose count was raised (patched). */
  patched: number;
  /** Events given up: refused by the server, or the retry limit reached. */
  failed: number;
  /** Series writes by the heartbeat: counts the server had not seen, of finished or ongoing series. */
  heartbeats: number;
  /** Events waiting to be written, the one being written included. */
  pending: number;
}

const MAX_NOTE_BYTES = 1024;

/**
 * A series (an Event counted more than once) not observed for this long is finished: its last
 * count is written if the server has not seen it, and it is forgotten. The check runs this often too.
 * client-go `tools/events/event_broadcaster.go`: `finishTime = 6 * time.Minute`, `finishSeries` run
 * by `wait.Until(e.finishSeries, finishTime, …)`.
 */
export const SERIES_FINISH_MS = 6 * 60_000;
/**
 * Ongoing series are written again this often with their count so far (the heartbeat): client-go
 * `tools/events`: `refreshTime = 30 * time.Minute`, `refreshExistingEventSeries`.
 */
export const SERIES_REFRESH_MS = 30 * 60_000;

/** One series the heartbeat looks after: the last occurrence counted, and the count last written. */
interface SeriesState {
  latest: CorrelatedEvent;
  written: number;
}

/**
 * An {@link EventRecorder} that writes `events.k8s.io/v1` Events to the API server through
 * `@kubernetes/client-node` (or any {@link EventSink}), with client-go's `tools/record` pipeline:
 *
 * - each event goes through an `EventCorrelator` at once (aggregation of similar events,
 *   counting of equal ones, a token-bucket spam filter per source + object), then into a queue of at
 *   most `maxQueuedEvents`;
 * - one background writer takes the queue in order: a new event is created, a repeated one patched
 *   (its `series.count`), created again when the patch finds no Event (404);
 * - when the server cannot be reached the write is retried up to `maxTries` times, `retryDelayMs`
 *   apart (the first wait jittered), on the injected clock; an answer from the server (a 4xx/5xx
 *   `Status`, an invalid event) is logged and not retried, as client-go.
 *
 * `flush()` waits until the queue is empty; `shutdown()` stops: the write in flight is aborted and
 * queued events are dropped.
 */
export class ApiEventRecorder implements EventRecorder {
  readonly reportingController: string;
  readonly reportingInstance: string;
  readonly #sink: EventSink;
  readonly #correlator: EventCorrelator;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #logger: Logger;
  readonly #maxQueued: number;
  readonly #maxTries: number;
  readonly #retryDelayMs: number;
  readonly #queue: CorrelatedEvent[] = [];
  readonly #stop = new AbortController();
  readonly #stats = {
    recorded: 0,
    dropped: 0,
    spamFiltered: 0,
    created: 0,
    patched: 0,
    failed: 0,
    heartbeats: 0,
  };
  #writer: Promise<void> | undefined;
  #writing = false;
  /** Series by Event (`namespace/name`), least recently observed first; at most `lruCacheSize`. */
  readonly #series = new Map<string, SeriesState>();
  readonly #maxSeries: number;
  #heartbeat: Timer | undefined;
  #ticks = 0;

  /** Writes through `target`: a KubeConfig (client-node's `EventsV1Api`) or an {@link EventSink}. */
  constructor(target: KubeConfig | EventSink, options: ApiEventRecorderOptions) {
    const maxQueued = options.maxQueuedEvents ?? 1000;
    const maxTries = options.maxTries ?? 12;
    const retryDelayMs = options.retryDelayMs ?? 10_000;
    if (!options.reportingController) {
      throw new KinformerError(ErrorCodes.INVALID_OPTION, 'reportingController must not be empty');
    }
    for (const [name, value, min] of [
      ['maxQueuedEvents', maxQueued, 1],
      ['maxTries', maxTries, 1],
      ['retryDelayMs', retryDelayMs, 0],
    ] as const) {
      if (!Number.isFinite(value) || value < min) {
        throw new KinformerError(
          ErrorCodes.INVALID_OPTION,
          `${name} must be a number ≥ ${min}, got ${value}`,
        );
      }
    }
    this.reportingController = options.reportingController;
    this.reportingInstance = options.reportingInstance ?? `${options.reportingController}-${hostname()}`;
    this.#sink = 'makeApiClient' in target ? eventsV1Sink(target) : target;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
    this.#correlator = new EventCorrelator({ ...options.correlator, clock: this.#clock });
    this.#logger = componentLogger(options.logger, {
      component: 'event-recorder',
      reportingController: this.reportingController,
    });
    this.#maxSeries = options.correlator?.lruCacheSize ?? 4096;
    this.#maxQueued = maxQueued;
    this.#maxTries = maxTries;
    this.#retryDelayMs = retryDelayMs;
  }

  /** Correlates the event at once and queues it for the background writer (see {@link EventRecorder.event}). */
  event(
    regarding: EventObject,
    type: EventType,
    reason: string,
    note: string,
    options: EventOptions = {},
  ): void {
    this.#stats.recorded++;
    if (this.#stop.signal.aborted) {
      this.#drop('the recorder is shut down', { reason });
      return;
    }
    if (type !== 'Normal' && type !== 'Warning') {
      this.#drop('unsupported event type', { type, reason });
      return;
    }
    const ref = referenceTo(regarding);
    if (ref === undefined) {
      this.#drop('could not construct a reference (kind and name are required)', { reason });
      return;
    }
    const related = options.related === undefined ? undefined : referenceTo(options.related);
    const now = this.#clock.now();
    const event: CorrelatedEvent = {
      name: eventName(ref.name, now),
      namespace: ref.namespace || 'default',
      ...(options.annotations === undefined ? {} : { annotations: { ...options.annotations } }),
      regarding: ref,
      ...(related === undefined ? {} : { related }),
      reportingController: this.reportingController,
      reportingInstance: this.reportingInstance,
      type,
      reason,
      action: options.action ?? reason,
      note: truncateNote(note),
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
    };
    const result = this.#correlator.correlate(event);
    this.#observeSeries(result.event, result.skip);
    if (result.skip) {
      this.#stats.spamFiltered++;
      this.#logger.debug({ reason, regarding: describe(ref) }, 'event skipped by the spam filter');
      return;
    }
    if (this.#queue.length >= this.#maxQueued) {
      this.#drop('too many queued events', { reason, regarding: describe(ref) });
      return;
    }
    this.#logger.debug(
      { type, reason, regarding: describe(ref), count: result.event.count },
      'event recorded',
    );
    this.#enqueue(result.event);
  }

  #enqueue(event: CorrelatedEvent): void {
    this.#queue.push(event);
    this.#writer ??= this.#write();
  }

  /**
   * Keeps the series of an Event counted more than once for the heartbeat (client-go `tools/events`
   * `recordToSink`: a repeat updates `series.count` and `lastObservedTime` of the cached Event).
   * A repeat skipped by the spam filter is counted here too, so the heartbeat writes the true count.
   */
  #observeSeries(event: CorrelatedEvent, skipped: boolean): void {
    if (event.count < 2) return;
    const key = `${event.namespace}/${event.name}`;
    const state = this.#series.get(key);
    this.#series.delete(key); // re-inserted last: the map is in order of last observation
    this.#series.set(key, { latest: event, written: state?.written ?? (skipped ? event.count - 1 : 0) });
    if (this.#series.size > this.#maxSeries) {
      this.#series.delete(this.#series.keys().next().value!);
    }
    this.#armHeartbeat();
  }

  #armHeartbeat(): void {
    if (this.#heartbeat !== undefined || this.#series.size === 0 || this.#stop.signal.aborted) return;
    this.#heartbeat = this.#clock.setTimeout(() => this.#beat(), SERIES_FINISH_MS);
    // A recorder left running must not keep the process alive for its heartbeat.
    this.#heartbeat.unref?.();
  }

  /**
   * client-go `tools/events`' two timers in one, every {@link SERIES_FINISH_MS}: a series last
   * observed more than that ago gets its final count written (when the server has an older one) and
   * is forgotten (`finishSeries`); every {@link SERIES_REFRESH_MS}, every other series whose count
   * moved on since it was written is written again (`refreshExistingEventSeries`).
   */
  #beat(): void {
    this.#heartbeat = undefined;
    if (this.#stop.signal.aborted) return;
    this.#ticks++;
    const refresh = this.#ticks % Math.round(SERIES_REFRESH_MS / SERIES_FINISH_MS) === 0;
    const now = this.#clock.now();
    for (const [key, state] of this.#series) {
      const finished = now - state.latest.lastTimestamp > SERIES_FINISH_MS;
      if ((finished || refresh) && state.latest.count > state.written) {
        this.#stats.heartbeats++;
        state.written = state.latest.count;
        this.#enqueue({ ...state.latest });
      }
      if (finished) this.#series.delete(key);
    }
    this.#armHeartbeat();
  }

  /** Resolves when every queued event has been written or given up (or the recorder shut down). */
  async flush(): Promise<void> {
    while (this.#writer !== undefined) await this.#writer;
  }

  /** Stops writing: aborts the write in flight and its retries, drops queued events, then resolves. */
  async shutdown(): Promise<void> {
    this.#heartbeat?.cancel();
    this.#heartbeat = undefined;
    if (!this.#stop.signal.aborted) {
      const dropped = this.#queue.length - (this.#writing ? 1 : 0);
      if (dropped > 0) this.#logger.warn({ dropped }, 'shutting down: queued events are dropped');
      this.#stop.abort(new KinformerError(ErrorCodes.ABORTED, 'the event recorder was shut down'));
    }
    await this.flush();
  }

  /** The counters (a snapshot). */
  stats(): EventRecorderStats {
    return { ...this.#stats, pending: this.#queue.length };
  }

  #drop(why: string, fields: Record<string, unknown>): void {
    this.#stats.dropped++;
    this.#logger.error(fields, `unable to record event: ${why}; dropped`);
  }

  async #write(): Promise<void> {
    const signal = this.#stop.signal;
    try {
      for (let event = this.#queue[0]; event !== undefined && !signal.aborted; event = this.#queue[0]) {
        this.#writing = true;
        await this.#recordToSink(event, signal);
        this.#writing = false;
        this.#queue.shift();
      }
    } finally {
      this.#writing = false;
      if (signal.aborted) this.#queue.length = 0;
      this.#writer = undefined;
    }
  }

  /** client-go's `recordToSink`: write, and while the server cannot be reached, retry. */
  async #recordToSink(event: CorrelatedEvent, signal: AbortSignal): Promise<void> {
    for (let tries = 1; ; tries++) {
      const outcome = await this.#recordEvent(event, signal);
      if (outcome !== 'retry' || signal.aborted) return;
      if (tries >= this.#maxTries) {
        this.#stats.failed++;
        this.#logger.error(
          { event: describeEvent(event), tries },
          'unable to write event (retry limit exceeded)',
        );
        return;
      }
      // Randomise the first wait so that clients do not all retry at once after an outage.
      const delay = tries === 1 ? this.#retryDelayMs * this.#random() : this.#retryDelayMs;
      await this.#clock.sleep(delay, signal);
      if (signal.aborted) {
        this.#logger.debug({ event: describeEvent(event) }, 'unable to write event (recorder shut down)');
        return;
      }
    }
  }

  /** client-go's `recordEvent`: `'done'` when written or not worth retrying, `'retry'` otherwise. */
  async #recordEvent(event: CorrelatedEvent, signal: AbortSignal): Promise<'done' | 'retry'> {
    const body = toEventsV1Event(event);
    try {
      let written: EventsV1Event | undefined;
      if (event.count > 1) {
        try {
          written = await this.#sink.patch(body, seriesPatch(event), signal);
          this.#stats.patched++;
        } catch (err) {
          // The Event is gone (expired, deleted, never created): create it again.
          if (!isKinformerError(err, ErrorCodes.NOT_FOUND)) throw err;
        }
      }
      if (written === undefined) {
        const { resourceVersion: _, ...metadata } = body.metadata ?? {};
        written = await this.#sink.create({ ...body, metadata }, signal);
        this.#stats.created++;
      }
      const name = written.metadata?.name ?? event.name;
      this.#correlator.updateState({ ...event, name, resourceVersion: written.metadata?.resourceVersion });
      const series = this.#series.get(`${event.namespace}/${name}`);
      if (series !== undefined) series.written = Math.max(series.written, event.count);
      return 'done';
    } catch (err) {
      if (signal.aborted) return 'done';
      const error = err instanceof KinformerError ? err : undefined;
      const fields = { event: describeEvent(event), err };
      if (error?.code === ErrorCodes.INVALID_OPTION) {
        this.#stats.failed++;
        this.#logger.error(fields, 'unable to construct event (will not retry)');
        return 'done';
      }
      if (error?.httpStatus !== undefined) {
        // The server answered: the event itself is the problem (or the namespace is terminating).
        this.#stats.failed++;
        const level = error.status?.reason === 'AlreadyExists' ? 'debug' : 'error';
        this.#logger[level](fields, 'server rejected event (will not retry)');
        return 'done';
      }
      this.#logger.warn(fields, 'unable to write event (may retry after sleeping)');
      return 'retry';
    }
  }
}

/**
 * The reference for an event's object: `apiVersion`, `kind`, `name`, `namespace`, `uid`,
 * `resourceVersion` (and `fieldPath` of a reference). `undefined` without `kind` or `name`: objects
 * read from lists and informers often have no `kind`; pass a reference, or the object with `kind`.
 */
export function referenceTo(object: EventObject): ObjectReference | undefined {
  const o = object as KubeObject & ObjectReference;
  const meta = o.metadata;
  const name = meta?.name ?? o.name;
  if (!o.kind || !name) return undefined;
  const ref: ObjectReference = { kind: o.kind, name };
  const apiVersion = o.apiVersion;
  const namespace = meta === undefined ? o.namespace : meta.namespace;
  const uid = meta === undefined ? o.uid : meta.uid;
  const resourceVersion = meta === undefined ? o.resourceVersion : meta.resourceVersion;
  if (apiVersion) ref.apiVersion = apiVersion;
  if (namespace) ref.namespace = namespace;
  if (uid) ref.uid = uid;
  if (resourceVersion) ref.resourceVersion = resourceVersion;
  if (meta === undefined && o.fieldPath) ref.fieldPath = o.fieldPath;
  return ref;
}

function truncateNote(note: string): string {
  if (Buffer.byteLength(note) <= MAX_NOTE_BYTES) return note;
  let cut = note.slice(0, MAX_NOTE_BYTES);
  while (Buffer.byteLength(cut) > MAX_NOTE_BYTES) cut = cut.slice(0, -1);
  return cut;
}

function describe(ref: ObjectReference): string {
  return `${ref.kind ?? ''} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name ?? ''}`;
}

function describeEvent(e: CorrelatedEvent): Record<string, unknown> {
  return {
    name: `${e.namespace}/${e.name}`,
    type: e.type,
    reason: e.reason,
    regarding: describe(e.regarding),
    count: e.count,
  };
}
