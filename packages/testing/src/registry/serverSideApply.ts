import { load as loadYaml } from 'js-yaml';
import { compareSets, isUnder, keyElement, listKind, removePath } from './fieldPaths.js';
import { isMap, rec, type JsonObject } from '../api/json.js';
import { jsonClone } from '../api/jsonClone.js';
import {
  encodeManagers,
  contextManagerId,
  managersForApply,
  ownableFields,
  schemaOf,
  settleOwnership,
  type FieldManagerContext,
} from './managedFields.js';
import type { RegistryStore } from './registryStore.js';
import type { ResourceType } from './resourceRegistry.js';
import { badRequestError, notFoundError } from '../api/statusErrors.js';
import { decodeFields, decodeWrite, type AdmitCreate, type FieldValidation } from './admission.js';
import type { StoredEntry } from '../storage/storedEntry.js';
import type { PatchSchema } from './strategicMergePatch.js';
import { rfc3339 } from '../storage/storedForm.js';

/**
 * Server-side apply (`PATCH` with `application/apply-patch+yaml`), as kube-apiserver's
 * `handlers/patch.go` `applyPatcher` and apimachinery's field manager do it
 * (`managedfields/internal/structuredmerge.go` `Apply`, `skipnonapplied.go`) on
 * structured-merge-diff's `merge/update.go` `Updater.Apply`:
 *
 * 1. the applied configuration is merged into the live object (maps by field, associative lists by
 *    their keys, sets as a union, every other list and scalar replaced);
 * 2. the manager now owns exactly the fields of its configuration;
 * 3. fields it applied last time and left out now are removed, unless another manager owns them
 *    (`Updater.prune`);
 * 4. every other manager that owns a field the apply changes conflicts (409), unless `force`, which
 *    takes those fields from them (`Updater.update`);
 * 5. an object that does not exist is created (`createIfNotFound`, answered 201).
 *
 * Around the merge, an apply is decoded, defaulted and admitted as the other writes are: the
 * configuration's unknown fields are dropped, reported or refused per `fieldValidation`
 * (`applyPatcher.applyPatchToCurrentObject`'s strict YAML check), the merged object is defaulted
 * (`structuredMergeManager.Apply` runs the object defaulter) and validated, and an apply that
 * creates runs the create admission (NamespaceLifecycle: `patchResource` admits an object that does
 * not exist yet as a create).
 */

/** What an apply request carries. */
export interface ApplyRequest {
  type: ResourceType;
  namespace: string;
  name: string;
  subresource: string | undefined;
  manager: string;
  force: boolean;
  dryRun: boolean;
  now: number;
  /** `?fieldValidation=` of the request (the in-process API: `Warn`). */
  fieldValidation: FieldValidation;
}

/** `TypedValue.Merge`: the applied configuration over the live object. */
export function mergeApplied(live: unknown, config: unknown, schema: PatchSchema | undefined): unknown {
  if (isMap(config)) {
    const out: JsonObject = isMap(live) ? { ...live } : {};
    for (const [key, value] of Object.entries(config)) {
      if (value === null) delete out[key];
      else out[key] = mergeApplied(out[key], value, schema?.fields?.[key]);
    }
    return out;
  }
  if (Array.isArray(config)) {
    const kind = listKind(config, schema);
    if (kind.kind === 'atomic' || !Array.isArray(live)) return jsonClone(config);
    if (kind.kind === 'set') {
      const out = [...(live as unknown[])];
      for (const item of config)
        if (!out.some((v) => JSON.stringify(v) === JSON.stringify(item))) out.push(jsonClone(item));
      return out;
    }
    const out = [...(live as unknown[])];
    for (const item of config) {
      const key = keyElement(item, kind.keys);
      const index = out.findIndex((v) => keyElement(v, kind.keys) === key);
      if (index === -1) out.push(jsonClone(item));
      else out[index] = mergeApplied(out[index], item, schema?.items);
    }
    return out;
  }
  return config;
}

/** `Updater.prune`: removes what `lastApplied` held and nobody owns any more. */
function prune(
  merged: JsonObject,
  lastApplied: ReadonlySet<string> | undefined,
  owned: ReadonlySet<string>,
  schema: PatchSchema | undefined,
): JsonObject {
  if (lastApplied === undefined || lastApplied.size === 0) return merged;
  const ownedList = [...owned];
  const drop = [...lastApplied]
    .filter((p) => !owned.has(p) && !ownedList.some((o) => isUnder(o, p)))
    .sort((a, b) => a.length - b.length);
  if (drop.length === 0) return merged;
  const out = jsonClone(merged);
  for (const path of drop) removePath(out, path, schema);
  return out;
}

function withoutManagedFields(obj: JsonObject): JsonObject {
  const { managedFields: _mf, ...meta } = rec(obj.metadata);
  return { ...obj, metadata: meta };
}

/**
 * Checks an applied configuration as `structuredMergeManager.Apply` does.
 * @throws 400 for a wrong apiVersion, a missing kind, or managed fields in the configuration.
 */
export function checkAppliedConfiguration(type: ResourceType, config: JsonObject): void {
  if (config.apiVersion !== type.apiVersion) {
    throw badRequestError(
      `Incorrect version specified in apply patch. Specified patch version: ${typeof config.apiVersion === 'string' ? config.apiVersion : ''}, expected: ${type.apiVersion}`,
    );
  }
  if (typeof config.kind !== 'string' || config.kind === '')
    throw badRequestError("Object 'Kind' is missing in apply patch");
  if (rec(config.metadata).managedFields !== undefined)
    throw badRequestError('metadata.managedFields must be nil');
}

/**
 * The object an apply of `config` by `ctx.manager` makes of `live` (undefined: create), with its
 * `metadata.managedFields`. @throws the 409 conflict.
 */
export function applyToObject(
  ctx: FieldManagerContext,
  live: JsonObject | undefined,
  config: JsonObject,
  force: boolean,
): JsonObject {
  const schema = schemaOf(ctx.type);
  const managers = managersForApply(ctx, live);
  const id = contextManagerId(ctx, 'Apply');
  const previous = managers.get(id);
  const { apiVersion: _v, kind: _k, ...body } = config;
  const base = live === undefined ? {} : withoutManagedFields(live);
  const merged = mergeApplied(base, body, schema) as JsonObject;
  const applied = new Set(ownableFields(ctx.type, ctx.subresource, config, live ?? config).keys());
  managers.delete(id);
  managers.set(id, {
    manager: ctx.manager,
    operation: 'Apply',
    apiVersion: ctx.type.apiVersion,
    subresource: ctx.subresource ?? '',
    time: previous?.time,
    fields: applied,
  });
  const owned = new Set<string>();
  for (const m of managers.values()) for (const p of m.fields) owned.add(p);
  const result = prune(merged, previous?.fields, owned, schema);
  const diff = compareSets(
    live === undefined ? new Map<string, string>() : ownableFields(ctx.type, ctx.subresource, base),
    ownableFields(ctx.type, ctx.subresource, result, base),
  );
  settleOwnership(managers, id, diff, force);
  const me = managers.get(id);
  const changed = JSON.stringify(result) !== JSON.stringify(base);
  if (me !== undefined && (changed || me.time === undefined)) me.time = rfc3339(ctx.now);
  return { ...result, metadata: { ...rec(result.metadata), managedFields: encodeManagers(managers) ?? [] } };
}

/**
 * Serves an apply: creates the object when it does not exist (not through a subresource: 404), else
 * updates it with the merged result. Returns the entry, whether it was created and the warnings of
 * decoding (`Warning` headers).
 */
export function serveApply(
  store: RegistryStore,
  request: ApplyRequest,
  config: JsonObject,
  /** The server's create admission, run when the apply creates the object (as a POST would be). */
  admitCreate: AdmitCreate,
): { entry: StoredEntry; created: boolean; warnings: string[] } {
  const { type, namespace, name, subresource } = request;
  checkAppliedConfiguration(type, config);
  const warnings = decodeFields(type, config, request.fieldValidation, false);
  const ctx: FieldManagerContext = { type, subresource, manager: request.manager, now: request.now };
  const existing = store.find(type, namespace, name);
  const bodyName = rec(config.metadata).name;
  if (typeof bodyName === 'string' && bodyName !== '' && bodyName !== name) {
    throw badRequestError(
      `the name of the object (${bodyName}) does not match the name on the URL (${name})`,
    );
  }
  if (existing === undefined) {
    if (subresource !== undefined) throw notFoundError(type, name);
    const applied = applyToObject(ctx, undefined, config, request.force);
    const created = { ...applied, metadata: { ...rec(applied.metadata), name } };
    decodeWrite(type, created, { creating: true, fieldValidation: 'Ignore' });
    const urlNamespace = type.namespaced ? namespace : undefined;
    admitCreate(type, urlNamespace);
    const entry = store.create(type, urlNamespace, created, { strategy: true, dryRun: request.dryRun });
    return { entry, created: true, warnings };
  }
  const next = applyToObject(ctx, existing.obj, config, request.force);
  decodeWrite(type, next, { creating: false, fieldValidation: 'Ignore' });
  const entry = store.update(type, type.namespaced ? namespace : undefined, name, next, {
    strategy: true,
    dryRun: request.dryRun,
    allowUnconditional: true,
    ...(subresource === undefined ? {} : { subresource }),
  });
  return { entry, created: false, warnings };
}

/** True for `application/apply-patch+yaml` (the only apply encoding the fake reads; CBOR is alpha). */
export function isApplyPatch(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase() === 'application/apply-patch+yaml';
}

/**
 * The applied configuration in a request body: YAML or JSON (JSON is YAML), which must be one
 * object, read as plain data (`yaml.Unmarshal` into an `Unstructured`: unknown fields stay for
 * decoding to drop, warn of or refuse). @throws 400 as `applyPatcher` answers a body that does not
 * decode.
 */
export function parseAppliedConfiguration(raw: string): JsonObject {
  let parsed: unknown;
  try {
    parsed = loadYaml(raw);
  } catch (err) {
    throw badRequestError(
      `error decoding YAML: ${err instanceof Error ? err.message.split('\n', 1)[0] : String(err)}`,
    );
  }
  if (!isMap(parsed)) throw badRequestError('the body of the request was not a YAML or JSON object');
  return parsed;
}
