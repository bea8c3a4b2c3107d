import { randomUUID } from 'node:crypto';
import type { Clock } from '@kinformer/core';
import type { Timer } from '@kinformer/core/internal';
import { rec, type JsonObject } from '../api/json.js';
import {
  alreadyExistsError,
  badRequestError,
  conflictError,
  invalidError,
  invalidField,
  makeStatus,
  notFoundError,
  preconditionConflictError,
  requiredField,
  statusError,
  unsupportedPatchTypeError,
} from '../api/statusErrors.js';
import type { WriteOptions } from '../endpoints/writeOptions.js';
import type { ObjectStore } from '../storage/objectStore.js';
import { StoredEntry, type StoredObject } from '../storage/storedEntry.js';
import { asBody, buildMeta, normalize, randomSuffix, rfc3339, text } from '../storage/storedForm.js';
import { planDeletion, shouldDeleteDuringUpdate, type DeleteBehaviour } from './gracefulDeletion.js';
import { trackUpdate, sameIgnoringManagerTimes } from './managedFields.js';
import { applyJsonPatch, applyMergePatch, PatchError, type PatchType } from './patch.js';
import type { ResourceType } from './resourceRegistry.js';
import { applyStrategicMergePatch, patchSchemaFor } from './strategicMergePatch.js';
import { nextGeneration, prepareForCreate, prepareForUpdate } from './writeStrategy.js';

/** Preconditions of a DELETE (`DeleteOptions.preconditions`). */
export interface DeletePreconditions {
  uid?: string;
  resourceVersion?: string;
}

/** Options of {@link RegistryStore}. */
export interface RegistryStoreOptions {
  clock: Clock;
  /** Emulate graceful deletion of pods (the pod strategy's grace period and the kubelet's final delete). */
  gracefulPods: boolean;
}

/**
 * The write verbs over storage, as kube-apiserver's generic registry store
 * (`apiserver/pkg/registry/generic/registry/store.go` `Store.Create`, `Update`, `Delete`, with
 * `rest.BeforeCreate` / `BeforeUpdate` / `BeforeDelete`) sits over `storage.Interface`: names,
 * namespaces, preconditions, the kind's strategy (`ResourceType.strategy`), managed fields, dry
 * runs, graceful deletion and the deletion finalizers, with the real server's validation and
 * errors; `storage/objectStore.ts` keeps the objects, revisions, history and watchers. Synchronous.
 */
export class RegistryStore {
  /** The storage written to. */
  readonly storage: ObjectStore;
  readonly #clock: Clock;
  readonly #gracefulPods: boolean;
  readonly #terminations = new Map<string, { run: () => void; timer: Timer }>();

  constructor(storage: ObjectStore, options: RegistryStoreOptions) {
    this.storage = storage;
    this.#clock = options.clock;
    this.#gracefulPods = options.gracefulPods;
  }

  /** The stored object, or undefined. */
  find(type: ResourceType, namespace: string, name: string): StoredEntry | undefined {
    return this.storage.find(type, namespace, name);
  }

  /** The stored object. @throws 404 NotFound. */
  get(type: ResourceType, namespace: string, name: string): StoredEntry {
    return this.storage.get(type, namespace, name);
  }

  #namespaceOf(type: ResourceType, urlNamespace: string | undefined, meta: JsonObject): string {
    if (!type.namespaced) return '';
    const bodyNamespace = text(meta.namespace);
    if (urlNamespace !== undefined && bodyNamespace !== '' && bodyNamespace !== urlNamespace) {
      throw badRequestError(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    return urlNamespace ?? (bodyNamespace || 'default');
  }

  #checkName(type: ResourceType, name: string): void {
    if (name.includes('/') || name.includes('%') || name === '.' || name === '..') {
      throw invalidError(type.group, type.kind, name, [
        invalidField(
          'metadata.name',
          JSON.stringify(name),
          "may not contain '/' or '%' and may not be '.' or '..'",
        ),
      ]);
    }
  }

  /**
   * Creates an object (POST). `urlNamespace` is the request's namespace (undefined in-process: the
   * object's own, else `default`). Assigns uid, creationTimestamp, resourceVersion and, for objects
   * with a `spec`, generation 1; `generateName` gets a random suffix. `body` is owned by the store.
   * @throws 409 AlreadyExists, 422 when neither name nor generateName is set, 400 namespace mismatch.
   */
  create(
    type: ResourceType,
    urlNamespace: string | undefined,
    body: unknown,
    options: WriteOptions = {},
  ): StoredEntry {
    let obj = asBody(body);
    if (options.strategy === true) obj = prepareForCreate(type, obj);
    const meta = rec(obj.metadata);
    const namespace = this.#namespaceOf(type, urlNamespace, meta);
    const table = this.storage.table(type);
    let name = text(meta.name);
    if (name === '') {
      const prefix = text(meta.generateName);
      if (prefix === '') {
        throw invalidError(type.group, type.kind, '', [
          requiredField('metadata.name', 'name or generateName is required'),
        ]);
      }
      do name = prefix + randomSuffix();
      while (table.entries.has(namespace === '' ? name : `${namespace}/${name}`));
    }
    this.#checkName(type, name);
    if (table.entries.has(namespace === '' ? name : `${namespace}/${name}`))
      throw alreadyExistsError(type, name);
    // A dry run gets everything a create sets but a resourceVersion (dryrun.go copies the object
    // without writing it; storage sets the version).
    const rev = options.dryRun === true ? this.storage.rev : this.storage.nextRevision();
    const managedFields =
      options.fieldManager === undefined
        ? meta.managedFields
        : trackUpdate(
            { type, subresource: undefined, manager: options.fieldManager, now: this.#clock.now() },
            undefined,
            obj,
          );
    const stored = storedForm(type, obj, meta, {
      ...ownedMeta(name, namespace, { uid: randomUUID(), creationTimestamp: rfc3339(this.#clock.now()) }),
      resourceVersion: options.dryRun === true ? undefined : String(rev),
      generation: nextGeneration(type, undefined, obj),
      managedFields,
    });
    const entry = new StoredEntry(type, namespace, name, stored, rev);
    if (options.dryRun === true) return entry;
    this.storage.commit('ADDED', entry, undefined);
    return entry;
  }

  /**
   * Replaces an object (PUT), or only its `status` with `subresource: 'status'`. A set
   * `metadata.resourceVersion` must equal the stored one (else 409 Conflict); an unset one is an
   * unconditional update where the type allows it (else 422). uid, creationTimestamp and deletion
   * fields are kept from the stored object; generation increases when `spec` changes. A write that
   * changes nothing keeps the revision and sends no event. Clearing the finalizers of an object being
   * deleted deletes it.
   */
  update(
    type: ResourceType,
    urlNamespace: string | undefined,
    urlName: string | undefined,
    body: unknown,
    options: WriteOptions = {},
  ): StoredEntry {
    const obj = asBody(body);
    const meta = rec(obj.metadata);
    const namespace = this.#namespaceOf(type, urlNamespace, meta);
    const bodyName = text(meta.name);
    if (urlName !== undefined && bodyName !== '' && bodyName !== urlName) {
      throw badRequestError(
        `the name of the object (${bodyName}) does not match the name on the URL (${urlName})`,
      );
    }
    const name = urlName ?? bodyName;
    if (name === '')
      throw invalidError(type.group, type.kind, '', [
        requiredField('metadata.name', 'name or generateName is required'),
      ]);
    const existing = this.storage.table(type).entries.get(namespace === '' ? name : `${namespace}/${name}`);
    if (!existing) throw notFoundError(type, name);
    const requested = text(meta.resourceVersion);
    if (requested !== '') {
      if (requested !== String(existing.rev)) throw conflictError(type, name);
    } else if (!options.allowUnconditional && !type.allowUnconditionalUpdate) {
      throw invalidError(type.group, type.kind, name, [
        invalidField('metadata.resourceVersion', '0x0', 'must be specified for an update'),
      ]);
    }
    const old = existing.obj;
    const oldMeta = old.metadata;
    const statusOnly = options.subresource === 'status';
    let next: JsonObject;
    let nextMeta: JsonObject;
    if (options.strategy === true) {
      next = prepareForUpdate(type, options.subresource, obj, old);
      nextMeta = rec(next.metadata);
    } else {
      // The in-process API writes what it is given (status included); only `status` is split.
      next = statusOnly ? { ...old, status: obj.status } : obj;
      nextMeta = statusOnly
        ? oldMeta
        : meta.managedFields === undefined
          ? { ...meta, managedFields: oldMeta.managedFields }
          : meta;
    }
    const candidate = storedForm(type, next, nextMeta, {
      ...ownedMeta(name, namespace, oldMeta),
      resourceVersion: String(existing.rev),
      generation: nextGeneration(type, old, next),
    });
    if (options.fieldManager !== undefined) {
      const tracked = trackUpdate(
        { type, subresource: options.subresource, manager: options.fieldManager, now: this.#clock.now() },
        old,
        candidate,
      );
      if (tracked === undefined) delete candidate.metadata.managedFields;
      else candidate.metadata.managedFields = tracked;
    }
    if (JSON.stringify(candidate) === existing.json()) return existing;
    // fieldmanager/equality.go: a write that only moves managedFields timestamps writes nothing.
    if (options.fieldManager !== undefined && sameIgnoringManagerTimes(candidate, old)) return existing;
    if (options.dryRun === true) return new StoredEntry(type, namespace, name, candidate, existing.rev);
    const rev = this.storage.nextRevision();
    candidate.metadata.resourceVersion = String(rev);
    const entry = new StoredEntry(type, namespace, name, candidate, rev);
    if (shouldDeleteDuringUpdate(oldMeta, candidate.metadata.finalizers)) {
      this.storage.commit('DELETED', existing.withResourceVersion(rev), existing);
      return entry;
    }
    this.storage.commit('MODIFIED', entry, existing);
    return entry;
  }

  /**
   * Patches an object (PATCH) with a merge, strategic merge (built-in types only, see
   * `strategicMergePatch.ts`) or JSON patch, then stores it as {@link update} does (a
   * `metadata.resourceVersion` in the result must still match).
   * @throws 415 for a strategic merge patch of a custom resource, 400 for a malformed patch, 422 for
   *   a failing JSON-patch operation, 404, 409.
   */
  patch(
    type: ResourceType,
    namespace: string,
    name: string,
    patchType: PatchType,
    patch: unknown,
    subresource?: string,
    options: WriteOptions = {},
    /** Decoding and defaulting of the patched object (HTTP writes: `admission.ts`); mutates it. */
    admit?: (patched: JsonObject) => void,
  ): StoredEntry {
    if (patchType === 'strategic' && type.customResource) throw unsupportedPatchTypeError(type);
    const existing = this.get(type, namespace, name);
    let patched: unknown;
    try {
      const doc: unknown = JSON.parse(existing.typedJson());
      patched =
        patchType === 'json'
          ? applyJsonPatch(doc, patch)
          : patchType === 'strategic'
            ? applyStrategicMergePatch(doc, patch, patchSchemaFor(type.group, type.resource))
            : applyMergePatch(doc, patch);
    } catch (err) {
      if (!(err instanceof PatchError)) throw err;
      if (err.httpStatus === 400) throw badRequestError(err.message);
      throw statusError(makeStatus({ code: 422, reason: 'Invalid', message: err.message }));
    }
    if (typeof patched !== 'object' || patched === null || Array.isArray(patched)) {
      throw statusError(
        makeStatus({ code: 422, reason: 'Invalid', message: 'the patched object is not a JSON object' }),
      );
    }
    admit?.(patched as JsonObject);
    return this.update(type, type.namespaced ? namespace : undefined, name, patched, {
      ...options,
      allowUnconditional: true,
      ...(subresource === undefined ? {} : { subresource }),
    });
  }

  /**
   * Deletes an object (DELETE), as kube-apiserver's registry does (see {@link planDeletion}): an
   * object with finalizers, or a pod deleted gracefully (with `gracefulPods`), first gets
   * `metadata.deletionTimestamp` and `deletionGracePeriodSeconds` (a MODIFIED event) and `deleted` is
   * false; otherwise it is removed (a DELETED event carrying the delete's revision) and `entry` is its
   * last state. A pod with a grace period > 0 is deleted (with grace 0, as its kubelet would) when the
   * period has passed on the clock, or by {@link finishTerminations}. Preconditions that do not hold
   * give 409 Conflict.
   */
  delete(
    type: ResourceType,
    namespace: string,
    name: string,
    preconditions: DeletePreconditions = {},
    behaviour: DeleteBehaviour = {},
  ): { entry: StoredEntry; deleted: boolean } {
    const existing = this.get(type, namespace, name);
    const meta = existing.obj.metadata;
    // rest.BeforeDelete checks the preconditions against the stored object before anything else.
    if (preconditions.uid !== undefined && preconditions.uid !== meta.uid) {
      throw preconditionConflictError(
        type,
        name,
        `the UID in the precondition (${preconditions.uid}) does not match the UID in record (${text(meta.uid)}). The object might have been deleted and then recreated`,
      );
    }
    if (
      preconditions.resourceVersion !== undefined &&
      preconditions.resourceVersion !== String(existing.rev)
    ) {
      throw preconditionConflictError(
        type,
        name,
        `the ResourceVersion in the precondition (${preconditions.resourceVersion}) does not match the ResourceVersion in record (${existing.rev}). The object might have been modified`,
      );
    }
    // A kind with a CheckGracefulDelete (pods: `core/pod.ts`) always deletes gracefully, so its
    // DELETE is a MODIFIED (deletionTimestamp) before the DELETED. Without the kubelet emulation
    // (`gracefulPods` false) the grace period is 0, as `kubectl delete --now` asks.
    const gracePeriod = type.strategy.gracePeriod;
    const target = withDeletionFinalizers(existing.obj, behaviour.propagationPolicy);
    const plan = planDeletion(
      target,
      gracePeriod !== undefined && !this.#gracefulPods ? { ...behaviour, gracePeriodSeconds: 0 } : behaviour,
      this.#clock.now(),
      gracePeriod,
    );
    if (plan.kind === 'pending') return { entry: existing, deleted: false };
    if (behaviour.dryRun === true) {
      // dryrun.go: preconditions checked, the deletion worked out, nothing written.
      if (plan.kind === 'delete') return { entry: existing, deleted: true };
      const obj: StoredObject = { ...existing.obj, metadata: buildMeta(plan.metadata, {}) };
      return {
        entry: new StoredEntry(type, existing.namespace, name, obj, existing.rev),
        deleted: plan.thenDelete,
      };
    }
    let last = existing;
    if (plan.kind === 'mark') {
      const obj: StoredObject = { ...existing.obj, metadata: buildMeta(plan.metadata, {}) };
      if (JSON.stringify(obj) !== existing.json()) {
        const rev = this.storage.nextRevision();
        obj.metadata.resourceVersion = String(rev);
        last = new StoredEntry(type, existing.namespace, name, obj, rev);
        this.storage.commit('MODIFIED', last, existing);
      }
      if (!plan.thenDelete) {
        if (plan.graceSeconds > 0) this.#scheduleTermination(last, plan.graceSeconds);
        return { entry: last, deleted: false };
      }
    }
    const rev = this.storage.nextRevision();
    this.storage.commit('DELETED', last.withResourceVersion(rev), last);
    return { entry: last, deleted: true };
  }

  /** The kubelet's part of a graceful pod deletion: after the grace period, delete with grace 0. */
  #scheduleTermination(entry: StoredEntry, graceSeconds: number): void {
    const id = `${entry.type.apiVersion}/${entry.type.resource}/${entry.key}`;
    this.#terminations.get(id)?.timer.cancel();
    const uid = entry.obj.metadata.uid;
    const run = (): void => {
      this.#terminations.delete(id);
      const current = this.find(entry.type, entry.namespace, entry.name);
      if (
        current !== undefined &&
        current.obj.metadata.uid === uid &&
        current.obj.metadata.deletionTimestamp !== undefined
      )
        this.delete(entry.type, entry.namespace, entry.name, {}, { gracePeriodSeconds: 0 });
    };
    this.#terminations.set(id, { run, timer: this.#clock.setTimeout(run, graceSeconds * 1000) });
  }

  /** Runs every pending graceful pod deletion now, as if every grace period had passed. */
  finishTerminations(): void {
    for (const { run, timer } of [...this.#terminations.values()]) {
      timer.cancel();
      run();
    }
  }

  /** Forgets pending graceful deletions (the pods stay as they are). */
  cancelTerminations(): void {
    for (const { timer } of this.#terminations.values()) timer.cancel();
    this.#terminations.clear();
  }
}

/**
 * The metadata the server owns, from `owner` (the stored object's, or a new object's uid and
 * creation time): identity and deletion fields a client cannot set, `selfLink` dropped (gone since
 * 1.20).
 */
function ownedMeta(name: string, namespace: string, owner: JsonObject): JsonObject {
  return {
    name,
    namespace: namespace === '' ? undefined : namespace,
    selfLink: undefined,
    uid: owner.uid,
    creationTimestamp: owner.creationTimestamp,
    deletionTimestamp: owner.deletionTimestamp,
    deletionGracePeriodSeconds: owner.deletionGracePeriodSeconds,
  };
}

/** The stored form of a write: `meta` with the `owned` fields over it, the kind's normalisation. */
function storedForm(type: ResourceType, obj: JsonObject, meta: JsonObject, owned: JsonObject): StoredObject {
  return normalize(obj, buildMeta(meta, owned), type.strategy.normalize);
}

/**
 * `deletionFinalizersForGarbageCollection` (`registry/generic/registry/store.go`): `Orphan` adds the
 * `orphan` finalizer, `Foreground` the `foregroundDeletion` one (each removes the other); the
 * garbage collector removes them once it has done its part (see `garbageCollector.ts`).
 */
function withDeletionFinalizers(
  obj: StoredObject,
  policy: DeleteBehaviour['propagationPolicy'],
): StoredObject {
  if (policy === undefined || policy === 'Background') return obj;
  const current = Array.isArray(obj.metadata.finalizers) ? (obj.metadata.finalizers as unknown[]) : [];
  const add = policy === 'Orphan' ? 'orphan' : 'foregroundDeletion';
  const drop = policy === 'Orphan' ? 'foregroundDeletion' : 'orphan';
  const finalizers = current.filter((f) => f !== drop);
  if (!finalizers.includes(add)) finalizers.push(add);
  return { ...obj, metadata: { ...obj.metadata, finalizers } };
}
