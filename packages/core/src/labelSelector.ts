import { ErrorCodes, KinformerError } from './errors.js';
import { assertSelectorText } from './selectorText.js';

/**
 * Label selector operators (the Kubernetes grammar's `=`/`==` are both `=`; `gt`/`lt` are the
 * integer comparisons `k>5`/`k<5`).
 */
export type LabelSelectorOperator = '=' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

/** One requirement of a label selector: `key op values`. */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelSelectorOperator;
  readonly values: readonly string[];
}

/** A parsed label selector. */
export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  /** True when every requirement holds for `labels` (missing labels count as absent). */
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
  /** True for the selector that matches everything. */
  isEmpty(): boolean;
  /** The canonical text form, which parses back to an equal selector. */
  toString(): string;
}

/** `metav1.LabelSelector`'s object form. */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{
    key: string;
    /** `In`, `NotIn`, `Exists` or `DoesNotExist` (checked at run time; typed `string` so client-node's
     * `V1LabelSelector` is accepted as is). */
    operator: string;
    values?: string[];
  }>;
}

/**
 * Parses the Kubernetes label selector grammar (apimachinery `labels.Parse`):
 *
 * - requirements separated by `,`, all of which must hold;
 * - `k=v` and `k==v` (k exists and equals v), `k!=v` (k is absent or differs), `k in (a,b)`,
 *   `k notin (a,b)` (k is absent or not in the set), `k` (k exists), `!k` (k is absent);
 * - spaces, tabs, CR and LF separate tokens and are otherwise ignored; `in`/`notin` are keywords only
 *   where an operator is expected (`in in (in)` is valid);
 * - keys are qualified names: an optional lowercase DNS-subdomain prefix (≤253 characters) and `/`,
 *   then a name of ≤63 characters `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`; values are ≤63
 *   characters of the same form, or empty (`k=`, `k in (a,)`);
 * - as in Kubernetes, `k in ()` is the set holding only the empty value, i.e. `k in ("")`;
 * - the empty (or all-whitespace) string is the selector that matches everything.
 *
 * The result's requirements are sorted by key (stable; set values sorted and de-duplicated), so
 * `toString()` is canonical and `parseLabelSelector(s.toString())` equals `s`. The selector is
 * compiled once; `matches` allocates nothing.
 *
 * The integer comparisons `k>5` / `k<5` match labels whose value is an integer beyond the bound.
 *
 * @throws KinformerError `ERR_INVALID_SELECTOR` naming the offending text and its 0-based position,
 *   with `details: { selector, position }`.
 */
export function parseLabelSelector(text: string): LabelSelector {
  assertSelectorText(text, 'label');
  return new LabelSelectorImpl(new Parser(text).parse());
}

/** The operators of `metav1.LabelSelectorRequirement` and what they become. */
const OBJECT_OPERATORS: Readonly<Record<string, LabelSelectorOperator>> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
};

/**
 * Converts the `metav1.LabelSelector` object form (`matchLabels` and `matchExpressions`) as
 * apimachinery's `LabelSelectorAsSelector` does: every `matchLabels` entry becomes `key=value`,
 * `In`/`NotIn`/`Exists`/`DoesNotExist` become `in`/`notin`/`exists`/`!`, and everything is ANDed.
 * An object with neither (or both empty) matches everything.
 *
 * Keys and values are validated as in {@link parseLabelSelector}. `In`/`NotIn` need at least one
 * value, `Exists`/`DoesNotExist` must have none.
 *
 * @throws KinformerError `ERR_INVALID_SELECTOR` with `details: { selector, field }`, where `field` is
 *   the path of the offending part (`matchExpressions[1].operator`).
 */
export function labelSelectorFromObject(selector: LabelSelectorObject): LabelSelector {
  if (typeof selector !== 'object' || selector === null) {
    throw objectError(
      selector,
      '',
      `expected a LabelSelector object, got ${selector === null ? 'null' : typeof selector}`,
    );
  }
  const requirements: LabelRequirement[] = [];
  const { matchLabels, matchExpressions } = selector;
  if (matchLabels !== undefined && matchLabels !== null) {
    if (typeof matchLabels !== 'object')
      throw objectError(selector, 'matchLabels', 'must be an object of key/value strings');
    for (const key of Object.keys(matchLabels)) {
      const value: unknown = matchLabels[key];
      const field = `matchLabels[${JSON.stringify(key)}]`;
      const keyProblem = labelKeyProblem(key);
      if (keyProblem !== undefined)
        throw objectError(selector, field, `invalid label key ${JSON.stringify(key)}: ${keyProblem}`);
      if (typeof value !== 'string') throw objectError(selector, field, 'the value must be a string');
      const valueProblem = labelValueProblem(value);
      if (valueProblem !== undefined) {
        throw objectError(selector, field, `invalid label value ${JSON.stringify(value)}: ${valueProblem}`);
      }
      requirements.push(requirement(key, '=', [value]));
    }
  }
  if (matchExpressions !== undefined && matchExpressions !== null) {
    if (!Array.isArray(matchExpressions)) throw objectError(selector, 'matchExpressions', 'must be an array');
    matchExpressions.forEach((expr: unknown, i) => {
      const at = `matchExpressions[${i}]`;
      if (typeof expr !== 'object' || expr === null) throw objectError(selector, at, 'must be an object');
      const { key, operator, values } = expr as { key?: unknown; operator?: unknown; values?: unknown };
      if (typeof key !== 'string') throw objectError(selector, `${at}.key`, 'must be a string');
      const keyProblem = labelKeyProblem(key);
      if (keyProblem !== undefined)
        throw objectError(selector, `${at}.key`, `invalid label key ${JSON.stringify(key)}: ${keyProblem}`);
      const op =
        typeof operator === 'string' && Object.hasOwn(OBJECT_OPERATORS, operator)
          ? OBJECT_OPERATORS[operator]
          : undefined;
      if (op === undefined) {
        throw objectError(
          selector,
          `${at}.operator`,
          `${JSON.stringify(operator)} is not a valid label selector operator (expected In, NotIn, Exists or DoesNotExist)`,
        );
      }
      if (values !== undefined && values !== null && !Array.isArray(values)) {
        throw objectError(selector, `${at}.values`, 'must be an array of strings');
      }
      const list = (values ?? []) as unknown[];
      if ((op === 'in' || op === 'notin') && list.length === 0) {
        throw objectError(
          selector,
          `${at}.values`,
          `for '${String(operator)}' the values set can't be empty`,
        );
      }
      if ((op === 'exists' || op === '!') && list.length !== 0) {
        throw objectError(selector, `${at}.values`, `values set must be empty for '${String(operator)}'`);
      }
      list.forEach((value, j) => {
        if (typeof value !== 'string') throw objectError(selector, `${at}.values[${j}]`, 'must be a string');
        const problem = labelValueProblem(value);
        if (problem !== undefined) {
          throw objectError(
            selector,
            `${at}.values[${j}]`,
            `invalid label value ${JSON.stringify(value)}: ${problem}`,
          );
        }
      });
      requirements.push(requirement(key, op, list as string[]));
    });
  }
  return new LabelSelectorImpl(sortByKey(requirements));
}

// ---------------------------------------------------------------------------------------------
// The compiled selector.

/** Operator codes for the matching loop (a switch on small integers, no string compares). */
const OP_EQUALS = 0;
const OP_NOT_EQUALS = 1;
const OP_IN = 2;
const OP_NOT_IN = 3;
const OP_EXISTS = 4;
const OP_NOT_EXISTS = 5;
const OP_GREATER = 6;
const OP_LESS = 7;

const OP_CODES: Readonly<Record<LabelSelectorOperator, number>> = {
  '=': OP_EQUALS,
  '!=': OP_NOT_EQUALS,
  in: OP_IN,
  notin: OP_NOT_IN,
  exists: OP_EXISTS,
  '!': OP_NOT_EXISTS,
  gt: OP_GREATER,
  lt: OP_LESS,
};

/** A label value as apimachinery's `strconv.ParseInt(v, 10, 64)` reads it, or `undefined`. */
function labelInteger(value: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(value)) return undefined;
  const n = BigInt(value);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}

/** Sets larger than this are looked up through a `Set` rather than a linear scan. */
const SET_THRESHOLD = 8;

interface CompiledRequirement {
  readonly key: string;
  readonly op: number;
  /** The only value of `=`/`!=`, or `''`. */
  readonly value: string;
  readonly values: readonly string[];
  readonly set: ReadonlySet<string> | undefined;
  /** The bound of `gt`/`lt`. */
  readonly bound: bigint | undefined;
}

class LabelSelectorImpl implements LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  readonly #compiled: readonly CompiledRequirement[];
  readonly #text: string;

  constructor(requirements: readonly LabelRequirement[]) {
    this.requirements = Object.freeze(requirements);
    this.#compiled = requirements.map((r) => ({
      key: r.key,
      op: OP_CODES[r.operator],
      value: r.values[0] ?? '',
      values: r.values,
      set: r.values.length > SET_THRESHOLD ? new Set(r.values) : undefined,
      bound: r.operator === 'gt' || r.operator === 'lt' ? labelInteger(r.values[0] ?? '') : undefined,
    }));
    this.#text = requirements.map(requirementString).join(',');
  }

  matches(labels: Readonly<Record<string, string>> | undefined): boolean {
    const compiled = this.#compiled;
    for (let i = 0; i < compiled.length; i++) {
      const r = compiled[i]!;
      // `typeof` keeps inherited members (`constructor`, `toString`…) from counting as labels.
      const raw: unknown = labels === undefined || labels === null ? undefined : labels[r.key];
      const present = typeof raw === 'string';
      switch (r.op) {
        case OP_EQUALS:
          if (!present || raw !== r.value) return false;
          break;
        case OP_NOT_EQUALS:
          if (present && raw === r.value) return false;
          break;
        case OP_IN:
          if (!present || !contains(r, raw)) return false;
          break;
        case OP_NOT_IN:
          if (present && contains(r, raw)) return false;
          break;
        case OP_EXISTS:
          if (!present) return false;
          break;
        case OP_GREATER:
        case OP_LESS: {
          // As apimachinery: the label must exist and be an integer.
          const n = present ? labelInteger(raw) : undefined;
          if (n === undefined || r.bound === undefined) return false;
          if (r.op === OP_GREATER ? !(n > r.bound) : !(n < r.bound)) return false;
          break;
        }
        default:
          if (present) return false;
      }
    }
    return true;
  }

  isEmpty(): boolean {
    return this.requirements.length === 0;
  }

  toString(): string {
    return this.#text;
  }
}

function contains(r: CompiledRequirement, value: string): boolean {
  if (r.set !== undefined) return r.set.has(value);
  const values = r.values;
  for (let i = 0; i < values.length; i++) if (values[i] === value) return true;
  return false;
}

/** A frozen requirement; set operators get their values sorted and de-duplicated. */
function requirement(
  key: string,
  operator: LabelSelectorOperator,
  values: readonly string[],
): LabelRequirement {
  const normalised =
    operator === 'in' || operator === 'notin' ? [...new Set(values)].sort(compareStrings) : [...values];
  return Object.freeze({ key, operator, values: Object.freeze(normalised) });
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Stable sort by key, as Kubernetes sorts requirements (`sort.Sort(ByKey)`), for a deterministic form. */
function sortByKey(requirements: LabelRequirement[]): LabelRequirement[] {
  return requirements.sort((a, b) => compareStrings(a.key, b.key));
}

/** The Kubernetes text form of one requirement (`Requirement.String`, with `==` written `=`). */
function requirementString(r: LabelRequirement): string {
  switch (r.operator) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case '=':
      return `${r.key}=${r.values[0] ?? ''}`;
    case '!=':
      return `${r.key}!=${r.values[0] ?? ''}`;
    case 'in':
      return `${r.key} in (${r.values.join(',')})`;
    case 'notin':
      return `${r.key} notin (${r.values.join(',')})`;
    case 'gt':
      return `${r.key}>${r.values[0] ?? ''}`;
    case 'lt':
      return `${r.key}<${r.values[0] ?? ''}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Validation (apimachinery `validation.IsQualifiedName` and `IsValidLabelValue`).

const NAME_MAX_LENGTH = 63;
const PREFIX_MAX_LENGTH = 253;
const QUALIFIED_NAME = /^[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const NAME_RULE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** Why `key` is not a valid label key, or `undefined` when it is. */
function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  let name = key;
  const problems: string[] = [];
  if (slash !== -1) {
    if (key.indexOf('/', slash + 1) !== -1) {
      return "a qualified name may contain at most one '/' (an optional DNS subdomain prefix and a name, e.g. 'example.com/MyName')";
    }
    const prefix = key.slice(0, slash);
    name = key.slice(slash + 1);
    if (prefix === '') problems.push('prefix part must be non-empty');
    else if (prefix.length > PREFIX_MAX_LENGTH)
      problems.push(`prefix part must be no more than ${PREFIX_MAX_LENGTH} characters`);
    else if (!DNS1123_SUBDOMAIN.test(prefix)) {
      problems.push(
        "prefix part must be a lowercase RFC 1123 subdomain: lowercase alphanumeric characters, '-' or '.', starting and ending with an alphanumeric character",
      );
    }
  }
  if (name === '') problems.push('name part must be non-empty');
  else {
    if (name.length > NAME_MAX_LENGTH)
      problems.push(`name part must be no more than ${NAME_MAX_LENGTH} characters`);
    if (!QUALIFIED_NAME.test(name)) problems.push(`name part ${NAME_RULE}`);
  }
  return problems.length === 0 ? undefined : problems.join('; ');
}

/** Why `value` is not a valid label value, or `undefined` when it is. */
function labelValueProblem(value: string): string | undefined {
  const problems: string[] = [];
  if (value.length > NAME_MAX_LENGTH) problems.push(`must be no more than ${NAME_MAX_LENGTH} characters`);
  if (!LABEL_VALUE.test(value)) problems.push(`must be empty or ${NAME_RULE}`);
  return problems.length === 0 ? undefined : problems.join('; ');
}

function objectError(selector: unknown, field: string, problem: string): KinformerError {
  const where = field === '' ? '' : `${field}: `;
  return new KinformerError(
    ErrorCodes.INVALID_SELECTOR,
    `invalid label selector object: ${where}${problem}`,
    {
      details: { selector, field },
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Lexer and parser: apimachinery `labels/selector.go`, token for token.

type TokenKind = 'ident' | 'in' | 'notin' | '=' | '==' | '!=' | '!' | '(' | ')' | ',' | '>' | '<' | 'end';

interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  /** 0-based offset of the token's first character in the selector. */
  readonly pos: number;
}

/** Tokens made of special characters; the lexer takes the longest one. */
const SYMBOLS: ReadonlySet<string> = new Set(['=', '==', '!=', '!', '(', ')', ',', '>', '<']);

function isWhitespace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
}

function isSpecial(ch: string): boolean {
  return ch === '=' || ch === '!' || ch === '(' || ch === ')' || ch === ',' || ch === '>' || ch === '<';
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = text.length;
  for (;;) {
    while (i < n && isWhitespace(text[i]!)) i++;
    if (i >= n) {
      tokens.push({ kind: 'end', text: '', pos: n });
      return tokens;
    }
    const start = i;
    if (isSpecial(text[i]!)) {
      // Longest symbol: every single special character is a symbol, and none is longer than two.
      let end = i + 1;
      if (end < n && SYMBOLS.has(text.slice(i, end + 1))) end++;
      const symbol = text.slice(start, end);
      tokens.push({ kind: symbol as TokenKind, text: symbol, pos: start });
      i = end;
    } else {
      while (i < n && !isSpecial(text[i]!) && !isWhitespace(text[i]!)) i++;
      const word = text.slice(start, i);
      tokens.push({ kind: word === 'in' || word === 'notin' ? word : 'ident', text: word, pos: start });
    }
  }
}

/** Where `in`/`notin` are operators (`KeyAndOperator`) or plain identifiers (`Values`). */
type Context = 'operator' | 'values';

class Parser {
  private readonly tokens: Token[];
  private index = 0;

  constructor(private readonly text: string) {
    this.tokens = tokenize(text);
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const next = this.peek();
      if (next.kind === 'end') return sortByKey(requirements);
      if (next.kind !== 'ident' && next.kind !== '!')
        throw this.error(next, "expected '!', a label key or the end");
      requirements.push(this.parseRequirement());
      const after = this.consume();
      if (after.kind === 'end') return sortByKey(requirements);
      if (after.kind !== ',') throw this.error(after, "expected ',' or the end");
      const following = this.peek();
      if (following.kind !== 'ident' && following.kind !== '!')
        throw this.error(following, "expected '!' or a label key after ','");
    }
  }

  private parseRequirement(): LabelRequirement {
    let token = this.consume();
    const negated = token.kind === '!';
    if (negated) token = this.consume();
    if (token.kind !== 'ident') throw this.error(token, 'expected a label key');
    const key = token.text;
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== undefined) throw this.error(token, `invalid label key: ${keyProblem}`);
    // `!key` takes nothing more; whatever follows must be ',' or the end (checked by the caller).
    if (negated) return requirement(key, '!', []);
    const next = this.peek();
    if (next.kind === 'end' || next.kind === ',') return requirement(key, 'exists', []);

    const op = this.consume('operator');
    switch (op.kind) {
      case 'in':
      case 'notin':
        return requirement(key, op.kind, this.parseValueSet());
      case '=':
      case '==':
        return requirement(key, '=', [this.parseExactValue()]);
      case '!=':
        return requirement(key, '!=', [this.parseExactValue()]);
      case '>':
      case '<': {
        const token = this.consume();
        if (token.kind !== 'ident' || labelInteger(token.text) === undefined)
          throw this.error(token, `for '${op.text}' the value must be an integer`);
        return requirement(key, op.kind === '>' ? 'gt' : 'lt', [token.text]);
      }
      default:
        throw this.error(op, 'expected one of in, notin, =, ==, !=');
    }
  }

  /** `( v1, v2, … )`; empty entries are the empty value, and `()` is the set `{""}` as in Kubernetes. */
  private parseValueSet(): string[] {
    const open = this.consume();
    if (open.kind !== '(') throw this.error(open, "expected '('");
    const first = this.peek();
    if (first.kind === ')') {
      this.consume();
      return [''];
    }
    if (first.kind !== 'ident' && first.kind !== ',')
      throw this.error(first, "expected ',', ')' or a label value");
    const values: string[] = [];
    for (;;) {
      const token = this.consume();
      if (token.kind === 'ident') {
        this.checkValue(token);
        values.push(token.text);
        const next = this.peek();
        if (next.kind === ')') {
          this.consume();
          return values;
        }
        if (next.kind !== ',') throw this.error(next, "expected ',' or ')'");
      } else if (token.kind === ',') {
        if (values.length === 0) values.push(''); // "(,"
        const next = this.peek();
        if (next.kind === ')') {
          values.push(''); // ",)"
          this.consume();
          return values;
        }
        if (next.kind === ',') values.push(''); // ",,"
      } else {
        throw this.error(token, "expected ',' or a label value");
      }
    }
  }

  /** The value after `=`, `==` or `!=`; nothing (the end or ',') is the empty value. */
  private parseExactValue(): string {
    const next = this.peek();
    if (next.kind === 'end' || next.kind === ',') return '';
    const token = this.consume();
    if (token.kind !== 'ident') throw this.error(token, 'expected a label value');
    this.checkValue(token);
    return token.text;
  }

  private checkValue(token: Token): void {
    const problem = labelValueProblem(token.text);
    if (problem !== undefined) throw this.error(token, `invalid label value: ${problem}`);
  }

  private peek(context: Context = 'values'): Token {
    return asContext(this.tokens[this.index]!, context);
  }

  private consume(context: Context = 'values'): Token {
    const token = this.tokens[this.index]!;
    if (token.kind !== 'end') this.index++;
    return asContext(token, context);
  }

  private error(token: Token, expected: string): KinformerError {
    const found = token.kind === 'end' ? 'the end of the selector' : `'${token.text}'`;
    return new KinformerError(
      ErrorCodes.INVALID_SELECTOR,
      `invalid label selector ${JSON.stringify(this.text)}: found ${found} at position ${token.pos}; ${expected}`,
      { details: { selector: this.text, position: token.pos } },
    );
  }
}

function asContext(token: Token, context: Context): Token {
  return context === 'values' && (token.kind === 'in' || token.kind === 'notin')
    ? { ...token, kind: 'ident' }
    : token;
}
