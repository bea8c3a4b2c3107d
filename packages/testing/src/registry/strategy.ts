import type { FieldSet, JsonObject } from './fieldSets.js';

/**
 * A resource's REST strategy: what kube-apiserver decides for one kind, in one place, as
 * `pkg/registry/<group>/<resource>/strategy.go` does (`podStrategy`, `podStatusStrategy`,
 * `deploymentStrategy`, … and apiextensions-apiserver's `customResourceStrategy`). The generic
 * registry (`objectStore.ts`, `writeStrategy.ts`, `gracefulDeletion.ts`, `admission.ts`) applies it;
 * a kind that has none gets the defaults written beside each member.
 *
 * Each built-in kind with behaviour of its own has a file under `registry/<group>/` (`core/pod.ts`,
 * `core/namespace.ts`, `apps/workloads.ts`, …); `strategies.ts` maps a type to its strategy.
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
  /** The stored form of the kind's own fields (a Lease's times as `MicroTime`). Mutates `obj`. */
  readonly normalize?: (obj: JsonObject) => void;
}
