import type { HistoryEvent } from '../storage/eventHistory.js';
import { rec, type JsonObject } from '../api/json.js';
import type { RegistryStore } from './registryStore.js';
import type {
  PrinterColumn,
  ResourceDefinition,
  ResourceRegistry,
  ResourceType,
} from './resourceRegistry.js';
import { invalidError, invalidField, requiredField, type FieldError } from '../api/statusErrors.js';
import { rfc3339, text } from '../storage/storedForm.js';
import type { Clock } from '@kinformer/core';

/**
 * `apiextensions.k8s.io/v1` CustomResourceDefinitions, as apiextensions-apiserver serves them:
 *
 * - validation of the names a CRD must have (`pkg/apis/apiextensions/validation/validation.go`
 *   `ValidateCustomResourceDefinition`: `metadata.name` = `<plural>.<group>`, one storage version);
 * - each served version becomes a resource type (`pkg/apiserver/customresource_handler.go`
 *   `getOrCreateServingInfoFor`): scope, names (short names, categories, list kind, singular),
 *   `subresources` (status, scale: declarations kept on the type), `additionalPrinterColumns`
 *   (Tables), `selectableFields` and the structural schema (`/openapi/v3`, defaults, pruning);
 * - the naming and establishing controllers (`pkg/controller/status/naming_controller.go`,
 *   `pkg/controller/establish/establishing_controller.go`) write `status.acceptedNames`,
 *   `NamesAccepted` and `Established` right after a create (a MODIFIED event);
 * - deleting a CRD deletes its objects (one DELETED event each) and stops serving it
 *   (`pkg/controller/finalizer/crd_finalizer.go`); the fake does it at once, without the
 *   `customresourcecleanup` finalizer's intermediate Terminating state.
 *
 * Each served version is stored apart: the fake has no conversion between versions.
 */

/** The served versions of a CRD as resource definitions. */
export function crdDefinitions(crd: JsonObject): ResourceDefinition[] {
  const spec = rec(crd.spec);
  const names = rec(spec.names);
  const versions = Array.isArray(spec.versions) ? spec.versions.map(rec) : [];
  return versions
    .filter((v) => v.served !== false)
    .map((v): ResourceDefinition => {
      const sub = rec(v.subresources);
      const scale = sub.scale === undefined ? undefined : rec(sub.scale);
      const columns = Array.isArray(v.additionalPrinterColumns) ? v.additionalPrinterColumns.map(rec) : [];
      const selectable = Array.isArray(v.selectableFields) ? v.selectableFields.map(rec) : [];
      const def: ResourceDefinition = {
        group: text(spec.group),
        version: text(v.name),
        resource: text(names.plural),
        kind: text(names.kind),
        namespaced: spec.scope !== 'Cluster',
        listKind: text(names.listKind) || `${text(names.kind)}List`,
        singularName: text(names.singular) || text(names.kind).toLowerCase(),
        shortNames: Array.isArray(names.shortNames) ? names.shortNames.map(String) : [],
        categories: Array.isArray(names.categories) ? names.categories.map(String) : [],
        customResource: true,
        selectableFields: selectable.map((f) => text(f.jsonPath).replace(/^\./, '')),
        subresources: {
          ...(sub.status === undefined ? {} : { status: true }),
          ...(scale === undefined
            ? {}
            : {
                scale: {
                  specReplicasPath: text(scale.specReplicasPath),
                  statusReplicasPath: text(scale.statusReplicasPath),
                  ...(scale.labelSelectorPath === undefined
                    ? {}
                    : { labelSelectorPath: text(scale.labelSelectorPath) }),
                },
              }),
        },
        printerColumns: columns.map((c): PrinterColumn => ({
          name: text(c.name),
          type: text(c.type),
          jsonPath: text(c.jsonPath),
          ...(c.format === undefined ? {} : { format: text(c.format) }),
          ...(c.description === undefined ? {} : { description: text(c.description) }),
          ...(typeof c.priority === 'number' ? { priority: c.priority } : {}),
        })),
      };
      const schema = rec(v.schema).openAPIV3Schema;
      if (typeof schema === 'object' && schema !== null) def.schema = schema as JsonObject;
      return def;
    });
}

/** `ValidateCustomResourceDefinition`, the parts a fake needs to refuse what a cluster refuses. @throws 422. */
export function validateCrd(crd: JsonObject): void {
  const spec = rec(crd.spec);
  const names = rec(spec.names);
  const name = text(rec(crd.metadata).name);
  const errors: FieldError[] = [];
  const group = text(spec.group);
  const plural = text(names.plural);
  if (name !== `${plural}.${group}`)
    errors.push(
      invalidField('metadata.name', JSON.stringify(name), 'must be spec.names.plural+"."+spec.group'),
    );
  if (group === '') errors.push(requiredField('spec.group', ''));
  if (plural === '') errors.push(requiredField('spec.names.plural', ''));
  if (text(names.kind) === '') errors.push(requiredField('spec.names.kind', ''));
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster')
    errors.push({
      type: 'FieldValueNotSupported',
      field: 'spec.scope',
      body: `Unsupported value: ${JSON.stringify(text(spec.scope))}: supported values: "Cluster", "Namespaced"`,
    });
  const versions = Array.isArray(spec.versions) ? spec.versions.map(rec) : [];
  if (versions.length === 0)
    errors.push(requiredField('spec.versions', 'must have exactly one version marked as storage version'));
  else if (versions.filter((v) => v.storage === true).length !== 1)
    errors.push(
      invalidField(
        'spec.versions',
        '[]apiextensions.CustomResourceDefinitionVersion{...}',
        'must have exactly one version marked as storage version',
      ),
    );
  if (errors.length > 0) throw invalidError('apiextensions.k8s.io', 'CustomResourceDefinition', name, errors);
}

function condition(type: string, reason: string, message: string, now: string): JsonObject {
  return { type, status: 'True', lastTransitionTime: now, reason, message };
}

/**
 * Keeps the served types in step with the stored CRDs: a commit listener of the store (as the
 * garbage collector is: both act on a write as soon as it commits) that, for each write to a CRD,
 * registers, re-registers and unregisters types, writes the CRD's status, and removes a deleted
 * CRD's objects.
 */
export class CrdController {
  readonly #registry: ResourceRegistry;
  readonly #store: RegistryStore;
  readonly #clock: Clock;
  readonly #crdType: ResourceType;
  /** Types registered for each CRD (by CRD name). */
  readonly #served = new Map<string, ResourceType[]>();
  /** The definition each served type was registered with (JSON), to re-register only on a change. */
  readonly #definitions = new Map<ResourceType, string>();

  constructor(registry: ResourceRegistry, store: RegistryStore, clock: Clock, crdType: ResourceType) {
    this.#registry = registry;
    this.#store = store;
    this.#clock = clock;
    this.#crdType = crdType;
    store.storage.addCommitListener((event) => {
      if (event.entry.type === crdType) this.#onCrdWrite(event);
    });
  }

  #onCrdWrite(event: HistoryEvent): void {
    const entry = event.entry;
    if (event.type === 'DELETED') {
      this.#remove(entry.name);
      return;
    }
    this.#serve(entry.name, entry.obj);
    const status = rec(entry.obj.status);
    const conditions = Array.isArray(status.conditions) ? status.conditions.map(rec) : [];
    const established = conditions.some((c) => c.type === 'Established' && c.status === 'True');
    if (!established && entry.obj.metadata.deletionTimestamp === undefined)
      queueMicrotask(() => this.#establish(entry.name));
  }

  #serve(name: string, crd: JsonObject): void {
    const definitions = crdDefinitions(crd);
    const previous = this.#served.get(name) ?? [];
    const next: ResourceType[] = [];
    for (const def of definitions) {
      const json = JSON.stringify(def);
      const existing = this.#registry.lookup(def.group ?? '', def.version, def.resource);
      if (existing !== undefined && this.#definitions.get(existing) === json) {
        next.push(existing);
        continue;
      }
      const type = this.#registry.register(def);
      this.#definitions.set(type, json);
      if (existing !== undefined) this.#store.storage.retype(existing, type);
      next.push(type);
    }
    for (const old of previous) {
      if (next.some((t) => t.group === old.group && t.version === old.version && t.resource === old.resource))
        continue;
      this.#unserve(old);
    }
    this.#served.set(name, next);
  }

  #unserve(type: ResourceType): void {
    const table = this.#store.storage.table(type);
    for (const key of [...table.sortedKeys()]) {
      const entry = table.entries.get(key);
      if (entry !== undefined) this.#store.delete(type, entry.namespace, entry.name);
    }
    this.#store.storage.drop(type);
    this.#registry.unregister(type.group, type.version, type.resource);
  }

  #remove(name: string): void {
    for (const type of this.#served.get(name) ?? []) this.#unserve(type);
    this.#served.delete(name);
  }

  /** The naming and establishing controllers' status write. */
  #establish(name: string): void {
    const current = this.#store.find(this.#crdType, '', name);
    if (current === undefined || current.obj.metadata.deletionTimestamp !== undefined) return;
    const status = rec(current.obj.status);
    const conditions = Array.isArray(status.conditions) ? status.conditions.map(rec) : [];
    if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) return;
    const now = rfc3339(this.#clock.now());
    const spec = rec(current.obj.spec);
    const storage = (Array.isArray(spec.versions) ? spec.versions.map(rec) : []).find(
      (v) => v.storage === true,
    );
    const names = rec(spec.names);
    const acceptedNames: JsonObject = {
      plural: names.plural,
      singular: text(names.singular) || text(names.kind).toLowerCase(),
    };
    for (const key of ['shortNames', 'kind', 'listKind', 'categories'])
      if (names[key] !== undefined) acceptedNames[key] = names[key];
    acceptedNames.listKind ??= `${text(names.kind)}List`;
    const next = {
      ...current.obj,
      status: {
        conditions: [
          condition('NamesAccepted', 'NoConflicts', 'no conflicts found', now),
          condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted', now),
        ],
        acceptedNames,
        storedVersions: storage === undefined ? [] : [storage.name],
      },
    };
    try {
      this.#store.update(this.#crdType, undefined, name, next, { subresource: 'status' });
    } catch {
      // Raced with a newer write or a delete: the next event establishes it.
    }
  }
}
