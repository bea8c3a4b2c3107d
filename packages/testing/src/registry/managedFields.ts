import type { KinformerError } from '@kinformer/core';
import {
  compareSets,
  fieldPath,
  fromFieldsV1,
  isUnder,
  pathString,
  toFieldSet,
  toFieldsV1,
  type Comparison,
  type FieldSet,
} from './fieldPaths.js';
import type { JsonObject } from '../api/json.js';
import type { ResourceType } from './resourceRegistry.js';
import { makeStatus, statusError } from '../api/statusErrors.js';
import { patchSchemaFor, type PatchSchema } from './strategicMergePatch.js';
import { rfc3339 } from '../storage/storedForm.js';
import { resetPaths } from './writeStrategy.js';

/**
 * `metadata.managedFields`, as apimachinery's field manager keeps them
 * (`pkg/util/managedfields/internal`: `managedfields.go` encodes and sorts the entries,
 * `buildmanagerinfo.go` names a manager by name, operation, apiVersion (Update only) and
 * subresource, `stripmeta.go` leaves out the system fields, `skipnonapplied.go` does not start
 * tracking on an update of an object that has no managed fields, `managedfieldsupdater.go` stamps
 * the time) and structured-merge-diff's `merge/update.go` moves ownership (`Updater.update`).
 */

/** One manager: who, how (Apply/Update), at which version and subresource, and the fields it owns. */
export interface Manager {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource: string;
  time: string | undefined;
  fields: Set<string>;
}

/** Managers by identifier (see {@link managerId}). */
export type Managers = Map<string, Manager>;

/** `BuildManagerIdentifier`: the JSON of the entry without fields, time, and (for Apply) apiVersion. */
export function managerId(m: Pick<Manager, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  const id: JsonObject = { manager: m.manager, operation: m.operation };
  if (m.operation === 'Update') id.apiVersion = m.apiVersion;
  if (m.subresource !== '') id.subresource = m.subresource;
  return JSON.stringify(id);
}

/** Decodes `metadata.managedFields` (entries that do not decode are dropped). */
export function decodeManagers(raw: unknown): Managers {
  const out: Managers = new Map();
  if (!Array.isArray(raw)) return out;
  for (const entry of raw as unknown[]) {
    if (typeof entry !== 'object' || entry === null) continue;
    const e = entry as JsonObject;
    const operation = e.operation === 'Apply' ? 'Apply' : e.operation === 'Update' ? 'Update' : undefined;
    if (operation === undefined || typeof e.manager !== 'string') continue;
    const m: Manager = {
      manager: e.manager,
      operation,
      apiVersion: typeof e.apiVersion === 'string' ? e.apiVersion : '',
      subresource: typeof e.subresource === 'string' ? e.subresource : '',
      time: typeof e.time === 'string' ? e.time : undefined,
      fields: fromFieldsV1(e.fieldsV1),
    };
    out.set(managerId(m), m);
  }
  return out;
}

/** Encodes managers as `metadata.managedFields`, sorted as `sortEncodedManagedFields` does. */
export function encodeManagers(managers: Managers): JsonObject[] | undefined {
  const list = [...managers.values()].filter((m) => m.fields.size > 0);
  if (list.length === 0) return undefined;
  list.sort((p, q) => {
    if (p.operation !== q.operation) return p.operation < q.operation ? -1 : 1;
    const pt = p.time === undefined ? 0 : Date.parse(p.time);
    const qt = q.time === undefined ? 0 : Date.parse(q.time);
    if (pt !== qt) return pt - qt;
    if (p.manager !== q.manager) return p.manager < q.manager ? -1 : 1;
    if (p.apiVersion !== q.apiVersion) return p.apiVersion < q.apiVersion ? -1 : 1;
    return p.subresource < q.subresource ? -1 : p.subresource > q.subresource ? 1 : 0;
  });
  return list.map((m) => {
    const entry: JsonObject = { manager: m.manager, operation: m.operation, apiVersion: m.apiVersion };
    if (m.time !== undefined) entry.time = m.time;
    entry.fieldsType = 'FieldsV1';
    entry.fieldsV1 = toFieldsV1(m.fields);
    if (m.subresource !== '') entry.subresource = m.subresource;
    return entry;
  });
}

/** The schema the field sets of `type` are computed with. */
export function schemaOf(type: ResourceType): PatchSchema | undefined {
  return type.customResource ? type.listTypes : patchSchemaFor(type.group, type.resource);
}

/** `stripmeta.go`: fields no manager owns. */
const STRIPPED = [
  ['apiVersion'],
  ['kind'],
  ['metadata', 'name'],
  ['metadata', 'namespace'],
  ['metadata', 'creationTimestamp'],
  ['metadata', 'selfLink'],
  ['metadata', 'uid'],
  ['metadata', 'generation'],
  ['metadata', 'managedFields'],
  ['metadata', 'resourceVersion'],
  ['metadata', 'deletionTimestamp'],
  ['metadata', 'deletionGracePeriodSeconds'],
].map(fieldPath);

/** The fields of `obj` a manager can own for this write: without system fields and reset fields. */
export function ownableFields(
  type: ResourceType,
  subresource: string | undefined,
  obj: JsonObject,
  reference: JsonObject = obj,
): FieldSet {
  const set = toFieldSet(obj, schemaOf(type));
  const excluded = [...STRIPPED, ...resetPaths(type, subresource, reference).map(fieldPath)];
  for (const path of [...set.keys()]) if (excluded.some((prefix) => isUnder(path, prefix))) set.delete(path);
  return set;
}

/** Removes `paths` from every manager but `except`, dropping managers left with nothing. */
function disown(managers: Managers, paths: Set<string>, except: string): void {
  if (paths.size === 0) return;
  for (const [id, m] of managers) {
    if (id === except) continue;
    for (const p of paths) m.fields.delete(p);
    if (m.fields.size === 0) managers.delete(id);
  }
}

/** What a write needs to know to record its manager. */
export interface FieldManagerContext {
  type: ResourceType;
  subresource: string | undefined;
  manager: string;
  now: number;
}

/** The id of `ctx.manager`'s entry for `operation` on this type and subresource. */
export function contextManagerId(ctx: FieldManagerContext, operation: 'Apply' | 'Update'): string {
  return managerId({
    manager: ctx.manager,
    operation,
    apiVersion: ctx.type.apiVersion,
    subresource: ctx.subresource ?? '',
  });
}

/**
 * The managed fields after a create/update/patch by `ctx.manager` (operation `Update`):
 * `FieldManager.Update`. The managed fields given in `next` are used if it has any (a client may
 * rewrite them; not on a subresource), else the live ones. An existing object without managed
 * fields stays untracked (`skipnonapplied.go`). Every changed field moves to this manager
 * (`Updater.Update` forces), fields that went away leave every manager. Returns the entries to store
 * (undefined: none).
 */
export function trackUpdate(
  ctx: FieldManagerContext,
  live: JsonObject | undefined,
  next: JsonObject,
): JsonObject[] | undefined {
  const liveMeta = (live?.metadata ?? {}) as JsonObject;
  const nextMeta = (next.metadata ?? {}) as JsonObject;
  const source =
    ctx.subresource === undefined && nextMeta.managedFields !== undefined
      ? nextMeta.managedFields
      : liveMeta.managedFields;
  const managers = decodeManagers(source);
  if (live !== undefined && managers.size === 0) return undefined;
  const before =
    live === undefined ? new Map<string, string>() : ownableFields(ctx.type, ctx.subresource, live, next);
  const after = ownableFields(ctx.type, ctx.subresource, next);
  const diff = compareSets(before, after);
  const id = contextManagerId(ctx, 'Update');
  const changed = new Set([...diff.modified, ...diff.added]);
  disown(managers, changed, id);
  disown(managers, diff.removed, id);
  const previous = managers.get(id);
  const fields = new Set(previous?.fields ?? []);
  for (const p of diff.removed) fields.delete(p);
  for (const p of changed) fields.add(p);
  if (fields.size > 0) {
    managers.delete(id);
    managers.set(id, {
      manager: ctx.manager,
      operation: 'Update',
      apiVersion: ctx.type.apiVersion,
      subresource: ctx.subresource ?? '',
      time:
        changed.size > 0 || diff.removed.size > 0 || previous === undefined
          ? rfc3339(ctx.now)
          : previous.time,
      fields,
    });
  } else managers.delete(id);
  return encodeManagers(managers);
}

/** The managers of `live`, with everything in it owned by `before-first-apply` when it has none (`skipnonapplied.go`). */
export function managersForApply(ctx: FieldManagerContext, live: JsonObject | undefined): Managers {
  const managers = decodeManagers(((live?.metadata ?? {}) as JsonObject).managedFields);
  if (live === undefined || managers.size !== 0) return managers;
  const fields = new Set(ownableFields(ctx.type, ctx.subresource, live).keys());
  if (fields.size === 0) return managers;
  const m: Manager = {
    manager: 'before-first-apply',
    operation: 'Update',
    apiVersion: ctx.type.apiVersion,
    subresource: ctx.subresource ?? '',
    time: rfc3339(ctx.now),
    fields,
  };
  managers.set(managerId(m), m);
  return managers;
}

/** `printManager`: `"name"`, `"name" with subresource "status"`, `… using apps/v1` for updaters. */
function printManager(m: Manager): string {
  let out = JSON.stringify(m.manager);
  if (m.subresource !== '') out += ` with subresource ${JSON.stringify(m.subresource)}`;
  if (m.operation === 'Update') out += ` using ${m.apiVersion}`;
  return out;
}

/**
 * The 409 of an apply that would change fields other managers own (`internal/conflict.go`
 * `NewConflictError`, `errors.NewApplyConflict`): one `FieldManagerConflict` cause per field.
 */
export function applyConflictError(
  conflicts: ReadonlyArray<{ manager: Manager; paths: string[] }>,
): KinformerError {
  const flat = conflicts.flatMap((c) => c.paths.map((p) => ({ manager: c.manager, path: p })));
  const causes = flat.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${printManager(c.manager)}`,
    field: pathString(c.path),
  }));
  let message: string;
  if (flat.length === 1) {
    const only = flat[0]!;
    message = `Apply failed with 1 conflict: conflict with ${printManager(only.manager)}: ${pathString(only.path)}`;
  } else {
    const sorted = [...conflicts].sort((a, b) => (managerId(a.manager) < managerId(b.manager) ? -1 : 1));
    const lines: string[] = [];
    for (const c of sorted) {
      lines.push(`conflicts with ${printManager(c.manager)}:`);
      for (const p of c.paths) lines.push(`- ${pathString(p)}`);
    }
    message = `Apply failed with ${flat.length} conflicts: ${lines.join('\n')}`;
  }
  return statusError(makeStatus({ code: 409, reason: 'Conflict', message, details: { causes } }));
}

/**
 * `Updater.update` for an apply by `id`: the other managers owning a field the apply changes or adds
 * conflict; with `force` they lose those fields instead. Fields that went away leave every other
 * manager. @throws the 409 of {@link applyConflictError} without `force`.
 */
export function settleOwnership(managers: Managers, id: string, diff: Comparison, force: boolean): void {
  const changed = new Set([...diff.modified, ...diff.added]);
  const conflicts: Array<{ manager: Manager; paths: string[] }> = [];
  for (const [other, m] of managers) {
    if (other === id) continue;
    const paths = [...m.fields].filter((p) => changed.has(p)).sort();
    if (paths.length > 0) conflicts.push({ manager: m, paths });
  }
  if (conflicts.length > 0 && !force) throw applyConflictError(conflicts);
  disown(managers, changed, id);
  disown(managers, diff.removed, id);
}

function withoutTimes(obj: JsonObject): string {
  const meta = (obj.metadata ?? {}) as JsonObject;
  const entries = Array.isArray(meta.managedFields) ? (meta.managedFields as JsonObject[]) : undefined;
  const stripped = entries?.map(({ time: _time, ...rest }) => rest);
  return JSON.stringify({ ...obj, metadata: { ...meta, managedFields: stripped } });
}

/**
 * `IgnoreManagedFieldsTimestampsTransformer` (apiserver `fieldmanager/equality.go`): true when `a`
 * and `b` differ at most in the timestamps of their managed fields, so the write is a no-op.
 */
export function sameIgnoringManagerTimes(a: JsonObject, b: JsonObject): boolean {
  return withoutTimes(a) === withoutTimes(b);
}
