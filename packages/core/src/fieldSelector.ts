/** Field selector operators (`==` is normalised to `=`). */
export type FieldSelectorOperator = '=' | '!=';

/** One requirement of a field selector. */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: FieldSelectorOperator;
  readonly value: string;
}

/** A parsed field selector. */
export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  /** True when every requirement holds for `fields` (a missing field counts as `''`). */
  matches(fields: Readonly<Record<string, string>>): boolean;
  isEmpty(): boolean;
  /** The canonical text form (values escaped), which parses back to an equal selector. */
  toString(): string;
}

/** Parses a field selector (`a=b,c!=d`, with `\,` `\=` `\\` escapes). Throws `ERR_INVALID_SELECTOR`. */
export function parseFieldSelector(text: string): FieldSelector {
  throw new Error(`not implemented: ${text}`);
}
