/**
 * What a redacted value is replaced with: a string, or a function of the value and its path (as
 * pino's `redact.censor`).
 */
export type Censor = string | ((value: unknown, path: string[]) => unknown);

/**
 * Property names whose values are credentials, compared without case, `-` or `_`:
 * `Authorization`, `proxy-authorization`, `token`, `bearerToken`, `access-token`, `refresh-token`,
 * `id-token`, `client-secret`, `password`, `passphrase`, `client-key`/`client-key-data`/`keyData`,
 * `privateKey`, `cookie`, `set-cookie`, `x-auth-token`, `api-key`, `auth` (node's `user:password`).
 */
const SECRET_KEYS: ReadonlySet<string> = new Set([
  'authorization',
  'proxyauthorization',
  'token',
  'bearertoken',
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'clientsecret',
  'secret',
  'password',
  'passwd',
  'passphrase',
  'clientkey',
  'clientkeydata',
  'keydata',
  'privatekey',
  'cookie',
  'setcookie',
  'xauthtoken',
  'apikey',
  'auth',
]);

/** `key` holds a store key (`ns/name`) in kinformer's logs; it is redacted only when it holds key material. */
const KEY_MATERIAL = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;

/**
 * Names (compared as {@link isSecretKey} compares) of the objects that hold TLS options: node's
 * `tls.connect`/`https.request` options and an agent's `options` name the client key `key` and a
 * PKCS#12 bundle `pfx`, in any encoding (a base64 PEM shows no `BEGIN PRIVATE KEY`). Under such a
 * parent, `key` and `pfx` are credentials whatever they hold; elsewhere `key` is a store key.
 */
const TLS_PARENTS: ReadonlySet<string> = new Set([
  'tls',
  'tlsoptions',
  'tlsconfig',
  'tlsclientconfig',
  'ssl',
  'ssloptions',
  'https',
  'httpsoptions',
  'agentoptions',
  'secureoptions',
  'securecontext',
]);
/** Fields of a TLS options object that carry the private key. */
const TLS_KEY_FIELDS: ReadonlySet<string> = new Set(['key', 'pfx']);

const normalized = (name: string): string => name.toLowerCase().replace(/[-_]/g, '');

/**
 * True when property `k` of the object at `path` is key material by where it sits: `key`/`pfx` of
 * an object named like TLS options ({@link TLS_PARENTS}: `{ tls: { key } }`), or of an object that
 * also carries a client certificate (`cert`/`certData`: node's request options, an agent's `options`).
 */
function isTlsKey(k: string, path: readonly string[], siblings: object): boolean {
  if (!TLS_KEY_FIELDS.has(k)) return false;
  const parent = path[path.length - 1];
  if (parent !== undefined && TLS_PARENTS.has(normalized(parent))) return true;
  return 'cert' in siblings || 'certData' in siblings;
}

/** `Bearer <token>` / `Basic <credentials>` anywhere in a string (messages, stacks, nested values). */
const AUTH_SCHEME = /\b(Bearer|Basic)(\s+)[^\s"',;]+/gi;
/** `token=…`, `refresh_token=…`, `password=…` in text (a query string, a plugin's chatter). */
const SECRET_ASSIGNMENT = /\b((?:access_|refresh_|id_)?token|password|client_secret)=[^\s&"',;]+/gi;
/** A PEM private key block. */
const PEM_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g;

/** Deeper than this, a logged value is cut (`[too deep]`): log lines are small, and this bounds the walk. */
const MAX_DEPTH = 16;
/** At most this many values of one log line are walked; the rest is cut (`[truncated]`). */
const MAX_NODES = 5000;

/** True when a property of this name holds a credential. */
export function isSecretKey(name: string): boolean {
  return SECRET_KEYS.has(normalized(name));
}

/** `text` with `Bearer …`/`Basic …` values, `token=…` assignments and PEM private keys replaced by `censor`. */
export function redactString(text: string, censor = '[REDACTED]'): string {
  if (text.length < 6) return text;
  return text
    .replace(AUTH_SCHEME, (_m, scheme: string, space: string) => `${scheme}${space}${censor}`)
    .replace(SECRET_ASSIGNMENT, (_m, name: string) => `${name}=${censor}`)
    .replace(PEM_KEY, censor);
}

interface Walk {
  censor: Censor;
  remove: boolean;
  nodes: number;
  seen: WeakSet<object>;
}

function censored(walk: Walk, value: unknown, path: string[]): unknown {
  return typeof walk.censor === 'function' ? walk.censor(value, path) : walk.censor;
}

function censorText(walk: Walk): string {
  return typeof walk.censor === 'string' ? walk.censor : '[REDACTED]';
}

/**
 * A copy of `value` fit for a log line: every property whose name is a credential
 * ({@link isSecretKey}) at any depth replaced by `censor` (or removed with `remove`), and so is a
 * client key by its path (`key`/`pfx` inside TLS options: `{ tls: { key } }`, or next to a `cert`),
 * whatever its encoding, while a store key under `key` elsewhere is kept; `Bearer …`,
 * `token=…` and private keys inside any string replaced; `rawHeaders` arrays (`[name, value, …]`)
 * censored by header name; errors turned into plain objects (`type`, `message`, `stack`, their own
 * properties and their `cause`, all redacted the same way, the message without its causes'
 * messages); Buffers shown as their size. Cycles become `[Circular]`; a value deeper than 16 levels
 * `[too deep]`. The input is not modified.
 */
export function redactForLog(value: unknown, censor: Censor = '[REDACTED]', remove = false): unknown {
  return redactValue(value, { censor, remove, nodes: 0, seen: new WeakSet() }, [], 0);
}

function redactValue(value: unknown, walk: Walk, path: string[], depth: number): unknown {
  if (typeof value === 'string') return redactString(value, censorText(walk));
  if (typeof value !== 'object' || value === null) return value;
  if (++walk.nodes > MAX_NODES) return '[truncated]';
  if (depth >= MAX_DEPTH) return '[too deep]';
  if (walk.seen.has(value)) return '[Circular]';
  if (value instanceof Date) return value;
  if (value instanceof Uint8Array) return `[${value.length} bytes]`;
  walk.seen.add(value);
  try {
    if (value instanceof Error) return redactError(value, walk, path, depth);
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      const raw = path[path.length - 1] === 'rawHeaders';
      for (let i = 0; i < value.length; i++) {
        const previous: unknown = value[i - 1];
        if (raw && i % 2 === 1 && typeof previous === 'string' && isSecretKey(previous)) {
          out.push(censored(walk, value[i], [...path, String(i)]));
        } else {
          out.push(redactValue(value[i], walk, [...path, String(i)], depth + 1));
        }
      }
      return out;
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const secret =
        v !== undefined &&
        v !== null &&
        (isSecretKey(k) ||
          isTlsKey(k, path, value) ||
          (k === 'key' && (v instanceof Uint8Array || (typeof v === 'string' && KEY_MATERIAL.test(v)))));
      if (secret) {
        if (!walk.remove) out[k] = censored(walk, v, [...path, k]);
      } else {
        out[k] = redactValue(v, walk, [...path, k], depth + 1);
      }
    }
    return out;
  } finally {
    walk.seen.delete(value);
  }
}

function redactError(err: Error, walk: Walk, path: string[], depth: number): Record<string, unknown> {
  const text = censorText(walk);
  const out: Record<string, unknown> = {
    type: err.constructor?.name ?? err.name,
    message: redactString(err.message, text),
  };
  if (err.name !== out.type) out.name = err.name;
  if (typeof err.stack === 'string') out.stack = redactString(err.stack, text);
  const rest = redactValue({ ...err }, walk, path, depth) as Record<string, unknown>;
  for (const [k, v] of Object.entries(rest)) {
    // KinformerError's `name` is an own field; it says what `type` already says.
    if (k !== 'cause' && !(k in out) && !(k === 'name' && v === out.type)) out[k] = v;
  }
  if (err.cause !== undefined) out.cause = redactValue(err.cause, walk, [...path, 'cause'], depth + 1);
  return out;
}
