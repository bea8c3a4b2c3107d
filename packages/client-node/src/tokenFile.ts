import { readFile } from 'node:fs/promises';
import type { KubeConfig, User } from '@kubernetes/client-node';
import { bearerLease, type CredentialLease } from './execCredential.js';

/**
 * How long a token read from a file is used before the file is read again: client-go's
 * `NewCachedFileTokenSource` (`transport/token_source.go`) wraps a `fileTokenSource` whose tokens
 * expire `period` = one minute after they were read, so a rotated file is picked up within a minute.
 * The kubelet rotates a projected service-account token when 80% of its lifetime (one hour by
 * default) has passed, long before the old one expires.
 */
export const TOKEN_FILE_REREAD_MS = 60_000;

interface TokenRead {
  token: string;
  readAt: number;
}

/** Per KubeConfig, per file: the token last read. */
const cache = new WeakMap<KubeConfig, Map<string, TokenRead>>();

/** The path of the user's `tokenFile` auth provider (what `KubeConfig.loadFromCluster` builds), or undefined. */
export function tokenFileOf(user: User | null | undefined): string | undefined {
  const provider = user?.authProvider as { config?: { tokenFile?: unknown } } | undefined;
  const file = provider?.config?.tokenFile;
  return typeof file === 'string' && file !== '' ? file : undefined;
}

/**
 * Puts `Authorization: Bearer <token>` from a token file into `options` (unless the user also has
 * a static token, which client-node lets win), reading the file when the last read is older than
 * {@link TOKEN_FILE_REREAD_MS} or was rejected with a 401. The token is trimmed of surrounding
 * white space, as client-go's `fileTokenSource` trims it. A read error rejects with node's error
 * (its `path` and `code`, never the contents).
 *
 * client-node's own `FileAuth` re-reads every 60 s too, but keeps the token after a 401, so a
 * revoked token is sent for up to a minute after the file was rotated; here a 401 drops it
 * (client-go: `tokenSourceTransport` calls `ResetTokenOlderThan` on a 401).
 */
export async function applyTokenFile(
  kc: KubeConfig,
  user: User,
  file: string,
  options: { headers?: Record<string, unknown> },
): Promise<CredentialLease> {
  let perFile = cache.get(kc);
  if (perFile === undefined) {
    perFile = new Map();
    cache.set(kc, perFile);
  }
  let read = perFile.get(file);
  const now = Date.now();
  if (read === undefined || now - read.readAt >= TOKEN_FILE_REREAD_MS || now < read.readAt) {
    read = { token: (await readFile(file, 'utf8')).trim(), readAt: now };
    perFile.set(file, read);
  }
  const used = read;
  const slot = perFile;
  return bearerLease(options, user, read.token, () => {
    if (slot.get(file) === used) slot.delete(file);
  });
}
