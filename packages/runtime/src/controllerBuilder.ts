import { ErrorCodes, KinformerError } from '@kinformer/core';
import type { KubeObject } from '@kinformer/core';
import type { Kind } from './kinds.js';
import type { ManagedController } from './managedController.js';
import type { Predicate } from './predicates.js';
import type { Reconciler } from './reconcileContext.js';

/** Which objects of a kind an informer holds (the scope of `for`, `owns` and `watches`). */
export interface SourceOptions<T extends KubeObject = KubeObject> {
  /** Only this namespace (default: the Manager's namespace, or all). */
  namespace?: string;
  /** Server-side label selector. */
  labelSelector?: string;
  /** Server-side field selector. */
  fieldSelector?: string;
  /** Predicates of this source only (ANDed with the controller's `withPredicates`). */
  predicates?: Predicate<T>[];
}

/** What `watches` maps an object to: keys (`ns/name` or `name`) or `{ namespace, name }` refs. */
export type MapToKeys<W extends KubeObject> = (
  obj: W,
) => Iterable<string | { namespace?: string | undefined; name: string }>;

/** A source as the builder records it. @internal */
export type SourceSpec =
  | { type: 'for'; kind: Kind; options: SourceOptions }
  | { type: 'owns'; kind: Kind; options: SourceOptions }
  | { type: 'watches'; kind: Kind; map: MapToKeys<KubeObject>; options: SourceOptions };

/** How the builder hands its spec to the Manager. @internal */
export type RegisterController = <X extends KubeObject>(spec: ControllerSpec<X>) => ManagedController<X>;

/** What the builder hands the Manager. @internal */
export interface ControllerSpec<T extends KubeObject> {
  name: string;
  primary: Kind<T> | undefined;
  sources: SourceSpec[];
  predicates: Predicate[];
  concurrency: number;
  reconcileTimeoutMs: number | undefined;
  needLeaderElection: boolean;
  reconciler: Reconciler<T>;
}

/**
 * Builds one controller (controller-runtime's `builder.ControllerManagedBy(mgr)`):
 *
 * ```ts
 * mgr.controller('configmap-per-deployment')
 *   .for(kinds.deployments, { predicates: [labelSelector('app')] })
 *   .owns(kinds.configMaps)
 *   .concurrency(2)
 *   .reconcile(async (ctx) => { … });
 * ```
 *
 * `reconcile(fn)` ends the chain and registers the controller with the Manager; it runs from
 * `mgr.start()` (while this replica leads, when leader election is on).
 */
export class ControllerBuilder<T extends KubeObject = KubeObject> {
  readonly #name: string;
  readonly #register: RegisterController;
  #primary: Kind<T> | undefined;
  readonly #sources: SourceSpec[] = [];
  readonly #predicates: Predicate[] = [];
  #concurrency = 1;
  #timeoutMs: number | undefined;
  #needLeaderElection = true;
  #done = false;

  /** @internal Made by `Manager.controller`. */
  constructor(name: string, register: RegisterController) {
    this.#name = name;
    this.#register = register;
  }

  /**
   * The primary kind: each of its objects is a key (`namespace/name`), and `ctx.object` is the
   * cached object of the key. At most one.
   */
  for<P extends KubeObject>(kind: Kind<P>, options: SourceOptions<P> = {}): ControllerBuilder<P> {
    this.#assertOpen();
    if (this.#primary !== undefined)
      this.#invalid('for() was called twice: a controller has one primary kind');
    const self = this as unknown as ControllerBuilder<P>;
    self.#primary = kind;
    self.#sources.push({ type: 'for', kind, options: options });
    return self;
  }

  /**
   * Objects this controller creates and marks with a controller owner reference
   * ({@link setControllerReference}) to a primary: their events become the owner's key. Cached
   * metadata-only (names, labels, owner references), so owning Secrets or Pods costs little memory.
   */
  owns(kind: Kind, options: SourceOptions = {}): this {
    this.#assertOpen();
    this.#sources.push({ type: 'owns', kind, options });
    return this;
  }

  /**
   * Any kind whose objects map to keys of this controller: `map(obj)` returns keys or refs. Keep
   * `map` cheap and without cache scans: use an index (`mgr.index(…)`) to find related objects.
   */
  watches<W extends KubeObject>(kind: Kind<W>, map: MapToKeys<W>, options: SourceOptions<W> = {}): this {
    this.#assertOpen();
    this.#sources.push({
      type: 'watches',
      kind,
      map: map as MapToKeys<KubeObject>,
      options: options,
    });
    return this;
  }

  /** Predicates for every source of this controller (controller-runtime's `WithEventFilter`). */
  withPredicates(...predicates: Predicate[]): this {
    this.#assertOpen();
    this.#predicates.push(...predicates);
    return this;
  }

  /** How many keys are reconciled at once (default 1). One key is never reconciled twice at once. */
  concurrency(n: number): this {
    this.#assertOpen();
    if (!Number.isInteger(n) || n < 1) this.#invalid(`concurrency must be an integer ≥ 1, got ${n}`);
    this.#concurrency = n;
    return this;
  }

  /**
   * Aborts `ctx.signal` of a run after `ms`; a run that ends after it counts as failed and is
   * retried. The run itself must stop on the signal: it is never abandoned while still running,
   * since that would let a second run of the key start.
   */
  reconcileTimeout(ms: number): this {
    this.#assertOpen();
    if (!(ms > 0)) this.#invalid(`reconcileTimeout must be > 0 ms, got ${ms}`);
    this.#timeoutMs = ms;
    return this;
  }

  /** Run on every replica, leader or not (default: only while leading, when election is on). */
  withoutLeaderElection(): this {
    this.#assertOpen();
    this.#needLeaderElection = false;
    return this;
  }

  /** Sets the reconciler and registers the controller with the Manager. Ends the chain. */
  reconcile(reconciler: Reconciler<T>): ManagedController<T> {
    this.#assertOpen();
    if (this.#sources.length === 0) this.#invalid('a controller needs for(), owns() or watches()');
    if (typeof reconciler !== 'function') this.#invalid('reconcile() needs a function');
    this.#done = true;
    return this.#register({
      name: this.#name,
      primary: this.#primary,
      sources: this.#sources,
      predicates: this.#predicates,
      concurrency: this.#concurrency,
      reconcileTimeoutMs: this.#timeoutMs,
      needLeaderElection: this.#needLeaderElection,
      reconciler,
    });
  }

  #assertOpen(): void {
    if (this.#done) this.#invalid(`controller ${this.#name} is already built`);
  }

  #invalid(message: string): never {
    throw new KinformerError(ErrorCodes.INVALID_OPTION, `controller ${this.#name}: ${message}`);
  }
}
