import { parseJson } from './exactJson.js';
import { jsonErrorPosition } from './lineShape.js';
import { constants as bufferConstants } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { ErrorCodes, KinformerError, type KubeList, type ListMeta } from '@kinformer/core';
import { MAX_OBJECT_DEPTH, objectTooDeepError } from '@kinformer/core/internal';
import { streamBody } from './httpRequest.js';
import { excerpt } from './responseError.js';
import {
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  closingQuote,
  isSpace,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from './jsonBytes.js';
import { shareEmptyFieldSets } from './fieldSets.js';
import { LIST_META_PEEK_BYTES, peekListMeta } from './listMetaPeek.js';

/** Longest single list item (one object's JSON) accepted by default, in bytes: 16 MiB, as a watch line. */
export const DEFAULT_MAX_LIST_ITEM_BYTES = 16 * 1024 * 1024;
/**
 * Bodies up to this many bytes (16 MiB) are parsed with one `JSON.parse` once complete, by default: a
 * page of 500 pods (2–4 MB) is one native parse, not 500. Longer ones are decoded item by item as they
 * stream in, so no body of any size is held whole.
 */
export const DEFAULT_WHOLE_LIST_BYTES = 16 * 1024 * 1024;
/** Bytes of the body's start kept for error excerpts. */
const HEAD_BYTES = 1000;

/** Options for {@link ListDecoder} and `readList`. */
export interface ListDecoderOptions<T = unknown> {
  /** Longest item (and longest other top-level value) accepted, in bytes. Default `DEFAULT_MAX_LIST_ITEM_BYTES`. */
  maxItemBytes?: number;
  /** Context for errors (resource, verb). Never credentials. */
  details?: Record<string, unknown>;
  /** The answer's HTTP status, put on errors. */
  httpStatus?: number;
  /**
   * A body of at most this many bytes (and at most `maxItemBytes`) is kept as it arrives, checked
   * for depth, and parsed with one `JSON.parse` when it ends; a longer one is decoded item by item
   * from the byte that passes the limit (what was kept is decoded first, then dropped). Default
   * `DEFAULT_WHOLE_LIST_BYTES` (16 MiB); `0` decodes every body item by item.
   */
  wholeBodyBytes?: number;
  /** What the list is of, for messages (`pods.v1`). */
  what?: string;
  /**
   * Called with each item once it is parsed (as it arrives, or when the body ends for a body parsed
   * whole); the list keeps what it returns instead. Meant for
   * returning an equal object the caller already holds (the cached object at the same
   * resourceVersion), so that the parsed copy is garbage at once and a relist of unchanged objects
   * does not hold them twice. It must return the item or an object equal to it; a throw fails the list.
   */
  reuseItem?: (item: T) => T;
  /**
   * Called at most once with the list's `metadata` as soon as the body's first bytes hold it (within
   * `LIST_META_PEEK_BYTES`, before the items: where kube-apiserver writes it), so that a pager can ask for
   * the next page while this one is still arriving. A hint: the list returned by `end` is what counts.
   */
  onMetadata?: (metadata: ListMeta) => void;
}

const EMPTY = Buffer.alloc(0);

/**
 * Where the top-level scanner is. Numbers, not strings, because every byte between values is
 * switched on; the scanner moves between them only in {@link ListDecoder.write}.
 */
const Mode = {
  /** Before the opening `{` of the list. */
  start: 0,
  /** After `{` or `,` of the list object: a key (or, right after `{`, the closing `}`). */
  key: 1,
  /** After a key: the `:`. */
  colon: 2,
  /** After `:`: a top-level value. */
  value: 3,
  /** After a top-level value: `,` or `}`. */
  afterValue: 4,
  /** After `[` of items or `,` between items: an item (or, right after `[`, the closing `]`). */
  item: 5,
  /** After an item: `,` or `]`. */
  afterItem: 6,
  /** Inside a value being collected (a key, a top-level value or an item). */
  inValue: 7,
  /** After the list's closing `}`: only whitespace may follow. */
  done: 8,
} as const;
type Mode = (typeof Mode)[keyof typeof Mode];

/**
 * At a member of the list object (a key) or of `items` (an item): the container's closer right after
 * its opener ends it (empty), the member's first byte begins it, anything else is an error.
 */
const AT_MEMBER = {
  [Mode.key]: {
    close: CLOSE_BRACE,
    closed: Mode.done,
    opens: QUOTE,
    collect: 'key',
    error: 'is not valid JSON (expected a key)',
  },
  [Mode.item]: {
    close: CLOSE_BRACKET,
    closed: Mode.afterValue,
    opens: OPEN_BRACE,
    collect: 'item',
    error: 'is not a list (an item is not an object)',
  },
} as const satisfies Record<
  number,
  { close: number; closed: Mode; opens: number; collect: Collecting; error: string }
>;

/**
 * After a member of the list object (a top-level value) or of `items` (an item): a `,` goes on to the
 * next member, the container's closer ends it, anything else is an error.
 */
const AFTER_MEMBER = {
  [Mode.afterValue]: {
    next: Mode.key,
    close: CLOSE_BRACE,
    closed: Mode.done,
    error: 'is not valid JSON (expected "," or "}")',
  },
  [Mode.afterItem]: {
    next: Mode.item,
    close: CLOSE_BRACKET,
    closed: Mode.afterValue,
    error: 'is not valid JSON (expected "," or "]" between items)',
  },
} as const satisfies Record<number, { next: Mode; close: number; closed: Mode; error: string }>;

/** What the value being collected is. */
type Collecting = 'key' | 'value' | 'item' | 'null-items';

/**
 * A streaming decoder of a Kubernetes LIST body (`{"kind":…,"metadata":{…},"items":[…]}`): bytes go
 * in as they arrive ({@link write}).
 *
 * - A body of at most `wholeBodyBytes` (16 MiB: a page of a paged list) is kept as it arrives, its
 *   nesting checked byte by byte, and parsed with one `JSON.parse` when it ends: one native parse per
 *   page, as fast as parsing can be.
 * - From the byte that passes that limit, the body is decoded item by item: each element of `items`
 *   is found at the byte level (strings, escapes and nesting respected) and parsed alone (`JSON.parse`
 *   of that item's bytes), so neither the whole body nor a string of it is ever held; only the item
 *   being collected is. `metadata`, `kind` and `apiVersion` are parsed from their own bytes, wherever
 *   they are in the object. A list longer than a V8 string can hold (200k pods in one response) decodes.
 *
 * Both give the same list and the same errors (a whole body that does not parse as a list is decoded
 * item by item to find what is wrong). Texts whose keys hold a backslash are parsed without
 * `JSON.parse` (see `parseJson`: V8's wrong-key bug).
 *
 * Accepts any valid JSON layout (pretty-printed, `metadata` before or after `items`, UTF-8 split
 * across chunks: an item is decoded from its collected bytes). `items: null` is `[]`; a missing
 * `items` is `[]` when `kind` ends in `List`, else the body is not a list.
 *
 * Errors (`KinformerError`): `ERR_LIST_TRUNCATED` when {@link end} comes before the list's closing
 * `}`; `ERR_LIST_ITEM_TOO_LARGE` when one item (or other top-level value) is longer than
 * `maxItemBytes` or than a V8 string can be; `ERR_OBJECT_TOO_DEEP` when the body is nested deeper than
 * `MAX_OBJECT_DEPTH` (counting the list object itself); `ERR_BAD_RESPONSE` when the body is not JSON, not a JSON
 * object, not a list (`items` neither an array nor null, an item not an object, `metadata` not an
 * object, `metadata.continue` not a string). After an error the decoder is unusable.
 */
export class ListDecoder<T> {
  /** The items parsed so far, in order. {@link end} hands this very array over. */
  private items: T[] = [];
  private sawItems = false;
  private readonly top: Record<string, unknown> = {};
  private mode: Mode = Mode.start;
  /** Right after `{` or `[`: a closing bracket may follow (not after a `,`). */
  private first = false;
  private collecting: Collecting = 'key';
  private key = '';
  /** Where the value being collected starts in the current chunk; -1 when it began in an earlier one. */
  private start = -1;
  /** Bytes of the value being collected from earlier chunks (it spans chunks). */
  private parts: Buffer[] = [];
  private partBytes = 0;
  // The value scanner's state, kept across chunks.
  private depth = 0;
  private inString = false;
  private escaped = false;
  private scalar = false;
  private total = 0;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private readonly maxItemBytes: number;
  private readonly options: ListDecoderOptions<T>;
  /** Keeping the body whole (it has not passed `wholeBodyBytes`); its chunks so far. */
  private whole: boolean;
  private readonly wholeLimit: number;
  private kept: Buffer[] = [];
  // The whole body's nesting scan, kept across chunks.
  private wholeDepth = 0;
  private wholeInString = false;
  private wholeEscaped = false;
  /** The body's first bytes, while `onMetadata` waits for the list's metadata. */
  private metaPrefix: Buffer | undefined;

  constructor(options: ListDecoderOptions<T> = {}) {
    const max = options.maxItemBytes ?? DEFAULT_MAX_LIST_ITEM_BYTES;
    if (!Number.isSafeInteger(max) || max <= 0) {
      throw new KinformerError(
        ErrorCodes.INVALID_OPTION,
        `maxItemBytes must be a positive integer, not ${String(max)}`,
      );
    }
    // A UTF-8 byte is at most one UTF-16 unit, so this many bytes always fit in one string.
    this.maxItemBytes = Math.min(max, bufferConstants.MAX_STRING_LENGTH);
    const whole = options.wholeBodyBytes ?? DEFAULT_WHOLE_LIST_BYTES;
    if (!Number.isSafeInteger(whole) || whole < 0) {
      throw new KinformerError(
        ErrorCodes.INVALID_OPTION,
        `wholeBodyBytes must be a non-negative integer, not ${String(whole)}`,
      );
    }
    this.wholeLimit = Math.min(whole, this.maxItemBytes);
    this.whole = this.wholeLimit > 0;
    this.options = options;
    if (options.onMetadata !== undefined) this.metaPrefix = EMPTY;
  }

  /** Bytes written so far. */
  get bytes(): number {
    return this.total;
  }

  /** Items parsed so far. */
  get itemCount(): number {
    return this.items.length;
  }

  /**
   * Feeds the next chunk of the body (the decoder may keep it: do not reuse its memory). Throws a
   * `KinformerError` when the body cannot be a list (for a body kept whole, some errors only at {@link end}).
   */
  write(buf: Buffer): void {
    if (this.headBytes < HEAD_BYTES) {
      const keep = Buffer.from(buf.subarray(0, HEAD_BYTES - this.headBytes));
      this.head.push(keep);
      this.headBytes += keep.length;
    }
    if (this.metaPrefix !== undefined) this.peekMetadata(buf);
    if (this.whole) {
      if (this.total + buf.length <= this.wholeLimit && this.scanWhole(buf)) {
        this.kept.push(buf);
        this.total += buf.length;
        return;
      }
      this.streamKept();
    }
    this.stream(buf);
  }

  /** Looks for the list's metadata in the body's first bytes, for `onMetadata`. */
  private peekMetadata(buf: Buffer): void {
    const prefix = this.metaPrefix as Buffer;
    const more = buf.subarray(0, LIST_META_PEEK_BYTES - prefix.length);
    const bytes = prefix.length === 0 ? more : Buffer.concat([prefix, more]);
    const meta = peekListMeta(bytes);
    if (meta === undefined && bytes.length < LIST_META_PEEK_BYTES) {
      this.metaPrefix = Buffer.from(bytes);
      return;
    }
    this.metaPrefix = undefined;
    if (meta) this.options.onMetadata?.(meta);
  }

  /**
   * Scans a chunk of a body kept whole for nesting; false when it goes deeper than
   * `MAX_OBJECT_DEPTH` (the item-by-item decoder then finds where, and throws).
   */
  private scanWhole(buf: Buffer): boolean {
    let depth = this.wholeDepth;
    let inString = this.wholeInString;
    const n = buf.length;
    let i = 0;
    if (this.wholeEscaped) {
      this.wholeEscaped = false;
      i = 1;
    }
    while (i < n) {
      if (inString) {
        // Past the closing quote; past the chunk while the string goes on (n + 2 after a backslash).
        i = closingQuote(buf, i, n) + 1;
        if (i > n) {
          this.wholeEscaped = i > n + 1;
          break;
        }
        inString = false;
        continue;
      }
      const c = buf[i++] as number;
      if (c === QUOTE) inString = true;
      // `{` and `[` differ only in bit 0x20, as `}` and `]` do: one compare for each pair.
      else if ((c | 0x20) === OPEN_BRACE) {
        if (++depth > MAX_OBJECT_DEPTH) return false;
      } else if ((c | 0x20) === CLOSE_BRACE) depth--;
    }
    this.wholeDepth = depth;
    this.wholeInString = inString;
    return true;
  }

  /** Stops keeping the body whole: decodes what was kept item by item, from its first byte. */
  private streamKept(): void {
    this.whole = false;
    const kept = this.kept;
    this.kept = [];
    this.total = 0;
    for (let k = 0; k < kept.length; k++) {
      const chunk = kept[k] as Buffer;
      // Dropped as it is decoded: only the item being collected stays.
      kept[k] = EMPTY;
      this.stream(chunk);
    }
  }

  /** The item-by-item decoder: feeds it the next chunk. */
  private stream(buf: Buffer): void {
    const base = this.total;
    this.total += buf.length;
    const n = buf.length;
    let i = 0;
    while (i < n) {
      if (this.mode === Mode.inValue) {
        const end = this.scan(buf, i, n, base);
        if (end < 0) {
          this.keepPart(buf, base + n);
          return;
        }
        this.finishValue(buf, end, base + end);
        i = end;
        continue;
      }
      const c = buf[i] as number;
      if (isSpace(c)) {
        i++;
        continue;
      }
      switch (this.mode) {
        case Mode.start:
          if (c !== OPEN_BRACE) throw this.bad('is not a JSON object', base + i);
          this.mode = Mode.key;
          this.first = true;
          i++;
          break;
        case Mode.key:
        case Mode.item: {
          const at = AT_MEMBER[this.mode];
          if (c === at.close && this.first) {
            this.mode = at.closed;
            i++;
          } else if (c === at.opens) i = this.begin(at.collect, c, i);
          else throw this.bad(at.error, base + i);
          break;
        }
        case Mode.colon:
          if (c !== COLON) throw this.bad('is not valid JSON (expected ":")', base + i);
          this.mode = Mode.value;
          i++;
          break;
        case Mode.value:
          if (this.key !== 'items') i = this.begin('value', c, i);
          else if (c === OPEN_BRACKET) {
            this.items = [];
            this.sawItems = true;
            this.mode = Mode.item;
            this.first = true;
            i++;
          } else if (c === 0x6e /* n */) i = this.begin('null-items', c, i);
          else throw this.bad('is not a list (items is not an array)', base + i);
          break;
        case Mode.afterValue:
        case Mode.afterItem: {
          const after = AFTER_MEMBER[this.mode];
          if (c === COMMA) {
            this.mode = after.next;
            this.first = false;
          } else if (c === after.close) this.mode = after.closed;
          else throw this.bad(after.error, base + i);
          i++;
          break;
        }
        case Mode.done:
          throw this.bad('is not valid JSON (data after the list)', base + i);
      }
    }
    // A value that began at this chunk's last bytes, before any scanning.
    if (this.mode === Mode.inValue && this.start >= 0) this.keepPart(buf, base + n);
  }

  /**
   * The end of the body: the list, whose `items` are the parsed objects themselves (the caller owns
   * the array). Throws `ERR_LIST_TRUNCATED` when the body stopped before the list was complete.
   */
  end(): KubeList<T> {
    if (this.whole) {
      const list = this.parseWhole();
      if (list !== undefined) return list;
      // Not a list, or not JSON: the item-by-item decoder says what is wrong, and where.
      this.streamKept();
    }
    if (this.mode !== Mode.done) {
      if (this.total === 0) throw this.bad('is empty', 0);
      throw this.error(
        ErrorCodes.LIST_TRUNCATED,
        `was cut short after ${this.total} bytes (${this.items.length} items), before the end of the list`,
        this.total,
      );
    }
    const top = this.top;
    if (!this.sawItems && !(typeof top.kind === 'string' && top.kind.endsWith('List'))) {
      throw this.bad('is not a list (no items array)', this.total);
    }
    const metadata = top.metadata;
    if (metadata !== undefined && metadata !== null) {
      if (typeof metadata !== 'object' || Array.isArray(metadata)) {
        throw this.bad('is not a list (metadata is not an object)', this.total);
      }
      const meta = metadata as Record<string, unknown>;
      if (meta.continue !== undefined && typeof meta.continue !== 'string') {
        throw this.bad('has a metadata.continue that is not a string', this.total);
      }
    }
    top.items = this.items;
    return top as unknown as KubeList<T>;
  }

  /**
   * The list from a body kept whole, parsed at once; `undefined` when it is not JSON or not a list
   * (the caller decodes it item by item for the error).
   */
  private parseWhole(): KubeList<T> | undefined {
    if (this.total === 0 || this.wholeInString || this.wholeDepth !== 0) return undefined;
    const kept = this.kept;
    const text = (kept.length === 1 ? (kept[0] as Buffer) : Buffer.concat(kept, this.total)).toString('utf8');
    let body: unknown;
    try {
      body = parseJson(text);
    } catch {
      return undefined;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
    const top = body as Record<string, unknown>;
    let items = top.items;
    if (items === null || (items === undefined && typeof top.kind === 'string' && top.kind.endsWith('List')))
      items = [];
    if (!Array.isArray(items)) return undefined;
    for (const item of items as unknown[]) {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) return undefined;
    }
    const metadata = top.metadata;
    if (metadata !== undefined && metadata !== null) {
      if (typeof metadata !== 'object' || Array.isArray(metadata)) return undefined;
      const cont = (metadata as Record<string, unknown>).continue;
      if (cont !== undefined && typeof cont !== 'string') return undefined;
    }
    const reuse = this.options.reuseItem;
    const list = items as T[];
    for (let i = 0; i < list.length; i++) {
      const item = list[i] as T;
      const kept = reuse === undefined ? item : reuse(item);
      if (kept === item) shareEmptyFieldSets(item);
      else list[i] = kept;
    }
    this.kept = [];
    this.items = list;
    this.whole = false;
    this.mode = Mode.done;
    Object.defineProperty(top, 'items', {
      value: list,
      enumerable: true,
      writable: true,
      configurable: true,
    });
    return top as unknown as KubeList<T>;
  }

  /** Starts collecting a value whose first byte `c` is at `i`; returns where scanning goes on. */
  private begin(what: Collecting, c: number, i: number): number {
    this.collecting = what;
    this.mode = Mode.inValue;
    this.start = i;
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.scalar = false;
    if (c === QUOTE) {
      this.inString = true;
      return i + 1;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      this.depth = 1;
      return i + 1;
    }
    this.scalar = true;
    return i;
  }

  /**
   * Scans the value being collected from `i`; returns the index just after its last byte, or -1 when
   * it goes on past this chunk. The hot path: one pass over the bytes, no allocation, strings skipped
   * in a tight loop (bytes of multi-byte UTF-8 characters are all >= 0x80, so never structural).
   */
  private scan(buf: Buffer, i: number, n: number, base: number): number {
    if (this.scalar) {
      while (i < n) {
        const c = buf[i] as number;
        if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || isSpace(c)) return i;
        i++;
      }
      return -1;
    }
    let depth = this.depth;
    let inString = this.inString;
    if (this.escaped) {
      // The previous chunk ended in a backslash: this chunk's first byte is escaped.
      this.escaped = false;
      i++;
    }
    // Items sit at depth 3 (list object, items array, item); other top-level values at depth 2.
    const maxDepth = this.collecting === 'item' ? MAX_OBJECT_DEPTH - 2 : MAX_OBJECT_DEPTH - 1;
    while (i < n) {
      if (inString) {
        const q = closingQuote(buf, i, n);
        if (q >= n) {
          this.escaped = q > n;
          break;
        }
        i = q + 1;
        inString = false;
        if (depth === 0) break;
        continue;
      }
      const c = buf[i++] as number;
      if (c === QUOTE) inString = true;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (++depth > maxDepth) throw this.tooDeep(base + i - 1);
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (--depth === 0) break;
      }
    }
    this.depth = depth;
    this.inString = inString;
    return depth === 0 && !inString && i <= n ? i : -1;
  }

  /** Keeps the rest of the chunk (from the value's start) for a value that goes on in the next chunk. */
  private keepPart(buf: Buffer, offset: number): void {
    const part = this.start < 0 ? buf : buf.subarray(this.start);
    this.start = -1;
    this.partBytes += part.length;
    this.checkSize(offset);
    if (part.length > 0) this.parts.push(part);
  }

  private checkSize(offset: number): void {
    if (this.partBytes <= this.maxItemBytes) return;
    const what = this.collecting === 'item' ? `item (number ${this.items.length})` : `value of ${this.key}`;
    throw this.error(
      ErrorCodes.LIST_ITEM_TOO_LARGE,
      `has an ${what} longer than ${this.maxItemBytes} bytes`,
      offset,
    );
  }

  /** The value being collected ended at `end` (exclusive) in `buf`: decode it and move on. */
  private finishValue(buf: Buffer, end: number, offset: number): void {
    let text: string;
    if (this.start >= 0) {
      this.partBytes = end - this.start;
      this.checkSize(offset);
      text = buf.toString('utf8', this.start, end);
    } else {
      this.parts.push(buf.subarray(0, end));
      this.partBytes += end;
      this.checkSize(offset);
      text = Buffer.concat(this.parts, this.partBytes).toString('utf8');
      this.parts = [];
    }
    this.partBytes = 0;
    this.start = -1;
    let value: unknown;
    try {
      value = this.collecting === 'key' ? JSON.parse(text) : parseJson(text);
    } catch (cause) {
      // Not V8's SyntaxError as cause: its message quotes the item's text (a Secret's data, say).
      const position = jsonErrorPosition(cause);
      const err = this.bad('is not valid JSON', offset);
      if (position !== undefined && err.details !== undefined) err.details.jsonErrorPosition = position;
      throw err;
    }
    switch (this.collecting) {
      case 'key':
        this.key = value as string;
        this.mode = Mode.colon;
        return;
      case 'item': {
        const kept = this.options.reuseItem ? this.options.reuseItem(value as T) : (value as T);
        if (kept === value) shareEmptyFieldSets(value);
        this.items.push(kept);
        this.mode = Mode.afterItem;
        return;
      }
      case 'null-items':
        if (value !== null) throw this.bad('is not a list (items is not an array)', offset);
        this.items = [];
        this.sawItems = true;
        this.mode = Mode.afterValue;
        return;
      case 'value':
        // An own property even for "__proto__", as JSON.parse makes it (never the list's prototype).
        Object.defineProperty(this.top, this.key, {
          value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
        this.mode = Mode.afterValue;
        return;
    }
  }

  private bad(what: string, offset: number, cause?: unknown): KinformerError {
    return this.error(ErrorCodes.BAD_RESPONSE, what, offset, cause);
  }

  private tooDeep(offset: number): KinformerError {
    return objectTooDeepError(`the list response${this.named()}`, this.details(offset));
  }

  private named(): string {
    return this.options.what ? ` of ${this.options.what}` : '';
  }

  /** Context for errors: the caller's details, how far the body got, and an excerpt of its start. */
  private details(offset = this.total): Record<string, unknown> {
    const head = Buffer.concat(this.head, this.headBytes).toString('utf8');
    return { ...this.options.details, bytes: this.total, offset, bodyExcerpt: excerpt(withoutItems(head)) };
  }

  private error(code: KinformerError['code'], what: string, offset: number, cause?: unknown): KinformerError {
    const { httpStatus } = this.options;
    return new KinformerError(code, `the list response${this.named()} ${what}`, {
      ...(cause === undefined ? {} : { cause }),
      ...(httpStatus === undefined ? {} : { httpStatus }),
      details: this.details(offset),
    });
  }
}

/**
 * Decodes a LIST response body as it arrives with a {@link ListDecoder}: resolves with the list and
 * the body's length in bytes once the body is complete. Rejects with the decoder's errors (the response is destroyed at once), with
 * `ERR_ABORTED` when `signal` aborts, and with `ERR_CONNECTION` when the connection breaks mid-body.
 */
export function readList<T>(
  res: IncomingMessage,
  signal: AbortSignal,
  options: ListDecoderOptions<T> = {},
): Promise<{ list: KubeList<T>; bytes: number }> {
  const decoder = new ListDecoder<T>(options);
  return streamBody(res, signal, options.details ?? {}, {
    write: (chunk) => decoder.write(chunk),
    end: () => ({ list: decoder.end(), bytes: decoder.bytes }),
  });
}

/** `"items": [` followed by something other than `]`: where the objects (a Secret's data, say) start. */
const ITEMS_START = /"items"\s*:\s*\[(?=\s*[^\s\]])/;

/**
 * The start of a body for an error's excerpt, cut where its items begin (added by hardening, issue
 * 16): an excerpt never carries an object's field values, since the first item may be a Secret
 * whose `data` follows a short `metadata`. A body that is not a list (an HTML page) is kept.
 */
function withoutItems(head: string): string {
  const match = ITEMS_START.exec(head);
  return match === null ? head : `${head.slice(0, match.index + match[0].length)}…`;
}
