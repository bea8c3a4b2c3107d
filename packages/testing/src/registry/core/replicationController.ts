import { rec } from '../../api/json.js';
import { fieldSet, metaFields, NOT_SUPPORTED, str } from '../fieldSets.js';
import type { ResourceStrategy } from '../strategy.js';

/**
 * ReplicationControllers, as `pkg/registry/core/replicationcontroller/strategy.go`
 * (`ControllerToSelectableFields`: `status.replicas`).
 */
export const replicationControllerStrategy: ResourceStrategy = {
  fieldSet: fieldSet(['metadata.name', 'metadata.namespace', 'status.replicas'], NOT_SUPPORTED, (obj) => {
    const out = metaFields(obj, {});
    out['status.replicas'] = str(rec(obj.status).replicas ?? 0);
    return out;
  }),
};
