import { randomUUID } from 'node:crypto';
import type { Clock } from '@kinformer/core';
import type { Timer } from '@kinformer/core/internal';
import {
  planDeletion,
  shouldDeleteDuringUpdate,
  type DeleteBehaviour,
} from '../registry/gracefulDeletion.js';
import { EventHistory, HistoryEvent, type StoredEventType } from './eventHistory.js';
import { rec, type JsonObject } from '../api/json.js';
import { applyJsonPatch, applyMergePatch, PatchError, type PatchType } from '../registry/patch.js';
import type { ResourceType } from '../registry/resourceRegistry.js';
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
import { StoredEntry, type StoredObject } from './storedEntry.js';
import { applyStrategicMergePatch, patchSchemaFor } from '../registry/strategicMergePatch.js';
import { asBody, buildMeta, normalize, randomSuffix, rfc3339, text } from './storedForm.js';
import { trackUpdate, sameIgnoringManagerTimes } from '../registry/managedFields.js';
import type { WriteOptions } from '../endpoints/writeOptions.js';
import { nextGeneration, prepareForCreate, prepareForUpdate } from '../registry/writeStrategy.js';

/** Receives every write to one resource type, in revision order (a watcher). */
export interface EventSink {
  deliver(event: HistoryEvent): void;
  /** Ends the sink (a watch stream) when its type stops being served. */
  terminate?(): void;
}

/** A consistent view of one type at one revision: entries by key, and the keys in storage order. */
export interface Snapshot {
  readonly rev: number;
  readonly entries: ReadonlyMap<string, StoredEntry>;
  /** Keys sorted in storage (byte) order. Computed once per snapshot. */
  keys(): readonly string[];
}

/** All objects of one resource type, plus the watchers of that type. */
export class ResourceTable {
  readonly type: ResourceType;
  readonly entries = new Map<string, StoredEntry>();
  readonly watchers = new Set<EventSink>();
  /** Revision of the last write to this type (0 when never written). */
  lastWriteRev = 0;
  #sorted: string[] | undefined;

  constructor(type: ResourceType) {
    this.type = type;
  }

  /** Keys in storage order; re-sorted only after an object was added or removed. */
  sortedKeys(): readonly string[] {
    return (this.#sorted ??= [...this.entries.keys()].sort());
  }

  put(entry: StoredEntry): void {
    if (!this.entries.has(entry.key)) this.#sorted = undefined;
    this.entries.set(entry.key, entry);
  }

  remove(key: string): void {
    if (this.entries.delete(key)) this.#sorted = undefined;
  }
}

class HistoricalSnapshot implements Snapshot {
  readonly rev: number;
  readonly table: ResourceTable;
  readonly entries: Map<string, StoredEntry>;
  #keys: string[] | undefined;

  constructor(table: ResourceTable, rev: number, entries: Map<string, StoredEntry>) {
    this.table = table;
    this.rev = rev;
    this.entries = entries;
  }

  keys(): readonly string[] {
    return (this.#keys ??= [...this.entries.keys()].sort());
  }
}

/** Preconditions of a DELETE (`DeleteOptions.preconditions`). */
export interface DeletePreconditions {
  uid?: string;
  resourceVersion?: string;
}

/** Options of {@link ObjectStore}. */
export interface ObjectStoreOptions {
  historySize: number;
  initialResourceVersion: number;
  clock: Clock;
  /** Emulate graceful deletion of pods (the pod strategy's grace period and the kubelet's final delete). */
  gracefulPods: boolean;
  /** Called with the new revision after every write, bump and compaction. */
  onRevision?: ((rev: number) => void) | undefined;
}

interface RevisionWaiter {
  target: number;
  resolve(reached: boolean): void;
  timer: Timer | undefined;
}

const SNAPSHOT_CACHE_SIZE = 4;

/**
 * The fake's storage: one global revision counter, every object of every type, the bounded event
 * history, historical snapshots for exact-revision lists and continue tokens, and the writes
 * (create, update, patch, delete) with the real server's validation and errors. Synchronous.
 *
 * History model: events are kept in one ring of `historySize` events across all types. The oldest
 * revision the server can still serve (`compactedRV`) starts at the initial revision and moves up
 * when events are evicted or the history is compacted; exact lists, continue tokens and watches
 * from before it get 410.
 */
export class ObjectStore {
  readonly history: EventHistory;
  readonly #clock: Clock;
  readonly #tables = new Map<ResourceType, ResourceTable>();
  readonly #snapshots: HistoricalSnapshot[] = [];
  readonly #waiters = new Set<RevisionWaiter>();
  readonly #terminations = new Map<string, { run: () => void; timer: Timer }>();
  readonly #gracefulPods: boolean;
  readonly #onRevision: ((rev: number) => void) | undefined;
  readonly #commitListeners: Array<(event: HistoryEvent) => void> = [];
  #rev: number;
  #compactedRV: number;

  constructor(options: ObjectStoreOptions) {
    this.history = new EventHistory(options.historySize);
    this.#clock = options.clock;
    this.#gracefulPods = options.gracefulPods;
    this.#onRevision = options.onRevision;
    this.#rev = Math.max(1, Math.floor(options.initialResourceVersion));
    this.#compactedRV = this.#rev;
  }

  /** The current global revision. */
  get rev(): number {
    return this.#rev;
  }

  /** The oldest revision still served: exact lists, continue tokens and watches below it get 410. */
  get compactedRV(): number {
    return this.#compactedRV;
  }

  /** The table of `type` (created on first use). */
  table(type: ResourceType): ResourceTable {
    let table = this.#tables.get(type);
    if (!table) {
      table = new ResourceTable(type);
      this.#tables.set(type, table);
    }
    return table;
  }

  /** Every table created so far. */
  tables(): IterableIterator<ResourceTable> {
    return this.#tables.values();
  }

  /** The current state of `table` as a snapshot at the current revision (live: use synchronously). */
  current(table: ResourceTable): Snapshot {
    return { rev: this.#rev, entries: table.entries, keys: () => table.sortedKeys() };
  }

  /**
   * The state of `table` at revision `rev` (`compactedRV ≤ rev ≤ this.rev`), rebuilt by undoing the
   * newer events of the history. Rebuilt snapshots are cached, so paging through one costs one rebuild.
   */
  snapshotAt(table: ResourceTable, rev: number): Snapshot {
    if (rev >= table.lastWriteRev) return { rev, entries: table.entries, keys: () => table.sortedKeys() };
    const cached = this.#snapshots.find((s) => s.table === table && s.rev === rev);
    if (cached) return cached;
    const entries = new Map(table.entries);
    const history = this.history;
    for (let i = history.size - 1; i >= 0; i--) {
      const event = history.at(i);
      if (event.rev <= rev) break;
      if (event.entry.type !== table.type) continue;
      if (event.type === 'ADDED') entries.delete(event.entry.key);
      else if (event.prev) entries.set(event.prev.key, event.prev);
    }
    const snapshot = new HistoricalSnapshot(table, rev, entries);
    if (this.#snapshots.length >= SNAPSHOT_CACHE_SIZE) this.#snapshots.shift();
    this.#snapshots.push(snapshot);
    return snapshot;
  }

  /** Advances the revision by `n` without an event (writes to other types, an etcd progress notify). */
  bump(n = 1): number {
    this.#rev += Math.max(1, Math.floor(n));
    this.#notifyRevision();
    return this.#rev;
  }

  /**
   * Compacts: bumps the revision once and forgets all history before it, so every resourceVersion
   * and continue token handed out so far is too old (410).
   */
  compact(): number {
    this.#rev++;
    this.#compactedRV = this.#rev;
    this.history.clear();
    this.#snapshots.length = 0;
    this.#notifyRevision();
    return this.#compactedRV;
  }

  /**
   * Resolves `true` once the revision reaches `target`, or `false` after `timeoutMs` (on the
   * injected clock) or when {@link cancelWaits} is called.
   */
  waitForRevision(target: number, timeoutMs: number): Promise<boolean> {
    if (this.#rev >= target) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: RevisionWaiter = { target, resolve, timer: undefined };
      waiter.timer = this.#clock.setTimeout(() => {
        this.#waiters.delete(waiter);
        resolve(false);
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  /** Resolves every pending {@link waitForRevision} with `false`. */
  cancelWaits(): void {
    for (const waiter of this.#waiters) {
      waiter.timer?.cancel();
      waiter.resolve(false);
    }
    this.#waiters.clear();
  }

  #notifyRevision(): void {
    this.#onRevision?.(this.#rev);
    if (this.#waiters.size === 0) return;
    for (const waiter of this.#waiters) {
      if (this.#rev >= waiter.target) {
        this.#waiters.delete(waiter);
        waiter.timer?.cancel();
        waiter.resolve(true);
      }
    }
  }

  #commit(
    table: ResourceTable,
    type: StoredEventType,
    entry: StoredEntry,
    prev: StoredEntry | undefined,
  ): void {
    const event = new HistoryEvent(entry.rev, type, entry, prev);
    const evicted = this.history.push(event);
    if (evicted !== undefined && evicted.rev > this.#compactedRV) this.#compactedRV = evicted.rev;
    table.lastWriteRev = entry.rev;
    for (const watcher of table.watchers) watcher.deliver(event);
    this.#notifyRevision();
    for (const listener of this.#commitListeners) listener(event);
  }

  /**
   * Calls `listener` after every committed write (watchers have the event by then). A listener may
   * write to the store (the garbage collector does).
   */
  addCommitListener(listener: (event: HistoryEvent) => void): void {
    this.#commitListeners.push(listener);
  }

  /**
   * Puts an object in storage as it was before the server started (the system namespaces): at the
   * current revision, with no event and no revision bump. `obj` is the stored form.
   */
  preload(type: ResourceType, namespace: string, name: string, obj: StoredObject): StoredEntry {
    const entry = new StoredEntry(type, namespace, name, obj, this.#rev);
    this.table(type).put(entry);
    return entry;
  }

  /**
   * Moves the objects of `from` to `to` (the same group/version/resource re-registered with another
   * definition: an updated CRD), so they stay served. Watches of `from` are ended.
   */
  retype(from: ResourceType, to: ResourceType): void {
    const old = this.#tables.get(from);
    if (old === undefined || from === to) return;
    this.#tables.delete(from);
    const table = this.table(to);
    for (const entry of old.entries.values())
      table.put(new StoredEntry(to, entry.namespace, entry.name, entry.obj, entry.rev));
    table.lastWriteRev = old.lastWriteRev;
    for (const w of [...old.watchers]) w.terminate?.();
  }

  /** Forgets every object of `type` without events (its CRD is gone); ends its watches. */
  drop(type: ResourceType): void {
    const table = this.#tables.get(type);
    if (table === undefined) return;
    this.#tables.delete(type);
    for (const w of [...table.watchers]) w.terminate?.();
  }

  /** The stored object, or undefined. */
  find(type: ResourceType, namespace: string, name: string): StoredEntry | undefined {
    const table = this.#tables.get(type);
    return table?.entries.get(type.namespaced ? `${namespace}/${name}` : name);
  }

  /** The stored object. @throws 404 NotFound. */
  get(type: ResourceType, namespace: string, name: string): StoredEntry {
    const entry = this.find(type, namespace, name);
    if (!entry) throw notFoundError(type, name);
    return entry;
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
    const table = this.table(type);
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
    const rev = options.dryRun === true ? this.#rev : ++this.#rev;
    const managedFields =
      options.fieldManager === undefined
        ? meta.managedFields
        : trackUpdate(
            { type, subresource: undefined, manager: options.fieldManager, now: this.#clock.now() },
            undefined,
            obj,
          );
    const stored = normalize(
      obj,
      buildMeta(meta, {
        name,
        namespace: namespace === '' ? undefined : namespace,
        selfLink: undefined,
        uid: randomUUID(),
        resourceVersion: options.dryRun === true ? undefined : String(rev),
        generation: nextGeneration(type, undefined, obj),
        creationTimestamp: rfc3339(this.#clock.now()),
        deletionTimestamp: undefined,
        deletionGracePeriodSeconds: undefined,
        managedFields,
      }),
      type.strategy.normalize,
    );
    const entry = new StoredEntry(type, namespace, name, stored, rev);
    if (options.dryRun === true) return entry;
    table.put(entry);
    this.#commit(table, 'ADDED', entry, undefined);
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
    const table = this.table(type);
    const existing = table.entries.get(namespace === '' ? name : `${namespace}/${name}`);
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
    const generation = nextGeneration(type, old, next);
    const candidate = normalize(
      next,
      buildMeta(nextMeta, {
        name,
        namespace: namespace === '' ? undefined : namespace,
        selfLink: undefined,
        uid: oldMeta.uid,
        resourceVersion: String(existing.rev),
        generation,
        creationTimestamp: oldMeta.creationTimestamp,
        deletionTimestamp: oldMeta.deletionTimestamp,
        deletionGracePeriodSeconds: oldMeta.deletionGracePeriodSeconds,
      }),
      type.strategy.normalize,
    );
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
    const rev = ++this.#rev;
    candidate.metadata.resourceVersion = String(rev);
    const entry = new StoredEntry(type, namespace, name, candidate, rev);
    if (shouldDeleteDuringUpdate(oldMeta, candidate.metadata.finalizers)) {
      table.remove(existing.key);
      this.#commit(table, 'DELETED', existing.withResourceVersion(rev), existing);
      return entry;
    }
    table.put(entry);
    this.#commit(table, 'MODIFIED', entry, existing);
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
    const table = this.table(type);
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
        const rev = ++this.#rev;
        obj.metadata.resourceVersion = String(rev);
        last = new StoredEntry(type, existing.namespace, name, obj, rev);
        table.put(last);
        this.#commit(table, 'MODIFIED', last, existing);
      }
      if (!plan.thenDelete) {
        if (plan.graceSeconds > 0) this.#scheduleTermination(last, plan.graceSeconds);
        return { entry: last, deleted: false };
      }
    }
    const rev = ++this.#rev;
    table.remove(last.key);
    this.#commit(table, 'DELETED', last.withResourceVersion(rev), last);
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
