/** Longest identifying string (apiVersion, kind, namespace, name, event type) a line's shape keeps. */
const MAX_IDENTIFIER_CHARS = 253;
/** How many key names of an object a line's shape lists. */
const MAX_KEYS = 20;
/** Longest key name a line's shape keeps (key names are chosen by whoever wrote the object). */
const MAX_KEY_CHARS = 64;

function identifier(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return value.length > MAX_IDENTIFIER_CHARS ? `${value.slice(0, MAX_IDENTIFIER_CHARS)}…` : value;
}

function kindOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

function keyName(key: string): string {
  return key.length > MAX_KEY_CHARS ? `${key.slice(0, MAX_KEY_CHARS)}…` : key;
}

function keysOf(value: object): string[] {
  const keys = Object.keys(value);
  const shown = keys.slice(0, MAX_KEYS).map(keyName);
  return keys.length > MAX_KEYS ? [...shown, '…'] : shown;
}

/**
 * The shape of a watch line for an error's `details.excerpt` (and so for logs): never a field
 * value, since a malformed line may be a Secret whose `data` follows a short `metadata`. For a line
 * that parsed (`parsed` is its value) it holds the event `type`, the object's `apiVersion`, `kind`,
 * `namespace` and `name` when they are strings (identifiers, not data), and the names of the
 * envelope's and the object's keys; otherwise `'not valid JSON'`. A JSON text, at most a few hundred
 * characters.
 */
export function describeLine(parsed: unknown): string {
  if (parsed === undefined) return 'not valid JSON';
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return JSON.stringify({ value: kindOf(parsed) });
  }
  const envelope = parsed as { type?: unknown; object?: unknown };
  const shape: Record<string, unknown> = { keys: keysOf(envelope) };
  // An event type is a word (ADDED, MODIFIED…); anything else is described, not repeated.
  if (typeof envelope.type === 'string') {
    shape.type = /^[A-Za-z_]{1,32}$/.test(envelope.type)
      ? envelope.type
      : `a string of ${envelope.type.length} characters`;
  } else if ('type' in envelope) {
    shape.type = kindOf(envelope.type);
  }
  const object = envelope.object;
  if (typeof object !== 'object' || object === null || Array.isArray(object)) {
    if ('object' in envelope) shape.object = kindOf(object);
    return JSON.stringify(shape);
  }
  const o = object as { apiVersion?: unknown; kind?: unknown; metadata?: unknown };
  const meta =
    typeof o.metadata === 'object' && o.metadata !== null
      ? (o.metadata as { namespace?: unknown; name?: unknown })
      : undefined;
  shape.object = {
    apiVersion: identifier(o.apiVersion),
    kind: identifier(o.kind),
    namespace: identifier(meta?.namespace),
    name: identifier(meta?.name),
    keys: keysOf(o),
  };
  return JSON.stringify(shape);
}

/**
 * The position V8 names in a `JSON.parse` SyntaxError (`… in JSON at position 19 (line 1 column
 * 20)`), or `undefined`. The rest of such a message is not used: it may quote the text.
 */
export function jsonErrorPosition(err: unknown): number | undefined {
  const message = err instanceof Error ? err.message : '';
  const match = /at position (\d+)/.exec(message);
  return match === null ? undefined : Number(match[1]);
}
