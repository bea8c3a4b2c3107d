import { pingCheck, runHealthChecks, type HealthCheck, type HealthReport } from './healthChecks.js';

/** The part of a request the handlers read (node:http's `IncomingMessage`, express's `Request`). */
export interface HttpRequestLike {
  url?: string | undefined;
}

/** The part of a response the handlers write (node:http's `ServerResponse`, express's `Response`). */
export interface HttpResponseLike {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body?: string): unknown;
}

/**
 * A request handler for node:http or express-style servers: answers the paths it owns and returns
 * `true`; for any other path it calls `next()` when given one (express middleware) and returns
 * `false`, so handlers chain with `||` in a plain `http.createServer` callback.
 */
export type RequestHandler = (req: HttpRequestLike, res: HttpResponseLike, next?: () => void) => boolean;

/** Options of {@link createHealthHandler}: the checks of each endpoint. */
export interface HealthHandlerOptions {
  /** Checks of `/healthz` (liveness: restart me when these fail). Default `[pingCheck]`. */
  healthz?: readonly HealthCheck[];
  /** Checks of `/readyz` (readiness: send me traffic when these pass). Default `[pingCheck]`. */
  readyz?: readonly HealthCheck[];
  /** Checks of `/livez`; absent: `/livez` is not served. */
  livez?: readonly HealthCheck[];
  /**
   * Called with the report of every failed probe, reasons included (the HTTP answer withholds
   * them, as kube's does): log it.
   */
  onFailure?: (endpoint: string, report: HealthReport) => void;
}

/**
 * `/healthz`, `/readyz` (and optionally `/livez`) answered as kube-apiserver answers them
 * (k8s.io/apiserver `pkg/server/healthz`):
 *
 * - `GET /readyz` → `200 ok`, or `500` listing every check (`[+]ping ok`, `[-]informer-sync failed:
 *   reason withheld`) and `readyz check failed`.
 * - `?verbose` lists the checks on success too, ending `readyz check passed`.
 * - `?exclude=name` (repeatable) skips a check (`[+]name excluded: ok`).
 * - `GET /readyz/<name>` runs one check: `200 ok` or `500 internal server error: <reason>`;
 *   an unknown name is `404`.
 */
export function createHealthHandler(options: HealthHandlerOptions = {}): RequestHandler {
  const endpoints = new Map<string, readonly HealthCheck[]>([
    ['healthz', options.healthz ?? [pingCheck]],
    ['readyz', options.readyz ?? [pingCheck]],
  ]);
  if (options.livez !== undefined) endpoints.set('livez', options.livez);
  return (req, res, next) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const [, endpoint = '', sub, ...rest] = url.pathname.split('/');
    const checks = endpoints.get(endpoint);
    if (checks === undefined || rest.length > 0) {
      next?.();
      return false;
    }
    if (sub !== undefined && sub !== '') {
      const one = checks.find((c) => c.name === sub);
      const result = one === undefined ? undefined : runHealthChecks([one]).checks[0];
      if (result === undefined) reply(res, 404, '404 page not found\n');
      else if (result.ok) reply(res, 200, 'ok');
      else {
        options.onFailure?.(`${endpoint}/${sub}`, { ok: false, checks: [result], unknownExcludes: [] });
        reply(res, 500, `internal server error: ${result.reason}\n`);
      }
      return true;
    }
    const report = runHealthChecks(checks, { exclude: url.searchParams.getAll('exclude') });
    let lines = '';
    for (const r of report.checks)
      lines += r.excluded
        ? `[+]${r.name} excluded: ok\n`
        : r.ok
          ? `[+]${r.name} ok\n`
          : `[-]${r.name} failed: reason withheld\n`;
    if (report.unknownExcludes.length > 0)
      lines += `warn: some health checks cannot be excluded: no matches for ${report.unknownExcludes.map((n) => `"${n}"`).join(',')}\n`;
    if (!report.ok) {
      options.onFailure?.(endpoint, report);
      reply(res, 500, `${lines}${endpoint} check failed\n`);
    } else if (url.searchParams.has('verbose')) reply(res, 200, `${lines}${endpoint} check passed\n`);
    else reply(res, 200, 'ok');
    return true;
  };
}

/** What {@link createMetricsHandler} serves: a prom-client `Registry` has it. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

/**
 * Serves `registry.metrics()` (the Prometheus text format) at `path` (default `/metrics`); a
 * collection that fails answers `500` with the error's message.
 */
export function createMetricsHandler(
  registry: MetricsSource,
  options: { path?: string } = {},
): RequestHandler {
  const path = options.path ?? '/metrics';
  return (req, res, next) => {
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== path) {
      next?.();
      return false;
    }
    registry.metrics().then(
      (body) => reply(res, 200, body, registry.contentType),
      (err: unknown) => reply(res, 500, `${err instanceof Error ? err.message : String(err)}\n`),
    );
    return true;
  };
}

function reply(
  res: HttpResponseLike,
  status: number,
  body: string,
  contentType = 'text/plain; charset=utf-8',
): void {
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(body);
}
