/** Label selector operators (the Kubernetes grammar's `=`/`==` are both `=`). */
export type LabelSelectorOperator = '=' | '!=' | 'in' | 'notin' | 'exists' | '!';

/** One requirement of a label selector: `key op values`. */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelSelectorOperator;
  readonly values: readonly string[];
}

/** A parsed label selector. */
export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  /** True when every requirement holds for `labels` (missing labels count as absent). */
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
  /** True for the selector that matches everything. */
  isEmpty(): boolean;
  /** The canonical text form, which parses back to an equal selector. */
  toString(): string;
}

/** `metav1.LabelSelector`'s object form. */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }>;
}

/** Parses the Kubernetes label selector grammar. Throws `ERR_INVALID_SELECTOR` naming text and position. */
export function parseLabelSelector(text: string): LabelSelector {
  throw new Error(`not implemented: ${text}`);
}

/** Converts the `matchLabels`/`matchExpressions` object form. Throws `ERR_INVALID_SELECTOR` when invalid. */
export function labelSelectorFromObject(selector: LabelSelectorObject): LabelSelector {
  throw new Error(`not implemented: ${JSON.stringify(selector)}`);
}
