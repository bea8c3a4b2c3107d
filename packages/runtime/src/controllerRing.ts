import { ErrorCodes, KinformerError } from '@kinformer/core';
import type { KubeObject, Logger } from '@kinformer/core';
import { andSelectors } from './cachePolicy.js';
import { kindString } from './kinds.js';
import type { Kind } from './kinds.js';
import { and, or } from './predicates.js';
import type { Predicate } from './predicates.js';
import type { ReconcileContext, ReconcileHook, ReconcileResult } from './reconcileContext.js';

/**
 * The shard protocol of timebertt/kubernetes-controller-sharding (`docs/implement-sharding.md`,
 * "independent of the used programming language"; reference implementation in `pkg/shard/lease`,
 * `pkg/shard/controller/{reconciler,predicate}.go`):
 *
 * 1. each shard holds a Lease named after its identity (`holderIdentity` = name) and labelled
 *    `alpha.sharding.timebertt.dev/controllerring=<ring>`, runs its controllers only while it holds it,
 *    and releases it (empty `holderIdentity`) on graceful shutdown;
 * 2. every watch of a ring resource selects `shard.alpha.sharding.timebertt.dev/<ring>=<identity>`;
 * 3. when `drain.alpha.sharding.timebertt.dev/<ring>` appears on an object, the shard removes the
 *    shard and drain labels and does not reconcile it; events carrying the drain label pass whatever
 *    the controller's predicates say.
 */

/** The label on a shard Lease naming its ControllerRing. */
export const CONTROLLER_RING_LABEL = 'alpha.sharding.timebertt.dev/controllerring';
const SHARD_PREFIX = 'shard.alpha.sharding.timebertt.dev/';
const DRAIN_PREFIX = 'drain.alpha.sharding.timebertt.dev/';

/** A DNS subdomain name (lowercase): what a Lease name must be. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * A shard's default identity: `$POD_NAME`, else the hostname lowercased (other characters than
 * `[-a-z0-9.]` become `-`), `-` and a random suffix, within 63 characters: a valid Lease name and
 * label value.
 */
export function defaultShardIdentity(
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  const pod = env['POD_NAME'];
  if (pod) return pod;
  const host = (env['HOSTNAME'] ?? '')
    .toLowerCase()
    .replace(/[^-a-z0-9.]/g, '-')
    .slice(0, 54)
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '');
  return `${host || 'kinformer'}-${Math.random().toString(36).slice(2, 10).padEnd(8, '0')}`;
}

/** `shard.alpha.sharding.timebertt.dev/<ring>`: its value names the shard an object is assigned to. */
export function shardLabel(ring: string): string {
  return SHARD_PREFIX + ring;
}

/** `drain.alpha.sharding.timebertt.dev/<ring>`: present while the sharder moves an object away. */
export function drainLabel(ring: string): string {
  return DRAIN_PREFIX + ring;
}

/**
 * Shard mode of a {@link Manager} (`ManagerOptions.controllerRing`): this replica is one shard of a
 * `ControllerRing` that the sharder (timebertt/kubernetes-controller-sharding) balances.
 */
export interface ManagerControllerRingOptions {
  /** The ControllerRing's name (at most 63 characters: it is part of the label keys). */
  name: string;
  /** The namespace of the shard Lease. */
  namespace: string;
  /**
   * This shard's identity: the Lease's name, its `holderIdentity` and a label value, so a DNS
   * subdomain name of at most 63 characters (default `$POD_NAME`, else the lowercased hostname, `-`
   * and a random suffix).
   */
  identity?: string;
  /**
   * The ring's resources: the `ControllerRing`'s `spec.resources` and their `controlledResources`.
   * Every informer of these kinds selects this shard's label.
   */
  kinds: readonly Kind[];
  /** Default 15 s (the sharder's own default). */
  leaseDurationMs?: number;
  /** Default 10 s. */
  renewDeadlineMs?: number;
  /** Default 2 s. */
  retryPeriodMs?: number;
  /** Called when this shard starts holding its Lease (`true`) and when its controllers have stopped (`false`). */
  onLeadershipChange?: (leading: boolean) => void;
}

/** The validated shard settings the Manager works with. */
export class ControllerRing {
  readonly name: string;
  readonly identity: string;
  readonly shardKey: string;
  readonly drainKey: string;
  readonly #kinds: ReadonlySet<string>;

  constructor(options: ManagerControllerRingOptions, identity: string) {
    const invalid = (message: string): KinformerError =>
      new KinformerError(ErrorCodes.INVALID_OPTION, message, { details: { option: 'controllerRing' } });
    if (typeof options.name !== 'string' || options.name === '' || options.name.length > 63)
      throw invalid(`controllerRing.name must have 1 to 63 characters, got ${JSON.stringify(options.name)}`);
    if (!DNS_SUBDOMAIN.test(options.name))
      throw invalid(`controllerRing.name must be a DNS subdomain name, got ${JSON.stringify(options.name)}`);
    if (identity === '' || identity.length > 63 || !DNS_SUBDOMAIN.test(identity))
      throw invalid(
        `the shard identity is a Lease name and a label value (a DNS subdomain name of at most 63 characters), got ${JSON.stringify(identity)}`,
      );
    const ringKinds: readonly Kind[] = options.kinds;
    if (ringKinds.length === 0) throw invalid('controllerRing.kinds names the ring resources (at least one)');
    this.name = options.name;
    this.identity = identity;
    this.shardKey = shardLabel(options.name);
    this.drainKey = drainLabel(options.name);
    this.#kinds = new Set(ringKinds.map((k) => kindString(k)));
  }

  /** True for a kind of the ring (its informers select this shard). */
  has(kind: Kind): boolean {
    return this.#kinds.has(kindString(kind));
  }

  /** `shard.alpha.sharding.timebertt.dev/<ring>=<identity>`. */
  get selector(): string {
    return `${this.shardKey}=${this.identity}`;
  }

  /** The selector of a ring kind's informer: `labelSelector` and this shard's label. */
  scopeSelector(labelSelector: string | undefined): string {
    return andSelectors(labelSelector, this.selector);
  }

  /** The Lease labels. */
  leaseLabels(): Record<string, string> {
    return { [CONTROLLER_RING_LABEL]: this.name };
  }

  /** True when `obj` carries the drain label. */
  draining(obj: KubeObject | undefined): boolean {
    const labels = obj?.metadata?.labels;
    return labels !== undefined && Object.hasOwn(labels, this.drainKey);
  }

  /**
   * The predicates of a ring kind's primary source: events of a drained object always pass (the
   * shard must see them to acknowledge), the others pass only when every user predicate does
   * (`pkg/shard/controller/predicate.go`: `Or(isDraining, userPredicates)`).
   */
  predicates(user: readonly Predicate[]): Predicate[] {
    if (user.length === 0) return [];
    // A delete is not a drain: it passes only on the user predicates.
    const isDraining: Predicate = {
      create: (obj) => this.draining(obj),
      update: (_, n) => this.draining(n),
      delete: () => false,
    };
    return [or(isDraining, and(...user))];
  }

  /**
   * The reconcile hook of a controller whose primary kind is in the ring
   * (`pkg/shard/controller/reconciler.go`): a gone object is not reconciled (it may have moved to
   * another shard: the label selector makes a moved object look deleted; clean up with finalizers);
   * an object assigned to another shard is skipped; a drained one is acknowledged by removing both
   * labels, without reconciling; anything else runs `inner` (the user's hook) or the reconcile.
   */
  hook(
    kind: Kind,
    inner: ReconcileHook | undefined,
    logger: Logger,
    acknowledged: () => void,
  ): ReconcileHook {
    return async (ctx: ReconcileContext, next: () => Promise<ReconcileResult>): Promise<ReconcileResult> => {
      const obj = ctx.object;
      if (obj === undefined) {
        logger.debug({ key: ctx.key }, 'object gone (deleted or moved to another shard): not reconciled');
        return undefined;
      }
      const labels = obj.metadata?.labels ?? {};
      if (labels[this.shardKey] !== this.identity) {
        logger.debug(
          { key: ctx.key, shard: labels[this.shardKey] },
          'object assigned to another shard: skipped',
        );
        return undefined;
      }
      if (Object.hasOwn(labels, this.drainKey)) {
        const ref =
          ctx.namespace === undefined ? { name: ctx.name } : { namespace: ctx.namespace, name: ctx.name };
        await ctx.client.patch(
          kind,
          ref,
          { metadata: { labels: { [this.shardKey]: null, [this.drainKey]: null } } },
          { type: 'merge', signal: ctx.signal },
        );
        acknowledged();
        logger.debug({ key: ctx.key }, 'drain acknowledged: shard and drain labels removed');
        return undefined;
      }
      return inner === undefined ? next() : inner(ctx, next);
    };
  }
}
