import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import { ErrorCodes, KinformerError, type KubeObject } from '@kinformer/core';
import type { WatchEvent } from '@kinformer/reflector';
import fc from 'fast-check';
import { collect, pod, settle, waitFor, within } from '@kinformer/test-tools';
import {
  WatchEventStream,
  type WatchEventStreamOptions,
  type WatchStreamSummary,
} from './watchEventStream.js';
import { expectBadThirdLine } from './badLine.test.helpers.js';

type Obj = KubeObject & Record<string, unknown>;

const line = (type: string, object: unknown): string => `${JSON.stringify({ type, object })}\n`;

/** A body with multi-byte UTF-8 (2, 3 and 4 bytes) in several events. */
const EVENTS: Array<WatchEvent<KubeObject>> = [
  { type: 'ADDED', object: pod('pod-a', '10', 'default', { spec: { note: 'héllo wörld' } }) },
  { type: 'MODIFIED', object: pod('pod-ä', '11', 'default', { spec: { note: '✓ 漢字 😀 end' } }) },
  {
    type: 'BOOKMARK',
    object: {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { resourceVersion: '12', annotations: { 'k8s.io/initial-events-end': 'true' } },
    },
  },
  { type: 'DELETED', object: pod('pod-😀', '13') },
];
const BODY = Buffer.from(EVENTS.map((e) => line(e.type, e.object)).join(''));

function source(chunks: Buffer[]): Readable {
  return Readable.from(chunks, { objectMode: false });
}

function stream(src: Readable, options: Partial<WatchEventStreamOptions> = {}): WatchEventStream<Obj> {
  return new WatchEventStream(src, {
    maxLineBytes: 1 << 20,
    details: { resource: 'pods.v1', verb: 'watch' },
    ...options,
  });
}

function splitAt(buf: Buffer, cuts: number[]): Buffer[] {
  const out: Buffer[] = [];
  let prev = 0;
  for (const c of [...cuts].sort((a, b) => a - b)) {
    out.push(buf.subarray(prev, c));
    prev = c;
  }
  out.push(buf.subarray(prev));
  return out.filter((b) => b.length > 0);
}

describe('WatchEventStream decoding', () => {
  it('decodes identically when the body is split at every possible byte boundary, inside UTF-8 characters too', async () => {
    expect(BODY.length).toBeGreaterThan(EVENTS.map((e) => JSON.stringify(e)).join('').length); // multi-byte present
    for (let cut = 1; cut < BODY.length; cut++) {
      const { events, error } = await collect(stream(source([BODY.subarray(0, cut), BODY.subarray(cut)])));
      expect(error).toBeUndefined();
      expect(events).toEqual(EVENTS);
    }
  });

  it('decodes identically when every byte arrives in its own chunk', async () => {
    const chunks = Array.from({ length: BODY.length }, (_, i) => BODY.subarray(i, i + 1));
    const { events, error } = await collect(stream(source(chunks)));
    expect(error).toBeUndefined();
    expect(events).toEqual(EVENTS);
  });

  it('decodes identically for any chunking (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: BODY.length - 1 }), { maxLength: 12 }),
        async (cuts) => {
          const { events, error } = await collect(stream(source(splitAt(BODY, cuts))));
          expect(error).toBeUndefined();
          expect(events).toEqual(EVENTS);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('yields several events that arrive in one chunk, in order', async () => {
    const { events } = await collect(stream(source([BODY])));
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'BOOKMARK', 'DELETED']);
    expect(events.map((e) => e.object.metadata?.resourceVersion)).toEqual(['10', '11', '12', '13']);
  });

  it('skips empty and whitespace-only lines', async () => {
    const body = `\n${line('ADDED', pod('a', '1'))}\n\n  \n${line('MODIFIED', pod('a', '2'))}\n`;
    const { events, error } = await collect(stream(source([Buffer.from(body)])));
    expect(error).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED']);
  });

  it('yields a final line without a newline at a clean end', async () => {
    const body = line('ADDED', pod('a', '1')) + JSON.stringify({ type: 'DELETED', object: pod('a', '2') });
    const { events, error } = await collect(stream(source([Buffer.from(body)])));
    expect(error).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
  });

  it('throws ERR_CONNECTION for a truncated last line at a clean end, after the good events', async () => {
    const body = line('ADDED', pod('a', '1')) + '{"type":"MODIFIED","object":{"metadata":{"na';
    const { events, error } = await collect(stream(source([Buffer.from(body)])));
    expect(events).toHaveLength(1);
    expect(error).toBeInstanceOf(KinformerError);
    expect(error).toMatchObject({ code: ErrorCodes.CONNECTION, details: { resource: 'pods.v1', line: 2 } });
  });
});

describe('WatchEventStream errors', () => {
  const good = line('ADDED', pod('a', '1')) + line('MODIFIED', pod('a', '2'));
  const cases: Array<{ name: string; bad: string; code: string }> = [
    {
      name: 'a line that is not JSON',
      bad: '{"type":"ADDED","object":\n',
      code: ErrorCodes.MALFORMED_WATCH_EVENT,
    },
    { name: 'a JSON value that is not an object', bad: '42\n', code: ErrorCodes.MALFORMED_WATCH_EVENT },
    {
      name: 'an event without a type',
      bad: line(undefined as unknown as string, pod('b', '3')),
      code: ErrorCodes.MALFORMED_WATCH_EVENT,
    },
    { name: 'an event with a null object', bad: line('ADDED', null), code: ErrorCodes.MALFORMED_WATCH_EVENT },
    {
      name: 'an event without an object',
      bad: '{"type":"MODIFIED"}\n',
      code: ErrorCodes.MALFORMED_WATCH_EVENT,
    },
    {
      name: 'an object without metadata',
      bad: line('MODIFIED', { kind: 'Pod' }),
      code: ErrorCodes.MALFORMED_WATCH_EVENT,
    },
    {
      name: 'a BOOKMARK whose metadata is null',
      bad: line('BOOKMARK', { metadata: null }),
      code: ErrorCodes.MALFORMED_WATCH_EVENT,
    },
    {
      name: 'an ERROR event with a null object',
      bad: line('ERROR', null),
      code: ErrorCodes.MALFORMED_WATCH_EVENT,
    },
    {
      name: 'an unknown event type',
      bad: line('RENAMED', pod('b', '3')),
      code: ErrorCodes.UNKNOWN_EVENT_TYPE,
    },
  ];

  it.each(cases)('throws $code for $name, only after the good events before it', async ({ bad, code }) => {
    const after = line('DELETED', pod('a', '4'));
    const { events, error } = await collect(stream(source([Buffer.from(good + bad + after)])));
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED']);
    const err = expectBadThirdLine(error, code);
    expect((err.details?.excerpt as string).length).toBeLessThanOrEqual(201);
  });

  it('throws the ERROR event as KinformerError.fromStatus with the Status, after the events before it', async () => {
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'too old resource version: 1 (5)',
      reason: 'Expired',
      code: 410,
    };
    const { events, error } = await collect(stream(source([Buffer.from(good + line('ERROR', status))])));
    expect(events).toHaveLength(2);
    expect(error).toBeInstanceOf(KinformerError);
    expect(error).toMatchObject({
      code: ErrorCodes.RESOURCE_EXPIRED,
      status,
      httpStatus: 410,
      message: 'too old resource version: 1 (5)',
      details: { resource: 'pods.v1', line: 3 },
    });
  });

  it('keeps a short excerpt of a long bad line', async () => {
    const bad = `{"type":"ADDED","object":{"metadata":{"name":"${'x'.repeat(5000)}"}},oops}\n`;
    const { error } = await collect(stream(source([Buffer.from(bad)])));
    expect(error).toMatchObject({ code: ErrorCodes.MALFORMED_WATCH_EVENT });
    expect(((error as KinformerError).details?.excerpt as string).length).toBeLessThanOrEqual(201);
  });

  it('throws ERR_WATCH_LINE_TOO_LARGE for a line over the limit inside one chunk', async () => {
    const big = line('ADDED', pod('b', '2', 'default', { data: 'y'.repeat(500) }));
    const { events, error } = await collect(
      stream(source([Buffer.from(line('ADDED', pod('a', '1')) + big)]), { maxLineBytes: 300 }),
    );
    expect(events).toHaveLength(1);
    expect(error).toMatchObject({
      code: ErrorCodes.WATCH_LINE_TOO_LARGE,
      details: { line: 2, maxLineBytes: 300 },
    });
  });

  it('throws ERR_WATCH_LINE_TOO_LARGE as soon as a partial line passes the limit, before its newline arrives', async () => {
    const first = Buffer.from(line('ADDED', pod('a', '1')));
    let served = 0;
    const src = new Readable({
      read() {
        // Never ends and never sends another newline: only the limit can stop the stream.
        this.push(served++ === 0 ? first : Buffer.from('z'.repeat(100)));
      },
    });
    const { events, error } = await within(
      collect(stream(src, { maxLineBytes: 250 })),
      'the stream to stop at the limit',
    );
    expect(events).toHaveLength(1);
    expect(error).toMatchObject({
      code: ErrorCodes.WATCH_LINE_TOO_LARGE,
      details: { line: 2, maxLineBytes: 250 },
    });
    expect(src.destroyed).toBe(true);
  });

  it('accepts a line of exactly maxLineBytes', async () => {
    const l = line('ADDED', pod('a', '1'));
    const { events, error } = await collect(
      stream(source([Buffer.from(l)]), { maxLineBytes: Buffer.byteLength(l) - 1 }),
    );
    expect(error).toBeUndefined();
    expect(events).toHaveLength(1);
  });

  it('throws ERR_CONNECTION when the source fails, after every complete line received before', async () => {
    const src = new Readable({ read() {} });
    const s = stream(src);
    src.push(Buffer.from(good + '{"type":"ADDED","obj'));
    const it = s[Symbol.asyncIterator]();
    expect((await it.next()).value).toMatchObject({ type: 'ADDED' });
    src.destroy(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    expect((await it.next()).value).toMatchObject({ type: 'MODIFIED' });
    const err = await it.next().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({
      code: ErrorCodes.CONNECTION,
      details: { errno: 'ECONNRESET', resource: 'pods.v1' },
    });
    expect((err as KinformerError).cause).toBeInstanceOf(Error);
    expect(await it.next()).toEqual({ value: undefined, done: true });
  });

  it('throws ERR_CONNECTION when the source closes without ending', async () => {
    const src = new Readable({ read() {} });
    const s = stream(src);
    src.push(Buffer.from(line('ADDED', pod('a', '1'))));
    setImmediate(() => src.destroy());
    const { events, error } = await collect(s);
    expect(events).toHaveLength(1);
    expect(error).toMatchObject({ code: ErrorCodes.CONNECTION });
  });
});

describe('WatchEventStream lifecycle', () => {
  function fakeSignal(): { signal: AbortSignal; abort: () => void; listeners: () => number } {
    const controller = new AbortController();
    let count = 0;
    const signal = controller.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = (...args: Parameters<AbortSignal['addEventListener']>) => {
      count++;
      add(...args);
    };
    signal.removeEventListener = (...args: Parameters<AbortSignal['removeEventListener']>) => {
      count--;
      remove(...args);
    };
    return { signal, abort: () => controller.abort(), listeners: () => count };
  }

  it('completes normally at a clean end and reports the outcome once', async () => {
    const done: WatchStreamSummary[] = [];
    const { signal, listeners } = fakeSignal();
    const { events, error } = await collect(stream(source([BODY]), { signal, onDone: (s) => done.push(s) }));
    expect(error).toBeUndefined();
    expect(events).toHaveLength(4);
    expect(done).toEqual([{ outcome: 'ended', events: 4, lines: 4 }]);
    expect(listeners()).toBe(0);
  });

  it('completes normally when the signal aborts while waiting, destroys the source and removes its listener', async () => {
    const src = new Readable({ read() {} });
    const { signal, abort, listeners } = fakeSignal();
    const done: WatchStreamSummary[] = [];
    const s = stream(src, { signal, onDone: (x) => done.push(x) });
    src.push(Buffer.from(line('ADDED', pod('a', '1'))));
    const it = s[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    const pending = it.next();
    abort();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(src.destroyed).toBe(true);
    expect(listeners()).toBe(0);
    expect(done).toEqual([{ outcome: 'closed', events: 1, lines: 1 }]);
  });

  it('yields nothing when the signal is already aborted', async () => {
    const src = source([BODY]);
    const controller = new AbortController();
    controller.abort();
    const { events, error } = await collect(stream(src, { signal: controller.signal }));
    expect(error).toBeUndefined();
    expect(events).toEqual([]);
    expect(src.destroyed).toBe(true);
  });

  it('breaking out of the loop destroys the source and removes the signal listener', async () => {
    const src = new Readable({ read() {} });
    src.push(Buffer.from(BODY));
    const { signal, listeners } = fakeSignal();
    const seen: string[] = [];
    for await (const e of stream(src, { signal })) {
      seen.push(e.type);
      if (seen.length === 2) break;
    }
    expect(seen).toEqual(['ADDED', 'MODIFIED']);
    expect(src.destroyed).toBe(true);
    expect(listeners()).toBe(0);
  });

  it('keeps its chunk queue bounded when the consumer stays one chunk behind for a long watch', async () => {
    // A consumer that never quite catches up never empties the queue; the queue must still not grow by
    // one slot per chunk for the life of the watch.
    const src = Object.assign(new EventEmitter(), { pause() {}, resume() {}, destroy() {} });
    const s = stream(src as unknown as Readable);
    const it = s[Symbol.asyncIterator]();
    const chunk = Buffer.from(line('ADDED', pod('a', '1')));
    src.emit('data', chunk);
    for (let i = 0; i < 10_000; i++) {
      src.emit('data', chunk);
      expect((await it.next()).done).toBe(false);
    }
    expect((s as unknown as { queue: unknown[] }).queue.length).toBeLessThan(2100);
  });

  it('pauses the source while more than 1 MiB waits to be decoded, and resumes when the consumer reads', async () => {
    const l = Buffer.from(line('ADDED', pod('a', '1', 'default', { data: 'x'.repeat(64 * 1024) })));
    const total = 40; // ~2.6 MiB
    let pushed = 0;
    const src = new Readable({
      read() {
        if (pushed < total) {
          pushed++;
          this.push(l);
        } else {
          this.push(null);
        }
      },
    });
    const it = stream(src)[Symbol.asyncIterator]();
    await waitFor(() => src.readableLength >= src.readableHighWaterMark, 'the source buffer to fill');
    await settle();
    expect(src.isPaused()).toBe(true);
    expect(pushed).toBeLessThan(total);
    let n = 0;
    for (;;) {
      const r = await it.next();
      if (r.done) break;
      n++;
    }
    expect(n).toBe(total);
  });
});

describe('WatchEventStream and hostile data', () => {
  const good = line('ADDED', pod('a', '1'));
  const SECRET_VALUE = 'c2VjcmV0LXZhbHVlLTdmM2E5YzFl'; // base64 of a made-up secret
  const secret = (rv: unknown): Record<string, unknown> => ({
    kind: 'Secret',
    apiVersion: 'v1',
    metadata: { name: 's', namespace: 'ns', resourceVersion: rv },
    data: { password: SECRET_VALUE },
  });

  /** `depth` levels of `{"a":…}` with a 1 at the bottom. */
  const nested = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  const deepLine = (depth: number): string =>
    `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"deep","namespace":"ns","resourceVersion":"2"},"data":${nested(depth)}}}\n`;

  it("throws ERR_OBJECT_TOO_DEEP, naming the object's key, for an object nested 100 000 levels deep", async () => {
    const { events, error } = await collect(stream(source([Buffer.from(good + deepLine(100_000))]), {}));
    expect(events).toHaveLength(1);
    expect(error).toMatchObject({
      code: ErrorCodes.OBJECT_TOO_DEEP,
      details: { resource: 'pods.v1', line: 2, key: 'ns/deep', maxDepth: 10_000 },
    });
  });

  it('does not scan a line for depth that is too short to be too deep (a 15 000-character pod)', async () => {
    // 15 000 characters cannot hold 10 001 levels of valid JSON (two brackets per level). The scan
    // counts brackets with indexOf('{'): count those calls while the line is decoded.
    const big = line('MODIFIED', pod('big', '3', 'default', { data: { blob: 'x'.repeat(15_000) } }));
    const original = String.prototype.indexOf;
    let scans = 0;
    String.prototype.indexOf = function (this: string, search: string, position?: number): number {
      if (search === '{' || search === '[') scans++;
      return original.call(this, search, position);
    };
    let result: { events: unknown[]; error: unknown };
    try {
      result = await collect(stream(source([Buffer.from(big)])));
    } finally {
      String.prototype.indexOf = original;
    }
    expect(result.error).toBeUndefined();
    expect(result.events).toHaveLength(1);
    expect(scans).toBe(0);
  });

  it("reads an escaped key right after an event whose object has a key holding a backslash (V8's wrong-key bug)", async () => {
    // nodejs/node#63785: JSON.parse of {"w":1,"\\\\":0} then of {"w":1,"\\"":2} gives the key \ for ".
    const trap = `{"type":"ADDED","object":{"metadata":{"name":"t","resourceVersion":"1"},"data":{"ws-1":1,"\\\\":0}}}\n`;
    const victim = `{"type":"ADDED","object":{"metadata":{"name":"v","resourceVersion":"2"},"data":{"ws-1":1,"\\"":2}}}\n`;
    const { events, error } = await collect(stream(source([Buffer.from(trap + victim)])));
    expect(error).toBeUndefined();
    expect(events.map((e) => Object.keys((e.object as Obj).data as object))).toEqual([
      ['ws-1', '\\'],
      ['ws-1', '"'],
    ]);
  });

  it("accepts an object nested as deep as Go's decoder allows (10 000 levels in all)", async () => {
    // The envelope and the object are 2 levels, `data` holds the other 9 998.
    const { events, error } = await collect(stream(source([Buffer.from(deepLine(9_998))])));
    expect(error).toBeUndefined();
    expect(events).toHaveLength(1);
    const { error: tooDeep } = await collect(stream(source([Buffer.from(deepLine(9_999))])));
    expect(tooDeep).toMatchObject({ code: ErrorCodes.OBJECT_TOO_DEEP });
  });

  it.each([
    ['a number', '12'],
    ['null', 'null'],
    ['raw 1e309 (Infinity once parsed)', '1e309'],
    ['an object', '{"v":"1"}'],
  ])(
    'throws ERR_BAD_RESOURCE_VERSION for a resourceVersion that is %s, after the good events',
    async (_name, raw) => {
      const bad = `{"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"b","resourceVersion":${raw}}}}\n`;
      const { events, error } = await collect(stream(source([Buffer.from(good + bad)])));
      expect(events).toHaveLength(1);
      expect(error).toMatchObject({ code: ErrorCodes.BAD_RESOURCE_VERSION, details: { line: 2 } });
    },
  );

  it('throws ERR_BAD_RESOURCE_VERSION for a BOOKMARK whose resourceVersion is a number', async () => {
    const { error } = await collect(
      stream(source([Buffer.from('{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":1e309}}}\n')])),
    );
    expect(error).toMatchObject({ code: ErrorCodes.BAD_RESOURCE_VERSION });
  });

  /** Every way the error can be printed. */
  const printed = (err: unknown): string => {
    const e = err as KinformerError;
    return [String(e), e.stack, JSON.stringify(e.details), String(e.cause), (e.cause as Error)?.stack].join(
      '\n',
    );
  };

  it.each([
    ['not valid JSON', `${JSON.stringify({ type: 'ADDED', object: secret('3') }).slice(0, -2)}\n`],
    ['not valid JSON (a bare word V8 quotes)', `{"type":"ADDED","object":${SECRET_VALUE}}\n`],
    ['an object without metadata', line('ADDED', { kind: 'Secret', data: { password: SECRET_VALUE } })],
    ['an unknown event type', line(`UPSERT ${SECRET_VALUE}`, secret('3'))],
    ['a non-string resourceVersion', line('ADDED', secret(3))],
    ['too large', line('ADDED', secret('3'))],
  ])(
    'never puts a field value of a line that is %s into the error (message, details, cause, stack)',
    async (_name, bad) => {
      const { error } = await collect(
        stream(source([Buffer.from(bad)]), { maxLineBytes: _name === 'too large' ? 60 : 1 << 20 }),
      );
      expect(error).toBeInstanceOf(KinformerError);
      expect(printed(error)).not.toContain(SECRET_VALUE);
      expect(printed(error)).not.toContain('c2VjcmV0');
    },
  );

  it('describes a bad line by its shape: type, apiVersion, kind, namespace/name, key names and size', async () => {
    const { error } = await collect(stream(source([Buffer.from(line('ADDED', secret(3)))])));
    const details = (error as KinformerError).details ?? {};
    expect(details.bytes).toBe(Buffer.byteLength(line('ADDED', secret(3))) - 1);
    expect(JSON.parse(details.excerpt as string)).toEqual({
      keys: ['type', 'object'],
      type: 'ADDED',
      object: {
        apiVersion: 'v1',
        kind: 'Secret',
        namespace: 'ns',
        name: 's',
        keys: ['kind', 'apiVersion', 'metadata', 'data'],
      },
    });
  });

  it('names the position of invalid JSON, not the text around it', async () => {
    const { error } = await collect(
      stream(source([Buffer.from('{"type":"ADDED","object":{"a":1 "b":2}}\n')])),
    );
    expect(error).toMatchObject({
      code: ErrorCodes.MALFORMED_WATCH_EVENT,
      message: 'watch line 1 is not valid JSON',
      details: { position: 32, excerpt: 'not valid JSON', bytes: 39 },
    });
    expect((error as KinformerError).cause).toBeUndefined();
  });
});
