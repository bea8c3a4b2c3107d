import { object, setDefault } from '../defaulting.js';
import { fieldSet, metaFields, NOT_SUPPORTED, str } from '../fieldSets.js';
import { rec } from '../../api/json.js';
import type { ResourceStrategy } from '../strategy.js';

/**
 * Namespaces, as `pkg/registry/core/namespace/strategy.go`: the `kubernetes.io/metadata.name` label
 * (`PrepareForCreate`/`PrepareForUpdate`), the `kubernetes` finalizer and phase `Active` on create,
 * and the `status.phase` field selector.
 */
export const namespaceStrategy: ResourceStrategy = {
  fieldSet: fieldSet(['metadata.name', 'status.phase'], NOT_SUPPORTED, (obj) => {
    const out = metaFields(obj, {});
    out['status.phase'] = str(rec(obj.status).phase);
    return out;
  }),
  defaults: (obj, creating) => {
    const meta = object(obj, 'metadata');
    const labels = object(meta, 'labels');
    if (typeof meta.name === 'string') labels['kubernetes.io/metadata.name'] = meta.name;
    if (!creating) return;
    setDefault(object(obj, 'spec'), 'finalizers', ['kubernetes']);
  },
  prepareForCreate: (obj) => ({ ...obj, status: { phase: 'Active' } }),
};
