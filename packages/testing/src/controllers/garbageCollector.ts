import type { HistoryEvent } from '../storage/eventHistory.js';
import { rec, type JsonObject } from '../api/json.js';
import type { RegistryStore } from '../registry/registryStore.js';
import type { ResourceType } from '../registry/resourceRegistry.js';
import type { StoredEntry } from '../storage/storedEntry.js';
import { text } from '../storage/storedForm.js';

/**
 * The garbage collector a cluster runs (kube-controller-manager's
 * `pkg/controller/garbagecollector`: `garbagecollector.go` `attemptToDeleteItem`,
 * `attemptToOrphanWorker`, `processDeletingDependentsItem`), acting as soon as a write commits:
 *
 * - **background** (the default): when an owner is gone, each dependent (an object whose
 *   `ownerReferences` name the owner's uid) is deleted if none of its other owners exists, else the
 *   reference to the gone owner is removed;
 * - **foreground**: an owner deleted with `propagationPolicy: Foreground` carries `deletionTimestamp`
 *   and the `foregroundDeletion` finalizer (set by the registry); its dependents are deleted
 *   (foreground too), and once no dependent with `blockOwnerDeletion: true` is left the finalizer is
 *   removed and the owner goes;
 * - **orphan**: an owner deleted with `Orphan` carries the `orphan` finalizer; its dependents lose
 *   their reference to it, then the finalizer is removed.
 *
 * Other finalizers are respected: an object that has them stays (with its `deletionTimestamp`) until
 * they are removed; dependents waiting on it are not touched before.
 */

interface ObjectRef {
  type: ResourceType;
  namespace: string;
  name: string;
}

interface OwnerRef {
  uid: string;
  blockOwnerDeletion: boolean;
}

function ownerRefs(meta: JsonObject): OwnerRef[] {
  const refs = meta.ownerReferences;
  if (!Array.isArray(refs)) return [];
  return (refs as unknown[])
    .map((r) => rec(r))
    .filter((r) => typeof r.uid === 'string')
    .map((r) => ({ uid: r.uid as string, blockOwnerDeletion: r.blockOwnerDeletion === true }));
}

function finalizersOf(meta: JsonObject): string[] {
  return Array.isArray(meta.finalizers) ? (meta.finalizers as unknown[]).map(text) : [];
}

function idOf(entry: StoredEntry): string {
  return `${entry.type.apiVersion}/${entry.type.resource}/${entry.key}`;
}

/** Deletes, orphans and unblocks dependents as a cluster's garbage collector does. */
export class GarbageCollector {
  readonly #store: RegistryStore;
  /** owner uid → dependents (by id). */
  readonly #dependents = new Map<string, Map<string, ObjectRef>>();
  /** uid → the object with that uid (to find an owner by its uid). */
  readonly #byUid = new Map<string, ObjectRef>();
  readonly #queue: HistoryEvent[] = [];
  #running = false;

  private constructor(store: RegistryStore) {
    this.#store = store;
    store.storage.addCommitListener((event) => this.#onCommit(event));
  }

  /** Starts collecting garbage in `store` (for the store's lifetime). */
  static attach(store: RegistryStore): GarbageCollector {
    return new GarbageCollector(store);
  }

  #onCommit(event: HistoryEvent): void {
    this.#index(event);
    this.#queue.push(event);
    if (this.#running) return;
    this.#running = true;
    try {
      for (let next = this.#queue.shift(); next !== undefined; next = this.#queue.shift())
        this.#process(next);
    } finally {
      this.#running = false;
    }
  }

  #index(event: HistoryEvent): void {
    const entry = event.entry;
    const ref: ObjectRef = { type: entry.type, namespace: entry.namespace, name: entry.name };
    const id = idOf(entry);
    const uid = text(entry.obj.metadata.uid);
    for (const owner of event.prev === undefined ? [] : ownerRefs(event.prev.obj.metadata)) {
      const deps = this.#dependents.get(owner.uid);
      deps?.delete(id);
      if (deps?.size === 0) this.#dependents.delete(owner.uid);
    }
    if (event.type === 'DELETED') {
      if (this.#byUid.get(uid)?.name === entry.name) this.#byUid.delete(uid);
      return;
    }
    this.#byUid.set(uid, ref);
    for (const owner of ownerRefs(entry.obj.metadata)) {
      let deps = this.#dependents.get(owner.uid);
      if (!deps) this.#dependents.set(owner.uid, (deps = new Map<string, ObjectRef>()));
      deps.set(id, ref);
    }
  }

  #find(ref: ObjectRef): StoredEntry | undefined {
    return this.#store.find(ref.type, ref.namespace, ref.name);
  }

  #dependentsOf(uid: string): StoredEntry[] {
    const out: StoredEntry[] = [];
    for (const ref of this.#dependents.get(uid)?.values() ?? []) {
      const entry = this.#find(ref);
      if (entry !== undefined && ownerRefs(entry.obj.metadata).some((o) => o.uid === uid)) out.push(entry);
    }
    return out;
  }

  #process(event: HistoryEvent): void {
    const meta = event.entry.obj.metadata;
    const uid = text(meta.uid);
    if (event.type === 'DELETED') {
      for (const dependent of this.#dependentsOf(uid)) this.#ownerGone(dependent, uid);
      for (const owner of ownerRefs(meta)) {
        const ref = this.#byUid.get(owner.uid);
        const entry = ref && this.#find(ref);
        if (entry !== undefined && finalizersOf(entry.obj.metadata).includes('foregroundDeletion'))
          this.#finishForeground(entry);
      }
      return;
    }
    // Act on the object as it is now (later writes may already be queued behind this event).
    const current = this.#store.find(event.entry.type, event.entry.namespace, event.entry.name);
    if (current === undefined || text(current.obj.metadata.uid) !== uid) return;
    if (current.obj.metadata.deletionTimestamp === undefined) return;
    const finalizers = finalizersOf(current.obj.metadata);
    if (finalizers.includes('orphan')) {
      for (const dependent of this.#dependentsOf(uid)) this.#dropOwnerRef(dependent, uid);
      this.#removeFinalizer(current, 'orphan');
    } else if (finalizers.includes('foregroundDeletion')) {
      for (const dependent of this.#dependentsOf(uid)) {
        // attemptToDeleteItem: a dependent that has dependents itself is deleted in the foreground
        // too (so the owner keeps waiting for the whole tree); a leaf in the background.
        if (dependent.obj.metadata.deletionTimestamp !== undefined) continue;
        const hasDependents = (this.#dependents.get(text(dependent.obj.metadata.uid))?.size ?? 0) > 0;
        this.#store.delete(
          dependent.type,
          dependent.namespace,
          dependent.name,
          { uid: text(dependent.obj.metadata.uid) },
          hasDependents ? { propagationPolicy: 'Foreground' } : {},
        );
      }
      const latest = this.#store.find(current.type, current.namespace, current.name);
      if (latest !== undefined && text(latest.obj.metadata.uid) === uid) this.#finishForeground(latest);
    }
  }

  /** A dependent whose owner `uid` is gone: deleted when no other owner exists, else unlinked. */
  #ownerGone(dependent: StoredEntry, uid: string): void {
    const others = ownerRefs(dependent.obj.metadata).filter((o) => o.uid !== uid);
    if (others.some((o) => this.#byUid.has(o.uid))) {
      this.#dropOwnerRef(dependent, uid);
      return;
    }
    if (dependent.obj.metadata.deletionTimestamp !== undefined) return;
    this.#store.delete(
      dependent.type,
      dependent.namespace,
      dependent.name,
      { uid: text(dependent.obj.metadata.uid) },
      {},
    );
  }

  /** Removes `foregroundDeletion` from `owner` once no blocking dependent is left. */
  #finishForeground(owner: StoredEntry): void {
    const uid = text(owner.obj.metadata.uid);
    const blocking = this.#dependentsOf(uid).some((d) =>
      ownerRefs(d.obj.metadata).some((o) => o.uid === uid && o.blockOwnerDeletion),
    );
    if (!blocking) this.#removeFinalizer(owner, 'foregroundDeletion');
  }

  #dropOwnerRef(dependent: StoredEntry, uid: string): void {
    const meta = dependent.obj.metadata;
    const refs = (meta.ownerReferences as unknown[]).filter((r) => rec(r).uid !== uid);
    const obj = { ...dependent.obj, metadata: { ...meta, ownerReferences: refs } };
    this.#store.update(
      dependent.type,
      dependent.type.namespaced ? dependent.namespace : undefined,
      dependent.name,
      obj,
    );
  }

  #removeFinalizer(entry: StoredEntry, finalizer: string): void {
    const meta = entry.obj.metadata;
    const finalizers = finalizersOf(meta).filter((f) => f !== finalizer);
    const obj = { ...entry.obj, metadata: { ...meta, finalizers } };
    this.#store.update(entry.type, entry.type.namespaced ? entry.namespace : undefined, entry.name, obj);
  }
}
