import { objects, object, setDefault } from '../defaulting.js';
import { fieldSet, metaFields, NOT_SUPPORTED, str } from '../fieldSets.js';
import { rec } from '../../api/json.js';
import type { ResourceStrategy } from '../strategy.js';

/**
 * Services, as `pkg/registry/core/service/strategy.go` and `SetDefaults_Service`: type, session
 * affinity and port defaults, a cluster IP from 10.96.0.0/12 on create, an empty
 * `status.loadBalancer`, and the `spec.clusterIP`/`spec.type` field selectors.
 *
 * The cluster IPs come from the allocator of one server (kube-apiserver's service REST storage owns
 * its `ipallocator.Range`, `pkg/registry/core/service/ipallocator`, persisted per cluster): each
 * {@link serviceStrategy} has its own, so two fake servers in one process hand out the same
 * sequence. The fake allocates in order (the real one at random).
 */
export function serviceStrategy(): ResourceStrategy {
  let nextServiceIp = 1;
  return {
    fieldSet: fieldSet(
      ['metadata.name', 'metadata.namespace', 'spec.clusterIP', 'spec.type'],
      NOT_SUPPORTED,
      (obj) => {
        const spec = rec(obj.spec);
        const out = metaFields(obj, {});
        out['spec.clusterIP'] = str(spec.clusterIP);
        out['spec.type'] = str(spec.type);
        return out;
      },
    ),
    defaults: (obj, creating) => {
      const spec = object(obj, 'spec');
      setDefault(spec, 'type', 'ClusterIP');
      setDefault(spec, 'sessionAffinity', 'None');
      for (const p of objects(spec.ports)) {
        setDefault(p, 'protocol', 'TCP');
        setDefault(p, 'targetPort', p.port);
      }
      if (spec.type === 'ExternalName') return;
      setDefault(spec, 'internalTrafficPolicy', 'Cluster');
      if (!creating) return;
      if (spec.clusterIP === undefined || spec.clusterIP === '') {
        const n = nextServiceIp++;
        spec.clusterIP = `10.96.${Math.floor(n / 254) % 256}.${(n % 254) + 1}`;
      }
      setDefault(spec, 'clusterIPs', [spec.clusterIP]);
      setDefault(spec, 'ipFamilies', ['IPv4']);
      setDefault(spec, 'ipFamilyPolicy', 'SingleStack');
    },
    prepareForCreate: (obj) => ({ ...obj, status: { loadBalancer: {} } }),
  };
}
