import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

/** Property names whose values are credentials: bearer tokens, passwords, client keys. */
const SECRET_KEYS = [
  'authorization',
  'Authorization',
  'token',
  'bearerToken',
  'access-token',
  'password',
  'keyData',
  'clientKey',
  'client-key-data',
];

/**
 * Paths pino redacts in every kinformer log line: bearer tokens, `Authorization` headers, client
 * keys and passwords, at the top level of a logged object and up to two levels down
 * (`{ token }`, `{ user: { token } }`, `{ req: { headers: { authorization } } }`), plus
 * `Authorization` headers three levels down (`{ err: { request: { headers } } }`). Deeper values are
 * not redacted: never log a whole KubeConfig, user or request object.
 */
export const REDACT_PATHS: readonly string[] = Object.freeze([
  ...SECRET_KEYS.flatMap((key) => {
    const prop = /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
    return [prop.startsWith('.') ? key : prop, `*${prop}`, `*.*${prop}`];
  }),
  '*.*.headers.authorization',
  '*.*.headers.Authorization',
]);

/** Options for {@link createLogger}. */
export interface CreateLoggerOptions {
  /** pino level. Default: `KINFORMER_LOG_LEVEL`, or `silent` when unset. */
  level?: string;
  /** Where lines go. Default: stdout. */
  destination?: DestinationStream;
  /** Extra pino options (merged; `redact` is always kinformer's plus yours). */
  pino?: LoggerOptions;
}

/**
 * A pino logger with kinformer's redaction. Silent unless a level is given or `KINFORMER_LOG_LEVEL`
 * is set (`info`, `debug`, …).
 */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  // An empty KINFORMER_LOG_LEVEL (`KINFORMER_LOG_LEVEL=`) counts as unset; pino rejects ''.
  const level = options.level ?? (process.env.KINFORMER_LOG_LEVEL || 'silent');
  const extra = options.pino ?? {};
  const userRedact = Array.isArray(extra.redact) ? extra.redact : (extra.redact?.paths ?? []);
  const opts: LoggerOptions = {
    name: 'kinformer',
    ...extra,
    level,
    redact: { paths: [...REDACT_PATHS, ...userRedact], censor: '[REDACTED]' },
  };
  return options.destination ? pino(opts, options.destination) : pino(opts);
}

let defaultLogger: Logger | undefined;

/** The logger components use when none is passed: {@link createLogger} with its defaults, made once. */
export function getDefaultLogger(): Logger {
  defaultLogger ??= createLogger();
  return defaultLogger;
}

/** `logger.child(bindings)` of the given logger, or of the default one. */
export function componentLogger(logger: Logger | undefined, bindings: Record<string, unknown>): Logger {
  return (logger ?? getDefaultLogger()).child(bindings);
}
