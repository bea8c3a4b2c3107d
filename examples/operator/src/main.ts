/** `pnpm start`: the Widget operator against the cluster of `$KUBECONFIG` (apply widget-crd.yaml first). */
import { KubeConfig } from '@kubernetes/client-node';
import { Manager, setupSignalHandler } from 'kinformer';
import { addWidgetOperator } from './widgetOperator.js';

const kc = new KubeConfig();
kc.loadFromDefault();
const mgr = new Manager(kc, {
  name: 'widget-operator',
  leaderElection: { namespace: process.env['LEASE_NAMESPACE'] ?? 'default', name: 'widget-operator' },
  probes: { port: 8081 },
});
addWidgetOperator(mgr);
await mgr.start(setupSignalHandler());
