import {
  destination as pinoDestination,
  pino,
  type Logger,
  type LoggerOptions,
  type DestinationStream,
} from 'pino';
import { formatLogLine } from './logFormat.js';
import { redactForLog, redactString, type Censor } from './logRedaction.js';

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
 * `Authorization` headers three levels down (`{ err: { request: { headers } } }`). The first layer
 * only: {@link createLogger} also redacts by name at any depth (see `redactForLog`).
 */
export const REDACT_PATHS: readonly string[] = Object.freeze([
  ...SECRET_KEYS.flatMap((key) => {
    const prop = /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
    return [prop.startsWith('.') ? key : prop, `*${prop}`, `*.*${prop}`];
  }),
  '*.*.headers.authorization',
  '*.*.headers.Authorization',
]);

/** How lines are written: pino's JSON (one object per line), or one human line each ({@link formatLogLine}). */
export type LogFormat = 'json' | 'pretty';

/** Options for {@link createLogger}. */
export interface CreateLoggerOptions {
  /** pino level. Default: `KINFORMER_LOG_LEVEL`, or `warn` when unset (warnings and errors). */
  level?: string;
  /** Where lines go. Default: stderr. */
  destination?: DestinationStream;
  /**
   * Default: `KINFORMER_LOG_FORMAT` (`json` or `pretty`); otherwise `pretty` when lines go to
   * stderr and stderr is a TTY, else `json` (a given `destination` gets JSON unless asked).
   */
  format?: LogFormat;
  /**
   * Extra pino options (merged). `redact` adds paths to kinformer's, and its `censor`/`remove` are
   * honoured by kinformer's own redaction too; `formatters` and `hooks.logMethod` run before
   * kinformer's redaction.
   */
  pino?: LoggerOptions;
}

/** The level of {@link createLogger} when neither the options nor `KINFORMER_LOG_LEVEL` say. */
export const DEFAULT_LOG_LEVEL = 'warn';

function formatOf(option: LogFormat | undefined, toStderr: boolean): LogFormat {
  if (option !== undefined) return option;
  const env = process.env.KINFORMER_LOG_FORMAT;
  if (env === 'json' || env === 'pretty') return env;
  return toStderr && process.stderr.isTTY === true ? 'pretty' : 'json';
}

/** A destination that writes each JSON line as a human line to `out`. Synchronous, no worker thread. */
function prettyDestination(out: { write(text: string): unknown }, color: boolean): DestinationStream {
  return { write: (line: string) => void out.write(formatLogLine(line, color)) };
}

/**
 * A pino logger with kinformer's redaction, writing warnings and errors to stderr by default, one
 * line each: readable in a terminal (`pretty`), JSON otherwise ({@link CreateLoggerOptions.format},
 * `KINFORMER_LOG_FORMAT`). `KINFORMER_LOG_LEVEL` sets the level (`debug`, `silent`, …).
 *
 * Redaction has two layers. pino's fast `redact` paths (`REDACT_PATHS`, plus yours), and a
 * walk of every line that is written (`redactForLog`): credentials by property name at any
 * depth (`authorization`, `token`, `password`, `client-key`, `id-token`, `refresh-token`, `cookie`,
 * …), `Bearer …`/`Basic …` inside any string, the message included, `rawHeaders` arrays, and errors
 * with their `cause` chains (each message without its causes', so nothing is printed twice). Lines
 * below the level cost what pino's disabled levels cost: nothing is walked.
 */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  // An empty KINFORMER_LOG_LEVEL (`KINFORMER_LOG_LEVEL=`) counts as unset; pino rejects ''.
  const level = options.level ?? (process.env.KINFORMER_LOG_LEVEL || DEFAULT_LOG_LEVEL);
  const extra = options.pino ?? {};
  const userRedact = Array.isArray(extra.redact) ? { paths: extra.redact } : (extra.redact ?? { paths: [] });
  const censor: Censor = (userRedact.censor as Censor | undefined) ?? '[REDACTED]';
  const remove = userRedact.remove === true;
  const censorText = typeof censor === 'string' ? censor : '[REDACTED]';
  const userFormatters = extra.formatters ?? {};
  const userLogMethod = extra.hooks?.logMethod;
  const opts: LoggerOptions = {
    name: 'kinformer',
    ...extra,
    level,
    // Errors are already plain objects here (redactForLog serialised them, causes apart); pino's
    // serializer would append every cause's message to the error's own and repeat it.
    serializers: { err: (err: unknown) => err, ...extra.serializers },
    redact: { paths: [...REDACT_PATHS, ...userRedact.paths], censor, ...(remove ? { remove } : {}) },
    formatters: {
      ...userFormatters,
      bindings: (bindings) =>
        redactForLog(
          userFormatters.bindings ? userFormatters.bindings(bindings) : bindings,
          censor,
          remove,
        ) as Record<string, unknown>,
      log: (object) =>
        redactForLog(userFormatters.log ? userFormatters.log(object) : object, censor, remove) as Record<
          string,
          unknown
        >,
    },
    hooks: {
      ...extra.hooks,
      logMethod(args, method, level) {
        // The message (and printf arguments) are strings pino writes as they are: redact them here.
        const redacted = args.map((a) =>
          typeof a === 'string' ? redactString(a, censorText) : a,
        ) as typeof args;
        if (userLogMethod) userLogMethod.call(this, redacted, method, level);
        else method.apply(this, redacted);
      },
    },
  };
  const toStderr = options.destination === undefined;
  const format = formatOf(options.format, toStderr);
  if (format === 'pretty') {
    const out = options.destination ?? process.stderr;
    return pino(opts, prettyDestination(out, toStderr && process.stderr.isTTY === true));
  }
  return pino(opts, options.destination ?? pinoDestination({ fd: 2, sync: true }));
}

let defaultLogger: Logger | undefined;

/**
 * The logger components use when none is passed: {@link createLogger} with its defaults (warnings
 * and errors to stderr), made once.
 */
export function getDefaultLogger(): Logger {
  defaultLogger ??= createLogger();
  return defaultLogger;
}

/** `logger.child(bindings)` of the given logger, or of the default one. */
export function componentLogger(logger: Logger | undefined, bindings: Record<string, unknown>): Logger {
  return (logger ?? getDefaultLogger()).child(bindings);
}
