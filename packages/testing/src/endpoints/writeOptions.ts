import { parseQueryBool } from './listOptions.js';
import {
  invalidError,
  notSupportedField,
  requiredField,
  forbiddenField,
  type FieldError,
} from '../api/statusErrors.js';

/**
 * The options of a write (`CreateOptions`, `UpdateOptions`, `PatchOptions`, `DeleteOptions`) as
 * the store takes them, and their parsing and validation from the query string
 * (apimachinery `pkg/apis/meta/v1/validation/validation.go`: `ValidateDryRun`,
 * `ValidatePatchOptions`, `ValidateDeleteOptions`; the handlers in apiserver's
 * `pkg/endpoints/handlers/{create,update,patch,delete}.go` answer a failure with
 * `NewInvalid(GroupKind{"meta.k8s.io", "<Verb>Options"}, "", errs)`: 422).
 */

/** How a write is carried out by the store. */
export interface WriteOptions {
  /**
   * `dryRun=All`: validated and answered as the real write, but nothing is stored, no event is
   * sent and the resourceVersion does not move (`registry/generic/registry/dryrun.go`).
   */
  dryRun?: boolean;
  /**
   * Apply the kind's REST strategy (a create resets the status, the main resource and `status`
   * split the object). True for requests over HTTP; the in-process API writes what it is given.
   */
  strategy?: boolean;
  /** Record this manager (operation `Update`) in `metadata.managedFields`. */
  fieldManager?: string;
  /** `status` or `scale` for a write to that subresource. */
  subresource?: string;
  /** Allow an update without `metadata.resourceVersion` even where the type does not (patches). */
  allowUnconditional?: boolean;
}

/** The propagation policies of `DeleteOptions.propagationPolicy`. */
export type PropagationPolicy = 'Orphan' | 'Background' | 'Foreground';

/** Which `*Options` kind a request's options are validated as. */
export type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';

function invalidOptions(kind: OptionsKind, errors: FieldError[]): never {
  throw invalidError('meta.k8s.io', kind, '', errors);
}

/**
 * `ValidateDryRun`: the `dryRun` values, which must all be `All`. Returns true when the write is a
 * dry run. @throws 422 for any other value.
 */
export function parseDryRun(kind: OptionsKind, values: readonly string[]): boolean {
  const bad = values.filter((v) => v !== 'All');
  if (bad.length > 0)
    invalidOptions(kind, [notSupportedField('dryRun', JSON.stringify(values), ['All'], true)]);
  return values.length > 0;
}

/**
 * The field manager of a non-apply write: `fieldManager`, else the `User-Agent` up to its first `/`
 * (`managedfields.go` `prefixFromUserAgent`), at most 128 characters.
 */
export function defaultFieldManager(fieldManager: string | null, userAgent: string | undefined): string {
  if (fieldManager !== null && fieldManager !== '') return fieldManager;
  const agent = userAgent ?? '';
  return agent.split('/', 1)[0]!.slice(0, 128);
}

/** Parsed options of an apply patch. */
export interface ApplyOptions {
  fieldManager: string;
  force: boolean;
}

/**
 * `ValidatePatchOptions`: an apply patch needs `fieldManager`; any other patch may not set `force`.
 * Returns the apply options (undefined for other patches). @throws 422.
 */
export function parsePatchOptions(params: URLSearchParams, apply: boolean): ApplyOptions | undefined {
  const force = params.get('force');
  if (!apply) {
    if (force !== null)
      invalidOptions('PatchOptions', [forbiddenField('force', 'may not be specified for non-apply patch')]);
    return undefined;
  }
  const fieldManager = params.get('fieldManager') ?? '';
  if (fieldManager === '')
    invalidOptions('PatchOptions', [requiredField('fieldManager', 'is required for apply patch')]);
  return { fieldManager, force: force !== null && parseQueryBool(force) === true };
}

/** `ValidateDeleteOptions` for `propagationPolicy` (from the body or the query). @throws 422. */
export function parsePropagationPolicy(value: unknown): PropagationPolicy | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === 'Orphan' || value === 'Background' || value === 'Foreground') return value;
  return invalidOptions('DeleteOptions', [
    notSupportedField(
      'propagationPolicy',
      JSON.stringify(value),
      ['Foreground', 'Background', 'Orphan', 'nil'],
      true,
    ),
  ]);
}
