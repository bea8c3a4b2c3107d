import { ErrorCodes, KinformerError, shardSelectorFromRanges, splitHashSpace } from '@kinformer/core';
import { shardRangeLocator } from '@kinformer/core/internal';
import type { Clock, KubeObject, Logger, ShardRange, ShardSelector } from '@kinformer/core';
import type {
  ListerWatcherFactory,
  ResourceEventHandlerRegistration,
  SharedIndexInformer as SharedIndexInformerType,
} from '@kinformer/informer';
import { SharedIndexInformer, waitForCacheSync } from '@kinformer/informer';
import type { ObjectClient } from '@kinformer/client-node';
import type { V1Lease } from '@kubernetes/client-node';
import { kindString } from './kinds.js';
import type { Kind } from './kinds.js';
import { objectKey, sourceLabel } from './managedController.js';
import { controllerOf, controllerOfKind, groupOf } from './ownerReferences.js';
import type { Admission, ManagedController } from './managedController.js';
import { passes } from './predicates.js';
import type { Predicate } from './predicates.js';
import { HASH_RING_LABEL, RangeCoordinator } from './rangeCoordinator.js';
import type { RangeLeaseStore } from './rangeCoordinator.js';
import { PRIORITY_LOW } from './reconcileQueue.js';
import { kinds as builtinKinds } from './kinds.js';

/**
 * The label carrying the hash range of an owned object's controller owner (`hashSharding` with
 * `field: 'uid'`): the decimal index of the range among the ring's `virtualRanges`. The Manager's
 * client stamps it on every object it creates, updates or applies whose controller owner is of a
 * sharded primary kind, and on patches that set such a controller reference (a JSON patch only when
 * its own operations make sure of the labels map: docs/sharding.md); each replica then watches an
 * owned kind with one informer per range it holds, selecting on this label.
 */
export const HASH_RANGE_LABEL = 'kinformer.dev/hash-range';

/** `ManagerHashShardingOptions.virtualRanges` when unset. */
const DEFAULT_VIRTUAL_RANGES = 16;

const locators = new Map<number, (value: string) => number>();

/**
 * The hash range (`0 … virtualRanges − 1`) of `value` (a uid, or a namespace with `field:
 * 'namespace'`): what {@link HASH_RANGE_LABEL} says for an object whose controller owner has uid
 * `value`. For objects written outside the Manager's client (another tool, a fixture):
 * `labels: { [HASH_RANGE_LABEL]: String(hashRangeOf(owner.metadata.uid, 16)) }`.
 */
export function hashRangeOf(value: string, virtualRanges = DEFAULT_VIRTUAL_RANGES): number {
  let locate = locators.get(virtualRanges);
  if (locate === undefined) {
    if (!Number.isInteger(virtualRanges) || virtualRanges < 1 || virtualRanges > 1024)
      throw new KinformerError(
        ErrorCodes.INVALID_OPTION,
        `virtualRanges must be an integer from 1 to 1024, got ${String(virtualRanges)}`,
      );
    locate = shardRangeLocator(splitHashSpace(virtualRanges));
    locators.set(virtualRanges, locate);
  }
  return locate(value);
}

/** What happened to a range on this replica (for {@link ManagerHashShardingOptions.onRangeChange}). */
export interface RangeEvent {
  range: number;
  /**
   * `acquired`: its Lease is ours (its informer starts); `active`: its informer synced, its objects
   * are reconciled from now on; `handoff`: giving it up (no new reconciles, queued keys dropped);
   * `released`: handoff done and Lease released; `lost`: not renewed within the renew deadline.
   */
  state: 'acquired' | 'active' | 'handoff' | 'released' | 'lost';
  /** Clock ms. */
  at: number;
}

/**
 * Hash sharding of a {@link Manager} (`ManagerOptions.hashSharding`): the hash space of the primary
 * objects' `metadata.uid` split into `virtualRanges` ranges, each owned by one replica at a time
 * through a Lease. See the runtime README ("Hash ranges owned through Leases").
 */
export interface ManagerHashShardingOptions {
  /** The ring's name: Lease names `<name>-range-<i>` and `<name>-member-<identity>`, and the label value. */
  name: string;
  /** The namespace of the ring's Leases. */
  namespace: string;
  /** This replica's identity (a DNS subdomain name; default `$POD_NAME`, else hostname and a random suffix). */
  identity?: string;
  /** How many ranges the hash space is split into (default 16). Every replica of a ring must agree. */
  virtualRanges?: number;
  /** What is hashed: `uid` (default) or `namespace` of the primary object (owned objects: their owner's). */
  field?: 'uid' | 'namespace';
  /** Default 15 s. A range whose holder stopped renewing is taken over this long after its last renewal was seen. */
  leaseDurationMs?: number;
  /** Default 10 s: a holder that could not renew for this long stops reconciling the range. */
  renewDeadlineMs?: number;
  /** Default 2 s: how often each replica lists the Leases, renews and rebalances. */
  retryPeriodMs?: number;
  /** Where the Leases live (default: the API server, through the Manager's KubeConfig). */
  leases?: RangeLeaseStore;
  /** Called on every range change of this replica (measurements, logs). */
  onRangeChange?: (event: RangeEvent) => void;
}

/** What a Manager reports of its hash sharding (`mgr.hashShard()`). */
export interface HashShardStatus {
  ring: string;
  identity: string;
  /** Live members seen at the last list (this replica included). */
  members: string[];
  /** Ranges whose Lease this replica holds. */
  held: number[];
  /** Ranges whose objects it reconciles now (held, informer synced, not handing off). */
  active: number[];
  /** Reconciles not run because the object was not in an active range of this replica. */
  refused: number;
  /** Objects in this replica's range informers now: primaries, and owned objects (metadata). */
  cached: { primary: number; owned: number };
  /**
   * Events (the initial list's included) of owned objects in a range's informer whose controller
   * owner is in another range: a stale or hand-written {@link HASH_RANGE_LABEL} (e.g. `virtualRanges`
   * changed). They still queue the owner only where the owner's range is reconciled, but that replica
   * may not watch them.
   */
  mislabeled: number;
}

interface RangeState {
  phase: 'syncing' | 'active' | 'releasing';
  inflight: number;
  idle: Array<() => void>;
  /** Aborted when the range is lost: the signal of its reconciles in flight. */
  readonly lost: AbortController;
  /** Stops the range's informers. */
  readonly stop: AbortController;
  readonly informers: Map<string, SharedIndexInformerType<KubeObject>>;
  readonly registrations: ResourceEventHandlerRegistration[];
}

interface ShardedKind {
  readonly kind: Kind;
  readonly controllers: Array<{
    controller: ManagedController<KubeObject>;
    predicates: readonly Predicate[];
  }>;
}

/** Where an owned kind is read from (a controller's `owns` options). */
export interface OwnedScope {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** An owned kind in one scope, read through one informer per range, and the controllers it feeds. */
interface OwnedKind {
  readonly kind: Kind;
  readonly scope: OwnedScope;
  readonly controllers: Array<{
    controller: ManagedController<KubeObject>;
    primary: Kind;
    predicates: readonly Predicate[];
  }>;
}

/** What a range informer selects. */
export interface RangeSelection {
  /** Owned kinds: metadata only, within the `owns` options. */
  owned?: { scope: OwnedScope; labelSelector?: string };
  /** Server-side `shardSelector` (and the reflector's client-side filter). */
  shardSelector?: ShardSelector;
}

/** What the Manager gives the sharding. */
export interface HashShardingDeps {
  identity: string;
  clock: Clock;
  logger: Logger;
  store: RangeLeaseStore;
  /**
   * Builds (does not start) an informer of `kind` for range `range`, restricted to `selection` (cache
   * policy applied; the writes overlay too for primaries).
   */
  rangeInformer(kind: Kind, range: number, selection: RangeSelection): SharedIndexInformerType<KubeObject>;
  /** Called after a range's informers stopped (their objects are dropped). */
  rangeStopped?(range: number): void;
}

/** Prefix of the owned kinds' keys in a range's informers (primaries are keyed by their kind string). */
const OWNED = 'owned ';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** The Manager's hash sharding: range informers, admission of reconciles, handoff. */
export class HashSharding {
  readonly ring: string;
  readonly identity: string;
  readonly ranges: readonly ShardRange[];
  readonly #selectors: readonly ShardSelector[];
  /** The range of a hashed value (numeric matching, no string per call). */
  readonly #locate: (value: string) => number;
  readonly #field: 'uid' | 'namespace';
  readonly #deps: HashShardingDeps;
  readonly #options: ManagerHashShardingOptions;
  readonly #kinds = new Map<string, ShardedKind>();
  /** `group/Kind` of every sharded primary kind (what owner references name). */
  readonly #primaryKinds = new Set<string>();
  readonly #owned = new Map<string, OwnedKind>();
  readonly #states = new Map<number, RangeState>();
  readonly #coordinator: RangeCoordinator;
  #refused = 0;
  #mislabeled = 0;

  constructor(options: ManagerHashShardingOptions, deps: HashShardingDeps) {
    const invalid = (message: string): KinformerError =>
      new KinformerError(ErrorCodes.INVALID_OPTION, message, { details: { option: 'hashSharding' } });
    if (typeof options.name !== 'string' || !DNS_SUBDOMAIN.test(options.name) || options.name.length > 40)
      throw invalid(
        `hashSharding.name must be a DNS subdomain name of at most 40 characters, got ${JSON.stringify(options.name)}`,
      );
    if (!DNS_SUBDOMAIN.test(deps.identity) || deps.identity.length > 63)
      throw invalid(
        `the replica identity must be a DNS subdomain name of at most 63 characters, got ${JSON.stringify(deps.identity)}`,
      );
    const v = options.virtualRanges ?? DEFAULT_VIRTUAL_RANGES;
    if (!Number.isInteger(v) || v < 1 || v > 1024)
      throw invalid(`hashSharding.virtualRanges must be an integer from 1 to 1024, got ${String(v)}`);
    const lease = options.leaseDurationMs ?? 15_000;
    const renew = options.renewDeadlineMs ?? 10_000;
    const retry = options.retryPeriodMs ?? 2_000;
    if (!(lease > renew && renew > retry && retry > 0))
      throw invalid(
        `hashSharding needs leaseDurationMs > renewDeadlineMs > retryPeriodMs > 0, got ${lease}, ${renew}, ${retry}`,
      );
    this.ring = options.name;
    this.identity = deps.identity;
    this.#options = options;
    this.#deps = deps;
    this.#field = options.field ?? 'uid';
    this.ranges = splitHashSpace(v);
    this.#locate = shardRangeLocator(this.ranges);
    const field = this.#field === 'uid' ? 'object.metadata.uid' : 'object.metadata.namespace';
    this.#selectors = this.ranges.map((r) => shardSelectorFromRanges(field, [r]));
    this.#coordinator = new RangeCoordinator({
      ring: options.name,
      namespace: options.namespace,
      identity: deps.identity,
      ranges: v,
      leaseDurationMs: lease,
      renewDeadlineMs: renew,
      retryPeriodMs: retry,
      store: deps.store,
      clock: deps.clock,
      logger: deps.logger,
      callbacks: {
        acquired: (i) => this.#acquired(i),
        handoff: (i) => this.#handoff(i),
        lost: (i) => this.#lost(i),
        released: (i) => this.#emit(i, 'released'),
      },
    });
  }

  /** True for a kind whose objects are split into ranges (the primary kind of a controller). */
  shards(kind: Kind): boolean {
    return this.#kinds.has(kindString(kind));
  }

  /** Shards `kind` and feeds `controller` its objects from the ranges this replica owns. */
  addController(
    kind: Kind,
    controller: ManagedController<KubeObject>,
    predicates: readonly Predicate[],
  ): void {
    const key = kindString(kind);
    let sharded = this.#kinds.get(key);
    if (sharded === undefined) {
      sharded = { kind, controllers: [] };
      this.#kinds.set(key, sharded);
    }
    sharded.controllers.push({ controller, predicates });
    this.#primaryKinds.add(`${kind.group}/${kind.kind}`);
  }

  /** What owned objects' ranges are read by: the owner's uid (through {@link HASH_RANGE_LABEL}) or the namespace. */
  get field(): 'uid' | 'namespace' {
    return this.#field;
  }

  /**
   * Reads `kind`, owned by `primary`'s objects, through one informer per range held (metadata only):
   * objects labelled {@link HASH_RANGE_LABEL}` = <range>` (`field: 'uid'`), or the range's
   * `shardSelector` on the namespace (`field: 'namespace'`: an owned object shares its owner's).
   * Its events queue the owner's key while the owner's range is active here.
   */
  addOwned(
    kind: Kind,
    scope: OwnedScope,
    controller: ManagedController<KubeObject>,
    primary: Kind,
    predicates: readonly Predicate[],
  ): void {
    const key = `${kindString(kind)}|${scope.namespace ?? ''}|${scope.labelSelector ?? ''}|${scope.fieldSelector ?? ''}`;
    let owned = this.#owned.get(key);
    if (owned === undefined) {
      owned = { kind, scope, controllers: [] };
      this.#owned.set(key, owned);
    }
    owned.controllers.push({ controller, primary, predicates });
  }

  /**
   * `obj` with {@link HASH_RANGE_LABEL} set to its controller owner's range, when that owner is of a
   * sharded primary kind (`field: 'uid'`); `obj` itself otherwise (or when the label is right already).
   */
  stamp<T extends KubeObject>(obj: T): T {
    if (this.#field !== 'uid') return obj;
    const ref = controllerOf(obj);
    if (ref === undefined || !this.#primaryKinds.has(`${groupOf(ref.apiVersion)}/${ref.kind}`)) return obj;
    const value = String(this.#locate(ref.uid));
    const labels = obj.metadata?.labels;
    if (labels?.[HASH_RANGE_LABEL] === value) return obj;
    return { ...obj, metadata: { ...obj.metadata, labels: { ...labels, [HASH_RANGE_LABEL]: value } } };
  }

  /** The range of an object of a sharded kind. */
  rangeOf(obj: KubeObject): number {
    const meta = obj.metadata;
    return this.#locate((this.#field === 'uid' ? meta?.uid : meta?.namespace) ?? '');
  }

  /** True when an owned object's controller owner (`ownerUid`) falls in a range this replica reconciles. */
  ownerActive(obj: KubeObject, ownerUid: string | undefined): boolean {
    return this.#active(this.#ownerRange(obj, ownerUid));
  }

  /** The range of an owned object's controller owner (by its uid, or the object's namespace). */
  #ownerRange(obj: KubeObject, ownerUid: string | undefined): number {
    return this.#locate((this.#field === 'uid' ? ownerUid : obj.metadata?.namespace) ?? '');
  }

  #active(range: number): boolean {
    return this.#states.get(range)?.phase === 'active';
  }

  /**
   * Admits a reconcile of `key` (whose object is `object`): only when the object is in a range this
   * replica reconciles now; counted in flight until `done`. The signal aborts when the range is lost.
   */
  admit(key: string, object: KubeObject | undefined): Admission | undefined {
    const state = object === undefined ? undefined : this.#states.get(this.rangeOf(object));
    if (state === undefined || state.phase !== 'active') {
      this.#refused++;
      this.#deps.logger.debug({ key }, 'not in an active range of this replica: not reconciled');
      return undefined;
    }
    state.inflight++;
    let ended = false;
    return {
      signal: state.lost.signal,
      done: () => {
        if (ended) return;
        ended = true;
        state.inflight--;
        if (state.inflight === 0) for (const wake of state.idle.splice(0)) wake();
      },
    };
  }

  /** The cached object of `key` in the ranges this replica holds (any phase). */
  cached(kind: Kind, key: string): KubeObject | undefined {
    const k = kindString(kind);
    for (const state of this.#states.values()) {
      const hit = state.informers.get(k)?.getIndexer().getByKey(key);
      if (hit !== undefined) return hit;
    }
    return undefined;
  }

  /** Every informer of the ranges held now (for readiness). */
  informers(): SharedIndexInformerType<KubeObject>[] {
    return [...this.#states.values()].flatMap((s) => [...s.informers.values()]);
  }

  status(): HashShardStatus {
    return {
      ring: this.ring,
      identity: this.identity,
      members: this.#coordinator.members(),
      held: this.#coordinator.held(),
      active: [...this.#states]
        .filter(([, s]) => s.phase === 'active')
        .map(([i]) => i)
        .sort((a, b) => a - b),
      refused: this.#refused,
      cached: {
        primary: this.#count((k) => !k.startsWith(OWNED)),
        owned: this.#count((k) => k.startsWith(OWNED)),
      },
      mislabeled: this.#mislabeled,
    };
  }

  #count(which: (key: string) => boolean): number {
    let n = 0;
    for (const state of this.#states.values())
      for (const [k, informer] of state.informers) if (which(k)) n += informer.getStore().size();
    return n;
  }

  /**
   * Balances until `signal` aborts, then hands every range off and releases the Leases. Stop the
   * workers at the same time: a range is released only once its reconciles in flight have ended.
   */
  async run(signal: AbortSignal): Promise<void> {
    try {
      await this.#coordinator.run(signal);
    } finally {
      for (const i of [...this.#states.keys()]) this.#stopRange(i);
    }
  }

  #emit(range: number, state: RangeEvent['state']): void {
    const cb = this.#options.onRangeChange;
    if (cb === undefined) return;
    try {
      cb({ range, state, at: this.#deps.clock.now() });
    } catch (err) {
      this.#deps.logger.error({ err }, 'onRangeChange threw');
    }
  }

  #acquired(i: number): void {
    if (this.#states.has(i)) this.#stopRange(i);
    const state: RangeState = {
      phase: 'syncing',
      inflight: 0,
      idle: [],
      lost: new AbortController(),
      stop: new AbortController(),
      informers: new Map(),
      registrations: [],
    };
    this.#states.set(i, state);
    this.#emit(i, 'acquired');
    for (const [k, owned] of this.#owned) {
      const informer = this.#deps.rangeInformer(owned.kind, i, {
        owned:
          this.#field === 'uid'
            ? { scope: owned.scope, labelSelector: `${HASH_RANGE_LABEL}=${i}` }
            : { scope: owned.scope },
        ...(this.#field === 'uid' ? {} : { shardSelector: this.#selectors[i]! }),
      });
      state.informers.set(`${OWNED}${k}`, informer);
      for (const { controller, primary, predicates } of owned.controllers)
        state.registrations.push(
          controller.attach({
            label: `${sourceLabel(owned.kind, 'owned')} range ${i}`,
            informer,
            keys: (obj) => {
              const owner = controllerOfKind(primary, obj);
              if (owner === undefined) return [];
              // One hash per event: the owner's range both checks the label and admits the key.
              const range = this.#ownerRange(obj, owner.ref.uid);
              if (this.#field === 'uid' && range !== i) this.#mislabeled++;
              if (state.phase !== 'active') return [];
              // Exclusivity: only where the owner's range is reconciled (normally this range).
              return this.#active(range) ? [owner.key] : [];
            },
            predicates,
          }),
        );
    }
    for (const [k, sharded] of this.#kinds) {
      const informer = this.#deps.rangeInformer(sharded.kind, i, { shardSelector: this.#selectors[i]! });
      state.informers.set(k, informer);
      for (const { controller, predicates } of sharded.controllers)
        state.registrations.push(
          controller.attach({
            label: `${sourceLabel(sharded.kind)} range ${i}`,
            informer,
            keys: (obj) => (state.phase === 'active' ? [objectKey(obj)] : []),
            predicates,
          }),
        );
    }
    for (const informer of state.informers.values())
      informer.run(state.stop.signal).catch((err: unknown) => {
        this.#deps.logger.error({ err, range: i }, 'range informer failed');
      });
    void this.#activateWhenSynced(i, state);
  }

  async #activateWhenSynced(i: number, state: RangeState): Promise<void> {
    const synced = [...state.informers.values()].map((inf) => inf.hasSynced);
    for (;;) {
      try {
        if (!(await waitForCacheSync({ signal: state.stop.signal, clock: this.#deps.clock }, ...synced)))
          return;
        break;
      } catch (err) {
        this.#deps.logger.error({ err, range: i }, 'range informer cannot sync yet; still trying');
        await this.#deps.clock.sleep(this.#options.retryPeriodMs ?? 2_000, state.stop.signal);
        if (state.stop.signal.aborted) return;
      }
    }
    if (this.#states.get(i) !== state || state.phase !== 'syncing') return;
    // From now on events of the range queue keys; what the cache already holds is queued here once.
    state.phase = 'active';
    for (const [k, sharded] of this.#kinds) {
      const objects = state.informers.get(k)!.getStore().list();
      for (const { controller, predicates } of sharded.controllers)
        for (const obj of objects)
          if (predicates.every((p) => passes(p, { type: 'create', obj })))
            controller.queue.add(objectKey(obj), { priority: PRIORITY_LOW, reason: `range ${i} acquired` });
    }
    this.#emit(i, 'active');
  }

  /** Stops reconciling range `i`'s objects and drops its queued keys (they are another replica's now). */
  #quiesce(i: number, state: RangeState): void {
    state.phase = 'releasing';
    for (const [k, sharded] of this.#kinds) {
      const objects = state.informers.get(k)?.getStore().list() ?? [];
      for (const { controller } of sharded.controllers)
        for (const obj of objects) controller.queue.drop(objectKey(obj));
    }
  }

  async #handoff(i: number): Promise<void> {
    const state = this.#states.get(i);
    if (state === undefined) return;
    this.#emit(i, 'handoff');
    this.#quiesce(i, state);
    if (state.inflight > 0) await new Promise<void>((resolve) => state.idle.push(resolve));
    this.#stopRange(i);
  }

  #lost(i: number): void {
    const state = this.#states.get(i);
    if (state === undefined) return;
    this.#quiesce(i, state);
    state.lost.abort(
      new KinformerError(
        ErrorCodes.LEADER_ELECTION,
        `range ${i} of hash ring ${this.ring} was lost: not renewed in time`,
      ),
    );
    this.#stopRange(i);
    this.#emit(i, 'lost');
  }

  #stopRange(i: number): void {
    const state = this.#states.get(i);
    if (state === undefined) return;
    this.#states.delete(i);
    state.phase = 'releasing';
    state.stop.abort();
    for (const r of state.registrations.splice(0)) r.remove();
    this.#deps.rangeStopped?.(i);
  }
}

/**
 * The default {@link RangeLeaseStore}: the ring's Leases on the API server, through `client`. With
 * `listerWatchers` (the Manager passes its own) the store also watches them (an informer on the
 * ring's label), so that a released range or a joining member is seen at once.
 */
export function objectClientLeaseStore(
  client: ObjectClient,
  namespace: string,
  ring: string,
  listerWatchers?: ListerWatcherFactory,
): RangeLeaseStore {
  const leases = builtinKinds.leases;
  const labelSelector = `${HASH_RING_LABEL}=${ring}`;
  const store: RangeLeaseStore = {
    list: async (signal) => (await client.list<V1Lease>(leases, { namespace, labelSelector, signal })).items,
    create: (lease, signal) => client.create(leases, lease, { signal }),
    update: (lease, signal) => client.update(leases, lease, { signal }),
  };
  if (listerWatchers === undefined) return store;
  return {
    ...store,
    watch: (signal, onChange) => {
      const informer = new SharedIndexInformer<KubeObject>(
        listerWatchers(leases, { namespace, labelSelector, metadataOnly: false }),
        { name: `leases#hash-ring-${ring}` },
      );
      const changed = (obj: KubeObject): void => onChange(obj as V1Lease);
      informer.addEventHandler({ onAdd: changed, onUpdate: (_old, obj) => changed(obj) });
      informer.run(signal).catch(() => undefined);
    },
  };
}
