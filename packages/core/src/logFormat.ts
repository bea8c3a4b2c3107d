const LEVELS: Record<number, { label: string; color: string }> = {
  10: { label: 'TRACE', color: '\u001b[90m' },
  20: { label: 'DEBUG', color: '\u001b[36m' },
  30: { label: 'INFO', color: '\u001b[32m' },
  40: { label: 'WARN', color: '\u001b[33m' },
  50: { label: 'ERROR', color: '\u001b[31m' },
  60: { label: 'FATAL', color: '\u001b[35m' },
};
const RESET = '\u001b[0m';
const DIM = '\u001b[2m';

/** Fields the line shows in its own place, not as `key=value`. */
const SHOWN = new Set([
  'level',
  'time',
  'pid',
  'hostname',
  'name',
  'msg',
  'err',
  'component',
  'resource',
  'code',
]);
/** The longest `key=value` value shown; longer ones are cut. */
const MAX_VALUE_CHARS = 200;

interface SerializedError {
  message?: unknown;
  code?: unknown;
  cause?: unknown;
}

/**
 * The messages of an error and its causes, each cause shown only when the message before it does
 * not already contain it: kinformer's messages usually end with their cause's
 * (`could not reach the API server at h: connect ECONNREFUSED …`), and repeating it makes a line
 * twice as long and no clearer.
 */
export function errorText(err: unknown): string {
  const parts: string[] = [];
  let seen = '';
  let e = err as SerializedError | undefined;
  for (let i = 0; i < 8 && typeof e === 'object' && e !== null; i++) {
    const message = typeof e.message === 'string' ? e.message : '';
    if (message !== '' && !seen.includes(message)) {
      parts.push(message);
      seen += `\n${message}`;
    }
    e = e.cause as SerializedError | undefined;
  }
  return parts.join(': ');
}

function clock(time: unknown): string {
  const d = typeof time === 'number' ? new Date(time) : new Date();
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

function valueText(value: unknown): string {
  const text =
    typeof value === 'string'
      ? /[\s"=]/.test(value)
        ? JSON.stringify(value)
        : value
      : JSON.stringify(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
}

/**
 * One pino JSON line as one human line:
 * `12:00:01.234 WARN  [reflector pods.v1] watch ended with an error; relisting: could not reach the API server at 127.0.0.1: connect ECONNREFUSED 127.0.0.1:6443 (ERR_CONNECTION) resourceVersion=12`.
 * The time is local; `[component resource]` come from the logger's bindings; the error's messages
 * follow the message (its causes only where they add something, see {@link errorText}) with its
 * code; other fields are `key=value` (long values cut). No stack. With `color`, the level is
 * colored and the fields dimmed (for a TTY). A line that is not JSON is returned unchanged.
 */
export function formatLogLine(line: string, color = false): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (typeof entry !== 'object' || entry === null) return line;
  const level = LEVELS[entry.level as number] ?? { label: String(entry.level), color: '' };
  const label = level.label.padEnd(5);
  const where = [entry.component, entry.resource].filter((v) => typeof v === 'string').join(' ');
  let text = typeof entry.msg === 'string' ? entry.msg : '';
  const err = entry.err as SerializedError | undefined;
  const failure = err === undefined ? '' : errorText(err);
  if (failure !== '' && !text.includes(failure)) text = text === '' ? failure : `${text}: ${failure}`;
  const code = entry.code ?? err?.code;
  if (typeof code === 'string') text += ` (${code})`;
  const fields = Object.entries(entry)
    .filter(([k, v]) => !SHOWN.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${valueText(v)}`)
    .join(' ');
  const head = `${clock(entry.time)} ${color ? `${level.color}${label}${RESET}` : label}`;
  const scope = where === '' ? '' : ` [${where}]`;
  const tail = fields === '' ? '' : ` ${color ? `${DIM}${fields}${RESET}` : fields}`;
  return `${head}${scope} ${text}${tail}\n`;
}
