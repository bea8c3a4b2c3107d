import { createLogger } from '@kinformer/core';
import type { Logger } from '@kinformer/core';

/** One captured pino line, parsed. */
export interface LogLine {
  level: number;
  msg: string;
  component?: string;
  code?: string;
  err?: { type?: string; message?: string; code?: string; details?: Record<string, unknown> };
  [key: string]: unknown;
}

/** pino's level numbers. */
export const LEVEL = { trace: 10, debug: 20, info: 30, warn: 40, error: 50 } as const;

/** A logger whose output is kept in memory. */
export interface CapturedLogs {
  logger: Logger;
  /** Every line as written. */
  readonly raw: string[];
  /** Every line, parsed, in order (a live array). */
  readonly lines: LogLine[];
  /** All output as one string (for "never contains" assertions). */
  text(): string;
}

/**
 * A kinformer logger (`createLogger`, so its redaction applies) at `level` (default `'debug'`) that
 * writes into memory instead of stdout.
 */
export function captureLogs(level = 'debug'): CapturedLogs {
  const raw: string[] = [];
  const lines: LogLine[] = [];
  const logger = createLogger({
    level,
    destination: {
      write: (line: string) => {
        raw.push(line);
        lines.push(JSON.parse(line) as LogLine);
      },
    },
  });
  return { logger, raw, lines, text: () => raw.join('') };
}
