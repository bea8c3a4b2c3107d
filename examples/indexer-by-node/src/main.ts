/**
 * `pnpm start [--kubeconfig PATH] [--namespace NS] [--selector SEL]`
 *
 * Without `--kubeconfig` it runs against an embedded FakeApiServer seeded with a few pods, and ends
 * after moving one of them to another node.
 */
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { runIndexerByNode, type IndexerByNodeOptions } from './podsByNode.js';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    kubeconfig: { type: 'string' },
    namespace: { type: 'string' },
    selector: { type: 'string' },
  },
});

const options: IndexerByNodeOptions = {};
if (values.kubeconfig !== undefined) {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(values.kubeconfig);
  options.kubeConfig = kubeConfig;
}
if (values.namespace !== undefined) options.namespace = values.namespace;
if (values.selector !== undefined) options.selector = values.selector;

await runIndexerByNode(options);
