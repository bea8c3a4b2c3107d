import { rec } from '../../api/json.js';
import { fieldSet, metaFields, NOT_KNOWN, str } from '../fieldSets.js';
import type { ResourceStrategy } from '../strategy.js';

/**
 * core/v1 Events, as `pkg/registry/core/event/strategy.go` (`ToSelectableFields`: the involved
 * object's fields, `reason`, `reportingComponent`, `source`, `type`; any other label is refused
 * with the generic "not a known field selector" message).
 */

const INVOLVED_OBJECT = [
  'kind',
  'namespace',
  'name',
  'uid',
  'apiVersion',
  'resourceVersion',
  'fieldPath',
] as const;

export const eventStrategy: ResourceStrategy = {
  fieldSet: fieldSet(
    [
      'metadata.name',
      'metadata.namespace',
      ...INVOLVED_OBJECT.map((f) => `involvedObject.${f}`),
      'reason',
      'reportingComponent',
      'source',
      'type',
    ],
    NOT_KNOWN,
    (obj) => {
      const involved = rec(obj.involvedObject);
      const out = metaFields(obj, {});
      for (const f of INVOLVED_OBJECT) out[`involvedObject.${f}`] = str(involved[f]);
      out.reason = str(obj.reason);
      out.reportingComponent = str(obj.reportingComponent);
      out.source = str(rec(obj.source).component);
      out.type = str(obj.type);
      return out;
    },
  ),
};
