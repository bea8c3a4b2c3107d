import {
  DEFAULT_AGGREGATE_INTERVAL_MS,
  DEFAULT_AGGREGATE_MAX_EVENTS,
  DEFAULT_SPAM_BURST,
  EventCorrelator,
  eventAggregatorByReason,
  eventAggregatorByReasonMessage,
  eventName,
} from './eventCorrelator.js';
import type { CorrelatedEvent, EventSpamKeyFunc, ObjectReference } from './eventCorrelator.js';

// Port of client-go tools/record/events_cache_test.go (v0.36): TestEventAggregatorByReasonFunc,
// TestEventAggregatorByReasonMessageFunc, TestEventCorrelator (every scenario) and TestEventSpamFilter,
// with the same SimpleIntervalClock (every now() moves time on by a fixed interval).

/** k8s.io/utils/clock/testing SimpleIntervalClock: each `now()` advances by `intervalMs` first. */
function intervalClock(intervalMs: number): { now(): number } {
  let t = Date.parse('2026-12-01T00:00:00Z');
  return { now: () => (t += intervalMs) };
}

function makeObjectReference(kind: string, name: string, namespace: string): ObjectReference {
  return {
    kind,
    name,
    namespace,
    uid: 'C934D34AFB20242',
    apiVersion: 'version',
    fieldPath: 'spec.containers{mycontainer}',
  };
}

function makeEvent(reason: string, note: string, regarding: ObjectReference): CorrelatedEvent {
  const t = Date.parse('2026-12-01T00:00:00Z');
  return {
    name: `${regarding.name}.1`,
    namespace: regarding.namespace ?? 'default',
    regarding,
    reportingController: 'kubelet',
    reportingInstance: 'kublet.node1',
    type: 'Normal',
    reason,
    action: reason,
    note,
    count: 1,
    firstTimestamp: t,
    lastTimestamp: t,
  };
}

const times = (n: number, e: CorrelatedEvent): CorrelatedEvent[] =>
  Array.from({ length: n }, () => ({ ...e }));

function makeUniqueEvents(n: number): CorrelatedEvent[] {
  return Array.from({ length: n }, (_, i) =>
    makeEvent(`reason-${i}`, `message-${i}`, makeObjectReference('Pod', `pod-${i}`, `ns-${i}`)),
  );
}

function makeSimilarEvents(n: number, template: CorrelatedEvent, prefix: string): CorrelatedEvent[] {
  return times(n, template).map((e, i) => ({ ...e, note: `${prefix}-${i}-${e.note}` }));
}

/** Plays `previous` into a fresh correlator (updating its state as the sink would), then correlates `next`. */
function playBack(
  correlator: EventCorrelator,
  clock: { now(): number },
  previous: CorrelatedEvent[],
  next: CorrelatedEvent,
): ReturnType<EventCorrelator['correlate']> {
  for (const e of previous) {
    const now = clock.now();
    const result = correlator.correlate({ ...e, firstTimestamp: now, lastTimestamp: now });
    if (!result.skip) correlator.updateState(result.event);
  }
  const now = clock.now();
  return correlator.correlate({ ...next, firstTimestamp: now, lastTimestamp: now });
}

/** client-go's validateEvent: the fields match, the name has the expected prefix, the times say the count. */
function expectEvent(actual: CorrelatedEvent, expected: CorrelatedEvent): void {
  if (expected.count > 1) expect(actual.firstTimestamp).not.toBe(actual.lastTimestamp);
  else expect(actual.firstTimestamp).toBe(actual.lastTimestamp);
  expect(actual.name.startsWith(expected.name.slice(0, expected.name.lastIndexOf('.') + 1))).toBe(true);
  const strip = ({
    name: _n,
    firstTimestamp: _f,
    lastTimestamp: _l,
    resourceVersion: _r,
    ...rest
  }: CorrelatedEvent) => rest;
  expect(strip(actual)).toEqual(strip(expected));
}

describe('aggregation keys (client-go TestEventAggregatorByReasonFunc / …MessageFunc)', () => {
  test('two events that differ only by message share an aggregate key and differ by local key; another reason does not', () => {
    const pod = makeObjectReference('Pod', 'pod1', 'other');
    const k1 = eventAggregatorByReason(makeEvent('end-of-world', 'it was fun', pod));
    const k2 = eventAggregatorByReason(makeEvent('end-of-world', 'it was awful', pod));
    const k3 = eventAggregatorByReason(makeEvent('nevermind', 'it was a bug', pod));
    expect(k1.aggregateKey).toBe(k2.aggregateKey);
    expect(k1.localKey).not.toBe(k2.localKey);
    expect(k1.aggregateKey).not.toBe(k3.aggregateKey);
  });

  test('the aggregate message is the message prefixed with "(combined from similar events): "', () => {
    const e = makeEvent('end-of-world', 'it was fun', makeObjectReference('Pod', 'pod1', 'other'));
    expect(eventAggregatorByReasonMessage(e)).toBe('(combined from similar events): it was fun');
  });
});

describe('EventCorrelator (client-go TestEventCorrelator)', () => {
  const regarding = makeObjectReference('Pod', 'my-pod', 'my-ns');
  const firstEvent = makeEvent('first', 'i am first', regarding);
  const duplicateEvent = makeEvent('duplicate', 'me again', regarding);
  const uniqueEvent = makeEvent('unique', 'snowflake', regarding);
  const similarEvent = makeEvent('similar', 'similar message', {
    ...regarding,
    fieldPath: 'spec.containers{container1}',
  });
  const aggregateEvent = makeEvent(
    similarEvent.reason,
    eventAggregatorByReasonMessage(similarEvent),
    similarEvent.regarding,
  );
  const similarButDifferentContainerEvent: CorrelatedEvent = {
    ...similarEvent,
    regarding: { ...similarEvent.regarding, fieldPath: 'spec.containers{container2}' },
  };

  const scenarios: Array<{
    name: string;
    previous: CorrelatedEvent[];
    next: CorrelatedEvent;
    expected?: CorrelatedEvent;
    intervalSeconds: number;
  }> = [
    {
      name: 'a single event is created as it is',
      previous: [],
      next: firstEvent,
      expected: firstEvent,
      intervalSeconds: 5,
    },
    {
      name: 'the same event again is counted (count 2)',
      previous: times(1, duplicateEvent),
      next: duplicateEvent,
      expected: { ...duplicateEvent, count: 2 },
      intervalSeconds: 5,
    },
    {
      name: 'the same event is counted even past the aggregation threshold (one message is not a group)',
      previous: times(DEFAULT_AGGREGATE_MAX_EVENTS, duplicateEvent),
      next: duplicateEvent,
      expected: { ...duplicateEvent, count: DEFAULT_AGGREGATE_MAX_EVENTS + 1 },
      intervalSeconds: 30,
    },
    {
      name: 'the same event is spam when it comes more often than the budget (burst 25, then 1 per 5 min)',
      previous: times(DEFAULT_SPAM_BURST + 1, duplicateEvent),
      next: duplicateEvent,
      intervalSeconds: 1,
    },
    {
      name: 'many unique events about other objects do not touch a new one',
      previous: makeUniqueEvents(30),
      next: uniqueEvent,
      expected: uniqueEvent,
      intervalSeconds: 5,
    },
    {
      name: 'the 10th similar event (differing only by message) within 10 minutes becomes an aggregate event',
      previous: makeSimilarEvents(DEFAULT_AGGREGATE_MAX_EVENTS - 1, similarEvent, similarEvent.note),
      next: similarEvent,
      expected: aggregateEvent,
      intervalSeconds: 5,
    },
    {
      name: 'similar events past the threshold count the aggregate event',
      previous: makeSimilarEvents(DEFAULT_AGGREGATE_MAX_EVENTS, similarEvent, similarEvent.note),
      next: similarEvent,
      expected: { ...aggregateEvent, count: 2 },
      intervalSeconds: 5,
    },
    {
      name: 'events about different containers (field paths) are not the same event',
      previous: times(1, similarButDifferentContainerEvent),
      next: similarEvent,
      expected: similarEvent,
      intervalSeconds: 5,
    },
    {
      name: 'similar events further apart than the aggregation interval are not aggregated',
      previous: makeSimilarEvents(DEFAULT_AGGREGATE_MAX_EVENTS - 1, similarEvent, similarEvent.note),
      next: similarEvent,
      expected: similarEvent,
      intervalSeconds: DEFAULT_AGGREGATE_INTERVAL_MS / 1000,
    },
  ];

  test.each(scenarios)('$name', ({ previous, next, expected, intervalSeconds }) => {
    const clock = intervalClock(intervalSeconds * 1000);
    const result = playBack(new EventCorrelator({ clock }), clock, previous, next);
    expect(result.skip).toBe(expected === undefined);
    if (!result.skip && expected !== undefined) expectEvent(result.event, expected);
  });

  test('a counted event keeps the name and first time of its first occurrence and the resourceVersion the server gave it', () => {
    const clock = intervalClock(1000);
    const correlator = new EventCorrelator({ clock });
    const first = correlator.correlate(duplicateEvent);
    if (first.skip) throw new Error('skipped');
    correlator.updateState({ ...first.event, resourceVersion: '42' });
    const second = correlator.correlate({
      ...duplicateEvent,
      name: 'other-name',
      firstTimestamp: 5,
      lastTimestamp: 5,
    });
    if (second.skip) throw new Error('skipped');
    expect(second.event).toMatchObject({ name: first.event.name, resourceVersion: '42', count: 2 });
    expect(second.event.firstTimestamp).toBe(first.event.firstTimestamp);
    expect(second.event.lastTimestamp).toBe(5);
  });

  test('the spam budget refills: after 25 events one more is allowed every 5 minutes', () => {
    let t = 0;
    const correlator = new EventCorrelator({ clock: { now: () => t } });
    const results = makeUniqueEvents(26).map((e) => correlator.correlate({ ...e, regarding }).skip);
    expect(results.filter((s) => !s)).toHaveLength(DEFAULT_SPAM_BURST);
    expect(results.at(-1)).toBe(true);
    t += 299_000;
    expect(correlator.correlate({ ...uniqueEvent, reason: 'a' }).skip).toBe(true);
    t += 1_000;
    expect(correlator.correlate({ ...uniqueEvent, reason: 'b' }).skip).toBe(false);
    expect(correlator.correlate({ ...uniqueEvent, reason: 'c' }).skip).toBe(true);
  });
});

describe('spam filter keys (client-go TestEventSpamFilter)', () => {
  const regarding = makeObjectReference('Pod', 'my-pod', 'my-ns');
  const originalEvent = makeEvent('original', 'i am first', regarding);
  const differentReasonEvent = makeEvent('duplicate', 'me again', regarding);
  const spamEvent = makeEvent('original', 'me again', regarding);
  const byObjectAndReason: EventSpamKeyFunc = (e) =>
    JSON.stringify([
      e.reportingController,
      e.reportingInstance,
      e.regarding.kind,
      e.regarding.namespace,
      e.regarding.name,
      e.regarding.uid,
      e.regarding.apiVersion,
      e.reason,
    ]);

  test.each([
    {
      name: 'the default filter charges every event about the same object to one budget',
      next: differentReasonEvent,
      spamKeyFunc: undefined,
      skip: true,
    },
    {
      name: 'a filter keyed by object and reason lets another reason through',
      next: differentReasonEvent,
      spamKeyFunc: byObjectAndReason,
      skip: false,
    },
    {
      name: 'a filter keyed by object and reason stops the same reason with another message',
      next: spamEvent,
      spamKeyFunc: byObjectAndReason,
      skip: true,
    },
  ])('$name (burst 1)', ({ next, spamKeyFunc, skip }) => {
    const clock = intervalClock(1000);
    const correlator = new EventCorrelator({ clock, burstSize: 1, ...(spamKeyFunc ? { spamKeyFunc } : {}) });
    const first = correlator.correlate(originalEvent);
    if (!first.skip) correlator.updateState(first.event);
    const result = correlator.correlate(next);
    expect(result.skip).toBe(skip);
    if (!result.skip) expectEvent(result.event, next);
  });
});

describe('LRU caches', () => {
  test('with lruCacheSize 2, an event whose record was evicted is new again (count 1)', () => {
    const clock = intervalClock(1000);
    const correlator = new EventCorrelator({ clock, lruCacheSize: 2 });
    const [a, b, c] = makeUniqueEvents(3) as [CorrelatedEvent, CorrelatedEvent, CorrelatedEvent];
    for (const e of [a, a]) correlator.correlate(e);
    const again = correlator.correlate(a);
    expect(!again.skip && again.event.count).toBe(3);
    correlator.correlate(b);
    correlator.correlate(c);
    const evicted = correlator.correlate(a);
    expect(!evicted.skip && evicted.event.count).toBe(1);
  });
});

describe('eventName', () => {
  test('is <object name>.<hex nanoseconds>, distinct within one millisecond; a UUID for names that are not DNS subdomains', () => {
    const a = eventName('web-1', 1_000);
    const b = eventName('web-1', 1_000);
    expect(a).toMatch(/^web-1\.[0-9a-f]+$/);
    expect(a).not.toBe(b);
    expect(BigInt(`0x${a.split('.')[1]}`) / 1_000_000n).toBe(1000n);
    expect(eventName('Not_Valid', 1_000)).toMatch(/^[0-9a-f-]{36}$/);
  });
});
