import type https from 'node:https';
import { ErrorCodes, KinformerError, type ErrorCode } from '@kinformer/core';
import type { KubeConfig, User } from '@kubernetes/client-node';
import { applyExecCredential, execConfigOf, withoutOwnAuth, type CredentialLease } from './execCredential.js';
import { sanitizedError } from './redact.js';
import { applyTokenFile, tokenFileOf } from './tokenFile.js';

/**
 * Characters a header value may not hold (node's `checkInvalidHeaderChar`): anything but tab,
 * printable ASCII and bytes 0x80–0xff. CR and LF are the dangerous ones (header injection).
 */
const INVALID_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * Error codes of node's TLS layer that mean the server's certificate cannot be trusted: its chain
 * does not end at a trusted CA, it is self-signed, expired or not yet valid, revoked, or not issued
 * for the name asked for. Retrying cannot fix any of them.
 */
const TLS_VERIFICATION_CODES: ReadonlySet<string> = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'INVALID_CA',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * The code for a request that failed before any answer: `ERR_TLS` when node refused the server's
 * certificate (see {@link TLS_VERIFICATION_CODES}), `ERR_CONNECTION` for everything else (refused,
 * reset, DNS, a server that refused our client certificate).
 */
export function connectionFailureCode(errno: string | undefined): ErrorCode {
  return errno !== undefined && TLS_VERIFICATION_CODES.has(errno) ? ErrorCodes.TLS : ErrorCodes.CONNECTION;
}

/** The name of the first header whose value holds a character a header may not, or undefined. */
function unsafeHeader(headers: Record<string, unknown> | undefined): string | undefined {
  if (headers === undefined) return undefined;
  for (const [name, value] of Object.entries(headers)) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'string' && INVALID_HEADER_CHAR.test(v))) return name;
  }
  return undefined;
}

function unsafeHeaderError(what: string, details: Record<string, unknown>): KinformerError {
  return new KinformerError(
    ErrorCodes.CREDENTIALS,
    `the KubeConfig's ${what} holds characters a header may not (CR, LF or another control character)`,
    { details },
  );
}

/**
 * Checks what can be checked in a KubeConfig before any request, as client-go does when it builds
 * a transport, and throws:
 *
 * - `ERR_TLS` when the current cluster sets `insecure-skip-tls-verify` together with a CA
 *   (`certificate-authority`/`-data`): client-go refuses this ("specifying a root certificates file
 *   with the insecure flag is not allowed") instead of silently ignoring the CA.
 * - `ERR_CREDENTIALS` when the current user's token or impersonated user holds characters a
 *   header may not (CR, LF, …): sent, they would split the header; node throws a raw TypeError.
 *
 * A KubeConfig without a current cluster or user passes (the request says so later). The value of
 * a bad credential is never echoed.
 */
export function checkKubeConfig(kc: KubeConfig, details: Record<string, unknown> = {}): void {
  const cluster = kc.getCurrentCluster();
  if (cluster?.skipTLSVerify === true && (Boolean(cluster.caData) || Boolean(cluster.caFile))) {
    throw new KinformerError(
      ErrorCodes.TLS,
      `cluster ${JSON.stringify(cluster.name)}: specifying a root certificates file with the insecure flag is not allowed (insecure-skip-tls-verify together with certificate-authority)`,
      { details: { ...details, cluster: cluster.name } },
    );
  }
  const user = kc.getCurrentUser();
  if (typeof user?.token === 'string' && INVALID_HEADER_CHAR.test(user.token)) {
    throw unsafeHeaderError(`user ${JSON.stringify(user.name)}'s token`, { ...details, user: user.name });
  }
  if (typeof user?.impersonateUser === 'string' && INVALID_HEADER_CHAR.test(user.impersonateUser)) {
    throw unsafeHeaderError(`user ${JSON.stringify(user.name)}'s impersonated user name`, {
      ...details,
      user: user.name,
    });
  }
}

/** Messages of client-node's own configuration errors: safe (no credential) and worth showing. */
const KNOWN_CONFIG_MESSAGES = [/^HTTP protocol is not allowed/, /^Unsupported proxy type/, /^Invalid URL/];

/**
 * What of an error from `applyToHTTPSOptions` may be shown. File errors (ENOENT of a token or CA
 * file: a `syscall` and a `path`), client-node's own configuration errors and URL errors (userinfo
 * redacted) keep their message. Anything else comes from an auth provider (OIDC, Azure, GCP commands)
 * and may quote its output or a token: only its name is kept.
 */
function safePreparationCause(err: unknown): Error {
  const copy = sanitizedError(err);
  const e = err as { syscall?: unknown; code?: unknown } | null;
  const isFileError = typeof e?.syscall === 'string' && typeof e.code === 'string';
  if (isFileError || KNOWN_CONFIG_MESSAGES.some((m) => m.test(copy.message))) return copy;
  const opaque = new Error(`the KubeConfig's auth provider failed (${copy.name})`);
  if (typeof e?.code === 'string') Object.assign(opaque, { code: e.code });
  return opaque;
}

/**
 * Fills `options` from the KubeConfig's current cluster and user: everything client-node's
 * `applyToHTTPSOptions` sets (Authorization, basic auth, Impersonate-User, CA, client certificate and
 * key, skipTLSVerify, tlsServerName, the agent and proxy), with three differences:
 *
 * - {@link checkKubeConfig} runs first (insecure + CA, header-unsafe token).
 * - An exec credential plugin is run by kinformer ({@link applyExecCredential}): its output never
 *   reaches an error, its stderr goes to `process.stderr`, a wait for it ends when `signal` aborts.
 * - A `tokenFile` auth provider (in-cluster service-account tokens) is read by kinformer
 *   ({@link applyTokenFile}): again at most a minute later, or at once after a 401.
 * - Every header value is checked afterwards (a token file or plugin can deliver a token with a
 *   newline): `ERR_CREDENTIALS` naming the header, never its value.
 *
 * Returns the lease of a credential that can be refreshed (exec plugin, token file), for the
 * caller to report a 401 on; undefined for static credentials.
 *
 * Other failures reject with `ERR_CONNECTION` (as before: a missing token or CA file, a bad proxy
 * URL, an auth provider that failed), their message kept only when it is known to hold no secret.
 */
export async function applyKubeConfig(
  kc: KubeConfig,
  options: https.RequestOptions,
  details: Record<string, unknown>,
  signal: AbortSignal,
): Promise<CredentialLease | undefined> {
  checkKubeConfig(kc, details);
  let lease: CredentialLease | undefined;
  try {
    const user = kc.getCurrentUser();
    const exec = execConfigOf(user);
    const tokenFile = tokenFileOf(user);
    if (user !== null && (exec !== undefined || tokenFile !== undefined)) {
      const own = options as Parameters<typeof applyExecCredential>[3];
      lease =
        exec !== undefined
          ? await applyExecCredential(kc, user, exec, own, signal)
          : await applyTokenFile(kc, user, tokenFile as string, own);
      // client-node's applyToHTTPSOptions, on a view of the KubeConfig whose current user has
      // neither (its own authenticators would run the plugin or read the file again, their way).
      const stripped: User = withoutOwnAuth(user);
      const view = Object.create(kc, { getCurrentUser: { value: () => stripped } }) as KubeConfig;
      await kc.applyToHTTPSOptions.call(view, options);
    } else {
      await kc.applyToHTTPSOptions(options);
    }
  } catch (err) {
    if (err instanceof KinformerError) throw err;
    const cause = safePreparationCause(err);
    throw new KinformerError(
      ErrorCodes.CONNECTION,
      `could not prepare the request from the KubeConfig (credentials, TLS files or proxy): ${cause.message}`,
      { cause, details },
    );
  }
  const header = unsafeHeader(options.headers as Record<string, unknown> | undefined);
  if (header !== undefined) throw unsafeHeaderError(`${header} header`, { ...details, header });
  return lease;
}
