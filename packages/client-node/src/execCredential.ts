import { spawn } from 'node:child_process';
import { ErrorCodes, KinformerError } from '@kinformer/core';
import { abortError } from '@kinformer/core/internal';
import type { KubeConfig, User } from '@kubernetes/client-node';

/** The `exec` section of a kubeconfig user (client.authentication.k8s.io ExecConfig). */
interface ExecConfig {
  command?: unknown;
  args?: unknown;
  env?: unknown;
}

/** What an exec plugin hands back: `status` of an ExecCredential. */
interface ExecCredentialStatus {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  expirationTimestamp?: string;
}

/** The most of a plugin's stdout that is read (an ExecCredential is a few KB). */
const MAX_PLUGIN_OUTPUT_BYTES = 1024 * 1024;

interface Cached {
  status: ExecCredentialStatus;
  /** ms since the epoch; +Infinity when the credential has no expiry (then kept until a 401). */
  expiresAt: number;
}

/** One run of a plugin, shared by every request that waits for a credential meanwhile. */
interface Run {
  readonly promise: Promise<Cached>;
  /** Requests waiting for it; when the last one gives up (its signal aborted), the plugin is killed. */
  waiters: number;
  settled: boolean;
  kill(): void;
}

interface Entry {
  cached?: Cached | undefined;
  running?: Run | undefined;
}

/** Per KubeConfig, per user name: the last credential and the run in flight. */
const cache = new WeakMap<KubeConfig, Map<string, Entry>>();

/** Where plugin stderr goes. Replaceable in tests only. */
export const pluginStderr: { write: (chunk: Buffer) => void } = {
  write: (chunk) => void process.stderr.write(chunk),
};

/**
 * How long a plugin may run before it is killed and the request fails with `ERR_CREDENTIALS`
 * (default 60 s: cloud plugins such as `aws eks get-token` or `gke-gcloud-auth-plugin` answer in
 * about a second; an interactive login that waits for a person belongs in a terminal, not in an
 * informer). client-go sets no limit and relies on the request's context; kinformer also ties each
 * wait to the request's abort signal. Replaceable in tests only.
 */
export const execPluginLimits: { timeoutMs: number } = { timeoutMs: 60_000 };

/** A credential a request used, which the request can report as rejected (HTTP 401). */
export interface CredentialLease {
  /**
   * The server answered 401 to this credential: forget it, so the next request gets a fresh one
   * (client-go's `maybeRefreshCreds`: only when it is still the cached one, so that a burst of
   * 401s for one credential runs the plugin once).
   */
  rejected(): void;
}

/**
 * Puts `Authorization: Bearer <token>` into `options` unless `token` is empty or the user also has a
 * static token (which client-node lets win), and returns the credential's lease, whose `rejected` is
 * `forget`.
 */
export function bearerLease(
  options: { headers?: Record<string, unknown> },
  user: User,
  token: string | undefined,
  forget: () => void,
): CredentialLease {
  if (token && !user.token) {
    options.headers ??= {};
    options.headers.Authorization = `Bearer ${token}`;
  }
  return { rejected: forget };
}

/** The exec config of a user, from `exec` or an `exec` auth provider (as client-node reads it). */
export function execConfigOf(user: User | null | undefined): ExecConfig | undefined {
  if (!user) return undefined;
  const provider: unknown = user.authProvider;
  const own: unknown = user.exec;
  const exec: unknown = own ?? (provider as { config?: { exec?: unknown } } | undefined)?.config?.exec;
  return typeof exec === 'object' && exec !== null ? exec : undefined;
}

/**
 * `user` without what kinformer applies itself: its exec plugin (client-node's own exec
 * authenticator would run it again) and its `tokenFile` auth provider (client-node's would read
 * the file again, on its own schedule).
 */
export function withoutOwnAuth(user: User): User {
  const rest: Record<string, unknown> = { ...user };
  delete rest.exec;
  const provider = rest.authProvider as
    { name?: unknown; config?: { exec?: unknown; tokenFile?: unknown } } | undefined;
  if (
    provider !== undefined &&
    (provider.name === 'exec' ||
      provider.config?.exec !== undefined ||
      provider.config?.tokenFile !== undefined)
  ) {
    delete rest.authProvider;
  }
  return rest as unknown as User;
}

/**
 * Runs the current user's exec credential plugin (or returns its cached, unexpired credential) and
 * puts what it gives into `options`: `Authorization: Bearer <token>` (unless the user also has a
 * static token, which client-node lets win), and the client certificate and key. Returns the lease
 * of the credential used: on a 401 the caller calls `rejected()` and may ask again once.
 *
 * kinformer runs the plugin itself rather than through client-node, to behave as client-go does
 * (`plugin/pkg/client/auth/exec/exec.go`): the plugin's stderr goes to this process's stderr, and a
 * failure says only which executable failed and how (`exec plugin "cmd" failed with exit code 1`).
 * client-node puts the plugin's whole stderr into the error's message (and so into every log line
 * and stack), and a non-JSON stdout into the parse error's message. Here neither the plugin's stdout
 * nor its stderr is ever part of an error.
 *
 * A credential is cached until its `expirationTimestamp`, or, without one, until a request with it
 * is answered 401 (client-go's exec `roundTripper` refreshes on 401 the same way). One run serves
 * every request that waits meanwhile. A request whose `signal` aborts stops waiting at once
 * (`ERR_ABORTED`); when no request waits any more the plugin is killed. A plugin that runs longer
 * than {@link execPluginLimits} is killed (`ERR_CREDENTIALS`). Fails with `ERR_CREDENTIALS`.
 */
export async function applyExecCredential(
  kc: KubeConfig,
  user: User,
  exec: ExecConfig,
  options: { headers?: Record<string, unknown>; cert?: unknown; key?: unknown },
  signal: AbortSignal,
): Promise<CredentialLease> {
  let perUser = cache.get(kc);
  if (perUser === undefined) {
    perUser = new Map();
    cache.set(kc, perUser);
  }
  let entry = perUser.get(user.name);
  if (entry === undefined) {
    entry = {};
    perUser.set(user.name, entry);
  }
  let credential = entry.cached;
  if (credential === undefined || credential.expiresAt <= Date.now())
    credential = await fresh(entry, exec, signal);
  const { status } = credential;
  if (status.clientCertificateData) options.cert = status.clientCertificateData;
  if (status.clientKeyData) options.key = status.clientKeyData;
  const used = credential;
  const slot = entry;
  return bearerLease(options, user, status.token, () => {
    if (slot.cached === used) slot.cached = undefined;
  });
}

/** Waits for a run of the plugin (starting one unless one is in flight), or until `signal` aborts. */
async function fresh(entry: Entry, exec: ExecConfig, signal: AbortSignal): Promise<Cached> {
  if (signal.aborted) throw abortError(signal);
  let run = entry.running;
  if (run === undefined) {
    const started = runPlugin(exec);
    run = started;
    entry.running = started;
    // Registered before any waiter's handler: the credential is cached before a waiter resumes.
    const settle = (credential?: Cached): void => {
      started.settled = true;
      if (entry.running !== started) return; // abandoned (killed) meanwhile
      entry.running = undefined;
      if (credential !== undefined) entry.cached = credential;
    };
    started.promise.then(settle, () => settle());
  }
  const current = run;
  current.waiters++;
  try {
    return await new Promise<Cached>((resolve, reject) => {
      const onAbort = (): void => reject(abortError(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      current.promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  } finally {
    current.waiters--;
    if (current.waiters === 0 && !current.settled && signal.aborted) {
      // Nobody waits for this run any more: a hung plugin must not outlive the informer that asked.
      if (entry.running === current) entry.running = undefined;
      current.kill();
    }
  }
}

function credentialsError(message: string, details: Record<string, unknown>): KinformerError {
  return new KinformerError(ErrorCodes.CREDENTIALS, message, { details });
}

function runPlugin(exec: ExecConfig): Run {
  const command = exec.command;
  if (typeof command !== 'string' || command === '') {
    return {
      promise: Promise.reject(credentialsError('the exec credential plugin has no command', {})),
      waiters: 0,
      settled: true,
      kill: () => undefined,
    };
  }
  const args = Array.isArray(exec.args) ? exec.args.map(String) : [];
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (Array.isArray(exec.env)) {
    for (const e of exec.env as { name?: unknown; value?: unknown }[]) {
      if (typeof e?.name === 'string') env[e.name] = typeof e.value === 'string' ? e.value : '';
    }
  }
  const details = { plugin: command };
  const timeoutMs = execPluginLimits.timeoutMs;
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let killedFor: 'timeout' | 'abandoned' | undefined;
  const kill = (why: 'timeout' | 'abandoned'): void => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    killedFor ??= why;
    child.kill('SIGKILL');
  };
  const promise = new Promise<Cached>((resolve, reject) => {
    const out: Buffer[] = [];
    let outBytes = 0;
    let spawnError: NodeJS.ErrnoException | undefined;
    const timer = setTimeout(() => kill('timeout'), timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      if (outBytes + chunk.length <= MAX_PLUGIN_OUTPUT_BYTES) out.push(chunk);
      outBytes += chunk.length;
    });
    // client-go: `cmd.Stderr = os.Stderr`. The person running the program sees the plugin's
    // messages (a login prompt, "token expired"); no error or log line carries them.
    child.stderr.on('data', (chunk: Buffer) => pluginStderr.write(chunk));
    child.on('error', (err: NodeJS.ErrnoException) => {
      spawnError = err;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (spawnError !== undefined) {
        const errno = spawnError.code;
        reject(
          credentialsError(
            errno === 'ENOENT'
              ? `exec plugin ${JSON.stringify(command)}: executable not found`
              : `exec plugin ${JSON.stringify(command)} could not be started (${errno ?? 'error'})`,
            { ...details, ...(errno === undefined ? {} : { errno }) },
          ),
        );
        return;
      }
      if (killedFor !== undefined) {
        reject(
          credentialsError(
            killedFor === 'timeout'
              ? `exec plugin ${JSON.stringify(command)} did not finish within ${timeoutMs / 1000} s and was killed`
              : `exec plugin ${JSON.stringify(command)} was killed: no request waits for it any more`,
            { ...details, timeoutMs },
          ),
        );
        return;
      }
      if (code !== 0) {
        reject(
          credentialsError(
            signal !== null
              ? `exec plugin ${JSON.stringify(command)} was killed by ${signal}`
              : `exec plugin ${JSON.stringify(command)} failed with exit code ${String(code)}`,
            { ...details, exitCode: code, ...(signal === null ? {} : { signal }) },
          ),
        );
        return;
      }
      const status = parseCredential(outBytes > MAX_PLUGIN_OUTPUT_BYTES ? '' : Buffer.concat(out).toString());
      if (status === undefined) {
        // Not the parse error: V8's message quotes the output, which may hold the token.
        reject(
          credentialsError(
            `exec plugin ${JSON.stringify(command)} did not print an ExecCredential with a token or client certificate (${outBytes} bytes on stdout)`,
            { ...details, stdoutBytes: outBytes },
          ),
        );
        return;
      }
      const expires = status.expirationTimestamp === undefined ? NaN : Date.parse(status.expirationTimestamp);
      resolve({ status, expiresAt: Number.isNaN(expires) ? Number.POSITIVE_INFINITY : expires });
    });
  });
  return { promise, waiters: 0, settled: false, kill: () => kill('abandoned') };
}

function parseCredential(text: string): ExecCredentialStatus | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const status = (parsed as { status?: unknown } | null)?.status;
  if (typeof status !== 'object' || status === null) return undefined;
  const s = status as Record<string, unknown>;
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
  const result: ExecCredentialStatus = {};
  const token = str(s.token);
  const cert = str(s.clientCertificateData);
  const key = str(s.clientKeyData);
  const expiry = str(s.expirationTimestamp);
  if (token !== undefined) result.token = token;
  if (cert !== undefined) result.clientCertificateData = cert;
  if (key !== undefined) result.clientKeyData = key;
  if (expiry !== undefined) result.expirationTimestamp = expiry;
  if (token === undefined && (cert === undefined || key === undefined)) return undefined;
  return result;
}
