/** `pnpm start`: runs the controller against the cluster of `$KUBECONFIG` (or `~/.kube/config`). */
import { KubeConfig } from '@kubernetes/client-node';
import { Manager, setupSignalHandler } from 'kinformer';
import { addConfigMapController } from './configMapPerDeployment.js';

const kc = new KubeConfig();
kc.loadFromDefault();
const mgr = new Manager(kc, {
  name: 'configmap-per-deployment',
  leaderElection: {
    namespace: process.env['LEASE_NAMESPACE'] ?? 'default',
    name: 'configmap-per-deployment',
  },
  probes: { port: 8081 },
});
addConfigMapController(mgr);
await mgr.start(setupSignalHandler());
