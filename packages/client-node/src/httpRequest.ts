import http, { type ClientRequest, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { ErrorCodes, KinformerError } from '@kinformer/core';
import { abortError } from '@kinformer/core/internal';
import type { KubeConfig } from '@kubernetes/client-node';
import { redactUrl, redactUrlCredentials, sanitizedError } from './redact.js';
import type { CredentialLease } from './execCredential.js';
import { applyKubeConfig, connectionFailureCode } from './requestAuth.js';

/** A request whose response headers have arrived. The body has not been read yet. */
export interface OpenedRequest {
  req: ClientRequest;
  res: IncomingMessage;
}

/** What to request (a GET unless `method` says otherwise), relative to the current cluster's server URL. */
export interface RequestTarget {
  /** API path plus query string, e.g. `/api/v1/pods?watch=true`. */
  path: string;
  /** HTTP method (default `GET`). */
  method?: string;
  /** The request body (writes); sent with `contentType`. */
  body?: string;
  /** `Content-Type` of `body` (default `application/json`). */
  contentType?: string;
  /** The `Accept` header. */
  accept: string;
  /** Context for errors (resource, verb). Never credentials. */
  details: Record<string, unknown>;
  /**
   * Reuse connections between requests (LIST pages): when the KubeConfig's agent is a plain
   * `http`/`https` agent that does not keep connections alive, a keep-alive twin of it is used
   * instead (see {@link keepAliveAgentFor}). Default false (watches: one long request each).
   */
  keepAlive?: boolean;
}

const USER_AGENT = 'kinformer (@kinformer/client-node)';

/**
 * TCP keepalive on every connection, as client-go's dialer sets it (`net.Dialer{KeepAlive: 30s}`):
 * a connection whose peer vanished (half-open) fails within about a minute instead of hanging a
 * LIST forever. Watches have the reflector's stall detection on top.
 */
export const TCP_KEEPALIVE_MS = 30_000;
/**
 * How long an idle keep-alive connection waits in the pool for the next LIST request: long enough
 * for the next page of a paginated list, short enough that a stopped informer leaves no socket
 * behind for long (idle pooled sockets never keep the process alive either).
 */
export const IDLE_CONNECTION_TIMEOUT_MS = 1_000;
/** Retries of a request whose reused idle connection turned out to be closed by the server. */
const STALE_CONNECTION_RETRIES = 2;

/** The keep-alive twin of each plain agent client-node handed out (client-node caches one per cluster/user). */
const keepAliveTwins = new WeakMap<http.Agent, http.Agent>();

/**
 * The agent to use for requests that should share connections. client-node builds a plain
 * `https.Agent` (or `http.Agent`) per cluster/user without `keepAlive`, so every request opens a
 * new TCP and TLS connection: a list in 10 pages made 10 handshakes. For such an agent this returns
 * (and caches) an agent with the same TLS options and `keepAlive: true`, whose idle connections close
 * after {@link IDLE_CONNECTION_TIMEOUT_MS}. Any other agent (a proxy agent, one that already keeps
 * alive, a subclass) is returned unchanged.
 */
export function keepAliveAgentFor(agent: unknown): unknown {
  if (!(agent instanceof http.Agent)) return agent;
  const type = agent.constructor;
  if (type !== http.Agent && type !== https.Agent) return agent;
  const { keepAlive, options } = agent as unknown as { keepAlive?: boolean; options?: https.AgentOptions };
  if (keepAlive === true) return agent;
  let twin = keepAliveTwins.get(agent);
  if (twin === undefined) {
    const twinOptions: https.AgentOptions = {
      ...options,
      keepAlive: true,
      keepAliveMsecs: TCP_KEEPALIVE_MS,
      timeout: IDLE_CONNECTION_TIMEOUT_MS,
      scheduling: 'lifo',
    };
    twin = type === https.Agent ? new https.Agent(twinOptions) : new http.Agent(twinOptions);
    keepAliveTwins.set(agent, twin);
  }
  return twin;
}

interface ServerBase {
  https: boolean;
  hostname: string;
  port: string;
  basePath: string;
}

function serverBase(kc: KubeConfig, details: Record<string, unknown>): ServerBase {
  const cluster = kc.getCurrentCluster();
  if (!cluster) {
    throw new KinformerError(ErrorCodes.INVALID_OPTION, 'the KubeConfig has no current cluster', { details });
  }
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch (err) {
    // The URL may hold `user:password@`: echo it redacted, and never attach the TypeError itself,
    // whose `input` property repeats the whole URL.
    throw new KinformerError(
      ErrorCodes.INVALID_OPTION,
      `the current cluster's server is not a URL: ${JSON.stringify(redactUrl(cluster.server))}`,
      {
        cause: sanitizedError(err),
        details,
      },
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new KinformerError(
      ErrorCodes.INVALID_OPTION,
      `the current cluster's server must be http(s), not ${url.protocol}`,
      { details },
    );
  }
  const host = url.hostname;
  return {
    https: url.protocol === 'https:',
    hostname: host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host,
    port: url.port,
    basePath: url.pathname.replace(/\/+$/, ''),
  };
}

/**
 * Sends `GET target.path` to the KubeConfig's current cluster with everything the KubeConfig sets:
 * `applyToHTTPSOptions` supplies the `Authorization` header (token, token file, exec plugin, OIDC,
 * cloud auth providers), basic auth, `Impersonate-User`, the CA, client certificate and key,
 * `skipTLSVerify`, `tlsServerName`, and the agent (client-node caches one per cluster/user, with
 * the proxy of `proxyUrl` when set). It is called per request, so rotated tokens are picked up.
 *
 * Every connection gets TCP keepalive ({@link TCP_KEEPALIVE_MS}). With `target.keepAlive`, idle
 * connections are reused (see {@link keepAliveAgentFor}); a request whose reused connection turns out
 * to be closed before any answer is sent again on a fresh one.
 *
 * Resolves once the response headers arrived (any status). Rejects with `ERR_ABORTED` when
 * `signal` aborts first (the request is destroyed), `ERR_TLS` when the server's certificate cannot
 * be trusted (or the cluster sets insecure-skip-tls-verify with a CA), `ERR_CONNECTION` when the
 * connection fails before an answer (refused, reset, DNS, a client certificate the server refused)
 * or the KubeConfig cannot produce credentials, `ERR_CREDENTIALS` when an exec plugin fails or a
 * header value is not allowed (see `applyKubeConfig`), and `ERR_INVALID_OPTION` when the KubeConfig
 * has no usable current cluster.
 *
 * A 401 to a credential that can be refreshed (an exec plugin's, a token file's) drops it and sends
 * the request once more with a fresh one: a rotated or revoked token costs one extra request, not
 * every request until a restart. client-go's exec `roundTripper` and `tokenSourceTransport` drop the
 * credential on a 401 the same way and leave the retry to the next request; a GET is safe to send
 * again at once. A second 401 is returned as it is.
 */
export async function openRequest(
  kc: KubeConfig,
  target: RequestTarget,
  signal: AbortSignal,
): Promise<OpenedRequest> {
  const first = await openOnce(kc, target, signal);
  if (first.res.statusCode !== 401 || first.lease === undefined) return first;
  first.lease.rejected();
  // The 401's body is a small Status: read it off so the connection can be reused.
  first.res.resume();
  const second = await openOnce(kc, target, signal);
  if (second.res.statusCode === 401) second.lease?.rejected();
  return second;
}

async function openOnce(
  kc: KubeConfig,
  target: RequestTarget,
  signal: AbortSignal,
): Promise<OpenedRequest & { lease: CredentialLease | undefined }> {
  if (signal.aborted) throw abortError(signal);
  const base = serverBase(kc, target.details);
  const headers: http.OutgoingHttpHeaders = { Accept: target.accept, 'User-Agent': USER_AGENT };
  if (target.body !== undefined) {
    headers['Content-Type'] = target.contentType ?? 'application/json';
    headers['Content-Length'] = Buffer.byteLength(target.body);
  }
  const options: https.RequestOptions = { method: target.method ?? 'GET', headers };
  const lease = await applyKubeConfig(kc, options, target.details, signal);
  if (signal.aborted) throw abortError(signal);
  // Verify the server certificate unless the kubeconfig says skipTLSVerify, whatever
  // NODE_TLS_REJECT_UNAUTHORIZED says (client-node leaves it unset in that case).
  if (base.https) options.rejectUnauthorized = kc.getCurrentCluster()?.skipTLSVerify !== true;
  options.protocol = base.https ? 'https:' : 'http:';
  options.hostname = base.hostname;
  if (base.port !== '') options.port = base.port;
  options.path = base.basePath + target.path;
  if (target.keepAlive === true) options.agent = keepAliveAgentFor(options.agent) as https.Agent;

  return new Promise((resolve, reject) => {
    let settled = false;
    let retries = 0;
    let current: ClientRequest | undefined;
    const onAbort = (): void => {
      if (settled) return;
      settled = true;
      current?.destroy();
      reject(abortError(signal));
    };
    const send = (): void => {
      const req = (base.https ? https : http).request(options);
      current = req;
      req.on('socket', (socket) => socket.setKeepAlive(true, TCP_KEEPALIVE_MS));
      req.once('response', (res) => {
        if (settled || req !== current) {
          res.destroy();
          return;
        }
        settled = true;
        signal.removeEventListener('abort', onAbort);
        resolve({ req, res, lease });
      });
      // Stays attached for the request's life: errors after the response (a reset mid-body) also
      // reach the response, where the body readers handle them.
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (settled || req !== current) return;
        if (req.reusedSocket && retries < STALE_CONNECTION_RETRIES) {
          // The server closed the idle connection as we reused it: nothing was answered (the
          // server never read the request), so it is sent again on a fresh connection, as Go's
          // transport does for a request that was not processed.
          retries++;
          send();
          return;
        }
        settled = true;
        signal.removeEventListener('abort', onAbort);
        reject(
          new KinformerError(
            connectionFailureCode(err.code),
            `could not reach the API server at ${base.hostname}: ${redactUrlCredentials(err.message)}`,
            {
              cause: err,
              details: err.code === undefined ? target.details : { ...target.details, errno: err.code },
            },
          ),
        );
      });
      req.end(target.body);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    send();
  });
}

/** What {@link streamBody} feeds a response body into. */
export interface BodySink<R> {
  /** The next chunk. A throw ends the read: the response is destroyed and the promise rejects with it. */
  write(chunk: Buffer): void;
  /** The body is complete; the promise resolves with the result (or rejects with what this throws). */
  end(): R;
  /** When set and true after a `write`, reading stops: the response is destroyed and `end` is called. */
  readonly full?: boolean;
}

/**
 * Feeds a response body to `sink` chunk by chunk as it arrives. Rejects with `ERR_ABORTED` when
 * `signal` aborts (the response is destroyed), with `ERR_CONNECTION` when the connection breaks
 * before the body is complete, and with whatever `sink` throws (the response is destroyed).
 */
export function streamBody<R>(
  res: IncomingMessage,
  signal: AbortSignal,
  details: Record<string, unknown>,
  sink: BodySink<R>,
): Promise<R> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const done = (): boolean => {
      if (settled) return false;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      return true;
    };
    const fail = (err: Error): void => {
      if (!done()) return;
      res.destroy();
      reject(err);
    };
    const finish = (): void => {
      if (settled) return;
      let result: R;
      try {
        result = sink.end();
      } catch (err) {
        fail(err as Error);
        return;
      }
      if (done()) resolve(result);
    };
    const onAbort = (): void => fail(abortError(signal));
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    res.on('data', (chunk: Buffer) => {
      if (settled) return;
      try {
        sink.write(chunk);
      } catch (err) {
        fail(err as Error);
        return;
      }
      if (sink.full === true) {
        finish();
        res.destroy();
      }
    });
    res.on('end', finish);
    res.on('error', (err: NodeJS.ErrnoException) => {
      if (!done()) return;
      reject(
        new KinformerError(
          ErrorCodes.CONNECTION,
          `the connection broke while reading the response: ${err.message}`,
          {
            cause: err,
            details: err.code === undefined ? details : { ...details, errno: err.code },
          },
        ),
      );
    });
    res.on('close', () => {
      if (res.complete) return;
      if (!done()) return;
      reject(
        new KinformerError(ErrorCodes.CONNECTION, 'the connection closed before the response was complete', {
          details,
        }),
      );
    });
  });
}

/**
 * Reads a whole response body as Buffers, concatenated once at the end. Keeps at most `maxBytes`
 * (the rest is discarded and the response destroyed; `truncated` says so). Rejects as
 * {@link streamBody} does.
 */
export function readBody(
  res: IncomingMessage,
  signal: AbortSignal,
  details: Record<string, unknown>,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let total = 0;
  let truncated = false;
  return streamBody(res, signal, details, {
    get full() {
      return truncated;
    },
    write(chunk) {
      if (total + chunk.length > maxBytes) {
        const keep = maxBytes - total;
        if (keep > 0) chunks.push(chunk.subarray(0, keep));
        total += Math.max(0, keep);
        truncated = true;
        return;
      }
      chunks.push(chunk);
      total += chunk.length;
    },
    end() {
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
      return { body, truncated };
    },
  });
}
