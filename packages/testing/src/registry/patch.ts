import { isMap } from '../api/json.js';
/** Merge patch (RFC 7386) and JSON patch (RFC 6902); strategic merge patch is in `strategicMergePatch.ts`. */

/** The patch formats the fake accepts (by `Content-Type` over HTTP). */
export type PatchType = 'merge' | 'json' | 'strategic';

/** `Content-Type` of each {@link PatchType}. */
export const PATCH_CONTENT_TYPES: Readonly<Record<PatchType, string>> = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

/** The patch type of a request `Content-Type`, or undefined for anything else (apply patches included). */
export function patchTypeOf(contentType: string | undefined): PatchType | undefined {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  for (const [type, value] of Object.entries(PATCH_CONTENT_TYPES))
    if (value === media) return type as PatchType;
  return undefined;
}

/** A patch that cannot be applied: `status` 400 for a malformed document, 422 for a failing operation. */
export class PatchError extends Error {
  readonly httpStatus: 400 | 422;
  constructor(httpStatus: 400 | 422, message: string) {
    super(message);
    this.httpStatus = httpStatus;
  }
}

/**
 * RFC 7386 merge patch: objects merge recursively, `null` deletes a key, anything else (arrays
 * included) replaces. Returns a new value; `target` is not modified.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isMap(patch)) return patch;
  const result: Record<string, unknown> = isMap(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else if (key === '__proto__') {
      // Data, not the prototype: define an own key.
      const own = Object.hasOwn(result, key) ? result[key] : undefined;
      Object.defineProperty(result, key, {
        value: applyMergePatch(own, value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PatchError(422, `invalid JSON pointer ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function arrayIndex(arr: unknown[], token: string, forInsert: boolean): number {
  if (forInsert && token === '-') return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token))
    throw new PatchError(422, `invalid array index ${JSON.stringify(token)}`);
  const index = Number(token);
  if (index > arr.length || (!forInsert && index === arr.length)) {
    throw new PatchError(422, `array index ${index} out of bounds`);
  }
  return index;
}

/** The container and last token of `path` in `doc` (which must exist). */
function locate(doc: unknown, tokens: string[], path: string): { parent: unknown; token: string } {
  let node = doc;
  for (let i = 0; i < tokens.length - 1; i++) {
    const t = tokens[i]!;
    if (Array.isArray(node)) node = node[arrayIndex(node, t, false)];
    else if (isMap(node) && t in node) node = node[t];
    else throw new PatchError(422, `doc is missing path: ${JSON.stringify(path)}`);
  }
  return { parent: node, token: tokens[tokens.length - 1]! };
}

function getAt(doc: unknown, path: string): unknown {
  let node = doc;
  for (const t of parsePointer(path)) {
    if (Array.isArray(node)) node = node[arrayIndex(node, t, false)];
    else if (isMap(node) && t in node) node = node[t];
    else throw new PatchError(422, `doc is missing path: ${JSON.stringify(path)}`);
  }
  return node;
}

function removeAt(doc: unknown, path: string): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) throw new PatchError(422, 'cannot remove the whole document');
  const { parent, token } = locate(doc, tokens, path);
  if (Array.isArray(parent)) return parent.splice(arrayIndex(parent, token, false), 1)[0];
  if (isMap(parent) && token in parent) {
    const old = parent[token];
    delete parent[token];
    return old;
  }
  throw new PatchError(422, `unable to remove nonexistent key: ${token}: missing value`);
}

function addAt(doc: unknown, path: string, value: unknown, replace: boolean): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return value;
  const { parent, token } = locate(doc, tokens, path);
  if (Array.isArray(parent)) {
    const index = arrayIndex(parent, token, !replace);
    if (replace) parent[index] = value;
    else parent.splice(index, 0, value);
  } else if (isMap(parent)) {
    if (replace && !(token in parent)) {
      throw new PatchError(
        422,
        `replace operation does not apply: doc is missing key: ${path}: missing value`,
      );
    }
    parent[token] = value;
  } else {
    throw new PatchError(422, `doc is missing path: ${JSON.stringify(path)}`);
  }
  return doc;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isMap(a) && isMap(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/**
 * RFC 6902 JSON patch (`add`, `remove`, `replace`, `move`, `copy`, `test`). `doc` must be a private
 * copy: it is modified in place; the result (possibly a new root) is returned.
 * @throws PatchError 400 when `patch` is not an array of operations, 422 when an operation fails.
 */
export function applyJsonPatch(doc: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch))
    throw new PatchError(400, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let root = doc;
  for (const raw of patch) {
    if (!isMap(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw new PatchError(400, `invalid JSON patch operation ${JSON.stringify(raw)}`);
    }
    const op = raw as unknown as Operation;
    switch (op.op) {
      case 'add':
        root = addAt(root, op.path, clone(op.value), false);
        break;
      case 'replace':
        root = addAt(root, op.path, clone(op.value), true);
        break;
      case 'remove':
        removeAt(root, op.path);
        break;
      case 'move': {
        if (op.from === undefined) throw new PatchError(400, 'move operation needs "from"');
        const value = removeAt(root, op.from);
        root = addAt(root, op.path, value, false);
        break;
      }
      case 'copy': {
        if (op.from === undefined) throw new PatchError(400, 'copy operation needs "from"');
        root = addAt(root, op.path, clone(getAt(root, op.from)), false);
        break;
      }
      case 'test': {
        const actual = getAt(root, op.path);
        if (!deepEqual(actual, op.value)) {
          throw new PatchError(422, `testing value ${op.path} failed: test failed`);
        }
        break;
      }
      default:
        throw new PatchError(400, `Unexpected kind: ${op.op}`);
    }
  }
  return root;
}
