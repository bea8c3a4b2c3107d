import type { JsonObject } from '../api/json.js';
import { selectableFieldSet } from './fieldSets.js';
import type { ResourceStrategy } from './strategy.js';

/**
 * Custom resources, as apiextensions-apiserver's `pkg/registry/customresource/strategy.go`
 * (`customResourceStrategy`) and `status_strategy.go`, for one served version of a CRD:
 *
 * - `PrepareForCreate` drops the status (`delete(customResource, "status")`);
 * - a `status` write keeps all metadata (the status strategy copies the old object and sets only
 *   status);
 * - `metadata.generation` starts at 1 and moves when anything but metadata (and status, with a
 *   `status` subresource) changes (`PrepareForUpdate`);
 * - field selectors: `metadata.name`, `metadata.namespace` and the version's `selectableFields`
 *   (`GetAttrs` / `selectableFields`).
 *
 * Defaults and pruning come from the CRD's schema (`admission.ts`).
 */
export function customResourceStrategy(
  selectableFields: readonly string[],
  statusSubresource: boolean,
): ResourceStrategy {
  const ignored = statusSubresource ? ['metadata', 'status'] : ['metadata'];
  return {
    fieldSet: selectableFieldSet(selectableFields),
    prepareForCreate: (obj) => {
      const { status: _dropped, ...rest } = obj;
      return rest;
    },
    statusKeepsMeta: 'all',
    generationSource: (obj) => withoutKeys(obj, ignored),
  };
}

function withoutKeys(obj: JsonObject, keys: readonly string[]): string {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(obj)) if (!keys.includes(key)) out[key] = value;
  return JSON.stringify(out);
}
