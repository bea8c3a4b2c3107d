/**
 * `pnpm start [--kubeconfig PATH]`
 *
 * Without `--kubeconfig` it runs against an embedded FakeApiServer serving `widgets.example.com/v1`
 * and ends after a create, an update and a delete. With it, it watches the cluster's widgets until
 * Ctrl-C (install the CRD first: `kubectl apply -f widget-crd.yaml`).
 */
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { ErrorCodes, isKinformerError } from 'kinformer';
import { runWidgets, type RunWidgetsOptions } from './watchWidgets.js';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: { kubeconfig: { type: 'string' } },
});

const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
const options: RunWidgetsOptions = { signal: stop.signal };
if (values.kubeconfig !== undefined) {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(values.kubeconfig);
  options.kubeConfig = kubeConfig;
  console.log('watching widgets.example.com/v1; Ctrl-C to stop');
}

try {
  await runWidgets(options);
} catch (err) {
  // The factory fails loudly instead of waiting forever, e.g. 404 when the CRD is not installed.
  if (isKinformerError(err, ErrorCodes.CACHE_SYNC_FAILED)) {
    console.error(`${err.message}\nIs the CRD installed? kubectl apply -f widget-crd.yaml`);
    process.exitCode = 1;
  } else {
    throw err;
  }
}
