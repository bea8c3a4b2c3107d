/** What replaces the userinfo (`user:password`) of a URL in anything client-node prints. */
export const REDACTED_USERINFO = '***';

const SCHEME_AND_SLASHES = /^(?:[a-zA-Z][a-zA-Z0-9+.-]*:)?\/\//;
const USERINFO_IN_TEXT = /\/\/[^\s/?#]+@/g;

/**
 * `url` with its userinfo replaced: `http://user:pass@host:6443` → `http://***@host:6443`. For a string
 * meant to be one URL (a kubeconfig's `server` or `proxy-url`), parsed or not: everything between the
 * scheme's `//` and the **last** `@` goes, so a password holding `@` or `/` is removed whole. Strings
 * without `@` are returned unchanged.
 */
export function redactUrl(url: string): string {
  const prefix = SCHEME_AND_SLASHES.exec(url)?.[0] ?? '';
  const rest = url.slice(prefix.length);
  const at = rest.lastIndexOf('@');
  return at < 0 ? url : `${prefix}${REDACTED_USERINFO}${rest.slice(at)}`;
}

/**
 * `text` (an error message, say) with the userinfo of every URL in it replaced: `//user:pass@` →
 * `//***@`. A userinfo ends at the last `@` before whitespace, `/`, `?` or `#`.
 */
export function redactUrlCredentials(text: string): string {
  return text.replace(USERINFO_IN_TEXT, `//${REDACTED_USERINFO}@`);
}

/**
 * A copy of `err` that is safe to attach as a `cause`: same name and message (with URL userinfo
 * redacted), the string `code` if any, and nothing else. Errors from `new URL(…)` carry the whole
 * input (credentials included) in an `input` property, and errors from credential plugins may carry
 * their output; neither is kept. The copy's stack starts here, not where `err` was thrown.
 */
export function sanitizedError(err: unknown): Error {
  // Duck-typed rather than `instanceof`: errors thrown by Node built-ins may come from another realm.
  const e =
    typeof err === 'object' && err !== null
      ? (err as { name?: unknown; message?: unknown; code?: unknown })
      : undefined;
  const message = redactUrlCredentials(typeof e?.message === 'string' ? e.message : String(err));
  const copy = e?.name === 'TypeError' ? new TypeError(message) : new Error(message);
  if (typeof e?.name === 'string' && e.name !== copy.name) {
    Object.defineProperty(copy, 'name', {
      value: e.name,
      writable: true,
      configurable: true,
      enumerable: false,
    });
  }
  if (typeof e?.code === 'string') {
    Object.defineProperty(copy, 'code', {
      value: e.code,
      writable: true,
      configurable: true,
      enumerable: true,
    });
  }
  return copy;
}
