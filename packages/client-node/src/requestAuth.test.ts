import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { ErrorCodes, isKinformerError, KinformerError } from '@kinformer/core';
import { KubeConfig, type User } from '@kubernetes/client-node';
import { createListWatch } from './createListWatch.js';
import { waitFor, within } from '@kinformer/test-tools';
import { execPluginLimits, pluginStderr } from './execCredential.js';
import { checkKubeConfig, connectionFailureCode } from './requestAuth.js';

// How kinformer turns a KubeConfig into request credentials, where it differs from plain
// client-node: exec plugins run as client-go runs them (stderr passed through, never in an error),
// header-unsafe credentials and insecure+CA clusters are refused with typed errors.

const PODS = { version: 'v1', resource: 'pods' } as const;
const LEAK = 'refresh_token=kinformer-leak-5e1f'; // what a chatty plugin prints

let server: Server;
let url: string;
const seen: IncomingHttpHeaders[] = [];
let stderr: string[] = [];
const savedWrite = pluginStderr.write;

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[]}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen.length = 0;
  stderr = [];
  pluginStderr.write = (chunk) => void stderr.push(chunk.toString());
});
afterEach(() => {
  pluginStderr.write = savedWrite;
});

function kubeConfig(user: Partial<User>, cluster: Record<string, unknown> = {}): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true, ...cluster }],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

/** An exec user whose plugin is a node script. */
function plugin(script: string): Partial<User> {
  return {
    exec: {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: process.execPath,
      args: ['-e', script],
    },
  };
}

async function listError(kc: KubeConfig): Promise<KinformerError> {
  const err: unknown = await createListWatch(kc, PODS)
    .list({}, { signal: AbortSignal.timeout(5000) })
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  if (!(err instanceof KinformerError)) throw new Error(`expected a KinformerError, got ${inspect(err)}`);
  return err;
}

/** Every way an error gets printed: message, stack, details, cause chain, util.inspect. */
function printed(err: unknown): string {
  return [String(err), (err as Error).stack, JSON.stringify(err), inspect(err, { depth: 10 })].join('\n');
}

const credential = (status: Record<string, unknown>): string =>
  JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status });

describe('exec credential plugins', () => {
  it('a failing plugin: ERR_CREDENTIALS names the executable and exit code; its stderr goes to stderr, never into the error', async () => {
    const err = await listError(
      kubeConfig(plugin(`process.stderr.write(${JSON.stringify(LEAK)}); process.exit(3)`)),
    );
    expect(err.code).toBe(ErrorCodes.CREDENTIALS);
    expect(err.message).toBe(`exec plugin ${JSON.stringify(process.execPath)} failed with exit code 3`);
    expect(err.details).toMatchObject({ plugin: process.execPath, exitCode: 3 });
    expect(printed(err)).not.toContain('kinformer-leak');
    expect(stderr.join('')).toBe(LEAK);
    expect(seen).toHaveLength(0);
  });

  it('a plugin that prints something that is not JSON: ERR_CREDENTIALS without the output (V8 would quote it)', async () => {
    const err = await listError(
      kubeConfig(plugin(`process.stdout.write(${JSON.stringify(`${LEAK} oops`)})`)),
    );
    expect(err.code).toBe(ErrorCodes.CREDENTIALS);
    expect(err.message).toMatch(/did not print an ExecCredential .*\(\d+ bytes on stdout\)$/);
    expect(printed(err)).not.toContain('kinformer-leak');
  });

  it('a plugin that cannot be found: ERR_CREDENTIALS "executable not found"', async () => {
    const err = await listError(
      kubeConfig({
        exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'kinformer-no-such-plugin' },
      }),
    );
    expect(err).toMatchObject({
      code: ErrorCodes.CREDENTIALS,
      message: 'exec plugin "kinformer-no-such-plugin": executable not found',
    });
  });

  it('sends the token and runs the plugin again only once the credential expired', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kinformer-exec-'));
    const runs = join(dir, 'runs');
    writeFileSync(runs, '');
    const expiry = new Date(Date.now() + 3_600_000).toISOString();
    const kc = kubeConfig(
      plugin(
        `require('fs').appendFileSync(${JSON.stringify(runs)}, 'x'); process.stdout.write(${JSON.stringify(
          credential({ token: 'exec-token', expirationTimestamp: expiry }),
        )})`,
      ),
    );
    const lw = createListWatch(kc, PODS);
    await lw.list({}, { signal: AbortSignal.timeout(5000) });
    await lw.list({}, { signal: AbortSignal.timeout(5000) });
    expect(seen.map((h) => h.authorization)).toEqual(['Bearer exec-token', 'Bearer exec-token']);
    expect(readFileSync(runs, 'utf8')).toBe('x');
  });

  it('a plugin token holding CR/LF is refused with ERR_CREDENTIALS naming the header, not the value', async () => {
    const err = await listError(
      kubeConfig(
        plugin(`process.stdout.write(${JSON.stringify(credential({ token: 'abc\r\nX-Evil: 1' }))})`),
      ),
    );
    expect(err).toMatchObject({ code: ErrorCodes.CREDENTIALS, details: { header: 'Authorization' } });
    expect(printed(err)).not.toContain('X-Evil');
    expect(seen).toHaveLength(0);
  });
});

describe('exec plugins that hang', () => {
  const savedTimeout = execPluginLimits.timeoutMs;
  afterEach(() => {
    execPluginLimits.timeoutMs = savedTimeout;
  });

  /** A plugin that records its pid, prints part of a credential and never finishes. */
  function hungPlugin(dir: string): Partial<User> {
    const pidFile = join(dir, 'pid');
    return plugin(
      `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); process.stdout.write(${JSON.stringify(LEAK)}); setInterval(() => {}, 1000)`,
    );
  }
  const pidIn = (dir: string): number => Number(readFileSync(join(dir, 'pid'), 'utf8'));
  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it('a request waiting on a hung plugin ends when its signal aborts, and the plugin is killed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kinformer-exec-'));
    const ac = new AbortController();
    const pending = createListWatch(kubeConfig(hungPlugin(dir)), PODS)
      .list({}, { signal: ac.signal })
      .catch((e: unknown) => e);
    await waitFor(() => existsSync(join(dir, 'pid')) && readFileSync(join(dir, 'pid'), 'utf8') !== '', {
      what: 'the plugin to start',
      timeoutMs: 10_000,
    });
    const pid = pidIn(dir);
    ac.abort();
    const err = await within(pending, 'the list to end after abort', 3_000);
    expect(isKinformerError(err) && err.code).toBe(ErrorCodes.ABORTED);
    await waitFor(() => !alive(pid), { what: 'the plugin to be killed', timeoutMs: 5_000 });
    expect(seen).toHaveLength(0);
  });

  it('one waiter aborting does not end the run another request waits for', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kinformer-exec-'));
    const go = join(dir, 'go');
    const runs = join(dir, 'runs');
    writeFileSync(runs, '');
    const kc = kubeConfig(
      plugin(
        `const fs = require('fs'); fs.appendFileSync(${JSON.stringify(runs)}, 'x'); const t = setInterval(() => { if (fs.existsSync(${JSON.stringify(
          go,
        )})) { clearInterval(t); process.stdout.write(${JSON.stringify(credential({ token: 'shared' }))}); } }, 5)`,
      ),
    );
    const lw = createListWatch(kc, PODS);
    const ac = new AbortController();
    const first = lw.list({}, { signal: ac.signal }).catch((e: unknown) => e);
    const second = lw.list({}, { signal: AbortSignal.timeout(10_000) });
    await waitFor(() => readFileSync(runs, 'utf8') === 'x', {
      what: 'the plugin to start',
      timeoutMs: 10_000,
    });
    ac.abort();
    expect(isKinformerError(await first) && ((await first) as KinformerError).code).toBe(ErrorCodes.ABORTED);
    writeFileSync(go, '');
    await second;
    expect(seen.map((h) => h.authorization)).toEqual(['Bearer shared']);
    expect(readFileSync(runs, 'utf8')).toBe('x');
  });

  it('a plugin that runs past the limit is killed: ERR_CREDENTIALS without its output', async () => {
    execPluginLimits.timeoutMs = 1_500;
    const dir = mkdtempSync(join(tmpdir(), 'kinformer-exec-'));
    const err = await listError(kubeConfig(hungPlugin(dir)));
    expect(err.code).toBe(ErrorCodes.CREDENTIALS);
    expect(err.message).toBe(
      `exec plugin ${JSON.stringify(process.execPath)} did not finish within 1.5 s and was killed`,
    );
    expect(printed(err)).not.toContain('kinformer-leak');
    // On a loaded machine node may not have started the script before the limit: then no pid.
    if (existsSync(join(dir, 'pid'))) expect(alive(pidIn(dir))).toBe(false);
    expect(seen).toHaveLength(0);
  });
});

describe('header-unsafe credentials', () => {
  it.each([
    ['CR/LF', 'sekr3t\r\nX-Injected: yes'],
    ['a NUL byte', 'sekr3t\u0000x'],
    ['a DEL', 'sekr3t\u007fx'],
  ])(
    'a bearer token with %s is refused by createListWatch with ERR_CREDENTIALS, not a TypeError',
    (_name, token) => {
      let thrown: unknown;
      try {
        createListWatch(kubeConfig({ token }), PODS);
      } catch (err) {
        thrown = err;
      }
      expect(isKinformerError(thrown, ErrorCodes.CREDENTIALS)).toBe(true);
      expect(printed(thrown)).not.toContain('sekr3t');
    },
  );

  it('a token that becomes unsafe after construction is refused at the request, before anything is sent', async () => {
    const kc = kubeConfig({ token: 'fine' });
    const lw = createListWatch(kc, PODS);
    (kc.getCurrentUser() as { token: string }).token = 'bad\nvalue';
    const err: unknown = await lw.list({}, { signal: AbortSignal.timeout(5000) }).catch((e: unknown) => e);
    expect(isKinformerError(err, ErrorCodes.CREDENTIALS)).toBe(true);
    expect(seen).toHaveLength(0);
  });

  it('an impersonated user name with a newline is refused the same way', () => {
    expect(() => checkKubeConfig(kubeConfig({ token: 't', impersonateUser: 'bob\nX: y' }))).toThrow(
      expect.objectContaining({ code: ErrorCodes.CREDENTIALS }),
    );
  });
});

describe('insecure-skip-tls-verify with a CA', () => {
  it("is refused with ERR_TLS and client-go's message, at createListWatch and at every request", async () => {
    const kc = kubeConfig(
      { token: 't' },
      { server: 'https://127.0.0.1:1', skipTLSVerify: true, caData: 'Y2E=' },
    );
    expect(() => createListWatch(kc, PODS)).toThrow(
      expect.objectContaining({
        code: ErrorCodes.TLS,
        message: expect.stringContaining(
          'specifying a root certificates file with the insecure flag is not allowed',
        ),
      }),
    );
    const ok = kubeConfig({ token: 't' });
    const lw = createListWatch(ok, PODS);
    (ok.getCurrentCluster() as { caData?: string }).caData = 'Y2E=';
    const err: unknown = await lw.list({}, { signal: AbortSignal.timeout(5000) }).catch((e: unknown) => e);
    expect(isKinformerError(err, ErrorCodes.TLS)).toBe(true);
  });

  it('skipTLSVerify alone, or a CA alone, is accepted', () => {
    expect(() => checkKubeConfig(kubeConfig({ token: 't' }))).not.toThrow();
    expect(() =>
      checkKubeConfig(kubeConfig({ token: 't' }, { skipTLSVerify: false, caData: 'Y2E=' })),
    ).not.toThrow();
  });
});

describe('connectionFailureCode', () => {
  it.each([
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', ErrorCodes.TLS],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', ErrorCodes.TLS],
    ['SELF_SIGNED_CERT_IN_CHAIN', ErrorCodes.TLS],
    ['CERT_HAS_EXPIRED', ErrorCodes.TLS],
    ['ERR_TLS_CERT_ALTNAME_INVALID', ErrorCodes.TLS],
    ['ECONNREFUSED', ErrorCodes.CONNECTION],
    ['ECONNRESET', ErrorCodes.CONNECTION],
    ['ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', ErrorCodes.CONNECTION],
    [undefined, ErrorCodes.CONNECTION],
  ])('%s → %s', (errno, code) => {
    expect(connectionFailureCode(errno)).toBe(code);
  });
});
