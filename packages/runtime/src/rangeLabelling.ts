import type { KubeObject, OwnerReference } from '@kinformer/core';
import { HASH_RANGE_LABEL } from './hashSharding.js';
import type { ObjectWriter, PatchOptions } from './runtimeClient.js';

/**
 * `writer` with `stamp` (the Manager's `HashSharding.stamp`) applied to what it creates, updates, applies and patches:
 * owned objects carry their owner's range label whoever builds them.
 *
 * A patch is stamped when it sets a controller reference to an owner of a sharded primary kind:
 * - a merge or strategic merge patch whose `metadata.ownerReferences` holds that reference gets
 *   `metadata.labels[HASH_RANGE_LABEL]` added (both kinds merge labels key by key: the object's
 *   other labels stay), unless it deletes every label (`labels: null`: sent as it is);
 * - a JSON patch whose `add`/`replace` writes that reference (at `/metadata/ownerReferences`, `…/-`,
 *   `…/<index>`, or within a `/metadata` it writes) gets one more operation, an `add` of
 *   `/metadata/labels/kinformer.dev~1hash-range`, **only when its own operations make sure the
 *   labels map exists** (an `add`/`replace` of a map at `/metadata/labels`, or any operation on a
 *   label). Otherwise it is sent unchanged and the object stays unlabelled (read by the catch-all
 *   informer, so every replica caches it). No operation sequence is right without knowing the
 *   object: kube-apiserver applies a JSON patch in order and atomically, with no conditional
 *   operation (`applyJSPatch` in `k8s.io/apiserver/pkg/endpoints/handlers/patch.go`, through
 *   `gopkg.in/evanphx/json-patch.v4` `Patch.Apply`; a failing operation fails the request with 422);
 *   an `add` of a label fails when the object has no labels map (an empty map of a built-in kind is
 *   not even serialized), and an `add` of `/metadata/labels` replaces the map, dropping the other
 *   labels. Put the labels map in the patch yourself (or use a merge patch).
 *
 * Server-side apply goes through `apply` (stamped like `create`). A patch that sets no controller
 * reference is sent as it is (the object keeps the label it has); status writes are never stamped
 * (the status subresource ignores labels).
 */
export function rangeLabellingWriter(
  writer: ObjectWriter,
  stamp: <T extends KubeObject>(obj: T) => T,
): ObjectWriter {
  return {
    get: (gvr, key, options) => writer.get(gvr, key, options),
    create: (gvr, obj, options) => writer.create(gvr, stamp(obj), options),
    update: (gvr, obj, options) => writer.update(gvr, stamp(obj), options),
    updateStatus: (gvr, obj, options) => writer.updateStatus(gvr, obj, options),
    patch: (gvr, key, patch, options) =>
      writer.patch(gvr, key, stampPatch(patch, options?.type ?? 'merge', stamp), options),
    patchStatus: (gvr, key, patch, options) => writer.patchStatus(gvr, key, patch, options),
    apply: (gvr, obj, options) => writer.apply(gvr, stamp(obj), options),
    delete: (gvr, key, options) => writer.delete(gvr, key, options),
  };
}

type Stamp = <T extends KubeObject>(obj: T) => T;
type Json = Record<string, unknown>;

const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const LABELS = '/metadata/labels';
const OWNERS = '/metadata/ownerReferences';
const RANGE_LABEL_PATH = `${LABELS}/${HASH_RANGE_LABEL.replaceAll('~', '~0').replaceAll('/', '~1')}`;

/** The controller reference among `refs` when it is well formed (not a strategic-merge directive). */
function controllerRefIn(refs: unknown): OwnerReference | undefined {
  const ref: unknown = Array.isArray(refs)
    ? refs.find((r) => isMap(r) && r['controller'] === true)
    : undefined;
  return isMap(ref) &&
    typeof ref['uid'] === 'string' &&
    typeof ref['kind'] === 'string' &&
    typeof ref['apiVersion'] === 'string' &&
    !('$patch' in ref)
    ? (ref as unknown as OwnerReference)
    : undefined;
}

/** {@link rangeLabellingWriter}'s rule for a patch of `type`. */
function stampPatch(patch: unknown, type: NonNullable<PatchOptions['type']>, stamp: Stamp): unknown {
  if (type === 'json') return Array.isArray(patch) ? stampJsonPatch(patch, stamp) : patch;
  const meta = isMap(patch) ? patch['metadata'] : undefined;
  if (!isMap(meta) || controllerRefIn(meta['ownerReferences']) === undefined) return patch;
  const labels = meta['labels'];
  // `labels: null` deletes every label: adding one would turn it into a merge that keeps them.
  if (labels !== undefined && !isMap(labels)) return patch;
  return stamp(patch as KubeObject);
}

/** What an `add`/`replace` writes at `target` (its path is `target` or above it); `undefined`: nothing. */
function written(op: Json, target: string): { value: unknown } | undefined {
  const path = op['path'] as string;
  if ((op['op'] !== 'add' && op['op'] !== 'replace') || (path !== target && !target.startsWith(`${path}/`)))
    return undefined;
  let value = op['value'];
  for (const token of target.slice(path.length).split('/').slice(1))
    value = isMap(value) ? value[token] : undefined;
  return { value };
}

/** Whether the labels map surely exists after `op` (when it applies), given `before`. */
function labelsAfter(op: Json, before: boolean): boolean {
  const path = op['path'] as string;
  const from = typeof op['from'] === 'string' ? op['from'] : undefined;
  // Every operation on a label needs the map and none removes it.
  if (path.startsWith(`${LABELS}/`) || from?.startsWith(`${LABELS}/`) === true) return true;
  if (op['op'] === 'test') return before || (path === LABELS && isMap(op['value']));
  const w = written(op, LABELS);
  if (w !== undefined) return isMap(w.value);
  if (op['op'] === 'copy' && from === LABELS) return true;
  // A remove, move or copy at or above the map may leave it missing.
  const above = (p: string): boolean => p === LABELS || LABELS.startsWith(`${p}/`);
  return !(above(path) || (op['op'] === 'move' && from !== undefined && above(from))) && before;
}

function stampJsonPatch(ops: unknown[], stamp: Stamp): unknown[] {
  let ref: OwnerReference | undefined;
  let labelled = false;
  for (const op of ops) {
    if (!isMap(op) || typeof op['path'] !== 'string') return ops;
    const all = written(op, OWNERS);
    if (all !== undefined) ref = controllerRefIn(all.value);
    else if (op['op'] === 'remove' && (op['path'] === OWNERS || OWNERS.startsWith(`${op['path']}/`)))
      ref = undefined;
    else if (/^\/metadata\/ownerReferences\/(-|0|[1-9][0-9]*)$/.test(op['path']))
      ref = controllerRefIn([written(op, op['path'])?.value]) ?? ref;
    labelled = labelsAfter(op, labelled);
  }
  if (ref === undefined || !labelled) return ops;
  const value = stamp<KubeObject>({ metadata: { ownerReferences: [ref] } }).metadata?.labels?.[
    HASH_RANGE_LABEL
  ];
  if (value === undefined) return ops;
  const last = ops.at(-1);
  if (isMap(last) && last['op'] === 'add' && last['path'] === RANGE_LABEL_PATH && last['value'] === value)
    return ops;
  return [...ops, { op: 'add', path: RANGE_LABEL_PATH, value }];
}
