import { inspect } from 'node:util';
import { createListWatch } from '@kinformer/client-node';
import { ErrorCodes, KinformerError, type Logger } from '@kinformer/core';
import { SharedIndexInformer, SharedInformerFactory, waitForCacheSync } from 'kinformer';
import type { ListerWatcher } from '@kinformer/reflector';
import {
  FAKE_API_SERVER_TLS,
  FAKE_TOKEN,
  FakeApiServer,
  UNTRUSTED_TLS,
  type ClientAuthMode,
  type FakeKubeConfigOptions,
} from '@kinformer/testing';
import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import {
  captureLogs,
  causeChain,
  names,
  rejection,
  RecordingBackoff,
  waitFor,
  serverPod,
} from '@kinformer/test-tools';
import { disposeAll, track, type Pod, PODS } from './testSupport.test.helpers.js';

// TLS end to end: FakeApiServer over HTTPS (a test CA, optional client certificates) ←
// @kubernetes/client-node's KubeConfig ← createListWatch ← SharedIndexInformer /
// SharedInformerFactory, and client-node's own CoreV1Api. The server certificate is verified by
// default: a KubeConfig without the CA, with another CA or with a server name the certificate does
// not list gets a typed ERR_CONNECTION whose cause is the TLS error, and never any data; the right
// CA works; a server that requires client certificates serves the client certificate and refuses
// everything else; informers sync over HTTPS; tokens and client keys never reach errors or logs.

afterEach(disposeAll);

/** Node's codes for a server certificate that does not verify (unknown issuer, wrong host name). */
const UNVERIFIED_SERVER =
  /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|ERR_TLS_CERT_ALTNAME_INVALID)$/;
/**
 * What a client without an acceptable certificate sees from a server that requires one: TLS 1.3's
 * "certificate required" alert, or the connection cut (node refuses a certificate that does not
 * verify by closing the socket).
 */
const REFUSED_CLIENT =
  /^(ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED|ERR_SSL_TLSV13_ALERT_UNKNOWN_CA|ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE|ECONNRESET|EPIPE)$/;

/** Every credential a KubeConfig of these tests holds, in every form it could leak in. */
const SECRETS: readonly string[] = [
  FAKE_TOKEN,
  ...[FAKE_API_SERVER_TLS.clientKey, UNTRUSTED_TLS.clientKey].flatMap((pem) => [
    ...pem.split('\n').filter((line) => line !== '' && !line.startsWith('-----')),
    Buffer.from(pem).toString('base64').slice(0, 40),
  ]),
  'PRIVATE KEY',
];

async function startServer(clientAuth?: ClientAuthMode): Promise<FakeApiServer> {
  const server = await FakeApiServer.start({ tls: clientAuth === undefined ? true : { clientAuth } });
  track(server, (s) => s.close());
  server.create('pods', serverPod('a'));
  server.create('pods', serverPod('b'));
  return server;
}

function podsOf(kc: KubeConfig, logger?: Logger): ListerWatcher<Pod> {
  return createListWatch<Pod>(kc, PODS, logger === undefined ? {} : { logger });
}

/** A fresh `{ signal }` for one ListerWatcher call. */
function ctx(): { signal: AbortSignal } {
  return { signal: AbortSignal.timeout(10_000) };
}

/** `code` of the first error in the chain that has a string code other than kinformer's own. */
function tlsCode(err: unknown): string | undefined {
  for (const e of causeChain(err).slice(1)) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** `JSON.stringify` that writes a repeated object once (node's TLS errors carry the peer certificate, whose issuer chain is circular). */
function stringify(value: unknown): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'object' && v !== null) {
      if (seen.has(v)) return '[seen]';
      seen.add(v);
    }
    return v;
  });
}

/** Asserts that no credential appears anywhere in `err`: its JSON, message, stack and every cause. */
function expectNoSecrets(err: unknown): void {
  const views = causeChain(err).flatMap((e) => [
    stringify(e),
    String(e),
    e instanceof Error ? (e.stack ?? '') : '',
    inspect(e, { depth: 10, showHidden: true }),
  ]);
  const text = views.join('\n');
  for (const secret of SECRETS) expect(text).not.toContain(secret);
}

/**
 * Asserts the typed failure of a connection whose TLS handshake failed, with the TLS error as
 * cause: ERR_TLS when we refused the server's certificate, ERR_CONNECTION when the server refused
 * our client certificate (the alert or reset it sends looks like any other connection failure).
 */
function expectTlsFailure(err: unknown, causeCode: RegExp): void {
  expect(err).toBeInstanceOf(KinformerError);
  expect(err).toMatchObject({
    code: causeCode === UNVERIFIED_SERVER ? ErrorCodes.TLS : ErrorCodes.CONNECTION,
  });
  expect(tlsCode(err)).toMatch(causeCode);
  expectNoSecrets(err);
}

describe('createListWatch verifies the server certificate', () => {
  test('with the CA in the KubeConfig (the default) it lists and watches over HTTPS', async () => {
    const server = await startServer();
    const lw = podsOf(server.kubeConfig());
    const list = await lw.list({}, ctx());
    expect(list.items.map((p) => p.metadata.name)).toEqual(['a', 'b']);
    const events: string[] = [];
    expect(list.metadata?.resourceVersion).toBe(server.resourceVersion);
    const stream = await lw.watch(
      { resourceVersion: server.resourceVersion, allowWatchBookmarks: false },
      ctx(),
    );
    server.create('pods', serverPod('c'));
    for await (const e of stream) {
      events.push(`${e.type} ${(e.object as Pod).metadata.name}`);
      break;
    }
    expect(events).toEqual(['ADDED c']);
    expect(server.requests.map((r) => r.verb)).toEqual(['list', 'watch']);
  });

  test.each<[string, FakeKubeConfigOptions]>([
    ['without a CA (node trusts only public roots)', { caData: false }],
    ['trusting a different CA', { caData: UNTRUSTED_TLS.ca }],
    ['expecting a server name the certificate does not list', { tlsServerName: 'kubernetes.example.com' }],
  ])(
    'a KubeConfig %s gets ERR_TLS with the TLS error as cause, for list and watch, and no data',
    async (_name, options) => {
      const server = await startServer();
      const lw = podsOf(server.kubeConfig(options));
      expectTlsFailure(await rejection(lw.list({}, ctx())), UNVERIFIED_SERVER);
      expectTlsFailure(await rejection(lw.watch({ resourceVersion: '1' }, ctx())), UNVERIFIED_SERVER);
      expect(server.requests).toEqual([]);
    },
  );

  test('the same KubeConfigs behave the same in client-node’s own CoreV1Api', async () => {
    const server = await startServer();
    const good = await server
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace: 'default' });
    expect(names(good.items)).toEqual(['a', 'b']);
    for (const options of [
      { caData: false },
      { caData: UNTRUSTED_TLS.ca },
    ] satisfies FakeKubeConfigOptions[]) {
      const err = await rejection(
        server.kubeConfig(options).makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'default' }),
      );
      expect(causeChain(err).map((e) => (e as { code?: unknown }).code)).toContainEqual(
        expect.stringMatching(UNVERIFIED_SERVER),
      );
      expectNoSecrets(err);
    }
    expect(server.requests).toHaveLength(1);
  });

  test('NODE_TLS_REJECT_UNAUTHORIZED=0 does not turn verification off; only the kubeconfig can', async () => {
    const server = await startServer();
    const saved = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    try {
      const lw = podsOf(server.kubeConfig({ caData: UNTRUSTED_TLS.ca }));
      expectTlsFailure(await rejection(lw.list({}, ctx())), UNVERIFIED_SERVER);
      expect(server.requests).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = saved;
    }
  });

  test('only an explicit skipTLSVerify accepts a certificate it cannot verify', async () => {
    const server = await startServer();
    const list = await podsOf(server.kubeConfig({ caData: false, skipTLSVerify: true })).list({}, ctx());
    expect(list.items).toHaveLength(2);
  });
});

describe('client certificates', () => {
  test("a server that requires one serves the KubeConfig's client certificate and sees its CN as the user", async () => {
    const server = await startServer('require');
    const lw = podsOf(server.kubeConfig({ clientCert: true }));
    const list = await lw.list({}, ctx());
    expect(list.items).toHaveLength(2);
    const stream = await lw.watch({ resourceVersion: server.resourceVersion }, ctx());
    server.create('pods', serverPod('c'));
    for await (const e of stream) {
      expect(e).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'c' } } });
      break;
    }
    expect(server.requests.map((r) => [r.verb, r.user])).toEqual([
      ['list', FAKE_API_SERVER_TLS.clientCommonName],
      ['watch', FAKE_API_SERVER_TLS.clientCommonName],
    ]);
  });

  test.each<[string, FakeKubeConfigOptions]>([
    ['with only a bearer token', {}],
    [
      'with a client certificate from another CA',
      { clientCert: { cert: UNTRUSTED_TLS.clientCert, key: UNTRUSTED_TLS.clientKey }, token: FAKE_TOKEN },
    ],
  ])(
    'a KubeConfig %s is refused at the TLS layer: ERR_CONNECTION, nothing reaches HTTP',
    async (_name, options) => {
      const server = await startServer('require');
      const lw = podsOf(server.kubeConfig(options));
      expectTlsFailure(await rejection(lw.list({}, ctx())), REFUSED_CLIENT);
      expectTlsFailure(await rejection(lw.watch({ resourceVersion: '1' }, ctx())), REFUSED_CLIENT);
      expect(server.requests).toEqual([]);
      await waitFor(() => server.tlsClientErrors.length >= 2);
    },
  );

  test('a client certificate does not replace server verification: with it but without the CA the client refuses the server', async () => {
    const server = await startServer('require');
    const err = await rejection(
      podsOf(server.kubeConfig({ clientCert: true, caData: false })).list({}, ctx()),
    );
    expectTlsFailure(err, UNVERIFIED_SERVER);
    expect(server.requests).toEqual([]);
  });
});

describe('informers over HTTPS', () => {
  test('a SharedInformerFactory syncs with the CA and a client certificate and follows events', async () => {
    const server = await startServer('require');
    const logs = captureLogs('trace');
    const factory = new SharedInformerFactory(server.kubeConfig({ clientCert: true, namespace: 'default' }), {
      logger: logs.logger,
    });
    const stop = new AbortController();
    track(factory, async (f) => {
      stop.abort();
      await f.shutdown();
    });
    const { informer, lister } = factory.core.v1.pods();
    const added: string[] = [];
    informer.on('add', (p: V1Pod) => void added.push(p.metadata?.name ?? ''));
    factory.start(stop.signal);
    expect(await factory.waitForCacheSync(AbortSignal.timeout(5_000))).toEqual(new Map([['pods.v1', true]]));
    expect(names(lister.list()).sort()).toEqual(['a', 'b']);
    server.create('pods', serverPod('c'));
    await waitFor(() => added.includes('c'), { describe: () => added });
    expect(lister.namespace('default').get('c')?.spec?.containers).toEqual([{ name: 'c', image: 'nginx' }]);
    expect(server.requests.length).toBeGreaterThanOrEqual(2);
    expect(new Set(server.requests.map((r) => r.user))).toEqual(
      new Set([FAKE_API_SERVER_TLS.clientCommonName]),
    );
    expect(logs.raw.length).toBeGreaterThan(0);
    for (const secret of SECRETS) expect(logs.text()).not.toContain(secret);
  });

  test('a SharedIndexInformer whose KubeConfig lacks the CA never syncs: waitForCacheSync rejects with the ERR_TLS cause, the informer keeps retrying', async () => {
    const server = await startServer();
    const logs = captureLogs('trace');
    const informer = new SharedIndexInformer<Pod>(podsOf(server.kubeConfig({ caData: false }), logs.logger), {
      name: 'pods.v1',
      logger: logs.logger,
      reflectorOptions: { backoff: new RecordingBackoff(5) },
    });
    const errors: unknown[] = [];
    informer.setWatchErrorHandler((_reflector, err) => void errors.push(err));
    const added: string[] = [];
    informer.on('add', (p) => void added.push(p.metadata.name ?? ''));
    const stop = new AbortController();
    const run = informer.run(stop.signal);
    track(stop, async (s) => {
      s.abort();
      await run;
    });
    // An untrusted certificate is not fixed by waiting: the wait rejects with it (it used to resolve
    // false at the timeout, the cause only in syncError()).
    const waited = await waitForCacheSync(AbortSignal.timeout(10_000), informer.hasSynced).catch(
      (e: unknown) => e,
    );
    expect(waited).toMatchObject({ code: ErrorCodes.CACHE_SYNC_FAILED, cause: { code: ErrorCodes.TLS } });
    expect((waited as Error).message).toMatch(/^pods\.v1 cannot sync: could not reach the API server/);
    await waitFor(() => errors.length >= 2, { describe: () => errors.map((e) => inspect(e)) });
    stop.abort();
    await run;
    expect(informer.hasSynced()).toBe(false);
    expect(informer.getStore().list()).toEqual([]);
    expect(added).toEqual([]);
    for (const err of errors) expectTlsFailure(err, UNVERIFIED_SERVER);
    expect(server.requests).toEqual([]);
    expect(logs.text()).toContain(ErrorCodes.TLS);
    for (const secret of SECRETS) expect(logs.text()).not.toContain(secret);
  });

  test('a factory refused by a server that requires a client certificate logs the TLS failure, never the token or a key', async () => {
    const server = await startServer('require');
    const logs = captureLogs('trace');
    const factory = new SharedInformerFactory(
      server.kubeConfig({
        clientCert: { cert: UNTRUSTED_TLS.clientCert, key: UNTRUSTED_TLS.clientKey },
        token: FAKE_TOKEN,
      }),
      { logger: logs.logger },
    );
    const stop = new AbortController();
    track(factory, async (f) => {
      stop.abort();
      await f.shutdown();
    });
    const { informer } = factory.core.v1.pods();
    factory.start(stop.signal);
    await waitFor(() => logs.lines.some((l) => l.level >= 50 && l.code === ErrorCodes.CONNECTION), {
      describe: () => logs.raw,
    });
    expect(informer.hasSynced()).toBe(false);
    expect(server.requests).toEqual([]);
    const failure = logs.lines.find((l) => l.code === ErrorCodes.CONNECTION)!;
    expect(failure.err?.message).toMatch(/^could not reach the API server at 127\.0\.0\.1: /);
    for (const secret of SECRETS) expect(logs.text()).not.toContain(secret);
  });
});
