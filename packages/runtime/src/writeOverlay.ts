import type { KubeObject } from '@kinformer/core';

interface Entry {
  /** The object the server returned for our write; undefined for a delete. */
  obj: KubeObject | undefined;
  /** Its resourceVersion ('' for a delete the server answered with a Status). */
  rv: string;
  uid: string | undefined;
  /** The resourceVersion the cache held for the key when we wrote (for non-numeric versions). */
  cachedRv: string | undefined;
}

/**
 * Read-your-writes: what the runtime's own writes returned, in front of the informer's cache.
 *
 * Each successful write records the returned object for its key; reads see it until the cache holds
 * that resourceVersion or a newer one (compared as integers when both are decimal strings, as
 * kube-apiserver's are, which KEP-5504 makes a documented property; otherwise until the cache's
 * version differs from the one it had when we wrote). A delete hides the cached object until the
 * informer delivers the delete (or a newer incarnation). The Java Operator SDK calls this the
 * temporary resource cache; controller-runtime has no equivalent (its users read stale objects
 * right after their own writes, kubernetes-sigs/controller-runtime#1464).
 */
export class WriteOverlay {
  readonly #kinds = new Map<string, Map<string, Entry>>();

  /** Records a write's result for `key` (the cache's current object, if any, given as `cached`). */
  recordWrite(kind: string, key: string, obj: KubeObject, cached: KubeObject | undefined): void {
    const rv = obj.metadata?.resourceVersion ?? '';
    const existing = this.#kinds.get(kind)?.get(key);
    // Two writes in flight may answer out of order: keep the newer.
    if (existing?.obj !== undefined && isNewer(existing.rv, rv)) return;
    this.#map(kind).set(key, {
      obj,
      rv,
      uid: obj.metadata?.uid,
      cachedRv: cached?.metadata?.resourceVersion,
    });
  }

  /** Records a delete of `key` (`uid`: the deleted object's, when known). */
  recordDelete(kind: string, key: string, uid: string | undefined, cached: KubeObject | undefined): void {
    this.#map(kind).set(key, { obj: undefined, rv: '', uid, cachedRv: cached?.metadata?.resourceVersion });
  }

  /** What a reader of `key` sees: our newer write, or `cached` (dropping entries the cache caught up with). */
  read<T extends KubeObject>(kind: string, key: string, cached: T | undefined): T | undefined {
    const entries = this.#kinds.get(kind);
    const entry = entries?.get(key);
    if (entry === undefined) return cached;
    if (caughtUp(entry, cached)) {
      entries!.delete(key);
      return cached;
    }
    return entry.obj as T | undefined;
  }

  /**
   * Called with every object the informer delivers: drops the entries it satisfies. For a delete,
   * `deleted` is true and `obj` the last state: an entry for that object (same uid) or an older
   * version is dropped, since the object is gone whatever we wrote.
   */
  observe(kind: string, key: string, obj: KubeObject, deleted: boolean): void {
    const entries = this.#kinds.get(kind);
    const entry = entries?.get(key);
    if (entry === undefined) return;
    if (!deleted) {
      if (caughtUp(entry, obj)) entries!.delete(key);
      return;
    }
    const uid = obj.metadata?.uid;
    const rv = obj.metadata?.resourceVersion ?? '';
    if (entry.obj === undefined || (uid !== undefined && uid === entry.uid) || !isNewer(entry.rv, rv))
      entries!.delete(key);
  }

  /** Entries held (for tests and metrics). */
  size(): number {
    let n = 0;
    for (const m of this.#kinds.values()) n += m.size;
    return n;
  }

  #map(kind: string): Map<string, Entry> {
    let m = this.#kinds.get(kind);
    if (m === undefined) {
      m = new Map<string, Entry>();
      this.#kinds.set(kind, m);
    }
    return m;
  }
}

const DECIMAL = /^[1-9][0-9]*$/;

/** `a` is strictly newer than `b` (only decidable for decimal resourceVersions). */
function isNewer(a: string, b: string): boolean {
  if (!DECIMAL.test(a) || !DECIMAL.test(b)) return false;
  return a.length !== b.length ? a.length > b.length : a > b;
}

function caughtUp(entry: Entry, cached: KubeObject | undefined): boolean {
  if (entry.obj === undefined) {
    // Our delete: done once the cache no longer has that object (gone, or a new incarnation).
    if (cached === undefined) return true;
    const uid = cached.metadata?.uid;
    if (entry.uid !== undefined && uid !== undefined && uid !== entry.uid) return true;
    return cached.metadata?.resourceVersion !== entry.cachedRv && entry.uid === undefined;
  }
  if (cached === undefined) return false; // the informer has not seen our create yet (or a delete raced it)
  const rv = cached.metadata?.resourceVersion ?? '';
  if (rv === entry.rv) return true;
  if (DECIMAL.test(rv) && DECIMAL.test(entry.rv)) return isNewer(rv, entry.rv);
  return rv !== entry.cachedRv;
}
