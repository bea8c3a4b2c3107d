import type { JsonObject } from '../api/json.js';
import type { FieldSet } from './fieldSets.js';

/**
 * A resource's REST strategy: what kube-apiserver decides for one kind, in one place, as
 * `pkg/registry/<group>/<resource>/strategy.go` does (`podStrategy`, `podStatusStrategy`,
 * `deploymentStrategy`, … and apiextensions-apiserver's `customResourceStrategy`). The generic
 * registry (`registryStore.ts`, `writeStrategy.ts`, `gracefulDeletion.ts`, `admission.ts`) applies it;
 * a kind that has none gets the defaults written beside each member.
 *
 * Each built-in kind with behaviour of its own has a file under `registry/<group>/` (`core/pod.ts`,
 * `core/namespace.ts`, `apps/workloads.ts`, …), custom resources `customResource.ts`; `strategies.ts`
 * maps a type to its strategy, once, when the type is registered (`ResourceType.strategy`).
 */
export interface ResourceStrategy {
  /** Field-selector labels and values (`GetAttrs` / `ToSelectableFields`); default `metadata.name`/`namespace`. */
  readonly fieldSet?: FieldSet;
  /**
   * API defaulting as the decoder applies it (`pkg/apis/<group>/v1/defaults.go` `SetDefaults_*`), plus
   * the create-time defaults of the default admission chain. Only absent fields are set. Mutates `obj`.
   */
  readonly defaults?: (obj: JsonObject, creating: boolean) => void;
  /**
   * `Validate` / `ValidateUpdate`, the parts the fake checks (a CRD's names and versions). Runs on
   * every write over HTTP after defaulting. @throws 422 Invalid.
   */
  readonly validate?: (obj: JsonObject) => void;
  /**
   * `PrepareForCreate` for a kind with a `status` subresource: the status a new object starts with
   * (kube resets what a client sent). Default `status: {}` (`Status = XStatus{}`).
   */
  readonly prepareForCreate?: (obj: JsonObject) => JsonObject;
  /**
   * The metadata a `status` write may not change (the status strategy's `PrepareForUpdate` /
   * `GetResetFields`), or `'all'`. Default none.
   */
  readonly statusKeepsMeta?: readonly string[] | 'all';
  /**
   * `CheckGracefulDelete`: the grace period (seconds) a first DELETE of `obj` gets, from the
   * request's `gracePeriodSeconds` (`requested`). Undefined for kinds deleted at once (the default).
   */
  readonly gracePeriod?: (obj: JsonObject, requested: number | undefined) => number;
  /** Fields besides `metadata` that the real server puts in a BOOKMARK object of this kind. Default none. */
  readonly bookmarkExtra?: Readonly<JsonObject>;
  /**
   * The part of an object whose change moves `metadata.generation` (`PrepareForUpdate` compares it),
   * as JSON, or undefined when the object has none (then it has no generation). Default `spec`.
   */
  readonly generationSource?: (obj: JsonObject) => string | undefined;
  /** The stored form of the kind's own fields (a Lease's times as `MicroTime`). Mutates `obj`. */
  readonly normalize?: (obj: JsonObject) => void;
}

/** What a strategy is chosen by: a resolved definition. */
export interface StrategyKey {
  readonly group: string;
  readonly resource: string;
  readonly customResource: boolean;
  /** A definition's `selectableFields` (CRDs; a built-in given some selects by them too). */
  readonly selectableFields: readonly string[];
  readonly statusSubresource: boolean;
}

/** Where a registry takes its types' strategies from (`strategies.ts` `Strategies`, one per server). */
export interface StrategySource {
  of(key: StrategyKey): ResourceStrategy;
}
