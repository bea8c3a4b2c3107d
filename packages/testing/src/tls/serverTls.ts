import type { ServerOptions } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { ErrorCodes, KinformerError } from '@kinformer/core';
import { FAKE_API_SERVER_TLS } from './tlsFixtures.js';

/**
 * Whether the HTTPS server asks clients for a certificate:
 * - `'none'`: it does not (clients authenticate with the bearer token; any token works);
 * - `'request'`: it asks, and a certificate signed by the server's CA makes its CN the request's
 *   `user`; a client without one is still served; a certificate that does not verify is ignored
 *   when the request carries a bearer token and answered `401 Unauthorized` when it does not
 *   (kube-apiserver's x509 authenticator failing with no other authenticator left);
 * - `'require'`: it asks and verifies during the handshake, so a client without a certificate
 *   signed by the server's CA is rejected at the TLS layer and never reaches HTTP.
 */
export type ClientAuthMode = 'none' | 'request' | 'require';

/** The `tls` option of `FakeApiServer.start` in object form. */
export interface FakeApiServerTlsOptions {
  /** Client certificates (default `'none'`). */
  clientAuth?: ClientAuthMode;
}

/**
 * A TLS connection that never got to HTTP (node's `tlsClientError`): a client that did not trust
 * the server certificate hangs up (`ECONNRESET`, `socket hang up`); with `clientAuth: 'require'`
 * a client without a certificate fails with `ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE`, and one
 * whose certificate does not verify is cut off (`ECONNRESET`, with `authorizationError` saying why).
 */
export interface TlsClientError {
  /** The node/OpenSSL error code, when there is one. */
  readonly code: string | undefined;
  readonly message: string;
  /** Why the client's certificate was refused (node's verify code, e.g. `UNABLE_TO_VERIFY_LEAF_SIGNATURE`), if it was. */
  readonly authorizationError: string | undefined;
}

/** @internal The resolved `tls` option. */
export interface ResolvedTls {
  readonly clientAuth: ClientAuthMode;
}

const CLIENT_AUTH_MODES: readonly ClientAuthMode[] = ['none', 'request', 'require'];

/** @internal `undefined` for plain HTTP. @throws KinformerError `ERR_INVALID_OPTION` for an unknown `clientAuth`. */
export function resolveTls(option: boolean | FakeApiServerTlsOptions | undefined): ResolvedTls | undefined {
  if (option === undefined || option === false) return undefined;
  const clientAuth = option === true ? 'none' : (option.clientAuth ?? 'none');
  if (!CLIENT_AUTH_MODES.includes(clientAuth)) {
    throw new KinformerError(
      ErrorCodes.INVALID_OPTION,
      `tls.clientAuth must be one of ${CLIENT_AUTH_MODES.join(', ')}, not ${JSON.stringify(clientAuth)}`,
      {
        details: { clientAuth },
      },
    );
  }
  return { clientAuth };
}

/**
 * @internal Options of the `node:https` server: the fixture server certificate (SAN 127.0.0.1,
 * ::1, localhost) and, for client certificates, the fixture CA as the only trusted issuer.
 */
export function httpsServerOptions(tls: ResolvedTls): ServerOptions {
  const askForCert = tls.clientAuth !== 'none';
  return {
    cert: FAKE_API_SERVER_TLS.serverCert,
    key: FAKE_API_SERVER_TLS.serverKey,
    ...(askForCert ? { ca: FAKE_API_SERVER_TLS.ca } : {}),
    requestCert: askForCert,
    rejectUnauthorized: tls.clientAuth === 'require',
    keepAliveTimeout: 5_000,
  };
}

/** @internal Who the client is, as far as its TLS certificate says. */
export interface ClientIdentity {
  /** CN of a certificate that verified against the server's CA. */
  readonly user: string | undefined;
  /** A certificate was presented but did not verify. */
  readonly invalidCertificate: boolean;
}

const ANONYMOUS: ClientIdentity = Object.freeze({ user: undefined, invalidCertificate: false });

/** @internal Reads the peer certificate of a TLS socket (once per connection: the caller caches it). */
export function clientIdentity(socket: TLSSocket): ClientIdentity {
  const peer = socket.getPeerCertificate();
  // No certificate: node returns an empty object (or null on a destroyed socket).
  if (peer === null || typeof peer !== 'object' || Object.keys(peer).length === 0) return ANONYMOUS;
  if (!socket.authorized) return { user: undefined, invalidCertificate: true };
  const cn: unknown = (peer.subject as Record<string, unknown> | undefined)?.CN;
  const user = Array.isArray(cn) ? (cn[0] as unknown) : cn;
  return { user: typeof user === 'string' ? user : undefined, invalidCertificate: false };
}
