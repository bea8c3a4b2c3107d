import { ErrorCodes, KinformerError } from '@kinformer/core';
import { FakeClock } from '@kinformer/core/testing';
import { captureLogs, LEVEL } from '@kinformer/test-tools';
import type { LogLine } from '@kinformer/test-tools';
import { FakeApiServer } from '@kinformer/testing';
import type { EventsV1Event } from '@kubernetes/client-node';
import { ApiEventRecorder, referenceTo } from './eventRecorder.js';
import type { ApiEventRecorderOptions } from './eventRecorder.js';
import { eventsV1Sink } from './eventSink.js';
import type { EventSink, JsonPatchOperation } from './eventSink.js';

// ApiEventRecorder against FakeApiServer's events.k8s.io/v1 events (registered here: the fake serves
// any group/version/resource). Retry timing runs on a FakeClock through a sink that fails on purpose.

const EVENTS = 'events.events.k8s.io';
const T0 = Date.parse('2026-12-01T10:00:00Z');
const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-1', namespace: 'apps', uid: 'uid-1', resourceVersion: '7' },
};
/** The reference an Event about `pod` carries. */
const podReference = {
  apiVersion: 'v1',
  kind: 'Pod',
  name: 'web-1',
  namespace: 'apps',
  uid: 'uid-1',
  resourceVersion: '7',
};

let server: FakeApiServer;
let recorders: ApiEventRecorder[] = [];

beforeEach(async () => {
  server = await FakeApiServer.start();
  server.create('namespaces', { metadata: { name: 'apps' } }); // NamespaceLifecycle: writes need it
  server.registerResource({
    group: 'events.k8s.io',
    version: 'v1',
    resource: 'events',
    kind: 'Event',
    namespaced: true,
  });
});

afterEach(async () => {
  await Promise.all(recorders.map((r) => r.shutdown()));
  recorders = [];
  await server.close();
});

function newRecorder(options: Partial<ApiEventRecorderOptions> & { sink?: EventSink } = {}): {
  recorder: ApiEventRecorder;
  clock: FakeClock;
  lines: LogLine[];
} {
  const clock = options.clock instanceof FakeClock ? options.clock : new FakeClock(T0);
  const { logger, lines } = captureLogs();
  const { sink, ...rest } = options;
  const recorder = new ApiEventRecorder(sink ?? server.kubeConfig(), {
    reportingController: 'test-controller',
    reportingInstance: 'test-controller-host1',
    clock,
    logger,
    ...rest,
  });
  recorders.push(recorder);
  return { recorder, clock, lines };
}

const stored = (): EventsV1Event[] => server.list<EventsV1Event>(EVENTS, 'apps');

/** A sink that fails the next `failures` calls with `error`, then writes to the server; counts calls. */
function flakySink(failures: number, error: () => Error): EventSink & { calls: string[] } {
  const real = eventsV1Sink(server.kubeConfig());
  let left = failures;
  const calls: string[] = [];
  const gate = <T>(verb: string, call: () => Promise<T>): Promise<T> => {
    calls.push(verb);
    if (left > 0) {
      left--;
      return Promise.reject(error());
    }
    return call();
  };
  return {
    calls,
    create: (e: EventsV1Event, s: AbortSignal) => gate('create', () => real.create(e, s)),
    patch: (e: EventsV1Event, p: JsonPatchOperation[], s: AbortSignal) =>
      gate('patch', () => real.patch(e, p, s)),
  };
}

const connectionError = (): Error => new KinformerError(ErrorCodes.CONNECTION, 'connect ECONNREFUSED');

describe('ApiEventRecorder writes events.k8s.io/v1 Events', () => {
  test('an event becomes an Event about the object, in its namespace, with eventTime and no series', async () => {
    const { recorder } = newRecorder();
    recorder.event(pod, 'Normal', 'Scheduled', 'assigned apps/web-1 to node-1', { action: 'Binding' });
    await recorder.flush();
    const [event, ...others] = stored();
    expect(others).toEqual([]);
    expect(event).toMatchObject({
      metadata: { namespace: 'apps' },
      regarding: podReference,
      reportingController: 'test-controller',
      reportingInstance: 'test-controller-host1',
      type: 'Normal',
      reason: 'Scheduled',
      action: 'Binding',
      note: 'assigned apps/web-1 to node-1',
    });
    expect(event!.metadata?.name).toMatch(/^web-1\.[0-9a-f]+$/);
    expect(new Date(event!.eventTime as unknown as string).getTime()).toBe(T0);
    expect(event!.series).toBeUndefined();
    expect(event).not.toHaveProperty('deprecatedCount');
    expect(recorder.stats()).toMatchObject({ recorded: 1, created: 1, patched: 0, pending: 0 });
  });

  test('the same event again raises series.count on the first Event (a patch), instead of a second Event', async () => {
    const { recorder, clock } = newRecorder();
    recorder.event(pod, 'Warning', 'BackOff', 'restarting failed container');
    await recorder.flush();
    clock.advance(30_000);
    recorder.event(pod, 'Warning', 'BackOff', 'restarting failed container');
    clock.advance(30_000);
    recorder.event(pod, 'Warning', 'BackOff', 'restarting failed container');
    await recorder.flush();
    const events = stored();
    expect(events).toHaveLength(1);
    expect(events[0]!.series?.count).toBe(3);
    expect(new Date(events[0]!.series!.lastObservedTime as unknown as string).getTime()).toBe(T0 + 60_000);
    expect(new Date(events[0]!.eventTime as unknown as string).getTime()).toBe(T0);
    expect(server.requests.filter((r) => r.resource === 'events').map((r) => r.verb)).toEqual([
      'create',
      'patch',
      'patch',
    ]);
  });

  test('ten similar events (differing by message) within 10 minutes: the tenth on become one counted aggregate Event', async () => {
    const { recorder } = newRecorder();
    for (let i = 0; i < 11; i++) recorder.event(pod, 'Warning', 'FailedMount', `volume ${i} not found`);
    await recorder.flush();
    const events = stored();
    expect(events).toHaveLength(10);
    const aggregate = events.filter((e) => e.note?.startsWith('(combined from similar events): '));
    expect(aggregate).toHaveLength(1);
    expect(aggregate[0]).toMatchObject({
      note: '(combined from similar events): volume 9 not found',
      series: { count: 2 },
    });
  });

  test('the spam filter lets 25 events about one object through, then one per 5 minutes', async () => {
    const { recorder, clock } = newRecorder();
    for (let i = 0; i < 30; i++) recorder.event(pod, 'Normal', `Reason${i}`, 'x');
    await recorder.flush();
    expect(stored()).toHaveLength(25);
    expect(recorder.stats()).toMatchObject({ recorded: 30, spamFiltered: 5, created: 25 });
    clock.advance(300_000);
    recorder.event(pod, 'Normal', 'Later', 'x');
    recorder.event(pod, 'Normal', 'TooSoon', 'x');
    await recorder.flush();
    expect(stored().map((e) => e.reason)).toContain('Later');
    expect(stored().map((e) => e.reason)).not.toContain('TooSoon');
  });

  describe('series heartbeat (client-go tools/events: finish after 6 minutes, refresh every 30)', () => {
    const seriesOf = (e: EventsV1Event | undefined): { count?: number; last?: number } => ({
      ...(e?.series?.count === undefined ? {} : { count: e.series.count }),
      ...(e?.series === undefined ? {} : { last: new Date(e.series.lastObservedTime).getTime() }),
    });
    const eventVerbs = (): (string | undefined)[] =>
      server.requests.filter((r) => r.resource === 'events').map((r) => r.verb);
    /** A recorder whose spam filter lets a burst of two through, then (for a day) nothing. */
    const spamFiltered = (): ReturnType<typeof newRecorder> =>
      newRecorder({ correlator: { burstSize: 2, qps: 1 / 86_400 } });
    /** Records the same BackOff event `times` times, `everyMs` apart (flushing after each when asked). */
    const backOffRepeatedly = async (
      { recorder, clock }: ReturnType<typeof newRecorder>,
      times: number,
      everyMs: number,
      flushEach = false,
    ): Promise<void> => {
      for (let i = 0; i < times; i++) {
        recorder.event(pod, 'Warning', 'BackOff', 'restarting failed container');
        await clock.tick(everyMs);
        if (flushEach) await recorder.flush();
      }
    };

    test('repeats the spam filter skipped are written as the final count once the series has been quiet for 6 minutes', async () => {
      const env = spamFiltered();
      const { recorder, clock } = env;
      await backOffRepeatedly(env, 5, 1_000);
      await recorder.flush();
      expect(recorder.stats()).toMatchObject({ spamFiltered: 3, created: 1, patched: 1 });
      expect(seriesOf(stored()[0])).toEqual({ count: 2, last: T0 + 1_000 });
      await clock.tick(6 * 60_000); // the first check, 5 min 57 s after the last repeat: not finished yet
      await recorder.flush();
      expect(seriesOf(stored()[0])).toEqual({ count: 2, last: T0 + 1_000 });
      await clock.tick(6 * 60_000);
      await recorder.flush();
      expect(stored()).toHaveLength(1);
      expect(seriesOf(stored()[0])).toEqual({ count: 5, last: T0 + 4_000 });
      expect(recorder.stats()).toMatchObject({ heartbeats: 1, patched: 2 });
      // Finished and forgotten: nothing more is written.
      await clock.tick(60 * 60_000);
      await recorder.flush();
      expect(eventVerbs()).toEqual(['create', 'patch', 'patch']);
    });

    test('an ongoing series has its count so far written every 30 minutes', async () => {
      const env = spamFiltered();
      await backOffRepeatedly(env, 35, 60_000, true); // one a minute
      const { recorder } = env;
      // Events at minutes 0..34. The first repeat (minute 1) armed the 6-minute check; its fifth run,
      // at minute 31, was the 30-minute refresh and wrote the 31 seen by then.
      expect(seriesOf(stored()[0])).toEqual({ count: 31, last: T0 + 30 * 60_000 });
      expect(recorder.stats()).toMatchObject({ heartbeats: 1, recorded: 35 });
      expect(eventVerbs()).toEqual(['create', 'patch', 'patch']);
    });

    test('a series whose every repeat was written gets no extra write', async () => {
      const { recorder, clock } = newRecorder();
      for (let i = 0; i < 3; i++) recorder.event(pod, 'Normal', 'Synced', 'ok');
      await recorder.flush();
      await clock.tick(60 * 60_000);
      await recorder.flush();
      expect(recorder.stats()).toMatchObject({ heartbeats: 0, created: 1, patched: 2 });
      expect(seriesOf(stored()[0]).count).toBe(3);
    });

    test('shutdown stops the heartbeat: nothing is written after it', async () => {
      const { recorder, clock } = spamFiltered();
      for (let i = 0; i < 4; i++) recorder.event(pod, 'Warning', 'BackOff', 'x');
      await recorder.flush();
      await recorder.shutdown();
      await clock.tick(60 * 60_000);
      expect(recorder.stats()).toMatchObject({ heartbeats: 0 });
      expect(seriesOf(stored()[0]).count).toBe(2);
    });
  });

  test('a counted event whose Event is gone (404 on the patch) is created again', async () => {
    const { recorder } = newRecorder();
    recorder.event(pod, 'Normal', 'Synced', 'ok');
    await recorder.flush();
    server.delete(EVENTS, `apps/${stored()[0]!.metadata!.name!}`);
    recorder.event(pod, 'Normal', 'Synced', 'ok');
    await recorder.flush();
    expect(stored()).toHaveLength(1);
    expect(stored()[0]!.series?.count).toBe(2);
    expect(recorder.stats()).toMatchObject({ created: 2, patched: 0 });
  });

  test('a cluster-scoped object’s events go to the default namespace; related objects are referenced', async () => {
    const { recorder } = newRecorder();
    recorder.event(
      { kind: 'Node', apiVersion: 'v1', metadata: { name: 'node-1' } },
      'Normal',
      'Ready',
      'ok',
      {
        related: pod,
        annotations: { team: 'a' },
      },
    );
    await recorder.flush();
    const [event] = server.list<EventsV1Event>(EVENTS, 'default');
    expect(event).toMatchObject({
      regarding: { kind: 'Node', name: 'node-1' },
      related: { kind: 'Pod', name: 'web-1', namespace: 'apps' },
      metadata: { annotations: { team: 'a' } },
    });
  });
});

describe('ApiEventRecorder: asynchronous writes, retries and limits', () => {
  test('while the server cannot be reached it retries every 10 s (the first wait jittered), on the injected clock', async () => {
    const sink = flakySink(2, connectionError);
    const { recorder, clock } = newRecorder({ sink, random: () => 0.5 });
    recorder.event(pod, 'Normal', 'Synced', 'ok');
    const flushed = recorder.flush();
    await clock.tick(0);
    expect(sink.calls).toEqual(['create']);
    await clock.tick(4_999); // first wait: 0.5 × 10 s
    expect(sink.calls).toHaveLength(1);
    await clock.tick(1);
    expect(sink.calls).toHaveLength(2);
    await clock.tick(9_999);
    expect(sink.calls).toHaveLength(2);
    await clock.tick(1);
    await flushed;
    expect(sink.calls).toEqual(['create', 'create', 'create']);
    expect(stored()).toHaveLength(1);
  });

  test('it gives up after 12 attempts (client-go maxTriesPerEvent) and goes on with the next event', async () => {
    const sink = flakySink(12, connectionError);
    const { recorder, clock, lines } = newRecorder({ sink, random: () => 0 });
    recorder.event(pod, 'Normal', 'First', 'lost');
    recorder.event(pod, 'Normal', 'Second', 'kept');
    const flushed = recorder.flush();
    while ((await clock.tickToNext()) || recorder.stats().pending > 1) {
      /* run the retry timers */
    }
    await flushed;
    expect(sink.calls.length).toBe(13);
    expect(stored().map((e) => e.reason)).toEqual(['Second']);
    expect(recorder.stats()).toMatchObject({ failed: 1, created: 1 });
    expect(lines.some((l) => l.msg === 'unable to write event (retry limit exceeded)')).toBe(true);
  });

  test('an answer from the server (a 403 Status) is not retried: the event is given up and logged', async () => {
    const { recorder, lines } = newRecorder();
    server.faults.failNext({ status: 403, resource: EVENTS });
    recorder.event(pod, 'Normal', 'Synced', 'ok');
    await recorder.flush();
    expect(server.requests.filter((r) => r.resource === 'events')).toHaveLength(1);
    expect(stored()).toEqual([]);
    expect(recorder.stats()).toMatchObject({ failed: 1, created: 0 });
    expect(
      lines.some((l) => l.msg === 'server rejected event (will not retry)' && l.level === LEVEL.error),
    ).toBe(true);
  });

  test('event() never waits: it returns before anything is written', () => {
    const { recorder } = newRecorder();
    recorder.event(pod, 'Normal', 'Synced', 'ok');
    expect(recorder.stats().pending).toBe(1);
    expect(stored()).toEqual([]);
  });

  test('beyond maxQueuedEvents, events are dropped and logged', async () => {
    const { recorder, lines } = newRecorder({ maxQueuedEvents: 2 });
    for (let i = 0; i < 4; i++) recorder.event(pod, 'Normal', `R${i}`, 'x');
    expect(recorder.stats()).toMatchObject({ dropped: 2, pending: 2 });
    expect(lines.filter((l) => l.msg.includes('too many queued events'))).toHaveLength(2);
    await recorder.flush();
    expect(
      stored()
        .map((e) => e.reason)
        .sort(),
    ).toEqual(['R0', 'R1']);
  });

  test('shutdown aborts a retry wait and drops what is queued; later events are dropped', async () => {
    const sink = flakySink(100, connectionError);
    const { recorder, clock } = newRecorder({ sink, random: () => 1 });
    recorder.event(pod, 'Normal', 'A', 'x');
    recorder.event(pod, 'Normal', 'B', 'x');
    await clock.tick(0);
    expect(sink.calls).toHaveLength(1);
    await recorder.shutdown();
    await clock.tick(60_000);
    expect(sink.calls).toHaveLength(1);
    recorder.event(pod, 'Normal', 'C', 'x');
    expect(recorder.stats()).toMatchObject({ pending: 0, dropped: 1 });
  });

  test('invalid events are dropped without a request: unknown type, no kind, no name', async () => {
    const { recorder } = newRecorder();
    recorder.event(pod, 'Info' as 'Normal', 'R', 'x');
    recorder.event({ metadata: { name: 'no-kind' } }, 'Normal', 'R', 'x');
    recorder.event({ kind: 'Pod' }, 'Normal', 'R', 'x');
    await recorder.flush();
    expect(recorder.stats()).toMatchObject({ recorded: 3, dropped: 3, pending: 0 });
    expect(server.requests.filter((r) => r.resource === 'events')).toEqual([]);
  });

  test('options are validated', () => {
    expect(() => new ApiEventRecorder(server.kubeConfig(), { reportingController: '' })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
    expect(
      () => new ApiEventRecorder(server.kubeConfig(), { reportingController: 'c', maxTries: 0 }),
    ).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }));
  });

  test('notes longer than 1024 bytes (the server’s limit) are cut to 1024 bytes', async () => {
    const { recorder } = newRecorder();
    recorder.event(pod, 'Normal', 'Long', 'é'.repeat(700));
    await recorder.flush();
    expect(Buffer.byteLength(stored()[0]!.note!)).toBe(1024);
  });
});

describe('referenceTo', () => {
  test('takes apiVersion, kind, name, namespace, uid and resourceVersion from an object; a reference keeps its fieldPath', () => {
    expect(referenceTo(pod)).toEqual(podReference);
    expect(referenceTo({ kind: 'Pod', name: 'p', fieldPath: 'spec.containers{app}' })).toEqual({
      kind: 'Pod',
      name: 'p',
      fieldPath: 'spec.containers{app}',
    });
    expect(referenceTo({ metadata: { name: 'x' } })).toBeUndefined();
  });
});
