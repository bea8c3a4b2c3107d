import type { JsonObject } from '../api/json.js';
import type { ObjectStore } from '../storage/objectStore.js';
import type { ResourceRegistry, ResourceType } from './resourceRegistry.js';
import { typeSchema, walkUnknown } from './schemas.js';
import { badRequestError, notFoundError } from '../api/statusErrors.js';

/**
 * What a write over HTTP goes through before storage, in kube-apiserver's order: decoding (unknown
 * fields dropped, or refused with `fieldValidation=Strict`, or reported in a `Warning` header with
 * `Warn`, the default: `endpoints/handlers/create.go`, `update.go`, `patch.go`), defaulting
 * (the kind's strategy, `strategies.ts`; a custom resource's schema defaults), validation of a CRD, and the
 * NamespaceLifecycle admission plugin (`plugin/pkg/admission/namespace/lifecycle`). The in-process
 * API (`server.create` …) writes what it is given, as a seed of storage.
 */

/** `metav1.FieldValidation*`: what the decoder does with unknown fields. */
export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

/** `?fieldValidation=` (default `Warn`, as since 1.27). */
export function fieldValidationOf(params: URLSearchParams): FieldValidation {
  const value = params.get('fieldValidation');
  return value === 'Ignore' || value === 'Strict' ? value : 'Warn';
}

/**
 * Decodes and defaults `obj` (a typed object of `type`; mutated) as the handlers do for a create
 * (`creating`) or an update/patch. Returns the warnings to send (`Warning: 299 - "…"`).
 * @throws 400 BadRequest `… cannot be handled as a Kind: strict decoding error: unknown field "…"`
 *   under `Strict`; 422 for an invalid CRD.
 */
export function decodeWrite(
  type: ResourceType,
  obj: JsonObject,
  options: { creating: boolean; fieldValidation: FieldValidation },
): string[] {
  const warnings = decodeFields(type, obj, options.fieldValidation, type.customResource);
  type.strategy.defaults?.(obj, options.creating);
  type.strategy.validate?.(obj);
  return warnings;
}

/**
 * The unknown fields of `obj` (mutated): pruned; under `Strict` a 400. With `schemaDefaults`, a
 * custom resource's schema defaults are applied in the same walk. Returns the `Warn` warnings.
 * Server-side apply decodes its configuration with this alone (no defaults: a default is no
 * applier's field), then defaults the merged object (`decodeWrite` under `Ignore`).
 */
export function decodeFields(
  type: ResourceType,
  obj: JsonObject,
  fieldValidation: FieldValidation,
  schemaDefaults: boolean,
): string[] {
  const schema = typeSchema(type);
  if (schema === undefined) return [];
  const { unknown } = walkUnknown(obj, schema, { prune: true, applyDefaults: schemaDefaults });
  if (unknown.length > 0 && fieldValidation === 'Strict') {
    const fields = unknown.map((f) => `unknown field ${JSON.stringify(f)}`).join(', ');
    throw badRequestError(
      `${type.kind} in version ${JSON.stringify(type.version)} cannot be handled as a ${type.kind}: strict decoding error: ${fields}`,
    );
  }
  return fieldValidation === 'Warn' ? unknown.map((f) => `unknown field ${JSON.stringify(f)}`) : [];
}

/** The create admission of one server: called with the type and namespace of every create it admits. */
export type AdmitCreate = (type: ResourceType, namespace: string | undefined) => void;

/**
 * NamespaceLifecycle (`plugin/pkg/admission/namespace/lifecycle/admission.go` `Admit`): a create in
 * a namespace that does not exist is refused with 404 `namespaces "x" not found` (the namespace type
 * must be served; the system namespaces exist). With `enabled` false, every create is admitted.
 */
export function namespaceLifecycle(
  registry: ResourceRegistry,
  store: ObjectStore,
  enabled: boolean,
): AdmitCreate {
  if (!enabled) return () => {};
  return (type, namespace) => {
    if (!type.namespaced || namespace === undefined) return;
    const namespaces = registry.lookup('', 'v1', 'namespaces');
    if (namespaces === undefined) return;
    if (store.find(namespaces, '', namespace) === undefined) throw notFoundError(namespaces, namespace);
  };
}

/** The system namespaces every cluster has (`pkg/controlplane/controller/systemnamespaces`). */
export const SYSTEM_NAMESPACES: readonly string[] = Object.freeze([
  'default',
  'kube-system',
  'kube-public',
  'kube-node-lease',
]);
