/**
 * The error text kube-apiserver gives for a `labelSelector` it cannot parse: a port of
 * apimachinery's `labels.Parse` lexer and parser (`pkg/labels/selector.go`) and the validations it
 * calls (`NewRequirement`, `pkg/api/validate/content/kube.go` `IsLabelKey` / `IsLabelValue`), so
 * that every message is the real one, `<nil>:` field paths included. Matching itself is done by
 * `@kinformer/core`'s parser; this module only answers "what would the server say".
 */

type Token =
  'error' | 'end' | ')' | ',' | '!' | '==' | '=' | '>' | 'identifier' | 'in' | '<' | '!=' | 'notin' | '(';

interface Item {
  tok: Token;
  lit: string;
}

const KEYWORDS: Readonly<Record<string, Token>> = {
  ')': ')',
  ',': ',',
  '!': '!',
  '==': '==',
  '=': '=',
  '>': '>',
  in: 'in',
  '<': '<',
  '!=': '!=',
  notin: 'notin',
  '(': '(',
};

/** `selection.Operator` values, as `strings.Join(binaryOperators, ", ")` prints them. */
const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

type Operator = 'in' | 'notin' | '=' | '==' | '!=' | 'gt' | 'lt' | 'exists' | '!';

function isWhitespace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
}

function isSpecial(ch: string): boolean {
  return ch === '=' || ch === '!' || ch === '(' || ch === ')' || ch === ',' || ch === '>' || ch === '<';
}

function keyword(text: string): Token | undefined {
  return Object.hasOwn(KEYWORDS, text) ? KEYWORDS[text] : undefined;
}

/** `Lexer.Lex` over the whole input (ends with an `end` item). */
function scan(s: string): Item[] {
  const items: Item[] = [];
  let pos = 0;
  for (;;) {
    while (pos < s.length && isWhitespace(s[pos]!)) pos++;
    if (pos >= s.length) {
      items.push({ tok: 'end', lit: '' });
      return items;
    }
    if (isSpecial(s[pos]!)) {
      let buffer = '';
      let last: Item | undefined;
      while (pos < s.length && isSpecial(s[pos]!)) {
        buffer += s[pos];
        const tok = keyword(buffer);
        if (tok !== undefined) last = { tok, lit: buffer };
        else if (last !== undefined) break;
        pos++;
      }
      items.push(last ?? { tok: 'error', lit: `error expected: keyword found '${buffer}'` });
      continue;
    }
    let buffer = '';
    while (pos < s.length && !isSpecial(s[pos]!) && !isWhitespace(s[pos]!)) buffer += s[pos++];
    items.push({ tok: keyword(buffer) ?? 'identifier', lit: buffer });
  }
}

/** Go's `%q` for the strings that can reach it here (close to `strconv.Quote` for printable text). */
function quote(value: string): string {
  return JSON.stringify(value);
}

const LABEL_KEY_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_KEY_RE = new RegExp(`^${LABEL_KEY_FMT}$`);
const LABEL_KEY_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${LABEL_KEY_FMT})?`;
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS_SUBDOMAIN_FMT = `${DNS_LABEL_FMT}(\\.${DNS_LABEL_FMT})*`;
const DNS_SUBDOMAIN_RE = new RegExp(`^${DNS_SUBDOMAIN_FMT}$`);
const DNS_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

function regexError(message: string, re: string, ...examples: string[]): string {
  return `${message} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${re}')`;
}

function byteLength(value: string): number {
  return Buffer.byteLength(value);
}

/** `content.IsLabelKey`. */
function labelKeyErrors(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  if (parts.length > 2) {
    return [
      `a valid label key ${regexError(LABEL_KEY_MSG, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix === '') errs.push('prefix part must be non-empty');
    else {
      if (byteLength(prefix) > 253) errs.push('prefix part must be no more than 253 bytes');
      if (!DNS_SUBDOMAIN_RE.test(prefix))
        errs.push(`prefix part ${regexError(DNS_SUBDOMAIN_MSG, DNS_SUBDOMAIN_FMT, 'example.com')}`);
    }
  }
  if (name === '') errs.push('name part must be non-empty');
  else if (byteLength(name) > 63) errs.push('name part must be no more than 63 bytes');
  if (!LABEL_KEY_RE.test(name))
    errs.push(`name part ${regexError(LABEL_KEY_MSG, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

/** `content.IsLabelValue`. */
function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push('must be no more than 63 bytes');
  if (!LABEL_VALUE_RE.test(value))
    errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

/** `field.Invalid(path, value, detail).Error()`; `value` is already formatted. */
function invalid(path: string, value: string, detail: string): string {
  return `${path}: Invalid value: ${value}: ${detail}`;
}

/** `utilerrors.NewAggregate(errs).Error()` after `ErrorList.ToAggregate` (duplicates dropped). */
function aggregate(errors: readonly string[]): string | undefined {
  const unique = [...new Set(errors)];
  if (unique.length === 0) return undefined;
  return unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`;
}

const GO_INT64 = /^[+-]?\d+$/;

function isInt64(value: string): boolean {
  if (!GO_INT64.test(value)) return false;
  const n = BigInt(value);
  return n >= -(2n ** 63n) && n < 2n ** 63n;
}

/** `NewRequirement`'s validation (the key was validated by the parser already). */
function requirementError(key: string, op: Operator, values: readonly string[]): string | undefined {
  const errs: string[] = [];
  const keyErrors = labelKeyErrors(key);
  if (keyErrors.length > 0) errs.push(invalid('key', quote(key), keyErrors.join('; ')));
  const json = JSON.stringify(values);
  switch (op) {
    case 'in':
    case 'notin':
      if (values.length === 0)
        errs.push(invalid('values', json, "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1)
        errs.push(invalid('values', json, 'exact-match compatibility requires one single value'));
      break;
    case 'exists':
    case '!':
      if (values.length !== 0)
        errs.push(invalid('values', json, 'values set must be empty for exists and does not exist'));
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1)
        errs.push(invalid('values', json, "for 'Gt', 'Lt' operators, exactly one value is required"));
      values.forEach((v, i) => {
        if (!isInt64(v))
          errs.push(
            invalid(`values[${i}]`, quote(v), "for 'Gt', 'Lt' operators, the value must be an integer"),
          );
      });
      break;
  }
  values.forEach((v, i) => {
    const valueErrors = labelValueErrors(v);
    if (valueErrors.length > 0) errs.push(invalid(`values[${i}][${key}]`, quote(v), valueErrors.join('; ')));
  });
  return aggregate(errs);
}

/** Go's `sets.String.List()`: unique, sorted by byte order. */
function sortedSet(values: Iterable<string>): string[] {
  return [...new Set(values)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

class SelectorError extends Error {}

class Parser {
  readonly #items: Item[];
  #position = 0;

  constructor(text: string) {
    this.#items = scan(text);
  }

  /** `lookahead(Values)`: `in`/`notin` read as identifiers. */
  #peek(values = true): Item {
    const item = this.#items[this.#position]!;
    return values && (item.tok === 'in' || item.tok === 'notin')
      ? { tok: 'identifier', lit: item.lit }
      : item;
  }

  #next(values = true): Item {
    const item = this.#peek(values);
    this.#position++;
    return item;
  }

  parse(): void {
    for (;;) {
      const { tok, lit } = this.#peek();
      if (tok === 'end') return;
      if (tok !== 'identifier' && tok !== '!')
        throw new SelectorError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      try {
        this.#requirement();
      } catch (err) {
        if (err instanceof SelectorError)
          throw new SelectorError(`unable to parse requirement: ${err.message}`);
        throw err;
      }
      const after = this.#next();
      if (after.tok === 'end') return;
      if (after.tok !== ',')
        throw new SelectorError(`found '${after.lit}', expected: ',' or 'end of string'`);
      const following = this.#peek();
      if (following.tok !== 'identifier' && following.tok !== '!')
        throw new SelectorError(`found '${following.lit}', expected: identifier after ','`);
    }
  }

  #requirement(): void {
    let operator: Operator | undefined;
    let item = this.#next();
    if (item.tok === '!') {
      operator = '!';
      item = this.#next();
    }
    if (item.tok !== 'identifier') throw new SelectorError(`found '${item.lit}', expected: identifier`);
    const key = item.lit;
    const keyErrors = labelKeyErrors(key);
    if (keyErrors.length > 0) throw new SelectorError(invalid('<nil>', quote(key), keyErrors.join('; ')));
    const ahead = this.#peek().tok;
    if (ahead === 'end' || ahead === ',') operator ??= 'exists';
    if (operator === 'exists' || operator === '!') return this.#check(key, operator, []);
    const op = this.#next(false);
    const OPERATORS: Partial<Record<Token, Operator>> = {
      in: 'in',
      '=': '=',
      '==': '==',
      '>': 'gt',
      '<': 'lt',
      notin: 'notin',
      '!=': '!=',
    };
    const parsed = OPERATORS[op.tok];
    if (parsed === undefined) throw new SelectorError(`found '${op.lit}', expected: ${BINARY_OPERATORS}`);
    const values = parsed === 'in' || parsed === 'notin' ? this.#setValues() : this.#exactValue();
    this.#check(key, parsed, values);
  }

  #check(key: string, op: Operator, values: readonly string[]): void {
    const message = requirementError(key, op, values);
    if (message !== undefined) throw new SelectorError(message);
  }

  #setValues(): string[] {
    const open = this.#next();
    if (open.tok !== '(') throw new SelectorError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.#peek();
    if (tok === ')') {
      this.#next();
      return [''];
    }
    if (tok !== 'identifier' && tok !== ',')
      throw new SelectorError(`found '${lit}', expected: ',', ')' or identifier`);
    const values = this.#identifiers();
    if (this.#next().tok !== ')') throw new SelectorError(`found '${lit}', expected: ')'`);
    return sortedSet(values);
  }

  #identifiers(): Set<string> {
    const s = new Set<string>();
    for (;;) {
      const { tok, lit } = this.#next();
      if (tok === 'identifier') {
        s.add(lit);
        const ahead = this.#peek();
        if (ahead.tok === ',') continue;
        if (ahead.tok === ')') return s;
        throw new SelectorError(`found '${ahead.lit}', expected: ',' or ')'`);
      }
      if (tok !== ',') throw new SelectorError(`found '${lit}', expected: ',', or identifier`);
      if (s.size === 0) s.add('');
      const ahead = this.#peek().tok;
      if (ahead === ')') {
        s.add('');
        return s;
      }
      if (ahead === ',') s.add('');
    }
  }

  #exactValue(): string[] {
    const ahead = this.#peek().tok;
    if (ahead === 'end' || ahead === ',') return [''];
    const { tok, lit } = this.#next();
    if (tok === 'identifier') return [lit];
    throw new SelectorError(`found '${lit}', expected: identifier`);
  }
}

/**
 * The message of kube-apiserver's 400 for `labelSelector=<text>` (what `labels.Parse` returns),
 * or `undefined` when apimachinery accepts the text.
 */
export function labelSelectorError(text: string): string | undefined {
  try {
    new Parser(text).parse();
    return undefined;
  } catch (err) {
    if (err instanceof SelectorError) return err.message;
    throw err;
  }
}
