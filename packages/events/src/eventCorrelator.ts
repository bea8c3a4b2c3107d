import { realClock } from '@kinformer/core';
import type { Clock } from '@kinformer/core';

/** `Normal` or `Warning`: the only event types the API server accepts. */
export type EventType = 'Normal' | 'Warning';

/** A reference to an object (the `regarding` and `related` of an Event; core/v1 `ObjectReference`). */
export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  /** A part of the object, e.g. `spec.containers{app}`. */
  fieldPath?: string;
}

/**
 * One event as the correlator sees it: the fields of an `events.k8s.io/v1` Event plus the
 * occurrence count and times client-go's `tools/record` correlator keeps (they become `eventTime`
 * and `series` on the wire). Times are milliseconds since the epoch.
 */
export interface CorrelatedEvent {
  /** The Event object's name (the name of its first occurrence once counted). */
  name: string;
  namespace: string;
  /** The server's resourceVersion of the Event, once written. */
  resourceVersion?: string | undefined;
  annotations?: Readonly<Record<string, string>> | undefined;
  regarding: ObjectReference;
  related?: ObjectReference | undefined;
  /** Who reports it (client-go's `Source.Component`), e.g. `pods-per-node-controller`. */
  reportingController: string;
  /** Which instance of it (client-go's `Source.Host`), e.g. `pods-per-node-controller-host1`. */
  reportingInstance: string;
  type: EventType;
  reason: string;
  action: string;
  /** The human-readable message (core/v1 `message`). */
  note: string;
  /** Occurrences so far (1 for a new event). */
  count: number;
  /** First and last occurrence. */
  firstTimestamp: number;
  lastTimestamp: number;
}

/** Returns the key of the group an event is aggregated in, and its key within that group. */
export type EventAggregatorKeyFunc = (event: CorrelatedEvent) => { aggregateKey: string; localKey: string };
/** Returns the message of an aggregate event. */
export type EventAggregatorMessageFunc = (event: CorrelatedEvent) => string;
/** Returns the key of the token bucket an event is charged to. */
export type EventSpamKeyFunc = (event: CorrelatedEvent) => string;

/** Options of `EventCorrelator` (client-go's `CorrelatorOptions`); every field has client-go's default. */
export interface CorrelatorOptions {
  /** Entries of each LRU cache (default 4096). */
  lruCacheSize?: number;
  /** Events a source may send about one object at once (default 25). */
  burstSize?: number;
  /** Refill of that budget, events per second (default 1/300: one every 5 minutes). */
  qps?: number;
  /** Groups events for aggregation (default {@link eventAggregatorByReason}). */
  keyFunc?: EventAggregatorKeyFunc;
  /** The aggregate event's message (default {@link eventAggregatorByReasonMessage}). */
  messageFunc?: EventAggregatorMessageFunc;
  /** Distinct messages in one group within the interval before they are aggregated (default 10). */
  maxEvents?: number;
  /** How long a group lives after its last event (default 600 000 ms: 10 minutes). */
  maxIntervalMs?: number;
  /** The spam filter's key (default {@link eventSpamKey}: source, object and type). */
  spamKeyFunc?: EventSpamKeyFunc;
  clock?: Pick<Clock, 'now'>;
}

/** Entries of each correlator LRU cache (client-go's `maxLruCacheEntries`). */
export const DEFAULT_LRU_CACHE_SIZE = 4096;
/** Distinct messages of similar events before they are aggregated (client-go's `defaultAggregateMaxEvents`). */
export const DEFAULT_AGGREGATE_MAX_EVENTS = 10;
/** How long an aggregation group lives after its last event, ms (client-go's `defaultAggregateIntervalInSeconds`). */
export const DEFAULT_AGGREGATE_INTERVAL_MS = 600_000;
/** Events a source may send about one object at once (client-go's `defaultSpamBurst`). */
export const DEFAULT_SPAM_BURST = 25;
/** Refill of the spam budget, events per second: one every 5 minutes (client-go's `defaultSpamQPS`). */
export const DEFAULT_SPAM_QPS = 1 / 300;

const key = (parts: readonly (string | undefined)[]): string => JSON.stringify(parts);

function objectParts(o: ObjectReference, withFieldPath: boolean): (string | undefined)[] {
  return withFieldPath
    ? [o.kind, o.namespace, o.name, o.fieldPath, o.uid, o.apiVersion]
    : [o.kind, o.namespace, o.name, o.uid, o.apiVersion];
}

/** The full key of an event: same key, same event, counted (client-go's `getEventKey`, plus `action`). */
export function eventKey(e: CorrelatedEvent): string {
  return key([
    e.reportingController,
    e.reportingInstance,
    ...objectParts(e.regarding, true),
    e.type,
    e.reason,
    e.action,
    e.note,
  ]);
}

/** The spam filter's default key: source, object (without field path) and type (client-go's `getSpamKey`). */
export function eventSpamKey(e: CorrelatedEvent): string {
  return key([e.reportingController, e.reportingInstance, ...objectParts(e.regarding, false), e.type]);
}

/**
 * Aggregates events that differ only by message: same source, object (without field path), type,
 * reason and action (client-go's `EventAggregatorByReasonFunc`; `action` added, it is part of an
 * events.k8s.io Event). The local key is the message.
 */
export function eventAggregatorByReason(e: CorrelatedEvent): { aggregateKey: string; localKey: string } {
  return {
    aggregateKey: key([
      e.reportingController,
      e.reportingInstance,
      ...objectParts(e.regarding, false),
      e.type,
      e.reason,
      e.action,
    ]),
    localKey: e.note,
  };
}

/** `(combined from similar events): <message>` (client-go's `EventAggregatorByReasonMessageFunc`). */
export function eventAggregatorByReasonMessage(e: CorrelatedEvent): string {
  return `(combined from similar events): ${e.note}`;
}

/** A Map that forgets its least recently used entry beyond `size` (k8s.io/utils/lru). */
class LruCache<V> {
  readonly #size: number;
  readonly #map = new Map<string, V>();

  constructor(size: number) {
    this.#size = size;
  }

  get(k: string): V | undefined {
    const v = this.#map.get(k);
    if (v !== undefined) {
      this.#map.delete(k);
      this.#map.set(k, v);
    }
    return v;
  }

  add(k: string, v: V): void {
    this.#map.delete(k);
    this.#map.set(k, v);
    if (this.#map.size > this.#size) this.#map.delete(this.#map.keys().next().value!);
  }
}

/** A token bucket read without waiting (client-go's `NewTokenBucketPassiveRateLimiterWithClock`). */
class TokenBucket {
  #tokens: number;
  #last: number;

  constructor(
    readonly burst: number,
    readonly qps: number,
    now: number,
  ) {
    this.#tokens = burst;
    this.#last = now;
  }

  tryAccept(now: number): boolean {
    this.#tokens = Math.min(this.burst, this.#tokens + (Math.max(0, now - this.#last) / 1000) * this.qps);
    this.#last = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

/** What the correlator decided about one event. */
export type CorrelateResult =
  | {
      skip: true;
      /** The event as counted (client-go counts a skipped event too): not to be written now. */
      event: CorrelatedEvent;
    }
  | {
      skip: false;
      /** The event to write: a new one (`count` 1) or an earlier one with its count raised. */
      event: CorrelatedEvent;
    };

interface AggregateRecord {
  localKeys: Set<string>;
  lastTimestamp: number;
}

interface EventLog {
  count: number;
  firstTimestamp: number;
  name: string;
  resourceVersion: string | undefined;
}

/**
 * client-go's `EventCorrelator` (`tools/record/events_cache.go`): filters, aggregates and counts
 * events before they reach the API server.
 *
 * 1. **Aggregation**: when events that differ only by message (by `keyFunc`) come with
 *    `maxEvents` (10) distinct messages, each less than `maxIntervalMs` (10 min) after the previous
 *    one, the next ones become one aggregate event, `(combined from similar events): <message>`,
 *    counted from then on.
 * 2. **Counting**: an event equal to an earlier one (same {@link eventKey}) is not written again:
 *    the earlier Event's count goes up (on the wire: its `series`), keeping its name and first time.
 * 3. **Spam filter**: each source + object (by `spamKeyFunc`) has a token bucket of `burstSize`
 *    (25) events refilled at `qps` (one per 5 minutes); an event without a token is skipped.
 *
 * As in client-go, a skipped event was still counted by step 2. All three caches are LRU caches of
 * `lruCacheSize` entries.
 */
export class EventCorrelator {
  readonly #clock: Pick<Clock, 'now'>;
  readonly #keyFunc: EventAggregatorKeyFunc;
  readonly #messageFunc: EventAggregatorMessageFunc;
  readonly #spamKeyFunc: EventSpamKeyFunc;
  readonly #maxEvents: number;
  readonly #maxIntervalMs: number;
  readonly #burst: number;
  readonly #qps: number;
  readonly #aggregates: LruCache<AggregateRecord>;
  readonly #logs: LruCache<EventLog>;
  readonly #buckets: LruCache<TokenBucket>;

  constructor(options: CorrelatorOptions = {}) {
    // client-go's populateDefaults: zero means the default.
    const size = options.lruCacheSize || DEFAULT_LRU_CACHE_SIZE;
    this.#clock = options.clock ?? realClock;
    this.#keyFunc = options.keyFunc ?? eventAggregatorByReason;
    this.#messageFunc = options.messageFunc ?? eventAggregatorByReasonMessage;
    this.#spamKeyFunc = options.spamKeyFunc ?? eventSpamKey;
    this.#maxEvents = options.maxEvents || DEFAULT_AGGREGATE_MAX_EVENTS;
    this.#maxIntervalMs = options.maxIntervalMs || DEFAULT_AGGREGATE_INTERVAL_MS;
    this.#burst = options.burstSize || DEFAULT_SPAM_BURST;
    this.#qps = options.qps || DEFAULT_SPAM_QPS;
    this.#aggregates = new LruCache(size);
    this.#logs = new LruCache(size);
    this.#buckets = new LruCache(size);
  }

  /** Aggregates, counts and spam-filters `event` (client-go's `EventCorrelate`). Does not modify it. */
  correlate(event: CorrelatedEvent): CorrelateResult {
    const { event: aggregated, cacheKey } = this.#aggregate(event);
    const observed = this.#observe(aggregated, cacheKey);
    if (this.#filter(observed)) return { skip: true, event: observed };
    return { skip: false, event: observed };
  }

  /** Records what the server answered for a written event (its name, resourceVersion, count). */
  updateState(event: CorrelatedEvent): void {
    this.#logs.add(eventKey(event), {
      count: event.count,
      firstTimestamp: event.firstTimestamp,
      name: event.name,
      resourceVersion: event.resourceVersion,
    });
  }

  #aggregate(event: CorrelatedEvent): { event: CorrelatedEvent; cacheKey: string } {
    const now = this.#clock.now();
    const fullKey = eventKey(event);
    const { aggregateKey, localKey } = this.#keyFunc(event);
    let record = this.#aggregates.get(aggregateKey);
    if (record === undefined || now - record.lastTimestamp > this.#maxIntervalMs) {
      record = { localKeys: new Set(), lastTimestamp: now };
    }
    record.localKeys.add(localKey);
    record.lastTimestamp = now;
    this.#aggregates.add(aggregateKey, record);
    if (record.localKeys.size < this.#maxEvents) return { event, cacheKey: fullKey };
    // Do not grow the set beyond the maximum (client-go pops any one key).
    record.localKeys.delete(record.localKeys.values().next().value!);
    const aggregate: CorrelatedEvent = {
      name: eventName(event.regarding.name, now),
      namespace: event.namespace,
      regarding: event.regarding,
      reportingController: event.reportingController,
      reportingInstance: event.reportingInstance,
      type: event.type,
      reason: event.reason,
      action: event.action,
      note: this.#messageFunc(event),
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
    };
    return { event: aggregate, cacheKey: aggregateKey };
  }

  #observe(event: CorrelatedEvent, cacheKey: string): CorrelatedEvent {
    const last = this.#logs.get(cacheKey);
    const observed: CorrelatedEvent = { ...event };
    if (last !== undefined && last.count > 0) {
      observed.name = last.name;
      observed.resourceVersion = last.resourceVersion;
      observed.firstTimestamp = last.firstTimestamp;
      observed.count = last.count + 1;
    }
    this.#logs.add(cacheKey, {
      count: observed.count,
      firstTimestamp: observed.firstTimestamp,
      name: observed.name,
      resourceVersion: observed.resourceVersion,
    });
    return observed;
  }

  #filter(event: CorrelatedEvent): boolean {
    const k = this.#spamKeyFunc(event);
    const now = this.#clock.now();
    let bucket = this.#buckets.get(k);
    bucket ??= new TokenBucket(this.#burst, this.#qps, now);
    const skip = !bucket.tryAccept(now);
    this.#buckets.add(k, bucket);
    return skip;
  }
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

let nameSequence = 0;

/**
 * An Event name: `<object name>.<nanoseconds in hex>` (client-go's `GenerateEventName`). The clock has
 * milliseconds, so the nanoseconds are the time plus a sequence number (0–999 999, process-wide):
 * events of one millisecond get distinct names. A random UUID when that is not a valid DNS
 * subdomain name (as client-go).
 */
export function eventName(objectName: string | undefined, nowMs: number): string {
  nameSequence = (nameSequence + 1) % 1_000_000;
  const nanos = BigInt(Math.trunc(nowMs)) * 1_000_000n + BigInt(nameSequence);
  const name = `${objectName ?? ''}.${nanos.toString(16)}`;
  return name.length <= 253 && DNS_SUBDOMAIN.test(name) ? name : crypto.randomUUID();
}
