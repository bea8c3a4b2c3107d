import { rec, type JsonObject } from '../api/json.js';

/**
 * Selectors to fields: the pieces each kind's strategy builds its field set from (`GetAttrs` /
 * `ToSelectableFields` in `pkg/registry/<group>/<kind>/strategy.go`; the kinds' own sets are in
 * their strategies), the generic set, a custom resource's `selectableFields`, and the syntax errors
 * of `fields.ParseSelector`.
 */

/** The field-selector labels of one kind. */
export interface FieldSet {
  /** `undefined` when `field` is supported, else the real server's 400 message. */
  unsupported(field: string): string | undefined;
  /** The selectable fields of `obj` (missing ones read as `''` by the selector). */
  fields(obj: JsonObject): Record<string, string>;
}

export function str(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return '';
}

export function bool(value: unknown): string {
  return value === true ? 'true' : 'false';
}

export function metaFields(obj: JsonObject, out: Record<string, string>): Record<string, string> {
  const meta = rec(obj.metadata);
  out['metadata.name'] = str(meta.name);
  out['metadata.namespace'] = str(meta.namespace);
  return out;
}

export const NOT_SUPPORTED = (field: string): string => `field label not supported: ${field}`;
export const NOT_KNOWN = (field: string): string =>
  `${JSON.stringify(field)} is not a known field selector: only "metadata.name", "metadata.namespace"`;

export function fieldSet(
  supported: readonly string[],
  message: (field: string) => string,
  fields: (obj: JsonObject) => Record<string, string>,
): FieldSet {
  const set = new Set(supported);
  return { unsupported: (field) => (set.has(field) ? undefined : message(field)), fields };
}

function readPath(obj: JsonObject, path: readonly string[]): string {
  let value: unknown = obj;
  for (const segment of path) value = rec(value)[segment];
  return str(value);
}

/**
 * `metadata.name`, `metadata.namespace` and the given field paths (a CRD version's
 * `selectableFields`, `apiextensions-apiserver/pkg/registry/customresource/strategy.go`
 * `selectableFields`), any other label refused as the generic set refuses it.
 */
export function selectableFieldSet(selectableFields: readonly string[]): FieldSet {
  const paths = selectableFields.map((f) => ({
    field: f.replace(/^\./, ''),
    path: f.replace(/^\./, '').split('.'),
  }));
  return fieldSet(['metadata.name', 'metadata.namespace', ...paths.map((p) => p.field)], NOT_KNOWN, (obj) => {
    const out = metaFields(obj, {});
    for (const p of paths) out[p.field] = readPath(obj, p.path);
    return out;
  });
}

/** `metadata.name` and `metadata.namespace` (`generic.ObjectMetaFieldsSet`): a kind without its own set. */
export const DEFAULT_FIELD_SET = selectableFieldSet([]);

/**
 * apimachinery `fields.ParseSelector`'s syntax errors, word for word (`invalid selector: '…'; can't
 * understand '…'`, `invalid field selector: invalid escape sequence: …`, `invalid field selector:
 * unescaped character in value: 61`). `undefined` when the text parses.
 */
export function fieldSelectorSyntaxError(selector: string): string | undefined {
  if (selector === '') return undefined;
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  terms.sort();
  for (const term of terms) {
    if (term === '') continue;
    const rhs = splitTermRhs(term);
    if (rhs === undefined) return `invalid selector: '${selector}'; can't understand '${term}'`;
    const escapeError = unescapeError(rhs);
    if (escapeError !== undefined) return escapeError;
  }
  return undefined;
}

function splitTermRhs(term: string): string | undefined {
  for (let i = 0; i < term.length; i++) {
    if (term.startsWith('!=', i) || term.startsWith('==', i)) return term.slice(i + 2);
    if (term[i] === '=') return term.slice(i + 1);
  }
  return undefined;
}

function unescapeError(value: string): string | undefined {
  let inSlash = false;
  for (const c of value) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=')
        return `invalid field selector: invalid escape sequence: \\${c}`;
      inSlash = false;
    } else if (c === '\\') inSlash = true;
    else if (c === ',' || c === '=')
      return `invalid field selector: unescaped character in value: ${c.codePointAt(0)}`;
  }
  return inSlash ? 'invalid field selector: invalid escape sequence: \\' : undefined;
}
