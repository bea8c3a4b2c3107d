import { setDefault } from '../defaulting.js';
import { fieldSet, metaFields, NOT_SUPPORTED, str } from '../fieldSets.js';
import type { ResourceStrategy } from '../strategy.js';

/**
 * Secrets, as `pkg/registry/core/secret/strategy.go` (the `type` field selector, `SelectableFields`)
 * and `SetDefaults_Secret` (`type: Opaque`).
 */
export const secretStrategy: ResourceStrategy = {
  fieldSet: fieldSet(['metadata.name', 'metadata.namespace', 'type'], NOT_SUPPORTED, (obj) => {
    const out = metaFields(obj, {});
    out.type = str(obj.type);
    return out;
  }),
  defaults: (obj) => setDefault(obj, 'type', 'Opaque'),
};
