import { X509Certificate } from 'node:crypto';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { ErrorCodes, createLogger } from '@kinformer/core';
import { CoreV1Api, Watch, type V1Pod } from '@kubernetes/client-node';
import {
  FAKE_API_SERVER_TLS,
  FAKE_TOKEN,
  FakeApiServer,
  UNTRUSTED_TLS,
  type ClientAuthMode,
} from './index.js';
import { causeChain, serverPod } from '@kinformer/test-tools';
import { closeAfterEach } from './wire.test.helpers.js';

// FakeApiServer's HTTPS mode (`tls`): the certificates it serves, what a client without the right
// CA or without a client certificate gets, the user it records, and the KubeConfigs it builds,
// checked with node's https client and with @kubernetes/client-node.

let server: FakeApiServer;

closeAfterEach(() => server);

const PODS = '/api/v1/namespaces/default/pods';

/** What an HTTPS GET gave: the answer, or the error of the connection. */
interface HttpsResult {
  status?: number;
  text?: string;
  /** Subject CN / issuer CN / SANs of the server certificate the client saw. */
  peer?: { subject: unknown; issuer: unknown; subjectaltname: string | undefined };
  error?: NodeJS.ErrnoException;
}

/** GET over a fresh TLS connection (no agent, no pooling) with the given TLS options; never rejects. */
function httpsGet(url: string, options: https.RequestOptions = {}): Promise<HttpsResult> {
  return new Promise((resolve) => {
    const req = https.request(url, { agent: false, ...options }, (res) => {
      const cert = (res.socket as TLSSocket).getPeerCertificate();
      const peer = {
        subject: cert.subject?.CN,
        issuer: cert.issuer?.CN,
        subjectaltname: cert.subjectaltname,
      };
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, text, peer }));
      res.on('error', (error: NodeJS.ErrnoException) => resolve({ error }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error }));
    req.end();
  });
}

/** Starts an HTTPS server with the given client authentication. */
async function startTls(clientAuth?: ClientAuthMode): Promise<FakeApiServer> {
  server = await FakeApiServer.start({ tls: clientAuth === undefined ? true : { clientAuth } });
  return server;
}

const CLIENT = { cert: FAKE_API_SERVER_TLS.clientCert, key: FAKE_API_SERVER_TLS.clientKey };
const FOREIGN_CLIENT = { cert: UNTRUSTED_TLS.clientCert, key: UNTRUSTED_TLS.clientKey };
/** Node's codes for a server certificate whose issuer is not trusted (leaf only, or leaf + unknown root). */
const UNTRUSTED_SERVER =
  /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)$/;

describe('the certificates', () => {
  test('the server certificate is for 127.0.0.1, ::1 and localhost, signed by the CA; the client certificate too; both valid 2020–2126', () => {
    const ca = new X509Certificate(FAKE_API_SERVER_TLS.ca);
    const serverCert = new X509Certificate(FAKE_API_SERVER_TLS.serverCert);
    const client = new X509Certificate(FAKE_API_SERVER_TLS.clientCert);
    expect(ca.ca).toBe(true);
    for (const leaf of [serverCert, client]) {
      expect(leaf.ca).toBe(false);
      expect(leaf.checkIssued(ca)).toBe(true);
      expect(leaf.verify(ca.publicKey)).toBe(true);
      expect(Date.parse(leaf.validFrom)).toBeLessThanOrEqual(Date.parse('2020-01-01T00:00:00Z'));
      expect(Date.parse(leaf.validTo)).toBeGreaterThanOrEqual(Date.parse('2126-01-01T00:00:00Z'));
    }
    expect(serverCert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(serverCert.checkIP('::1')).toBeDefined();
    expect(serverCert.checkHost('localhost')).toBe('localhost');
    expect(serverCert.checkHost('example.com')).toBeUndefined();
    expect(client.subject).toBe('O=system:masters\nCN=kinformer-fake-admin');
    expect(FAKE_API_SERVER_TLS.clientCommonName).toBe('kinformer-fake-admin');
    expect(client.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']); // clientAuth only
    expect(serverCert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']); // serverAuth only
  });

  test('UNTRUSTED_TLS is an unrelated CA: nothing it signed verifies against the server CA, and vice versa', () => {
    const ca = new X509Certificate(FAKE_API_SERVER_TLS.ca);
    const other = new X509Certificate(UNTRUSTED_TLS.ca);
    expect(other.fingerprint256).not.toBe(ca.fingerprint256);
    for (const pem of [UNTRUSTED_TLS.serverCert, UNTRUSTED_TLS.clientCert]) {
      const leaf = new X509Certificate(pem);
      expect(leaf.checkIssued(ca)).toBe(false);
      expect(leaf.verify(ca.publicKey)).toBe(false);
      expect(leaf.verify(other.publicKey)).toBe(true);
    }
    expect(new X509Certificate(FAKE_API_SERVER_TLS.serverCert).verify(other.publicKey)).toBe(false);
  });
});

describe('serving HTTPS', () => {
  test('tls: true serves the same API on https://127.0.0.1 with the fixture certificate, verified against server.ca', async () => {
    await startTls();
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(server.ca).toBe(FAKE_API_SERVER_TLS.ca);
    expect(server.clientCert).toBe(FAKE_API_SERVER_TLS.clientCert);
    expect(server.clientKey).toBe(FAKE_API_SERVER_TLS.clientKey);
    expect(server.clientAuth).toBe('none');
    server.create('pods', serverPod('a'));
    const res = await httpsGet(`${server.url}${PODS}`, { ca: server.ca });
    expect(res.error).toBeUndefined();
    expect(res.status).toBe(200);
    expect(
      (JSON.parse(res.text!) as { items: Array<{ metadata: { name: string } }> }).items.map(
        (p) => p.metadata.name,
      ),
    ).toEqual(['a']);
    expect(res.peer).toEqual({
      subject: 'kinformer-fake-apiserver',
      issuer: 'kinformer-fake-ca',
      subjectaltname: 'DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1',
    });
    expect(server.requests).toEqual([
      expect.objectContaining({ verb: 'list', path: PODS, status: 200, user: undefined }),
    ]);
  });

  test('a client without the CA, or trusting another CA, fails verification and never reaches HTTP', async () => {
    await startTls();
    const noCa = await httpsGet(`${server.url}${PODS}`);
    const otherCa = await httpsGet(`${server.url}${PODS}`, { ca: UNTRUSTED_TLS.ca });
    expect(noCa.status).toBeUndefined();
    expect(noCa.error?.code).toMatch(UNTRUSTED_SERVER);
    expect(otherCa.status).toBeUndefined();
    expect(otherCa.error?.code).toMatch(UNTRUSTED_SERVER);
    await server.waitFor(() => server.tlsClientErrors.length === 2);
    expect(server.requests).toEqual([]);
  });

  test('the host name is checked: a server name the certificate does not list fails, localhost passes', async () => {
    await startTls();
    const wrong = await httpsGet(`${server.url}/version`, {
      ca: server.ca,
      servername: 'kubernetes.example.com',
    });
    expect(wrong.error?.code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    const localhost = await httpsGet(`${server.url}/version`, { ca: server.ca, servername: 'localhost' });
    expect(localhost.status).toBe(200);
    expect(server.requests).toHaveLength(1);
  });

  test('plain HTTP stays the default: no CA, no client certificate, no user', async () => {
    server = await FakeApiServer.start({ tls: false });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect([server.ca, server.clientCert, server.clientKey, server.clientAuth]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    await fetch(`${server.url}${PODS}`);
    expect(server.requests[0]).toMatchObject({ status: 200, user: undefined });
    expect(server.tlsClientErrors).toEqual([]);
  });

  test('an unknown clientAuth is ERR_INVALID_OPTION', async () => {
    await expect(
      FakeApiServer.start({ tls: { clientAuth: 'always' as ClientAuthMode } }),
    ).rejects.toMatchObject({
      code: ErrorCodes.INVALID_OPTION,
    });
  });

  test('the debug log names each failed handshake and never contains key material', async () => {
    const lines: string[] = [];
    const logger = createLogger({
      level: 'trace',
      destination: { write: (line: string) => void lines.push(line) },
    });
    server = await FakeApiServer.start({ tls: { clientAuth: 'require' }, logger });
    await httpsGet(`${server.url}${PODS}`, { ca: server.ca });
    await httpsGet(`${server.url}${PODS}`, {
      ca: server.ca,
      ...CLIENT,
      headers: { Authorization: `Bearer ${FAKE_TOKEN}` },
    });
    await server.waitFor(() => lines.some((l) => l.includes('TLS handshake failed')));
    const text = lines.join('');
    expect(text).toContain('ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE');
    expect(text).toContain('"msg":"request"');
    const keyLine = FAKE_API_SERVER_TLS.clientKey.split('\n')[1]!;
    for (const secret of [FAKE_TOKEN, '-----BEGIN', keyLine]) expect(text).not.toContain(secret);
  });
});

describe("clientAuth: 'require'", () => {
  test('a client certificate signed by the CA is served, and its CN is recorded as the user', async () => {
    await startTls('require');
    const res = await httpsGet(`${server.url}${PODS}`, {
      ca: server.ca,
      cert: server.clientCert,
      key: server.clientKey,
    });
    expect(res.status).toBe(200);
    expect(server.requests).toEqual([
      expect.objectContaining({ verb: 'list', user: 'kinformer-fake-admin', status: 200 }),
    ]);
  });

  test('no client certificate: the handshake is refused (certificate required), nothing reaches HTTP', async () => {
    await startTls('require');
    const res = await httpsGet(`${server.url}${PODS}`, {
      ca: server.ca,
      headers: { Authorization: `Bearer ${FAKE_TOKEN}` },
    });
    expect(res.status).toBeUndefined();
    // TLS 1.3: the server's "certificate required" alert (or the reset, when it wins the race).
    expect(res.error?.code).toMatch(/^(ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED|ECONNRESET|EPIPE)$/);
    await server.waitFor(() => server.tlsClientErrors.length === 1);
    expect(server.tlsClientErrors[0]).toMatchObject({ code: 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE' });
    expect(server.requests).toEqual([]);
  });

  test('a client certificate from another CA is refused in the handshake, with the reason recorded', async () => {
    await startTls('require');
    const res = await httpsGet(`${server.url}${PODS}`, { ca: server.ca, ...FOREIGN_CLIENT });
    expect(res.status).toBeUndefined();
    expect(res.error).toBeDefined();
    await server.waitFor(() => server.tlsClientErrors.length === 1);
    expect(server.tlsClientErrors[0]?.authorizationError).toMatch(
      /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT)$/,
    );
    expect(server.requests).toEqual([]);
  });
});

describe("clientAuth: 'request'", () => {
  test('without a certificate the client is served anonymously; with one signed by the CA its CN is the user', async () => {
    await startTls('request');
    expect((await httpsGet(`${server.url}${PODS}`, { ca: server.ca })).status).toBe(200);
    expect((await httpsGet(`${server.url}${PODS}`, { ca: server.ca, ...CLIENT })).status).toBe(200);
    expect(server.requests.map((r) => [r.status, r.user])).toEqual([
      [200, undefined],
      [200, 'kinformer-fake-admin'],
    ]);
  });

  test('a certificate that does not verify is 401 Unauthorized without a token, and ignored with one', async () => {
    await startTls('request');
    const alone = await httpsGet(`${server.url}${PODS}`, { ca: server.ca, ...FOREIGN_CLIENT });
    expect(alone.status).toBe(401);
    expect(alone.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}\n',
    );
    const withToken = await httpsGet(`${server.url}${PODS}`, {
      ca: server.ca,
      ...FOREIGN_CLIENT,
      headers: { Authorization: `Bearer ${FAKE_TOKEN}` },
    });
    expect(withToken.status).toBe(200);
    expect(server.requests.map((r) => [r.status, r.user])).toEqual([
      [401, undefined],
      [200, undefined],
    ]);
  });

  test("clientAuth 'none' (tls: true) never asks for a certificate, so none is seen", async () => {
    await startTls();
    expect((await httpsGet(`${server.url}${PODS}`, { ca: server.ca, ...CLIENT })).status).toBe(200);
    expect((await httpsGet(`${server.url}${PODS}`, { ca: server.ca, ...FOREIGN_CLIENT })).status).toBe(200);
    expect(server.requests.map((r) => [r.status, r.user])).toEqual([
      [200, undefined],
      [200, undefined],
    ]);
  });
});

describe('kubeConfig() over HTTPS', () => {
  const b64 = (pem: string): string => Buffer.from(pem).toString('base64');

  test('carries the CA and the bearer token, with verification on', async () => {
    await startTls();
    const kc = server.kubeConfig({ namespace: 'apps' });
    expect(kc.getCurrentCluster()).toEqual({
      name: 'kinformer-fake',
      server: server.url,
      skipTLSVerify: false,
      caData: b64(server.ca!),
    });
    expect(kc.getCurrentUser()).toEqual({ name: 'kinformer-fake', token: FAKE_TOKEN });
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('apps');
  });

  test('the option variants: client certificate instead of the token, no CA, another CA, skipTLSVerify, tlsServerName', async () => {
    await startTls();
    expect(server.kubeConfig({ clientCert: true }).getCurrentUser()).toEqual({
      name: 'kinformer-fake',
      certData: b64(FAKE_API_SERVER_TLS.clientCert),
      keyData: b64(FAKE_API_SERVER_TLS.clientKey),
    });
    expect(server.kubeConfig({ clientCert: FOREIGN_CLIENT, token: 't' }).getCurrentUser()).toEqual({
      name: 'kinformer-fake',
      certData: b64(UNTRUSTED_TLS.clientCert),
      keyData: b64(UNTRUSTED_TLS.clientKey),
      token: 't',
    });
    expect(server.kubeConfig({ token: false }).getCurrentUser()).toEqual({ name: 'kinformer-fake' });
    expect(server.kubeConfig({ caData: false }).getCurrentCluster()).toEqual({
      name: 'kinformer-fake',
      server: server.url,
      skipTLSVerify: false,
    });
    expect(server.kubeConfig({ caData: UNTRUSTED_TLS.ca }).getCurrentCluster()?.caData).toBe(
      b64(UNTRUSTED_TLS.ca),
    );
    expect(server.kubeConfig({ caData: false, skipTLSVerify: true }).getCurrentCluster()).toEqual({
      name: 'kinformer-fake',
      server: server.url,
      skipTLSVerify: true,
    });
    expect(server.kubeConfig({ tlsServerName: 'localhost' }).getCurrentCluster()?.tlsServerName).toBe(
      'localhost',
    );
  });

  test('a plain-HTTP server keeps its KubeConfig: skipTLSVerify, no CA, the token', async () => {
    server = await FakeApiServer.start();
    const kc = server.kubeConfig();
    expect(kc.getCurrentCluster()).toEqual({
      name: 'kinformer-fake',
      server: server.url,
      skipTLSVerify: true,
    });
    expect(kc.getCurrentUser()).toEqual({ name: 'kinformer-fake', token: FAKE_TOKEN });
  });
});

describe('@kubernetes/client-node over HTTPS', () => {
  test('CoreV1Api lists pods with the default KubeConfig (the CA verifies the server)', async () => {
    await startTls();
    server.create('pods', serverPod('a'));
    const list = await server
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace: 'default' });
    expect(list.items.map((p) => p.metadata?.name)).toEqual(['a']);
  });

  test.each([
    ['without the CA', { caData: false }],
    ['with another CA', { caData: UNTRUSTED_TLS.ca }],
    ['with a server name the certificate does not list', { tlsServerName: 'kubernetes.example.com' }],
  ] as const)('CoreV1Api %s fails verification and gets no data', async (_name, options) => {
    await startTls();
    server.create('pods', serverPod('a'));
    const err = await server
      .kubeConfig(options)
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace: 'default' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeDefined();
    const codes = causeChain(err).map((e) => (e as { code?: unknown }).code);
    expect(codes).toContainEqual(
      expect.stringMatching(
        /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|ERR_TLS_CERT_ALTNAME_INVALID)$/,
      ),
    );
    expect(server.requests).toEqual([]);
  });

  test('CoreV1Api with skipTLSVerify and no CA is served', async () => {
    await startTls();
    const list = await server
      .kubeConfig({ caData: false, skipTLSVerify: true })
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace: 'default' });
    expect(list.items).toEqual([]);
  });

  test("CoreV1Api with the client certificate is served under clientAuth 'require' as kinformer-fake-admin; without it, it fails", async () => {
    await startTls('require');
    const list = await server
      .kubeConfig({ clientCert: true })
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace: 'default' });
    expect(list.items).toEqual([]);
    expect(server.requests).toEqual([
      expect.objectContaining({ verb: 'list', user: 'kinformer-fake-admin' }),
    ]);
    await expect(
      server.kubeConfig().makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'default' }),
    ).rejects.toBeDefined();
    expect(server.requests).toHaveLength(1);
  });

  test('client-node Watch streams events over HTTPS with the client certificate, and close() ends the stream', async () => {
    await startTls('require');
    const kc = server.kubeConfig({ clientCert: true });
    const events: Array<[string, string | undefined]> = [];
    const ended = new Promise<unknown>((resolve) => {
      void new Watch(kc).watch(
        PODS,
        { resourceVersion: server.resourceVersion },
        (type: string, obj: V1Pod) => events.push([type, obj.metadata?.name]),
        resolve,
      );
    });
    await server.waitForWatchers(1);
    server.create('pods', serverPod('b'));
    await server.waitFor(() => events.length === 1);
    expect(events).toEqual([['ADDED', 'b']]);
    expect(server.requests[0]).toMatchObject({ verb: 'watch', user: 'kinformer-fake-admin' });
    await server.close();
    await ended;
    expect(server.openWatchCount()).toBe(0);
  });

  test('faults.restart() over HTTPS closes the TLS connections and the server serves new ones', async () => {
    await startTls();
    const kc = server.kubeConfig();
    const ended = new Promise<unknown>((resolve) => {
      void new Watch(kc).watch(PODS, {}, () => undefined, resolve);
    });
    await server.waitForWatchers(1);
    await server.faults.restart();
    await ended;
    const list = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'default' });
    expect(list.items).toEqual([]);
  });
});
