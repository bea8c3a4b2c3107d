import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { ErrorCodes, KinformerError } from '@kinformer/core';
import { KubeConfig, type Cluster, type User } from '@kubernetes/client-node';
import { createListWatch } from './createListWatch.js';

// A self-signed test certificate (CN kinformer-test, SAN IP 127.0.0.1, valid until 2126), used as
// the server certificate, its own CA, and a client certificate. Test fixture only.
const CERT = `-----BEGIN CERTIFICATE-----
MIIB0jCCAXmgAwIBAgIUL8uyb/Ej0gVhmDIbMQ/XsfYYETYwCgYIKoZIzj0EAwIw
GTEXMBUGA1UEAwwOa2luZm9ybWVyLXRlc3QwIBcNMjYxMTMwMDgzNzQwWhgPMjEy
NjExMDYwODM3NDBaMBkxFzAVBgNVBAMMDmtpbmZvcm1lci10ZXN0MFkwEwYHKoZI
zj0CAQYIKoZIzj0DAQcDQgAEsowoiqEaef6IwfpvWdFNiRfSJS0KbgsRjtXGjKI4
DMeJYJF1GF05HeiMYNeV1S39Y88oa9B69rz3yy+NJPgX96OBnDCBmTAdBgNVHQ4E
FgQUOFWwfgveribOMK86sO/aHfqmG24wHwYDVR0jBBgwFoAUOFWwfgveribOMK86
sO/aHfqmG24wGgYDVR0RBBMwEYcEfwAAAYIJbG9jYWxob3N0MA8GA1UdEwEB/wQF
MAMBAf8wCwYDVR0PBAQDAgKEMB0GA1UdJQQWMBQGCCsGAQUFBwMBBggrBgEFBQcD
AjAKBggqhkjOPQQDAgNHADBEAiBNdVRVZ4NAt36uQfJA6QL0LUGYAvtpmvf8hXvl
j5TqswIgSU63kadjH+VsE1BJLVlyqr+TpiYIAn7QIrIn2PlVo+M=
-----END CERTIFICATE-----
`;
const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgiXuX1t1wmgcyVlIz
Y56ZyehXzhy/vCepoDfbGkjnV0OhRANCAASyjCiKoRp5/ojB+m9Z0U2JF9IlLQpu
CxGO1caMojgMx4lgkXUYXTkd6Ixg15XVLf1jzyhr0Hr2vPfLL40k+Bf3
-----END PRIVATE KEY-----
`;
const b64 = (pem: string): string => Buffer.from(pem).toString('base64');

interface Seen {
  authorization: string | undefined;
  clientCN: string | undefined;
  url: string | undefined;
}

let server: https.Server;
let seen: Seen[];

async function start(options: https.ServerOptions = {}): Promise<string> {
  seen = [];
  server = https.createServer({ cert: CERT, key: KEY, ...options }, (req, res) => {
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    seen.push({
      authorization: req.headers.authorization,
      clientCN: peer.subject?.CN as string | undefined,
      url: req.url,
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url?.includes('watch=true')) {
      res.write(
        `${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '2' } } })}\n`,
      );
    } else {
      res.end('{"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[]}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function kubeConfig(
  cluster: Omit<Cluster, 'name'>,
  user: Partial<User> = { token: 'tls-token' },
): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: 'tls', ...cluster }, { name: 'tester', ...user });
  return kc;
}

const ctx = (): { signal: AbortSignal } => ({ signal: new AbortController().signal });

describe('createListWatch over TLS', () => {
  it("verifies the server against the KubeConfig's CA and sends the token", async () => {
    const url = await start();
    const lw = createListWatch(kubeConfig({ server: url, caData: b64(CERT), skipTLSVerify: false }), {
      version: 'v1',
      resource: 'pods',
    });
    const list = await lw.list({}, ctx());
    expect(list.metadata?.resourceVersion).toBe('1');
    expect(seen).toEqual([{ authorization: 'Bearer tls-token', clientCN: undefined, url: '/api/v1/pods' }]);
  });

  it('rejects with ERR_TLS when the server certificate is not trusted', async () => {
    const url = await start();
    const lw = createListWatch(kubeConfig({ server: url, skipTLSVerify: false }), {
      version: 'v1',
      resource: 'pods',
    });
    const err = await lw.list({}, ctx()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(KinformerError);
    expect(err).toMatchObject({
      code: ErrorCodes.TLS,
      cause: { code: expect.stringMatching(/SELF_SIGNED|UNABLE_TO_VERIFY/) },
    });
    expect(seen).toEqual([]);
  });

  it('accepts an untrusted server certificate when skipTLSVerify is set', async () => {
    const url = await start();
    const lw = createListWatch(kubeConfig({ server: url, skipTLSVerify: true }), {
      version: 'v1',
      resource: 'pods',
    });
    await expect(lw.list({}, ctx())).resolves.toMatchObject({ items: [] });
  });

  it("presents the KubeConfig's client certificate", async () => {
    const url = await start({ requestCert: true, rejectUnauthorized: true, ca: CERT });
    const kc = kubeConfig(
      { server: url, caData: b64(CERT), skipTLSVerify: false },
      { certData: b64(CERT), keyData: b64(KEY) },
    );
    const lw = createListWatch(kc, { version: 'v1', resource: 'pods' });
    await lw.list({}, ctx());
    expect(seen[0]).toMatchObject({ clientCN: 'kinformer-test', authorization: undefined });
  });

  it('streams a watch over TLS and closes it when the consumer breaks out', async () => {
    const url = await start();
    const lw = createListWatch(kubeConfig({ server: url, caData: b64(CERT), skipTLSVerify: false }), {
      version: 'v1',
      resource: 'pods',
    });
    const names: string[] = [];
    for await (const e of await lw.watch({ resourceVersion: '1' }, ctx())) {
      names.push(e.object.metadata?.name ?? '');
      break;
    }
    expect(names).toEqual(['a']);
    const deadline = Date.now() + 5000;
    for (;;) {
      const open = await new Promise<number>((resolve, reject) =>
        server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
      );
      if (open === 0) break;
      if (Date.now() > deadline) throw new Error('the TLS connection stayed open');
      await new Promise((r) => setTimeout(r, 5));
    }
  });
});
