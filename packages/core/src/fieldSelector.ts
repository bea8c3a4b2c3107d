import { ErrorCodes, KinformerError } from './errors.js';
import { assertSelectorText } from './selectorText.js';

/** Field selector operators (`==` is normalised to `=`). */
export type FieldSelectorOperator = '=' | '!=';

/** One requirement of a field selector. */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: FieldSelectorOperator;
  readonly value: string;
}

/** A parsed field selector. */
export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  /** True when every requirement holds for `fields` (a missing field counts as `''`). */
  matches(fields: Readonly<Record<string, string>>): boolean;
  isEmpty(): boolean;
  /** The canonical text form (values escaped), which parses back to an equal selector. */
  toString(): string;
}

/**
 * Parses a field selector as apimachinery's `fields.ParseSelector` does:
 *
 * - terms separated by unescaped `,`, all of which must hold; empty terms are ignored, so `''` (or
 *   `','`) is the selector that matches everything;
 * - each term is `field=value`, `field==value` or `field!=value`, split at the first `!=`, `==` or
 *   `=`; there are no set operators and no existence checks;
 * - in a value, `\\`, `\,` and `\=` stand for `\`, `,` and `=`; any other escape, a trailing `\`
 *   or an unescaped `=` is an error. The field name is taken literally (no unescaping, no trimming).
 *
 * Matching compares strings exactly; a field missing from the map counts as `''`. Requirements are
 * sorted by their canonical text, so `toString()` (values re-escaped, `==` written `=`) is
 * canonical and `parseFieldSelector(s.toString())` equals `s`. The selector is parsed once;
 * `matches` allocates nothing.
 *
 * @throws KinformerError `ERR_INVALID_SELECTOR` naming the offending text and its 0-based position,
 *   with `details: { selector, position }`.
 */
export function parseFieldSelector(text: string): FieldSelector {
  assertSelectorText(text, 'field');
  const terms: Array<{ requirement: FieldRequirement; text: string }> = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i <= text.length; i++) {
    // Split at unescaped commas (apimachinery `splitTerms`): a backslash protects the next character.
    if (i < text.length) {
      const ch = text[i];
      if (escaped) {
        escaped = false;
        continue;
      }
      if (ch === '\\') {
        escaped = true;
        continue;
      }
      if (ch !== ',') continue;
    }
    if (i > start) {
      const requirement = parseTerm(text, start, i);
      terms.push({ requirement, text: termString(requirement) });
    }
    start = i + 1;
  }
  terms.sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
  return new FieldSelectorImpl(
    terms.map((t) => t.requirement),
    terms.map((t) => t.text).join(','),
  );
}

/** Parses `text[start, end)`, a non-empty term, splitting at the first `!=`, `==` or `=`. */
function parseTerm(text: string, start: number, end: number): FieldRequirement {
  for (let i = start; i < end; i++) {
    const ch = text[i];
    let operator: FieldSelectorOperator;
    let length: number;
    if (ch === '!' && text[i + 1] === '=' && i + 1 < end) {
      operator = '!=';
      length = 2;
    } else if (ch === '=') {
      operator = '=';
      length = text[i + 1] === '=' && i + 1 < end ? 2 : 1;
    } else {
      continue;
    }
    const field = text.slice(start, i);
    const value = unescapeValue(text, i + length, end);
    return Object.freeze({ field, operator, value });
  }
  throw selectorError(
    text,
    start,
    `can't understand ${JSON.stringify(text.slice(start, end))}; expected field=value, field==value or field!=value`,
  );
}

/** Unescapes `text[start, end)` (`\\`, `\,`, `\=`). */
function unescapeValue(text: string, start: number, end: number): string {
  let out = '';
  let copied = start;
  for (let i = start; i < end; i++) {
    const ch = text[i];
    if (ch === '\\') {
      const next = text[i + 1];
      if (i + 1 >= end)
        throw selectorError(text, i, "invalid escape sequence: a value can't end with a single '\\'");
      if (next !== '\\' && next !== ',' && next !== '=') {
        throw selectorError(
          text,
          i,
          `invalid escape sequence ${JSON.stringify(`\\${next}`)}; only \\\\, \\, and \\= are allowed`,
        );
      }
      out += text.slice(copied, i) + next;
      copied = i + 2;
      i++;
    } else if (ch === '=' || ch === ',') {
      throw selectorError(text, i, `unescaped '${ch}' in a value; write it as '\\${ch}'`);
    }
  }
  return copied === start ? text.slice(start, end) : out + text.slice(copied, end);
}

/** Escapes `\`, `,` and `=` in a value (apimachinery `fields.EscapeValue`). */
function escapeValue(value: string): string {
  return /[\\,=]/.test(value) ? value.replace(/[\\,=]/g, (c) => `\\${c}`) : value;
}

function termString(r: FieldRequirement): string {
  return `${r.field}${r.operator}${escapeValue(r.value)}`;
}

function selectorError(text: string, position: number, problem: string): KinformerError {
  return new KinformerError(
    ErrorCodes.INVALID_SELECTOR,
    `invalid field selector ${JSON.stringify(text)}: at position ${position}: ${problem}`,
    { details: { selector: text, position } },
  );
}

class FieldSelectorImpl implements FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  readonly #text: string;

  constructor(requirements: FieldRequirement[], text: string) {
    this.requirements = Object.freeze(requirements);
    this.#text = text;
  }

  matches(fields: Readonly<Record<string, string>>): boolean {
    const requirements = this.requirements;
    for (let i = 0; i < requirements.length; i++) {
      const r = requirements[i]!;
      // `typeof` keeps inherited members (`constructor`…) from counting as fields.
      const raw: unknown = fields === undefined || fields === null ? undefined : fields[r.field];
      const equal = (typeof raw === 'string' ? raw : '') === r.value;
      if (equal !== (r.operator === '=')) return false;
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
