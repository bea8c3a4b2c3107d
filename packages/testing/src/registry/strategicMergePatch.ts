import { isMap, type JsonObject } from '../api/json.js';
import { PatchError } from './patch.js';

/**
 * Strategic merge patch (`application/strategic-merge-patch+json`) for the built-in types, as
 * apimachinery's `pkg/util/strategicpatch` applies it with the `patchStrategy`/`patchMergeKey`
 * struct tags of `k8s.io/api`: maps merge recursively and `null` deletes a key, as in a JSON merge
 * patch; a list tagged `merge` with a merge key merges element by element (`containers` by `name`,
 * `ports` by `containerPort`, `conditions` by `type`, …), a list tagged `merge` without one (such as
 * `finalizers`) is a set union, and every other list is replaced. Directives: `$patch: replace` /
 * `$patch: delete` on a map, `{"$patch": "replace"}` in a list (replace the whole list),
 * `{"<key>": …, "$patch": "delete"}` in a list (remove that element),
 * `$deleteFromPrimitiveList/<field>`, `$retainKeys` (keep only the listed fields) and
 * `$setElementOrder/<field>` (accepted; the order is the original's, new elements last).
 */

/** The patch metadata of one field: a map's fields, or a list's merge rule and element schema. */
export interface PatchSchema {
  readonly fields?: Readonly<Record<string, PatchSchema>>;
  /** For lists tagged `patchStrategy:"merge"`: the `patchMergeKey` (undefined: a set of primitives). */
  readonly merge?: { readonly key: string | undefined };
  /** Server-side apply only: every key of a list merged by several keys (`x-kubernetes-list-map-keys`). */
  readonly keys?: readonly string[];
  readonly items?: PatchSchema;
}

const keyed = (key: string, items?: PatchSchema): PatchSchema =>
  items === undefined ? { merge: { key } } : { merge: { key }, items };
const PRIMITIVE_SET: PatchSchema = { merge: { key: undefined } };
const CONDITIONS = keyed('type');

const CONTAINER: PatchSchema = {
  fields: {
    ports: keyed('containerPort'),
    env: keyed('name'),
    volumeMounts: keyed('mountPath'),
    volumeDevices: keyed('devicePath'),
  },
};
const OBJECT_META: PatchSchema = { fields: { finalizers: PRIMITIVE_SET, ownerReferences: keyed('uid') } };
const POD_SPEC: PatchSchema = {
  fields: {
    containers: keyed('name', CONTAINER),
    initContainers: keyed('name', CONTAINER),
    ephemeralContainers: keyed('name', CONTAINER),
    volumes: keyed('name'),
    imagePullSecrets: keyed('name'),
    hostAliases: keyed('ip'),
    topologySpreadConstraints: keyed('topologyKey'),
    resourceClaims: keyed('name'),
  },
};
const POD_TEMPLATE: PatchSchema = { fields: { metadata: OBJECT_META, spec: POD_SPEC } };
const WITH_TEMPLATE: PatchSchema = {
  fields: {
    metadata: OBJECT_META,
    spec: { fields: { template: POD_TEMPLATE } },
    status: { fields: { conditions: CONDITIONS } },
  },
};
const META_ONLY: PatchSchema = { fields: { metadata: OBJECT_META } };

/** The patch schemas of the built-in types, by `group/resource`; absent types merge maps only. */
const SCHEMAS: Readonly<Record<string, PatchSchema>> = {
  '/pods': {
    fields: {
      metadata: OBJECT_META,
      spec: POD_SPEC,
      status: { fields: { conditions: CONDITIONS, podIPs: keyed('ip'), hostIPs: keyed('ip') } },
    },
  },
  '/services': {
    fields: {
      metadata: OBJECT_META,
      spec: { fields: { ports: keyed('port') } },
      status: { fields: { conditions: CONDITIONS } },
    },
  },
  '/nodes': {
    fields: {
      metadata: OBJECT_META,
      spec: { fields: { podCIDRs: PRIMITIVE_SET } },
      status: { fields: { conditions: CONDITIONS, addresses: keyed('type') } },
    },
  },
  '/namespaces': { fields: { metadata: OBJECT_META, status: { fields: { conditions: CONDITIONS } } } },
  'apps/deployments': WITH_TEMPLATE,
  'apps/replicasets': WITH_TEMPLATE,
  'apps/statefulsets': WITH_TEMPLATE,
  'apps/daemonsets': WITH_TEMPLATE,
  'batch/jobs': WITH_TEMPLATE,
  'batch/cronjobs': {
    fields: {
      metadata: OBJECT_META,
      spec: {
        fields: {
          jobTemplate: { fields: { metadata: OBJECT_META, spec: { fields: { template: POD_TEMPLATE } } } },
        },
      },
    },
  },
};

/** The patch schema of a built-in type (`group`, plural `resource`). */
export function patchSchemaFor(group: string, resource: string): PatchSchema {
  return SCHEMAS[`${group}/${resource}`] ?? META_ONLY;
}

type Json = JsonObject;

function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

const DELETE_FROM = '$deleteFromPrimitiveList/';
const SET_ORDER = '$setElementOrder/';

function setOwn(target: Json, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** `mergeMap`: applies `patch` to `original` (neither is modified). Undefined means "delete this map". */
function mergeMap(original: unknown, patch: Json, schema: PatchSchema | undefined): Json | undefined {
  const directive = patch.$patch;
  if (directive === 'delete') return undefined;
  if (directive === 'replace') {
    const { $patch: _p, ...rest } = patch;
    return clone(rest);
  }
  if (directive !== undefined && directive !== 'merge')
    throw new PatchError(
      400,
      `Unknown patch type: ${JSON.stringify(directive)} in map: ${JSON.stringify(patch)}`,
    );
  const result: Json = isMap(original) ? { ...original } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys' || key.startsWith(SET_ORDER)) continue;
    if (key.startsWith(DELETE_FROM)) {
      const field = key.slice(DELETE_FROM.length);
      const current = result[field];
      if (!Array.isArray(value)) throw new PatchError(400, `invalid ${key}: expected a list`);
      if (Array.isArray(current)) result[field] = current.filter((v) => !value.some((d) => sameValue(d, v)));
      continue;
    }
    const child = schema?.fields?.[key];
    if (value === null) delete result[key];
    else if (isMap(value)) {
      const merged = mergeMap(result[key], value, child);
      if (merged === undefined) delete result[key];
      else setOwn(result, key, merged);
    } else if (Array.isArray(value) && child?.merge !== undefined) {
      const order = patch[`${SET_ORDER}${key}`];
      setOwn(result, key, mergeList(result[key], value, child, Array.isArray(order) ? order : undefined));
    } else setOwn(result, key, clone(value));
  }
  // A `$setElementOrder/<list>` without the list itself only reorders the live list.
  for (const [key, order] of Object.entries(patch)) {
    if (!key.startsWith(SET_ORDER) || !Array.isArray(order)) continue;
    const field = key.slice(SET_ORDER.length);
    const child = schema?.fields?.[field];
    if (patch[field] === undefined && child?.merge !== undefined && Array.isArray(result[field]))
      setOwn(result, field, mergeList(result[field], [], child, order));
  }
  const retain = patch.$retainKeys;
  if (retain !== undefined) {
    if (!Array.isArray(retain)) throw new PatchError(400, 'invalid $retainKeys: expected a list of strings');
    for (const key of Object.keys(result)) if (!retain.includes(key)) delete result[key];
  }
  return result;
}

/** The identity of a list item: its merge key's value, or the value itself for primitives. */
function identity(item: unknown, key: string | undefined): string {
  return JSON.stringify(key === undefined ? item : isMap(item) ? item[key] : item);
}

/**
 * `normalizeElementOrder` + `mergeSortedSlice` (apimachinery `strategicpatch/patch.go`): the items
 * named by the patch (in `patchOrder`: `$setElementOrder/<list>`, else the patch list) keep that
 * order, the server-only items keep their live order, and the two are interleaved by the live order
 * where both are live: an item that is not live goes before the server-only items, so new items
 * come first.
 */
function enforceOrder(
  merged: readonly unknown[],
  patchOrder: readonly unknown[],
  original: readonly unknown[],
  key: string | undefined,
): unknown[] {
  const patchIndex = new Map<string, number>();
  patchOrder.forEach((item, i) => {
    if (!(isMap(item) && item.$patch !== undefined && key !== undefined && !(key in item)))
      if (!patchIndex.has(identity(item, key))) patchIndex.set(identity(item, key), i);
  });
  const serverIndex = new Map<string, number>();
  original.forEach((item, i) => serverIndex.set(identity(item, key), i));
  const inPatch = merged.filter((item) => patchIndex.has(identity(item, key)));
  const serverOnly = merged.filter((item) => !patchIndex.has(identity(item, key)));
  inPatch.sort((a, b) => patchIndex.get(identity(a, key))! - patchIndex.get(identity(b, key))!);
  const at = (item: unknown): number => serverIndex.get(identity(item, key)) ?? -1;
  serverOnly.sort((a, b) => at(a) - at(b));
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < inPatch.length) {
    if (j >= inPatch.length) out.push(serverOnly[i++]);
    else if (i >= serverOnly.length) out.push(inPatch[j++]);
    else {
      const l = at(serverOnly[i]);
      const r = at(inPatch[j]);
      if (l >= 0 && r >= 0 && l < r) out.push(serverOnly[i++]);
      else out.push(inPatch[j++]);
    }
  }
  return out;
}

/** `mergeSlice` for a list tagged `merge`: by its merge key, or as a set of primitives; then ordered. */
function mergeList(
  original: unknown,
  patch: readonly unknown[],
  schema: PatchSchema,
  setElementOrder?: readonly unknown[],
): unknown[] {
  const merged = mergeListItems(original, patch, schema);
  const live = Array.isArray(original) ? (original as unknown[]) : [];
  if (patch.some((item) => isMap(item) && item.$patch === 'replace')) return merged;
  return enforceOrder(merged, setElementOrder ?? patch, live, schema.merge?.key);
}

function mergeListItems(original: unknown, patch: readonly unknown[], schema: PatchSchema): unknown[] {
  const key = schema.merge?.key;
  const replace = patch.some(
    (item) => isMap(item) && item.$patch === 'replace' && Object.keys(item).length === 1,
  );
  if (replace) return clone(patch.filter((item) => !(isMap(item) && item.$patch === 'replace')));
  const result: unknown[] = Array.isArray(original) ? [...(original as unknown[])] : [];
  if (key === undefined) {
    for (const item of patch) if (!result.some((v) => sameValue(v, item))) result.push(clone(item));
    return result;
  }
  for (const item of patch) {
    if (!isMap(item))
      throw new PatchError(
        400,
        `an element of a list merged by ${key} is not an object: ${JSON.stringify(item)}`,
      );
    if (!(key in item))
      throw new PatchError(400, `map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`);
    const index = result.findIndex((v) => isMap(v) && sameValue(v[key], item[key]));
    if (item.$patch === 'delete') {
      if (index !== -1) result.splice(index, 1);
      continue;
    }
    const merged = mergeMap(index === -1 ? undefined : result[index], item, schema.items);
    if (merged === undefined) {
      if (index !== -1) result.splice(index, 1);
    } else if (index === -1) result.push(merged);
    else result[index] = merged;
  }
  return result;
}

/**
 * Applies a strategic merge patch to `target` with `schema`. Returns a new value; `target` is not
 * modified. @throws PatchError 400 for a malformed patch (a non-object, a list element without its
 * merge key, an unknown `$patch`).
 */
export function applyStrategicMergePatch(target: unknown, patch: unknown, schema: PatchSchema): unknown {
  if (!isMap(patch))
    throw new PatchError(
      400,
      'json: cannot unmarshal non-object into Go value of type map[string]interface {}',
    );
  return mergeMap(target, patch, schema) ?? {};
}
