import { isMap, type JsonObject } from '../api/json.js';
import type { PatchSchema } from './strategicMergePatch.js';

/**
 * Field paths and field sets as structured-merge-diff models them (`fieldpath/path.go`,
 * `fieldpath/element.go`, `typed/tofieldset.go`), over plain JSON and the list rules of the
 * strategic-merge-patch table (`strategicMergePatch.ts`): a list with a merge key is associative
 * (`k:{"name":"c"}`), one merged without a key is a set (`v:"x"`), every other list is atomic.
 *
 * A path is stored as its fieldsV1 element strings (`f:spec`, `k:{"name":"c"}`, `v:"x"`, `i:0`)
 * joined by NUL, so a set is a `Map` from path keys to the JSON of the value at that path (or
 * {@link NODE} for an associative-list element, which is a member with children).
 */

/** The value recorded for a member that is not a leaf (an element of an associative list). */
export const NODE = '\u0001';
const SEP = '\u0000';

/** A field set: path key → JSON of the leaf value (or {@link NODE}). */
export type FieldSet = Map<string, string>;

/** JSON with object keys sorted (the `k:` element form). */
function sortedJson(value: JsonObject): string {
  const out: JsonObject = {};
  for (const key of Object.keys(value).sort()) out[key] = value[key];
  return JSON.stringify(out);
}

/** The keys a list element is identified by, or undefined when the list is not associative. */
export function listKeys(schema: PatchSchema | undefined): readonly string[] | undefined {
  const key = schema?.merge?.key;
  if (key === undefined) return undefined;
  return schema?.keys ?? [key];
}

/** The `k:` element of `item` in a list keyed by `keys`, or undefined when a key is missing. */
export function keyElement(item: unknown, keys: readonly string[]): string | undefined {
  if (!isMap(item)) return undefined;
  const key: JsonObject = {};
  for (const k of keys) {
    if (item[k] === undefined || item[k] === null) return undefined;
    key[k] = item[k];
  }
  return `k:${sortedJson(key)}`;
}

/** The list rule of `list` under `schema`: associative with keys, a set, or atomic. */
export function listKind(
  list: readonly unknown[],
  schema: PatchSchema | undefined,
): { kind: 'map'; keys: readonly string[] } | { kind: 'set' } | { kind: 'atomic' } {
  if (schema?.merge === undefined) return { kind: 'atomic' };
  const keys = listKeys(schema);
  if (keys === undefined)
    return list.every((v) => !isMap(v) && !Array.isArray(v)) ? { kind: 'set' } : { kind: 'atomic' };
  return list.every((item) => keyElement(item, keys) !== undefined)
    ? { kind: 'map', keys }
    : { kind: 'atomic' };
}

/**
 * `ToFieldSet`: the members of `value` (an object) with their values. Leaves are scalars, atomic
 * lists, nulls and empty maps (`visitMapItems` inserts those); elements of associative lists are
 * members too; set elements are leaves.
 */
export function toFieldSet(value: JsonObject, schema: PatchSchema | undefined): FieldSet {
  const set: FieldSet = new Map();
  walkMap(value, schema, '', set);
  return set;
}

function join(prefix: string, element: string): string {
  return prefix === '' ? element : `${prefix}${SEP}${element}`;
}

function walkMap(value: JsonObject, schema: PatchSchema | undefined, prefix: string, set: FieldSet): void {
  for (const [key, child] of Object.entries(value)) {
    const path = join(prefix, `f:${key}`);
    const childSchema = schema?.fields?.[key];
    walkValue(child, childSchema, path, set);
  }
}

function walkValue(value: unknown, schema: PatchSchema | undefined, path: string, set: FieldSet): void {
  if (isMap(value)) {
    if (Object.keys(value).length === 0) set.set(path, '{}');
    else walkMap(value, schema, path, set);
    return;
  }
  if (Array.isArray(value)) {
    const kind = listKind(value, schema);
    if (kind.kind === 'atomic') set.set(path, JSON.stringify(value));
    else if (kind.kind === 'set')
      for (const item of value) set.set(join(path, `v:${JSON.stringify(item)}`), 'true');
    else
      for (const item of value) {
        const itemPath = join(path, keyElement(item, kind.keys)!);
        set.set(itemPath, NODE);
        walkMap(item as JsonObject, schema?.items, itemPath, set);
      }
    return;
  }
  set.set(path, JSON.stringify(value ?? null));
}

/** The elements of a path key. */
export function elementsOf(path: string): string[] {
  return path.split(SEP);
}

/** True when `path` is `prefix` or lies under it. */
export function isUnder(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(prefix + SEP);
}

/** The path key of a list of field names (`['metadata', 'labels']`). */
export function fieldPath(names: readonly string[]): string {
  return names.map((n) => `f:${n}`).join(SEP);
}

/** `fieldpath.Path.String()`: `.spec.containers[name="c"].image`, `[="x"]`, `[0]`. */
export function pathString(path: string): string {
  return elementsOf(path)
    .map((element) => {
      const body = element.slice(2);
      switch (element[0]) {
        case 'f':
          return `.${body}`;
        case 'k': {
          const key = JSON.parse(body) as JsonObject;
          return `[${Object.entries(key)
            .map(([k, v]) => `${k}=${typeof v === 'string' ? JSON.stringify(v) : String(v)}`)
            .join(',')}]`;
        }
        case 'v':
          return `[=${body}]`;
        default:
          return `[${body}]`;
      }
    })
    .join('');
}

interface Node {
  member: boolean;
  children: Map<string, Node>;
}

const KIND_ORDER: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

function compareElements(a: string, b: string): number {
  const kind = (KIND_ORDER[a[0]!] ?? 4) - (KIND_ORDER[b[0]!] ?? 4);
  if (kind !== 0) return kind;
  if (a[0] === 'i') return Number(a.slice(2)) - Number(b.slice(2));
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The `fieldsV1` JSON of a set of paths (`fieldpath/serialize.go`): `.` marks a member with children. */
export function toFieldsV1(paths: Iterable<string>): JsonObject {
  const root: Node = { member: false, children: new Map() };
  for (const path of paths) {
    let node = root;
    for (const element of elementsOf(path)) {
      let child = node.children.get(element);
      if (!child) {
        child = { member: false, children: new Map() };
        node.children.set(element, child);
      }
      node = child;
    }
    node.member = true;
  }
  const encode = (node: Node): JsonObject => {
    const out: JsonObject = {};
    if (node.member && node.children.size > 0) out['.'] = {};
    for (const element of [...node.children.keys()].sort(compareElements))
      out[element] = encode(node.children.get(element)!);
    return out;
  };
  return encode(root);
}

/** The paths of a `fieldsV1` object. */
export function fromFieldsV1(fields: unknown): Set<string> {
  const set = new Set<string>();
  const walk = (node: unknown, prefix: string): void => {
    if (!isMap(node)) return;
    for (const [element, child] of Object.entries(node)) {
      if (element === '.') {
        if (prefix !== '') set.add(prefix);
        continue;
      }
      const path = join(prefix, element);
      if (isMap(child) && Object.keys(child).length === 0) set.add(path);
      else walk(child, path);
    }
  };
  walk(fields, '');
  return set;
}

/** What changed between two field sets (`typed.Comparison`): leaves modified, paths added and removed. */
export interface Comparison {
  modified: Set<string>;
  added: Set<string>;
  removed: Set<string>;
}

/** Compares the field sets of the live and the new object. */
export function compareSets(before: FieldSet, after: FieldSet): Comparison {
  const modified = new Set<string>();
  const added = new Set<string>();
  const removed = new Set<string>();
  for (const [path, value] of after) {
    const old = before.get(path);
    if (old === undefined) added.add(path);
    else if (old !== value && value !== NODE) modified.add(path);
  }
  for (const path of before.keys()) if (!after.has(path)) removed.add(path);
  return { modified, added, removed };
}

/**
 * Removes the value at `path` from `root` (a private copy, changed in place), and the maps it
 * leaves empty on the way up. Returns false when nothing is there.
 */
export function removePath(root: JsonObject, path: string, schema: PatchSchema | undefined): boolean {
  const elements = elementsOf(path);
  const chain: Array<{ container: JsonObject | unknown[]; index: string | number }> = [];
  let node: unknown = root;
  let nodeSchema = schema;
  for (const element of elements) {
    const body = element.slice(2);
    if (element[0] === 'f') {
      if (!isMap(node) || !(body in node)) return false;
      chain.push({ container: node, index: body });
      node = node[body];
      nodeSchema = nodeSchema?.fields?.[body];
    } else if (Array.isArray(node)) {
      let index = -1;
      if (element[0] === 'k') {
        const keys = listKeys(nodeSchema) ?? [];
        index = node.findIndex((item) => keyElement(item, keys) === element);
        nodeSchema = nodeSchema?.items;
      } else if (element[0] === 'v') index = node.findIndex((item) => JSON.stringify(item) === body);
      else index = Number(body);
      if (index < 0 || index >= node.length) return false;
      chain.push({ container: node, index });
      node = node[index];
    } else return false;
  }
  for (let i = chain.length - 1; i >= 0; i--) {
    const { container, index } = chain[i]!;
    if (Array.isArray(container)) container.splice(index as number, 1);
    else delete container[index as string];
    // Stop unless this removal left a map empty (then that map goes too, as if never set).
    const emptied = Array.isArray(container) ? false : Object.keys(container).length === 0;
    if (!emptied || i === 0) break;
  }
  return true;
}
