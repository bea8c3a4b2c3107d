import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCodes, isKinformerError } from '@kinformer/core';
import { createListWatch } from '@kinformer/client-node';
import { FakeApiServer } from '@kinformer/testing';
import type { User } from '@kubernetes/client-node';
import { kubeConfigFor } from './testSupport.test.helpers.js';

// Credentials that rotate: an exec plugin's token revoked by the server, an in-cluster
// service-account token file the kubelet rewrites. The server authenticates only the tokens it is
// told to (`requireBearerTokens`), as kube-apiserver's token authenticator does.

const PODS = { version: 'v1', resource: 'pods' } as const;
const signal = (): AbortSignal => AbortSignal.timeout(10_000);

let server: FakeApiServer;
let dir: string;
beforeEach(async () => {
  server = await FakeApiServer.start();
  dir = mkdtempSync(join(tmpdir(), 'kinformer-cred-'));
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** An exec plugin that prints `token-<n>` (no expiry) on its n-th run, counting runs in a file. */
function countingPlugin(): { user: Partial<User>; runs: () => number } {
  const runs = join(dir, 'runs');
  writeFileSync(runs, '');
  const script = `
    const fs = require('fs');
    fs.appendFileSync(${JSON.stringify(runs)}, 'x');
    const n = fs.readFileSync(${JSON.stringify(runs)}, 'utf8').length;
    process.stdout.write(JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'token-' + n },
    }));`;
  return {
    user: {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: process.execPath,
        args: ['-e', script],
      },
    },
    runs: () => readFileSync(runs, 'utf8').length,
  };
}

const statuses = (): (number | undefined)[] => server.requests.map((r) => r.status);

describe('exec plugin credentials after a 401', () => {
  it('a credential without expiry is dropped on a 401 and the request is sent once more with a fresh one', async () => {
    const plugin = countingPlugin();
    server.requireBearerTokens(['token-1']);
    const lw = createListWatch(kubeConfigFor(server.url, plugin.user), PODS);
    await lw.list({}, { signal: signal() });
    await lw.list({}, { signal: signal() });
    expect(plugin.runs()).toBe(1); // cached: no expiry
    // The server revokes token-1; the plugin's next run gives token-2.
    server.requireBearerTokens(['token-2']);
    server.clearRequests();
    const list = await lw.list({}, { signal: signal() });
    expect(list.items).toEqual([]);
    expect(statuses()).toEqual([401, 200]);
    expect(plugin.runs()).toBe(2);
    // The fresh credential is cached in turn.
    server.clearRequests();
    await lw.list({}, { signal: signal() });
    expect(statuses()).toEqual([200]);
    expect(plugin.runs()).toBe(2);
  });

  it('retries once only: a credential the server keeps refusing fails with ERR_UNAUTHORIZED after two requests', async () => {
    const plugin = countingPlugin();
    server.requireBearerTokens(['never-issued']);
    const lw = createListWatch(kubeConfigFor(server.url, plugin.user), PODS);
    const err: unknown = await lw.list({}, { signal: signal() }).catch((e: unknown) => e);
    expect(isKinformerError(err) && err.code).toBe(ErrorCodes.UNAUTHORIZED);
    expect(statuses()).toEqual([401, 401]);
    expect(plugin.runs()).toBe(2);
  });

  it('a watch refused with 401 is opened again with a fresh credential', async () => {
    const plugin = countingPlugin();
    server.requireBearerTokens(['token-1']);
    const lw = createListWatch(kubeConfigFor(server.url, plugin.user), PODS);
    const list = await lw.list({}, { signal: signal() });
    server.requireBearerTokens(['token-2']);
    const ac = new AbortController();
    const events = await lw.watch(
      { resourceVersion: list.metadata?.resourceVersion ?? '' },
      { signal: ac.signal },
    );
    server.create(PODS, { metadata: { name: 'after-rotation', namespace: 'default' } });
    for await (const event of events) {
      expect(event).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'after-rotation' } } });
      break;
    }
    ac.abort();
    expect(plugin.runs()).toBe(2);
  });
});

describe('service-account token files', () => {
  /** The user `KubeConfig.loadFromCluster` builds: a `tokenFile` auth provider. */
  const inCluster = (file: string): Partial<User> => ({
    authProvider: { name: 'tokenFile', config: { tokenFile: file } },
  });

  it('a rotated file is read at once when the old token is refused, without a restart', async () => {
    const file = join(dir, 'token');
    writeFileSync(file, 'sa-token-1\n'); // the kubelet writes no newline; a hand-made file may
    server.requireBearerTokens(['sa-token-1']);
    const lw = createListWatch(kubeConfigFor(server.url, inCluster(file)), PODS);
    await lw.list({}, { signal: signal() });
    // The kubelet rotates the token; the API server stops accepting the old one.
    writeFileSync(file, 'sa-token-2');
    server.requireBearerTokens(['sa-token-2']);
    server.clearRequests();
    await lw.list({}, { signal: signal() });
    expect(statuses()).toEqual([401, 200]);
  });

  it("a rotated file is read again within a minute while the old token still works (client-go's period)", async () => {
    const file = join(dir, 'token');
    writeFileSync(file, 'sa-token-1');
    server.requireBearerTokens(['sa-token-1']);
    const lw = createListWatch(kubeConfigFor(server.url, inCluster(file)), PODS);
    // The wall clock, skewed: what client-go's cachingTokenSource and kinformer both read.
    const realNow = Date.now;
    let skew = 0;
    Date.now = () => realNow() + skew;
    try {
      await lw.list({}, { signal: signal() });
      writeFileSync(file, 'sa-token-2');
      skew = 59_000;
      server.clearRequests();
      await lw.list({}, { signal: signal() });
      expect(statuses()).toEqual([200]); // still sa-token-1: read 59 s ago
      server.requireBearerTokens(['sa-token-2']);
      skew = 61_000;
      server.clearRequests();
      await lw.list({}, { signal: signal() });
      expect(statuses()).toEqual([200]); // read again, no 401 needed
    } finally {
      Date.now = realNow;
    }
  });
});
