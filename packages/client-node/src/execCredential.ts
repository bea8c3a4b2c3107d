import { spawn } from 'node:child_process';
import { ErrorCodes, KinformerError } from '@kinformer/core';
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
  /** ms since the epoch; +Infinity when the credential has no expiry. */
  expiresAt: number;
}

/** Per KubeConfig, per user name: the last credential and the run in flight. */
const cache = new WeakMap<
  KubeConfig,
  Map<string, { cached?: Cached; running?: Promise<Cached> | undefined }>
>();

/** Where plugin stderr goes. Replaceable in tests only. */
export const pluginStderr: { write: (chunk: Buffer) => void } = {
  write: (chunk) => void process.stderr.write(chunk),
};

/** The exec config of a user, from `exec` or an `exec` auth provider (as client-node reads it). */
export function execConfigOf(user: User | null | undefined): ExecConfig | undefined {
  if (!user) return undefined;
  const provider: unknown = user.authProvider;
  const own: unknown = user.exec;
  const exec: unknown = own ?? (provider as { config?: { exec?: unknown } } | undefined)?.config?.exec;
  return typeof exec === 'object' && exec !== null ? exec : undefined;
}

/** `user` without its exec plugin, so client-node's own exec authenticator does not run it again. */
export function withoutExec(user: User): User {
  const rest: Record<string, unknown> = { ...user };
  delete rest.exec;
  const provider = rest.authProvider as { name?: unknown; config?: { exec?: unknown } } | undefined;
  if (provider !== undefined && (provider.name === 'exec' || provider.config?.exec !== undefined)) {
    delete rest.authProvider;
  }
  return rest as unknown as User;
}

/**
 * Runs the current user's exec credential plugin (or returns its cached, unexpired credential) and
 * puts what it gives into `options`: `Authorization: Bearer <token>` (unless the user also has a
 * static token, which client-node lets win), and the client certificate and key.
 *
 * kinformer runs the plugin itself rather than through client-node, to behave as client-go does
 * (`plugin/pkg/client/auth/exec/exec.go`): the plugin's stderr goes to this process's stderr, and a
 * failure says only which executable failed and how (`exec plugin "cmd" failed with exit code 1`).
 * client-node puts the plugin's whole stderr into the error's message (and so into every log line
 * and stack), and a non-JSON stdout into the parse error's message. Here neither the plugin's stdout
 * nor its stderr is ever part of an error. Fails with `ERR_CREDENTIALS`.
 */
export async function applyExecCredential(
  kc: KubeConfig,
  user: User,
  exec: ExecConfig,
  options: { headers?: Record<string, unknown>; cert?: unknown; key?: unknown },
): Promise<void> {
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
  if (credential === undefined || credential.expiresAt <= Date.now()) {
    const slot = entry;
    slot.running ??= runPlugin(exec).finally(() => {
      slot.running = undefined;
    });
    credential = await slot.running;
    slot.cached = credential;
  }
  const { status } = credential;
  if (status.clientCertificateData) options.cert = status.clientCertificateData;
  if (status.clientKeyData) options.key = status.clientKeyData;
  if (status.token && !user.token) {
    options.headers ??= {};
    options.headers.Authorization = `Bearer ${status.token}`;
  }
}

function credentialsError(message: string, details: Record<string, unknown>): KinformerError {
  return new KinformerError(ErrorCodes.CREDENTIALS, message, { details });
}

function runPlugin(exec: ExecConfig): Promise<Cached> {
  const command = exec.command;
  if (typeof command !== 'string' || command === '') {
    return Promise.reject(credentialsError('the exec credential plugin has no command', {}));
  }
  const args = Array.isArray(exec.args) ? exec.args.map(String) : [];
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (Array.isArray(exec.env)) {
    for (const e of exec.env as { name?: unknown; value?: unknown }[]) {
      if (typeof e?.name === 'string') env[e.name] = typeof e.value === 'string' ? e.value : '';
    }
  }
  const details = { plugin: command };
  return new Promise<Cached>((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let outBytes = 0;
    let spawnError: NodeJS.ErrnoException | undefined;
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
