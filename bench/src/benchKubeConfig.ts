import { KubeConfig } from '@kubernetes/client-node';

/** A KubeConfig for the benchmark's plain-HTTP server at `serverUrl` (no user, no TLS). */
export function benchKubeConfig(serverUrl: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'bench', server: serverUrl, skipTLSVerify: true }],
    users: [{ name: 'bench' }],
    contexts: [{ name: 'bench', cluster: 'bench', user: 'bench' }],
    currentContext: 'bench',
  });
  return kc;
}
