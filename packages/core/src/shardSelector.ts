import { ErrorCodes, KinformerError } from './errors.js';
import type { KubeObject } from './types.js';

/**
 * KEP-5866 (Kubernetes 1.36, alpha gate `ShardedListAndWatch`): the `shardSelector` of LIST and WATCH.
 *
 * The grammar, the hash and the matching follow `k8s.io/apiserver/pkg/sharding/parser.go` (`Parse`,
 * `parseShardRangeCall`, `extractHexLiteral`) and `k8s.io/apimachinery/pkg/sharding` (`HashField`:
 * FNV-1a 64 as 16 lowercase hex digits; `shardSelector.Matches`: the ranges are OR-ed, a range is
 * `[start, end)`; `HexLess`; `String`). The apiserver parses the expression as CEL but never evaluates
 * it; the same subset is parsed here by hand, so the semantic errors carry the apiserver's messages and
 * CEL syntax errors are reported as `CEL parse error: …` (the wording of those differs from cel-go's).
 */

/** The two fields the server can hash. */
export type ShardField = 'object.metadata.uid' | 'object.metadata.namespace';

/** One `[start, end)` range of the 64-bit hash space, bounds as `'0x'` + 16 hex digits (`end` may be `0x10000000000000000`). */
export interface ShardRange {
  readonly start: string;
  readonly end: string;
}

/** A parsed shard selector: one field and the ranges whose union it selects. */
export interface ShardSelector {
  readonly field: ShardField;
  readonly ranges: readonly ShardRange[];
  /** True when the hash of the object's field falls in one of the ranges (a missing field hashes `''`). */
  matches(obj: KubeObject): boolean;
  /** True when `hash` (as {@link shardHash} returns it) falls in one of the ranges. */
  matchesHash(hash: string): boolean;
  /** The wire form the apiserver echoes in `ListMeta.shardInfo.selector`: ranges joined by ` || `. */
  toString(): string;
}

/** The exclusive upper bound of the hash space, 2^64. */
export const SHARD_HASH_SPACE_END = '0x10000000000000000';
const FIELDS: readonly string[] = ['object.metadata.uid', 'object.metadata.namespace'];

/** `HexLess`: compares canonical `0x` hex strings numerically (a 17-digit value is the largest). */
function hexLess(a: string, b: string): boolean {
  if (a.length !== b.length) return a.length < b.length;
  return a < b;
}

/** A range's bounds as 32-bit halves, for comparing hashes without strings; `endTop` when `end` is 2^64. */
interface NumericRange {
  readonly startHi: number;
  readonly startLo: number;
  readonly endHi: number;
  readonly endLo: number;
  readonly endTop: boolean;
}

/** A canonical bound below 2^64 (`'0x'` + 16 hex digits) as its two 32-bit halves. */
function halves(bound: string): [number, number] {
  return [Number.parseInt(bound.slice(2, 10), 16), Number.parseInt(bound.slice(10, 18), 16)];
}

/** `(aHi, aLo) < (bHi, bLo)` as unsigned 64-bit numbers. */
function below(aHi: number, aLo: number, bHi: number, bLo: number): boolean {
  return aHi < bHi || (aHi === bHi && aLo < bLo);
}

class Selector implements ShardSelector {
  readonly field: ShardField;
  readonly ranges: readonly ShardRange[];
  readonly #text: string;
  readonly #numeric: readonly NumericRange[];

  constructor(field: ShardField, ranges: readonly ShardRange[]) {
    this.field = field;
    this.ranges = Object.freeze(ranges.map((r) => Object.freeze({ start: r.start, end: r.end })));
    this.#text = this.ranges.map((r) => `shardRange(${field}, '${r.start}', '${r.end}')`).join(' || ');
    this.#numeric = this.ranges.map((r) => {
      const [startHi, startLo] = halves(r.start);
      const endTop = r.end === SHARD_HASH_SPACE_END;
      const [endHi, endLo] = endTop ? [0, 0] : halves(r.end);
      return { startHi, startLo, endHi, endLo, endTop };
    });
  }

  matches(obj: KubeObject): boolean {
    const meta = obj.metadata;
    fnv64(this.field === 'object.metadata.uid' ? (meta?.uid ?? '') : (meta?.namespace ?? ''));
    return this.#contains(hash.hi, hash.lo);
  }

  matchesHash(text: string): boolean {
    const [hi, lo] = halves(text);
    return this.#contains(hi, lo);
  }

  /** `HexLess`-equivalent matching on numbers: the ranges are OR-ed, each is `[start, end)`. */
  #contains(hi: number, lo: number): boolean {
    for (const r of this.#numeric) {
      if (below(hi, lo, r.startHi, r.startLo)) continue;
      if (r.endTop || below(hi, lo, r.endHi, r.endLo)) return true;
    }
    return false;
  }

  toString(): string {
    return this.#text;
  }
}

const encoder = new TextEncoder();
const HEX = '0123456789abcdef';

function hex32(n: number): string {
  let s = '';
  for (let shift = 28; shift >= 0; shift -= 4) s += HEX[(n >>> shift) & 0xf];
  return s;
}

/** The last {@link fnv64} result (one module-level pair: hashing allocates nothing). */
const hash = { hi: 0, lo: 0 };

/** FNV-1a 64 of the UTF-8 bytes of `value` into {@link hash}, on two 32-bit halves (no BigInt). */
function fnv64(value: string): void {
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  let ascii = true;
  for (let i = 0; i < value.length; i++) {
    if (value.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  }
  const bytes: ArrayLike<number> = ascii ? { length: 0 } : encoder.encode(value);
  const n = ascii ? value.length : bytes.length;
  for (let i = 0; i < n; i++) {
    lo = (lo ^ (ascii ? value.charCodeAt(i) : (bytes[i] as number))) >>> 0;
    // h * 0x100000001b3 mod 2^64 = h * 0x1b3 + (h << 40)
    const a = lo * 0x1b3;
    const carry = Math.floor(a / 4294967296);
    hi = (Math.imul(hi, 0x1b3) + carry + (lo << 8)) >>> 0;
    lo = a >>> 0;
  }
  hash.hi = hi;
  hash.lo = lo;
}

/**
 * `HashField`: FNV-1a 64 of the UTF-8 bytes of `value`, as `'0x'` + 16 lowercase hex digits. Computed
 * on two 32-bit halves (no BigInt), so hashing a UID costs well under a microsecond.
 */
export function shardHash(value: string): string {
  fnv64(value);
  return `0x${hex32(hash.hi)}${hex32(hash.lo)}`;
}

/**
 * A function from a value (a uid, a namespace) to the index of the range of `ranges` holding its
 * hash. `ranges` are consecutive and ascending, covering the space (as {@link splitHashSpace} cuts
 * them). A binary search on the hash's two 32-bit halves: no string, no BigInt per call.
 */
export function shardRangeLocator(ranges: readonly ShardRange[]): (value: string) => number {
  const starts = ranges.map((r) => halves(r.start));
  return (value) => {
    fnv64(value);
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      const [sHi, sLo] = starts[mid]!;
      if (below(hash.hi, hash.lo, sHi, sLo)) hi = mid - 1;
      else lo = mid;
    }
    return lo;
  };
}

function invalid(selector: string, message: string): KinformerError {
  return new KinformerError(ErrorCodes.INVALID_SELECTOR, message, { details: { selector } });
}

/** Canonical `'0x'` + 16 hex digits of `n` (0 ≤ n < 2^64), or `0x10000000000000000` for 2^64. */
export function shardBound(n: bigint): string {
  if (n < 0n || n > 1n << 64n) throw new RangeError(`shard bound out of range: ${n}`);
  if (n === 1n << 64n) return SHARD_HASH_SPACE_END;
  return `0x${n.toString(16).padStart(16, '0')}`;
}

/**
 * The hash space `[0, 2^64)` split into `count` consecutive ranges of (almost) equal size:
 * range `i` is `[⌊i·2^64/count⌋, ⌊(i+1)·2^64/count⌋)`. Their union is the whole space, they never
 * overlap.
 */
export function splitHashSpace(count: number): ShardRange[] {
  if (!Number.isInteger(count) || count < 1) {
    throw new KinformerError(
      ErrorCodes.INVALID_OPTION,
      `the hash space splits into a positive integer number of ranges, got ${String(count)}`,
      { details: { option: 'count', value: count } },
    );
  }
  const space = 1n << 64n;
  const n = BigInt(count);
  const ranges: ShardRange[] = [];
  for (let i = 0n; i < n; i++) {
    ranges.push({ start: shardBound((i * space) / n), end: shardBound(((i + 1n) * space) / n) });
  }
  return ranges;
}

/**
 * A selector for `ranges` of `field` (bounds validated as the apiserver validates them).
 *
 * @throws KinformerError `ERR_INVALID_SELECTOR` for no range, a malformed bound or `start >= end`.
 */
export function shardSelectorFromRanges(field: ShardField, ranges: readonly ShardRange[]): ShardSelector {
  const text = ranges.map((r) => `shardRange(${field}, '${r.start}', '${r.end}')`).join(' || ');
  return parseShardSelector(text);
}

// ---- the parser: the CEL subset `shardRange(field, 'hex', 'hex') || …` ----

type Token =
  | { kind: 'ident'; text: string; pos: number }
  | { kind: 'string'; value: string; pos: number }
  | { kind: 'number'; text: string; pos: number }
  | { kind: 'op'; text: string; pos: number }
  | { kind: 'end'; pos: number };

/** CEL `ast.ExprKind` values, printed as numbers by the apiserver's `%v`. */
const KIND = { call: 1, ident: 3, list: 4, literal: 5, map: 6, select: 7 } as const;

type Expr =
  | { kind: typeof KIND.call; fn: string; args: Expr[] }
  | { kind: typeof KIND.ident; name: string }
  | { kind: typeof KIND.select; operand: Expr; field: string }
  | { kind: typeof KIND.literal; value: string | number | boolean | null; goType: string }
  | { kind: typeof KIND.list };

class ParseError extends Error {}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))![0];
      tokens.push({ kind: 'ident', text: m, pos: i });
      i += m.length;
      continue;
    }
    if (/[0-9]/.test(c)) {
      const m = /^(0x[0-9a-fA-F]+|[0-9]+(\.[0-9]+)?)u?/.exec(text.slice(i))![0];
      tokens.push({ kind: 'number', text: m, pos: i });
      i += m.length;
      continue;
    }
    if (c === "'" || c === '"') {
      let j = i + 1;
      let value = '';
      while (j < text.length && text[j] !== c) {
        if (text[j] === '\\' && j + 1 < text.length) {
          value += text[j + 1];
          j += 2;
        } else {
          value += text[j];
          j++;
        }
      }
      if (j >= text.length)
        throw new ParseError(`Syntax error: token recognition error at: '${text.slice(i)}'`);
      tokens.push({ kind: 'string', value, pos: i });
      i = j + 1;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (['||', '&&', '==', '!=', '<=', '>='].includes(two)) {
      tokens.push({ kind: 'op', text: two, pos: i });
      i += 2;
      continue;
    }
    if ('().,<>!+-*/%[]{}?:'.includes(c)) {
      tokens.push({ kind: 'op', text: c, pos: i });
      i++;
      continue;
    }
    throw new ParseError(`Syntax error: token recognition error at: '${c}'`);
  }
  tokens.push({ kind: 'end', pos: text.length });
  return tokens;
}

const BINARY: Record<string, string> = {
  '||': '_||_',
  '&&': '_&&_',
  '==': '_==_',
  '!=': '_!=_',
  '<': '_<_',
  '<=': '_<=_',
  '>': '_>_',
  '>=': '_>=_',
  '+': '_+_',
  '-': '_-_',
  '*': '_*_',
  '/': '_/_',
  '%': '_%_',
};
const PRECEDENCE: Array<readonly string[]> = [
  ['||'],
  ['&&'],
  ['==', '!=', '<', '<=', '>', '>='],
  ['+', '-'],
  ['*', '/', '%'],
];

class CelSubsetParser {
  #tokens: Token[];
  #pos = 0;

  constructor(tokens: Token[]) {
    this.#tokens = tokens;
  }

  parse(): Expr {
    const e = this.#binary(0);
    const t = this.#peek();
    if (t.kind !== 'end') throw new ParseError(`Syntax error: extraneous input '${tokenText(t)}'`);
    return e;
  }

  #peek(): Token {
    return this.#tokens[this.#pos]!;
  }

  #next(): Token {
    return this.#tokens[this.#pos++]!;
  }

  #isOp(text: string): boolean {
    const t = this.#peek();
    return t.kind === 'op' && t.text === text;
  }

  #expect(text: string): void {
    const t = this.#next();
    if (t.kind !== 'op' || t.text !== text) {
      throw new ParseError(`Syntax error: mismatched input '${tokenText(t)}' expecting '${text}'`);
    }
  }

  #binary(level: number): Expr {
    if (level >= PRECEDENCE.length) return this.#unary();
    let left = this.#binary(level + 1);
    for (;;) {
      const t = this.#peek();
      if (t.kind !== 'op' || !PRECEDENCE[level]!.includes(t.text)) return left;
      this.#next();
      const right = this.#binary(level + 1);
      left = { kind: KIND.call, fn: BINARY[t.text]!, args: [left, right] };
    }
  }

  #unary(): Expr {
    if (this.#isOp('!') || this.#isOp('-')) {
      const op = (this.#next() as { text: string }).text;
      return { kind: KIND.call, fn: op === '!' ? '!_' : '-_', args: [this.#unary()] };
    }
    return this.#member();
  }

  #member(): Expr {
    let e = this.#primary();
    for (;;) {
      if (this.#isOp('.')) {
        this.#next();
        const t = this.#next();
        if (t.kind !== 'ident')
          throw new ParseError(`Syntax error: no viable alternative at input '.${tokenText(t)}'`);
        if (this.#isOp('(')) {
          this.#next();
          e = { kind: KIND.call, fn: t.text, args: [e, ...this.#args()] };
        } else {
          e = { kind: KIND.select, operand: e, field: t.text };
        }
      } else if (this.#isOp('[')) {
        this.#next();
        const index = this.#binary(0);
        this.#expect(']');
        e = { kind: KIND.call, fn: '_[_]', args: [e, index] };
      } else {
        return e;
      }
    }
  }

  #args(): Expr[] {
    const args: Expr[] = [];
    if (this.#isOp(')')) {
      this.#next();
      return args;
    }
    for (;;) {
      args.push(this.#binary(0));
      if (this.#isOp(',')) {
        this.#next();
        continue;
      }
      this.#expect(')');
      return args;
    }
  }

  #primary(): Expr {
    const t = this.#next();
    switch (t.kind) {
      case 'ident': {
        if (t.text === 'true' || t.text === 'false') {
          return { kind: KIND.literal, value: t.text === 'true', goType: 'bool' };
        }
        if (t.text === 'null') return { kind: KIND.literal, value: null, goType: 'structpb.NullValue' };
        if (this.#isOp('(')) {
          this.#next();
          return { kind: KIND.call, fn: t.text, args: this.#args() };
        }
        return { kind: KIND.ident, name: t.text };
      }
      case 'string':
        return { kind: KIND.literal, value: t.value, goType: 'string' };
      case 'number': {
        const goType = t.text.endsWith('u') ? 'uint64' : t.text.includes('.') ? 'float64' : 'int64';
        return { kind: KIND.literal, value: Number(t.text.replace(/u$/, '')), goType };
      }
      case 'op':
        if (t.text === '(') {
          const e = this.#binary(0);
          this.#expect(')');
          return e;
        }
        if (t.text === '[') {
          if (!this.#isOp(']')) {
            this.#binary(0);
            while (this.#isOp(',')) {
              this.#next();
              this.#binary(0);
            }
          }
          this.#expect(']');
          return { kind: KIND.list };
        }
        throw new ParseError(`Syntax error: extraneous input '${t.text}'`);
      case 'end':
        throw new ParseError("Syntax error: mismatched input '<EOF>'");
    }
  }
}

function tokenText(t: Token): string {
  switch (t.kind) {
    case 'end':
      return '<EOF>';
    case 'string':
      return `'${t.value}'`;
    case 'ident':
    case 'number':
    case 'op':
      return t.text;
  }
}

/** Go's `%q` for the strings that appear in these messages. */
function q(s: string): string {
  return JSON.stringify(s);
}

function walk(e: Expr, out: ShardRange[], keys: string[]): void {
  if (e.kind === KIND.call) {
    if (e.fn === '_||_') {
      walk(e.args[0]!, out, keys);
      walk(e.args[1]!, out, keys);
      return;
    }
    if (e.fn === 'shardRange') {
      const { key, range } = shardRangeCall(e.args);
      keys.push(key);
      out.push(range);
      return;
    }
    throw new ParseError(`unsupported function ${q(e.fn)}; only shardRange() and || are allowed`);
  }
  throw new ParseError(`unexpected expression kind ${e.kind}; expected shardRange() call or || operator`);
}

function fieldPath(e: Expr): string {
  if (e.kind === KIND.ident) return e.name;
  if (e.kind === KIND.select) return `${fieldPath(e.operand)}.${e.field}`;
  throw new ParseError(
    `shardRange() first argument: expected field path (e.g. object.metadata.uid), got expression kind ${e.kind}`,
  );
}

function hexLiteral(e: Expr, name: string): string {
  if (e.kind !== KIND.literal) {
    throw new ParseError(`${name} must be a string literal (e.g. '0xff'), got expression kind ${e.kind}`);
  }
  if (typeof e.value !== 'string') throw new ParseError(`${name} must be a string literal, got ${e.goType}`);
  const s = e.value;
  if (!s.startsWith('0x')) throw new ParseError(`${name} must have '0x' prefix, got ${q(s)}`);
  const hex = s.slice(2);
  if (hex === '') throw new ParseError(`${name}: hex value is required after '0x'`);
  if (hex.length > 17) {
    throw new ParseError(`${name}: hex value too long (${hex.length} chars, max 17): ${q(hex)}`);
  }
  for (const c of hex) {
    if ((c < '0' || c > '9') && (c < 'a' || c > 'f')) {
      throw new ParseError(`${name}: invalid hex character ${q(c)} in ${q(s)}`);
    }
  }
  if (hex.length === 17) {
    if (s !== SHARD_HASH_SPACE_END) {
      throw new ParseError(`${name}: 17-digit hex value must be '0x10000000000000000' (2^64), got ${q(s)}`);
    }
  } else if (hex.length !== 16) {
    const padded = `0x${'0'.repeat(16 - hex.length)}${hex}`;
    throw new ParseError(
      `${name} must be a 0x-prefixed 16-digit hex value, got ${q(s)} (did you mean ${q(padded)}?)`,
    );
  }
  return s;
}

function shardRangeCall(args: Expr[]): { key: string; range: ShardRange } {
  if (args.length !== 3)
    throw new ParseError(`shardRange() requires exactly 3 arguments, got ${args.length}`);
  const key = fieldPath(args[0]!);
  if (!FIELDS.includes(key)) {
    throw new ParseError(
      `unsupported field path ${q(key)}; supported: object.metadata.uid, object.metadata.namespace`,
    );
  }
  const start = hexLiteral(args[1]!, 'hexStart');
  const end = hexLiteral(args[2]!, 'hexEnd');
  if (!hexLess(start, end)) throw new ParseError(`shard range start ${start} must be less than end ${end}`);
  return { key, range: { start, end } };
}

/**
 * Parses a `shardSelector` as kube-apiserver does (`k8s.io/apiserver/pkg/sharding.Parse`): one or more
 * `shardRange(object.metadata.uid | object.metadata.namespace, '0x…16 hex digits', '0x…')` joined by
 * `||`, all on the same field; bounds are lowercase, exactly 16 hex digits (or `0x10000000000000000`),
 * `start < end`. Whitespace is free.
 *
 * @throws KinformerError `ERR_INVALID_SELECTOR` with the apiserver's message and `details: { selector }`.
 */
export function parseShardSelector(text: string): ShardSelector {
  if (typeof text !== 'string') {
    throw invalid(String(text), `invalid shard selector: expected a string, got ${typeof text}`);
  }
  const expr = text.trim();
  if (expr === '') {
    throw invalid(text, 'empty shard selector is not allowed; omit the parameter for unfiltered lists');
  }
  const ranges: ShardRange[] = [];
  const keys: string[] = [];
  try {
    let ast: Expr;
    try {
      ast = new CelSubsetParser(tokenize(expr)).parse();
    } catch (err) {
      throw new ParseError(`CEL parse error: ${(err as Error).message}`);
    }
    walk(ast, ranges, keys);
  } catch (err) {
    if (err instanceof ParseError) throw invalid(text, err.message);
    throw err;
  }
  for (let i = 1; i < keys.length; i++) {
    if (keys[i] !== keys[0]) {
      throw invalid(text, `all shard ranges must use the same field, got ${q(keys[0]!)} and ${q(keys[i]!)}`);
    }
  }
  return new Selector(keys[0] as ShardField, ranges);
}
