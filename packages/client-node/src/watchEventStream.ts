import type { Readable } from 'node:stream';
import { ErrorCodes, KinformerError, type KubeObject } from '@kinformer/core';
import {
  hasObjectMeta,
  jsonNestingExceeds,
  MAX_OBJECT_DEPTH,
  objectTooDeepError,
  validateResourceVersion,
} from '@kinformer/core/internal';
import type { WatchEvent } from '@kinformer/reflector';
import { parseJson } from './exactJson.js';
import { shareEmptyFieldSets } from './fieldSets.js';
import { describeLine, jsonErrorPosition } from './lineShape.js';

/** The default limit on one watch line (one event): 16 MiB. Longer lines fail the stream. */
export const DEFAULT_MAX_WATCH_LINE_BYTES = 16 * 1024 * 1024;

const NEWLINE = 0x0a;
/**
 * JSON nested deeper than `MAX_OBJECT_DEPTH` has an opening and a closing bracket per level, so valid
 * JSON this short cannot be: a line that parsed is checked for depth only when it is at least this long.
 */
const MIN_TOO_DEEP_CHARS = 2 * (MAX_OBJECT_DEPTH + 1);
/** Pause the socket while this many received bytes wait to be decoded (backpressure). */
const PAUSE_BYTES = 1024 * 1024;

/** How a `WatchEventStream` finished. */
export interface WatchStreamSummary {
  /** `ended`: the server closed the stream cleanly; `closed`: the consumer or the signal stopped it; `failed`: it threw. */
  outcome: 'ended' | 'closed' | 'failed';
  /** Events yielded. */
  events: number;
  /** Newline-terminated lines read (empty ones included). */
  lines: number;
  error?: KinformerError;
}

/** Options for `WatchEventStream`. */
export interface WatchEventStreamOptions {
  /** Longest line accepted, in bytes (without its `\n`). */
  maxLineBytes: number;
  /** Context added to every error's `details` (resource, verb). Never credentials. */
  details: Record<string, unknown>;
  /** Aborting it ends the iteration normally and destroys the source. */
  signal?: AbortSignal;
  /** Called once, when the stream finishes for any reason. */
  onDone?: (summary: WatchStreamSummary) => void;
}

const DONE: IteratorReturnResult<undefined> = { value: undefined, done: true };

/**
 * Decodes a Kubernetes JSON watch body (one `{"type","object"}` per `\n`-terminated line) into
 * {@link WatchEvent}s, as a single-consumer async iterator.
 *
 * - Lines are split in bytes (`Buffer.indexOf(10)`), so multi-byte UTF-8 characters split across
 *   chunks decode correctly. Only the trailing partial line is kept between chunks (as a list of
 *   slices, joined once when its newline arrives); each line is decoded with one `JSON.parse`, and
 *   the parsed envelope itself is the event that is yielded (no copy). Empty lines are skipped.
 * - Events are yielded in order. A bad line throws only after every good line before it was
 *   yielded: an `ERROR` event throws `KinformerError.fromStatus(status)`; invalid JSON, a missing or
 *   null object or one without `metadata` throws `ERR_MALFORMED_WATCH_EVENT`; another type throws
 *   `ERR_UNKNOWN_EVENT_TYPE`; a line longer than `maxLineBytes` throws `ERR_WATCH_LINE_TOO_LARGE`
 *   (as soon as the partial line passes the limit, so memory stays bounded).
 * - A broken source (error, or close before its end) throws `ERR_CONNECTION` after the complete
 *   lines received before the break were yielded. A partial last line at a clean end that is not
 *   valid JSON also throws `ERR_CONNECTION` (the stream was cut inside an event).
 * - The iteration completes when the source ends cleanly, when `signal` aborts, or when the
 *   consumer calls `return()` (a `break` out of `for await`); the last two destroy the source, which
 *   closes the connection. After a throw the source is destroyed too.
 * - The source is paused while more than 1 MiB waits to be decoded.
 */
export class WatchEventStream<T extends KubeObject = KubeObject> implements AsyncIterableIterator<
  WatchEvent<T>
> {
  private readonly source: Readable;
  private readonly maxLineBytes: number;
  private readonly details: Record<string, unknown>;
  private readonly signal: AbortSignal | undefined;
  private readonly onDone: ((summary: WatchStreamSummary) => void) | undefined;

  /** Received chunks not yet decoded; a queue with a head index (no `Array.shift`). */
  private queue: Array<Buffer | undefined> = [];
  private queueHead = 0;
  private queuedBytes = 0;
  /** The chunk being decoded and the offset of its next unread byte. */
  private chunk: Buffer | undefined;
  private pos = 0;
  /** The partial line carried over from earlier chunks. */
  private tail: Buffer[] = [];
  private tailBytes = 0;

  private lines = 0;
  private events = 0;
  private ended = false;
  private failure: KinformerError | undefined;
  private finished = false;
  private paused = false;
  private waiter: (() => void) | undefined;

  constructor(source: Readable, options: WatchEventStreamOptions) {
    this.source = source;
    this.maxLineBytes = options.maxLineBytes;
    this.details = options.details;
    this.signal = options.signal;
    this.onDone = options.onDone;
    source.on('data', this.onData);
    source.on('end', this.onEnd);
    // Stays attached after the stream finished, so a late socket error never goes unhandled.
    source.on('error', this.onError);
    source.on('close', this.onClose);
    if (this.signal?.aborted) {
      this.finish('closed');
    } else {
      this.signal?.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** The next event; `done` at a clean end, on abort or after `return()`. Throws as described on the class. */
  next(): Promise<IteratorResult<WatchEvent<T>, undefined>> {
    // Fast path: an event is already buffered, so no async function frame is needed.
    if (this.finished) return Promise.resolve(DONE);
    let event: WatchEvent<T> | undefined;
    try {
      event = this.decode();
    } catch (err) {
      const error = this.asKinformerError(err);
      this.finish('failed', error);
      return Promise.reject(error);
    }
    if (event !== undefined) {
      this.events++;
      return Promise.resolve({ value: event, done: false });
    }
    return this.nextSlow();
  }

  /** The decoder needs more bytes: handle the end of the source, or wait for data. */
  private async nextSlow(): Promise<IteratorResult<WatchEvent<T>, undefined>> {
    for (;;) {
      if (this.finished) return DONE;
      let event: WatchEvent<T> | undefined;
      try {
        event = this.decode();
        if (event === undefined && this.ended && this.failure === undefined) event = this.decodeLastLine();
      } catch (err) {
        const error = this.asKinformerError(err);
        this.finish('failed', error);
        throw error;
      }
      if (event !== undefined) {
        this.events++;
        return { value: event, done: false };
      }
      if (this.failure !== undefined) {
        const failure = this.failure;
        this.finish('failed', failure);
        throw failure;
      }
      if (this.ended) {
        this.finish('ended');
        return DONE;
      }
      if (this.paused) {
        this.paused = false;
        this.source.resume();
      }
      await new Promise<void>((resolve) => {
        const previous = this.waiter;
        this.waiter = previous === undefined ? resolve : () => (previous(), resolve());
      });
    }
  }

  /** Stops the stream: destroys the source (closing the connection) and completes the iteration. */
  return(): Promise<IteratorReturnResult<undefined>> {
    this.finish('closed');
    return Promise.resolve(DONE);
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.finished) return;
    this.queue.push(chunk);
    this.queuedBytes += chunk.length;
    if (this.queuedBytes >= PAUSE_BYTES && !this.paused) {
      this.paused = true;
      this.source.pause();
    }
    this.wake();
  };

  private readonly onEnd = (): void => {
    this.ended = true;
    this.wake();
  };

  private readonly onError = (err: NodeJS.ErrnoException): void => {
    if (this.finished || this.failure !== undefined || this.ended) return;
    this.failure = new KinformerError(ErrorCodes.CONNECTION, `the watch connection broke: ${err.message}`, {
      cause: err,
      details: { ...this.details, line: this.lines, ...(err.code === undefined ? {} : { errno: err.code }) },
    });
    this.wake();
  };

  private readonly onClose = (): void => {
    if (this.finished || this.failure !== undefined || this.ended) return;
    this.failure = new KinformerError(
      ErrorCodes.CONNECTION,
      'the watch connection closed before the stream ended',
      {
        details: { ...this.details, line: this.lines },
      },
    );
    this.wake();
  };

  private readonly onAbort = (): void => {
    this.finish('closed');
  };

  private wake(): void {
    const waiter = this.waiter;
    if (waiter !== undefined) {
      this.waiter = undefined;
      waiter();
    }
  }

  private finish(outcome: WatchStreamSummary['outcome'], error?: KinformerError): void {
    if (this.finished) return;
    this.finished = true;
    this.signal?.removeEventListener('abort', this.onAbort);
    if (outcome !== 'ended') this.source.destroy();
    this.queue = [];
    this.queueHead = 0;
    this.queuedBytes = 0;
    this.chunk = undefined;
    this.tail = [];
    this.tailBytes = 0;
    this.wake();
    this.onDone?.(
      error === undefined
        ? { outcome, events: this.events, lines: this.lines }
        : { outcome, events: this.events, lines: this.lines, error },
    );
  }

  /** Decodes the next complete line that holds an event, or returns `undefined` when more bytes are needed. */
  private decode(): WatchEvent<T> | undefined {
    for (;;) {
      let chunk = this.chunk;
      if (chunk === undefined) {
        if (this.queueHead === this.queue.length) {
          if (this.queueHead !== 0) {
            this.queue.length = 0;
            this.queueHead = 0;
          }
          return undefined;
        }
        const next = this.queue[this.queueHead];
        this.queue[this.queueHead++] = undefined;
        if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
          // A consumer that never fully catches up never empties the queue: drop the consumed slots.
          this.queue = this.queue.slice(this.queueHead);
          this.queueHead = 0;
        }
        if (next === undefined) continue;
        this.queuedBytes -= next.length;
        this.chunk = chunk = next;
        this.pos = 0;
      }
      const start = this.pos;
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl === -1) {
        const rest = chunk.length - start;
        if (rest > 0) {
          if (this.tailBytes + rest > this.maxLineBytes)
            throw this.tooLarge(this.lines + 1, this.tailBytes + rest);
          this.tail.push(start === 0 ? chunk : chunk.subarray(start));
          this.tailBytes += rest;
        }
        this.chunk = undefined;
        continue;
      }
      this.pos = nl + 1;
      if (this.pos === chunk.length) this.chunk = undefined;
      this.lines++;
      let text: string;
      if (this.tailBytes === 0) {
        if (nl === start) continue;
        if (nl - start > this.maxLineBytes) throw this.tooLarge(this.lines, nl - start);
        text = chunk.toString('utf8', start, nl);
      } else {
        const size = this.tailBytes + (nl - start);
        if (size > this.maxLineBytes) throw this.tooLarge(this.lines, size);
        if (nl > start) this.tail.push(chunk.subarray(start, nl));
        text = this.takeTail(size);
      }
      const event = this.parse(text, false);
      if (event !== undefined) return event;
    }
  }

  /** At a clean end: the partial line without a trailing `\n`, if any. */
  private decodeLastLine(): WatchEvent<T> | undefined {
    if (this.tailBytes === 0) return undefined;
    this.lines++;
    return this.parse(this.takeTail(this.tailBytes), true);
  }

  private takeTail(size: number): string {
    const tail = this.tail;
    const first = tail[0];
    const text = (tail.length === 1 && first !== undefined ? first : Buffer.concat(tail, size)).toString(
      'utf8',
    );
    tail.length = 0;
    this.tailBytes = 0;
    return text;
  }

  private parse(text: string, unterminated: boolean): WatchEvent<T> | undefined {
    let parsed: unknown;
    try {
      // V8's parser is not recursive: any depth parses; the depth is checked below.
      parsed = parseJson(text);
    } catch (cause) {
      if (text.trim() === '') return undefined;
      // V8's message quotes the text ("Unexpected token 'x', "…" is not valid JSON"): it is
      // neither attached nor repeated, only the position it names.
      const position = jsonErrorPosition(cause);
      const details = { ...this.lineDetails(text), ...(position === undefined ? {} : { position }) };
      if (unterminated) {
        throw new KinformerError(
          ErrorCodes.CONNECTION,
          'the watch stream ended inside an event (truncated last line)',
          { details },
        );
      }
      throw new KinformerError(
        ErrorCodes.MALFORMED_WATCH_EVENT,
        `watch line ${this.lines} is not valid JSON`,
        {
          details,
        },
      );
    }
    // Go's decoder refuses JSON nested deeper than 10 000 levels; so do we, before anything
    // (freezing, a handler, JSON.stringify) recurses into such an object and overflows the stack.
    // Only a line long enough to be that deep is scanned (no pod is: a 20 KB line is not checked).
    if (text.length >= MIN_TOO_DEEP_CHARS) {
      const tooDeepAt = jsonNestingExceeds(text);
      if (tooDeepAt >= 0) throw this.tooDeep(text, tooDeepAt, parsed);
    }
    if (typeof parsed !== 'object' || parsed === null)
      throw this.malformed('is not a JSON object', text, parsed);
    const { type, object } = parsed as { type?: unknown; object?: unknown };
    switch (type) {
      case 'ADDED':
      case 'MODIFIED':
      case 'DELETED':
      case 'BOOKMARK':
        if (!hasObjectMeta(object)) {
          throw this.malformed(
            object === undefined || object === null ? 'has no object' : 'has an object without metadata',
            text,
            parsed,
          );
        }
        // A number, null or raw 1e309 (Infinity) is refused here, so it never reaches the cache, a
        // handler, or the next request's `resourceVersion=`.
        // The details are built only for a bad one: this runs for every event.
        if (
          typeof object.metadata.resourceVersion !== 'string' &&
          object.metadata.resourceVersion !== undefined
        )
          validateResourceVersion(object.metadata.resourceVersion, `watch line ${this.lines}`, {
            ...this.lineDetails(text, parsed),
          });
        // A DELETED object leaves the cache: no heap to save.
        if (type !== 'DELETED') shareEmptyFieldSets(object);
        return parsed as WatchEvent<T>;
      case 'ERROR':
        if (typeof object !== 'object' || object === null)
          throw this.malformed('is an ERROR event without a Status', text, parsed);
        throw KinformerError.fromStatus(object, { details: { ...this.details, line: this.lines } });
      default:
        if (typeof type !== 'string') throw this.malformed('has no event type', text, parsed);
        throw new KinformerError(
          ErrorCodes.UNKNOWN_EVENT_TYPE,
          `watch line ${this.lines} has an unknown event type`,
          {
            details: this.lineDetails(text, parsed),
          },
        );
    }
  }

  /** Errors the decoder throws are KinformerErrors; anything else (say a RangeError for a line V8 cannot hold as a string) is wrapped. */
  private asKinformerError(err: unknown): KinformerError {
    if (err instanceof KinformerError) return err;
    return new KinformerError(
      ErrorCodes.MALFORMED_WATCH_EVENT,
      `watch line ${this.lines} could not be decoded: ${err instanceof Error ? err.message : String(err)}`,
      {
        cause: err,
        details: { ...this.details, line: this.lines },
      },
    );
  }

  /**
   * Context for an error about a line: its number, its size and its shape ({@link describeLine}:
   * event type, apiVersion, kind, namespace/name and key names, never field values).
   */
  private lineDetails(text: string, parsed?: unknown): Record<string, unknown> {
    return {
      ...this.details,
      line: this.lines,
      bytes: Buffer.byteLength(text),
      excerpt: describeLine(parsed),
    };
  }

  private malformed(what: string, text: string, parsed: unknown): KinformerError {
    return new KinformerError(ErrorCodes.MALFORMED_WATCH_EVENT, `watch line ${this.lines} ${what}`, {
      details: this.lineDetails(text, parsed),
    });
  }

  private tooDeep(text: string, position: number, parsed: unknown): KinformerError {
    const details = this.lineDetails(text, parsed);
    const object = (parsed as { object?: unknown } | undefined)?.object;
    const meta = hasObjectMeta(object) ? object.metadata : undefined;
    const key =
      typeof meta?.name === 'string'
        ? typeof meta.namespace === 'string' && meta.namespace !== ''
          ? `${meta.namespace}/${meta.name}`
          : meta.name
        : undefined;
    return objectTooDeepError(`watch line ${this.lines}`, {
      ...details,
      position,
      ...(key === undefined ? {} : { key }),
    });
  }

  private tooLarge(line: number, bytes: number): KinformerError {
    return new KinformerError(
      ErrorCodes.WATCH_LINE_TOO_LARGE,
      `watch line ${line} is longer than ${this.maxLineBytes} bytes`,
      {
        details: {
          ...this.details,
          line,
          maxLineBytes: this.maxLineBytes,
          bytesSoFar: bytes,
          // Not a byte of the line: its head may be a Secret's data.
          excerpt: 'not decoded (longer than the line limit)',
        },
      },
    );
  }
}
