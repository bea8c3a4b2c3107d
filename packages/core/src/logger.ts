import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths pino redacts in every kinformer log line: bearer tokens, client keys, passwords and
 * `Authorization` headers, wherever they appear in a logged object.
 */
export const REDACT_PATHS: readonly string[] = [
  'authorization',
  'Authorization',
  'token',
  'bearerToken',
  'password',
  'keyData',
  'clientKey',
  'client-key-data',
  '*.authorization',
  '*.Authorization',
  '*.token',
  '*.bearerToken',
  '*.password',
  '*.keyData',
  '*.clientKey',
  '*.headers.authorization',
  '*.headers.Authorization',
  'headers.authorization',
  'headers.Authorization',
  'err.headers.authorization',
];

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
  const level = options.level ?? process.env.KINFORMER_LOG_LEVEL ?? 'silent';
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
