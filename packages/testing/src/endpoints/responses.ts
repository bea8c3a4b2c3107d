import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCodes, isKinformerError, KinformerError, type Logger, type Status } from '@kinformer/core';
import type { FailureResponse } from '../faults/faults.js';
import { badRequestError, makeStatus } from '../api/statusErrors.js';

/**
 * How the fake writes HTTP responses and reads request bodies, as kube-apiserver's
 * `responsewriters` and Go's net/http do: the common headers, JSON and plain-text bodies, Status
 * errors (with `Retry-After`), and bounded body reads.
 */

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const CHUNKING_THRESHOLD = 2048;

/** True for user agents kube-apiserver pretty-prints for (curl, wget, browsers). */
export function isPrettyAgent(userAgent: string | undefined): boolean {
  return userAgent !== undefined && /^(curl|Wget|Mozilla\/5\.0)/.test(userAgent);
}

/**
 * Headers of every API response. Like Go's net/http, a body that fits the 2 KiB pre-chunking
 * buffer gets a `Content-Length`; a larger one is sent chunked.
 */
function commonHeaders(contentType: string, body: string): Record<string, string | number> {
  const headers: Record<string, string | number> = {
    'Content-Type': contentType,
    'Cache-Control': 'no-cache, private',
    'Audit-Id': randomUUID(),
  };
  if (body.length < CHUNKING_THRESHOLD) headers['Content-Length'] = Buffer.byteLength(body);
  return headers;
}

/** Writes a JSON body (newline-terminated, as the Go encoder does; indented when `pretty`). */
export function sendJson(
  res: ServerResponse,
  code: number,
  json: string,
  pretty: boolean,
  contentType = 'application/json',
): void {
  if (res.headersSent || res.destroyed) return;
  let body = json.endsWith('\n') ? json : `${json}\n`;
  if (pretty) body = JSON.stringify(JSON.parse(body), null, 2);
  res.writeHead(code, commonHeaders(contentType, body));
  res.end(body);
}

/** Writes a plain-text body as Go's `http.Error` does. */
export function sendPlain(
  res: ServerResponse,
  code: number,
  text: string,
  extra: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(code, {
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
    'Content-Length': Buffer.byteLength(text),
    ...extra,
  });
  res.end(text);
}

/** Writes an injected failure exactly as it was built. */
export function sendFailure(res: ServerResponse, failure: FailureResponse): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(failure.httpStatus, {
    'Cache-Control': 'no-cache, private',
    'Audit-Id': randomUUID(),
    ...failure.headers,
    'Content-Length': Buffer.byteLength(failure.body),
  });
  res.end(failure.body);
}

/**
 * Writes `err` as a Status: a {@link KinformerError} with a `status` as is, anything else as a 500
 * without a reason (logged: it is a bug of the fake or of the test).
 */
export function sendError(req: IncomingMessage, res: ServerResponse, err: unknown, logger: Logger): void {
  let status: Status;
  let code: number;
  if (isKinformerError(err) && err.status !== undefined) {
    status = err.status;
    code = err.httpStatus ?? status.code ?? 500;
  } else {
    logger.warn({ err, method: req.method, url: req.url }, 'fake API server failed a request');
    status = makeStatus({ code: 500, message: err instanceof Error ? err.message : String(err) });
    code = 500;
  }
  if (res.headersSent || res.destroyed) return;
  const body = `${JSON.stringify(status)}\n`;
  const headers = commonHeaders('application/json', body);
  const after = status.details?.retryAfterSeconds;
  if (after !== undefined && after > 0) headers['Retry-After'] = String(after);
  res.writeHead(code, headers);
  res.end(body);
}

/** Reads the whole body (413 `RequestEntityTooLarge` past 16 MiB). */
export async function readBody(req: IncomingMessage): Promise<string> {
  return (await readBodyBytes(req)).toString('utf8');
}

/** Reads the whole body as bytes (413 `RequestEntityTooLarge` past 16 MiB). */
export function readBodyBytes(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(
          new KinformerError(ErrorCodes.API_STATUS, 'request entity too large', {
            status: makeStatus({
              code: 413,
              reason: 'RequestEntityTooLarge',
              message: `Request entity too large: limit is ${MAX_BODY_BYTES}`,
            }),
          }),
        );
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Parses `text` as JSON (400 with the decoder's message otherwise). */
export function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw badRequestError(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
  }
}

/** Reads and parses a JSON body. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  return parseJsonBody(await readBody(req));
}
