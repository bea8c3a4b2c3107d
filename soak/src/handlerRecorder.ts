import { deletionHandlingMetaNamespaceKeyFunc, isDeletedFinalStateUnknown } from '@kinformer/core';
import type { DeletedFinalStateUnknown, KubeObject, LabelSelector } from '@kinformer/core';
import type { ResourceEventHandler } from '@kinformer/informer';

/** What an informer is supposed to see: everything, one namespace, and/or objects matching a label selector. */
export interface InformerScope {
  namespace?: string;
  labelSelector?: LabelSelector;
}

/** True when `obj` is within `scope`. */
export function inScope(scope: InformerScope, obj: KubeObject): boolean {
  if (scope.namespace !== undefined && obj.metadata?.namespace !== scope.namespace) return false;
  if (scope.labelSelector !== undefined && !scope.labelSelector.matches(obj.metadata?.labels)) return false;
  return true;
}

/**
 * The kinds of inconsistency a handler's event stream can show:
 * - `rv-went-back`: an event for a key carries a lower resourceVersion than the previous event for it;
 * - `old-not-last-seen`: an update's old object is not the object of the previous event for that key
 *   (an event was lost or reordered);
 * - `add-while-present` / `update-while-absent` / `delete-while-absent`: the event type contradicts
 *   the key's state in the stream so far (a lost delete or add);
 * - `out-of-scope`: the object is outside the informer's namespace or label selector;
 * - `final-missing`, `final-stale`, `final-labels`: at the end, a key the server has in scope is
 *   absent from the stream, or its last event carries another resourceVersion or other labels;
 * - `final-not-deleted`: at the end, a key the server no longer has (in scope) did not end with a delete;
 * - `initial-adds`: the handler did not get exactly {@link HandlerRecorder.expectedInitialAdds} adds
 *   flagged `isInInitialList` (the initial list, or the cache when it was registered late).
 */
export type StreamViolationKind =
  | 'rv-went-back'
  | 'old-not-last-seen'
  | 'add-while-present'
  | 'update-while-absent'
  | 'delete-while-absent'
  | 'out-of-scope'
  | 'final-missing'
  | 'final-stale'
  | 'final-labels'
  | 'final-not-deleted'
  | 'initial-adds';

/** One inconsistency, for the report. */
export interface Violation {
  /** Informer and handler (`pods.v1 / slow`), or the informer alone for cache mismatches. */
  where: string;
  kind: string;
  key: string;
  detail: string;
}

interface KeyState {
  rv: number;
  present: boolean;
  /** The object of the last event (for a delete: the deleted object or the tombstone's). Not copied. */
  obj: KubeObject;
}

/** How many violations of each recorder are kept as examples. */
const SAMPLE_LIMIT = 20;

/** Options of {@link HandlerRecorder}. */
export interface HandlerRecorderOptions {
  /** Where the handler is, for the report (`pods.v1 / fast`). */
  where: string;
  scope: InformerScope;
  /**
   * An async handler that awaits every event and now and then sleeps 1–3 ms (a slow consumer), instead
   * of a synchronous one.
   */
  slow: boolean;
  /**
   * Make every `throwEvery`-th call fail after recording the event (the fast handler throws, the slow
   * one rejects), to check that a failing handler never stops delivery. 0 (default): never.
   */
  throwEvery?: number;
}

/**
 * A resource event handler that records, per key, the resourceVersion and object of the last event
 * it received, and checks each event against the stream so far (see {@link StreamViolationKind}).
 * After the run, {@link checkFinal} compares the last event of every key with the server's state.
 * Objects are kept by reference (they are the cache's, frozen); nothing is copied.
 */
export class HandlerRecorder {
  readonly where: string;
  readonly handler: ResourceEventHandler<KubeObject>;
  /** Events received, by type; `tombstones` counts the deletes that carried a DeletedFinalStateUnknown. */
  readonly events = { add: 0, update: 0, delete: 0, tombstones: 0, initialAdds: 0 };
  /** Violations by kind. */
  readonly violationCounts: Partial<Record<StreamViolationKind, number>> = {};
  /** The first violations, as examples. */
  readonly samples: Violation[] = [];
  /** Handler calls in progress (the slow handler's awaits). */
  inFlight = 0;
  /** Calls made to fail on purpose (see {@link HandlerRecorderOptions.throwEvery}). */
  thrown = 0;
  /**
   * How many adds with `isInInitialList` this handler must get in total (the cache size when it was
   * registered, or the initial list); checked by {@link checkFinal} when set.
   */
  expectedInitialAdds: number | undefined;

  readonly #scope: InformerScope;
  readonly #keys = new Map<string, KeyState>();
  readonly #throwEvery: number;
  #calls = 0;

  constructor(options: HandlerRecorderOptions) {
    this.where = options.where;
    this.#scope = options.scope;
    this.#throwEvery = options.throwEvery ?? 0;
    const onAdd = (obj: KubeObject, isInInitialList: boolean): void => {
      this.#onAdd(obj, isInInitialList);
      this.#maybeThrow();
    };
    const onUpdate = (oldObj: KubeObject, newObj: KubeObject): void => {
      this.#onUpdate(oldObj, newObj);
      this.#maybeThrow();
    };
    const onDelete = (obj: KubeObject | DeletedFinalStateUnknown<KubeObject>): void => {
      this.#onDelete(obj);
      this.#maybeThrow();
    };
    this.handler = options.slow
      ? {
          onAdd: (obj, initial) => this.#slowly(() => onAdd(obj, initial)),
          onUpdate: (oldObj, newObj) => this.#slowly(() => onUpdate(oldObj, newObj)),
          onDelete: (obj) => this.#slowly(() => onDelete(obj)),
        }
      : { onAdd, onUpdate, onDelete };
  }

  /** Events received in total. */
  get total(): number {
    return this.events.add + this.events.update + this.events.delete;
  }

  /** Violations in total. */
  get violations(): number {
    let n = 0;
    for (const k in this.violationCounts) n += this.violationCounts[k as StreamViolationKind] ?? 0;
    return n;
  }

  /** Keys whose last event was an add or update. */
  get presentKeys(): number {
    let n = 0;
    for (const s of this.#keys.values()) if (s.present) n++;
    return n;
  }

  /**
   * Compares the last event of every key with `expected` (the server's objects in this informer's
   * scope, by key): each expected key must end present with the same resourceVersion and labels;
   * every other key must end with a delete. Returns the number of keys checked.
   */
  checkFinal(expected: ReadonlyMap<string, KubeObject>): number {
    if (this.expectedInitialAdds !== undefined && this.events.initialAdds !== this.expectedInitialAdds) {
      this.#violate(
        'initial-adds',
        '-',
        `${this.events.initialAdds} adds flagged isInInitialList, expected ${this.expectedInitialAdds}`,
      );
    }
    for (const [key, obj] of expected) {
      const s = this.#keys.get(key);
      const rv = rvOf(obj);
      if (s === undefined || !s.present) {
        this.#violate(
          'final-missing',
          key,
          `server has rv ${rv}; the stream ${s === undefined ? 'never saw the key' : `ended with a delete at rv ${s.rv}`}`,
        );
      } else if (s.rv !== rv) {
        this.#violate('final-stale', key, `server has rv ${rv}; the last event had rv ${s.rv}`);
      } else if (labelsOf(s.obj) !== labelsOf(obj)) {
        this.#violate(
          'final-labels',
          key,
          `server has labels ${labelsOf(obj)}; the last event had ${labelsOf(s.obj)}`,
        );
      }
    }
    for (const [key, s] of this.#keys) {
      if (s.present && !expected.has(key)) {
        this.#violate(
          'final-not-deleted',
          key,
          `the server does not have it (in scope); the last event was an add/update at rv ${s.rv}`,
        );
      }
    }
    return expected.size;
  }

  #maybeThrow(): void {
    if (this.#throwEvery > 0 && this.total % this.#throwEvery === 0) {
      this.thrown++;
      throw new Error(`${this.where}: failing on purpose (event ${this.total})`);
    }
  }

  #slowly(fn: () => void): Promise<void> {
    this.inFlight++;
    const sleep = ++this.#calls % 64 === 0;
    const done = (): void => {
      try {
        fn();
      } finally {
        this.inFlight--;
      }
    };
    if (sleep) return new Promise((resolve) => setTimeout(resolve, 1 + (this.#calls % 3))).then(done);
    return Promise.resolve().then(done);
  }

  #onAdd(obj: KubeObject, isInInitialList: boolean): void {
    this.events.add++;
    if (isInInitialList) this.events.initialAdds++;
    const key = deletionHandlingMetaNamespaceKeyFunc(obj);
    const rv = rvOf(obj);
    const s = this.#keys.get(key);
    if (s !== undefined) {
      if (s.present)
        this.#violate(
          'add-while-present',
          key,
          `add at rv ${rv} while the last event (rv ${s.rv}) left it present`,
        );
      if (rv < s.rv) this.#violate('rv-went-back', key, `add at rv ${rv} after rv ${s.rv}`);
    }
    this.#checkScope(key, obj, 'add');
    this.#record(key, s, rv, true, obj);
  }

  #onUpdate(oldObj: KubeObject, newObj: KubeObject): void {
    this.events.update++;
    const key = deletionHandlingMetaNamespaceKeyFunc(newObj);
    const rv = rvOf(newObj);
    const s = this.#keys.get(key);
    if (s === undefined || !s.present) {
      this.#violate(
        'update-while-absent',
        key,
        `update to rv ${rv} but the key is ${s === undefined ? 'unknown' : `deleted (rv ${s.rv})`}`,
      );
    } else {
      if (rv < s.rv) this.#violate('rv-went-back', key, `update to rv ${rv} after rv ${s.rv}`);
      const oldRv = rvOf(oldObj);
      if (oldRv !== s.rv)
        this.#violate(
          'old-not-last-seen',
          key,
          `update's old object has rv ${oldRv}; the last event had rv ${s.rv}`,
        );
    }
    this.#checkScope(key, newObj, 'update');
    this.#record(key, s, rv, true, newObj);
  }

  #onDelete(deleted: KubeObject | DeletedFinalStateUnknown<KubeObject>): void {
    this.events.delete++;
    let obj: KubeObject;
    let key: string;
    if (isDeletedFinalStateUnknown(deleted)) {
      this.events.tombstones++;
      obj = deleted.obj;
      key = deleted.key;
    } else {
      obj = deleted;
      key = deletionHandlingMetaNamespaceKeyFunc(deleted);
    }
    const rv = rvOf(obj);
    const s = this.#keys.get(key);
    if (s === undefined || !s.present) {
      this.#violate(
        'delete-while-absent',
        key,
        `delete at rv ${rv} but the key is ${s === undefined ? 'unknown' : `already deleted (rv ${s.rv})`}`,
      );
    } else if (rv < s.rv) {
      this.#violate('rv-went-back', key, `delete at rv ${rv} after rv ${s.rv}`);
    }
    this.#checkScope(key, obj, 'delete');
    this.#record(key, s, rv, false, obj);
  }

  #record(key: string, s: KeyState | undefined, rv: number, present: boolean, obj: KubeObject): void {
    if (s === undefined) {
      this.#keys.set(key, { rv, present, obj });
      return;
    }
    // Never move the recorded version back: one regression must not hide the next.
    if (rv >= s.rv) s.rv = rv;
    s.present = present;
    s.obj = obj;
  }

  #checkScope(key: string, obj: KubeObject, event: string): void {
    if (!inScope(this.#scope, obj)) {
      this.#violate(
        'out-of-scope',
        key,
        `${event} of an object outside the scope (namespace ${obj.metadata?.namespace ?? '-'}, labels ${labelsOf(obj)})`,
      );
    }
  }

  #violate(kind: StreamViolationKind, key: string, detail: string): void {
    this.violationCounts[kind] = (this.violationCounts[kind] ?? 0) + 1;
    if (this.samples.length < SAMPLE_LIMIT) this.samples.push({ where: this.where, kind, key, detail });
  }
}

/** The resourceVersion of an object as a number (the fake's are integers); `NaN` when missing. */
export function rvOf(obj: KubeObject): number {
  return Number(obj.metadata?.resourceVersion ?? Number.NaN);
}

/** The labels of an object as canonical text (sorted), for comparisons and reports. */
export function labelsOf(obj: KubeObject): string {
  const labels = obj.metadata?.labels;
  if (labels === undefined) return '{}';
  return JSON.stringify(
    Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  );
}
