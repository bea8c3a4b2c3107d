import { rec } from '../../api/json.js';
import { bool, fieldSet, metaFields, NOT_SUPPORTED } from '../fieldSets.js';
import type { ResourceStrategy } from '../strategy.js';

/**
 * Nodes, as `pkg/registry/core/node/strategy.go`: `PrepareForCreate` keeps the status the kubelet
 * registers with, and the `spec.unschedulable` field selector (`NodeToSelectableFields`).
 */
export const nodeStrategy: ResourceStrategy = {
  fieldSet: fieldSet(['metadata.name', 'spec.unschedulable'], NOT_SUPPORTED, (obj) => {
    const out = metaFields(obj, {});
    out['spec.unschedulable'] = bool(rec(obj.spec).unschedulable);
    return out;
  }),
  prepareForCreate: (obj) => obj,
};
