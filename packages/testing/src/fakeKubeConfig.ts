import { KubeConfig, type Cluster, type User } from '@kubernetes/client-node';
import { FAKE_API_SERVER_TLS } from './tls/tlsFixtures.js';

/** The bearer token of the KubeConfigs `FakeApiServer.kubeConfig()` builds (any token works). */
export const FAKE_TOKEN = 'kinformer-fake-token';

/** Options of `FakeApiServer.kubeConfig`. */
export interface FakeKubeConfigOptions {
  /** The context's namespace (default `default`). */
  namespace?: string;
  /**
   * The cluster's `certificate-authority-data` (HTTPS servers): `true` (default) the server's CA;
   * `false` none, so verification uses node's public roots and must fail; a PEM string, that CA
   * instead (e.g. `UNTRUSTED_TLS.ca`: must fail too). Plain-HTTP servers get a CA only from a string.
   */
  caData?: boolean | string;
  /**
   * Present a client certificate: `true` the server's (signed by its CA, CN
   * `kinformer-fake-admin`), or the PEMs given (e.g. `UNTRUSTED_TLS`'s). The user then has no
   * bearer token unless `token` is set. Default `false`.
   */
  clientCert?: boolean | { cert: string; key: string };
  /** Bearer token: a string, or `false` for none. Default `kinformer-fake-token` unless `clientCert` is set. */
  token?: string | false;
  /**
   * `insecure-skip-tls-verify`. Default `false` for HTTPS and `true` for plain HTTP (client-node
   * refuses `http:` servers without it).
   */
  skipTLSVerify?: boolean;
  /** `tls-server-name`: the name the server certificate must match instead of the URL's host. */
  tlsServerName?: string;
}

const b64 = (pem: string): string => Buffer.from(pem, 'utf8').toString('base64');

/** @internal The KubeConfig of a FakeApiServer at `url` (`https:` when it serves TLS). */
export function fakeKubeConfig(url: string, options: FakeKubeConfigOptions): KubeConfig {
  const https = url.startsWith('https:');
  const ca =
    typeof options.caData === 'string'
      ? options.caData
      : https && options.caData !== false
        ? FAKE_API_SERVER_TLS.ca
        : undefined;
  const cluster: Cluster = {
    name: 'kinformer-fake',
    server: url,
    skipTLSVerify: options.skipTLSVerify ?? !https,
    ...(ca === undefined ? {} : { caData: b64(ca) }),
    ...(options.tlsServerName === undefined ? {} : { tlsServerName: options.tlsServerName }),
  };
  const clientCert =
    options.clientCert === true
      ? { cert: FAKE_API_SERVER_TLS.clientCert, key: FAKE_API_SERVER_TLS.clientKey }
      : options.clientCert === false
        ? undefined
        : options.clientCert;
  const token = options.token ?? (clientCert === undefined ? FAKE_TOKEN : false);
  const user: User = {
    name: 'kinformer-fake',
    ...(clientCert === undefined ? {} : { certData: b64(clientCert.cert), keyData: b64(clientCert.key) }),
    ...(token === false ? {} : { token }),
  };

  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [user],
    contexts: [
      {
        name: 'kinformer-fake',
        cluster: 'kinformer-fake',
        user: 'kinformer-fake',
        namespace: options.namespace ?? 'default',
      },
    ],
    currentContext: 'kinformer-fake',
  });
  return kc;
}
