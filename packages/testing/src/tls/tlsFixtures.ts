import { readFileSync } from 'node:fs';

// TEST-ONLY keys, published on purpose; never trust these certificates outside tests. ECDSA P-256,
// valid from 2020-01-01 to 2126-01-01. The PEM data is `tls/fixtures.json` at the package's root,
// written by `scripts/generateTlsFixtures.py` (tests and CI only read it).

/** PEM certificates and keys of one CA and the leaves it signed. */
export interface TlsFixtureSet {
  /** The CA certificate (self-signed). */
  readonly ca: string;
  /** Server certificate: SAN `DNS:localhost`, `IP:127.0.0.1` (and `IP:::1` for the trusted set), EKU serverAuth. */
  readonly serverCert: string;
  readonly serverKey: string;
  /** Client certificate: `O=system:masters`, EKU clientAuth. */
  readonly clientCert: string;
  readonly clientKey: string;
  /** The client certificate's common name (the user the API server sees). */
  readonly clientCommonName: string;
}

// `src/tls/` and `dist/tls/` are both two folders below the package's root.
const FIXTURES = JSON.parse(readFileSync(new URL('../../tls/fixtures.json', import.meta.url), 'utf8')) as {
  trusted: TlsFixtureSet;
  untrusted: TlsFixtureSet;
};

/**
 * The certificates FakeApiServer serves HTTPS with: CA `CN=kinformer-fake-ca`, server certificate
 * `CN=kinformer-fake-apiserver`, client certificate `CN=kinformer-fake-admin,O=system:masters`.
 */
export const FAKE_API_SERVER_TLS: TlsFixtureSet = Object.freeze(FIXTURES.trusted);

/**
 * A second, unrelated CA (`CN=kinformer-untrusted-ca`) with its own server and client
 * certificates: what an impostor server or a client from another cluster would present. Nothing
 * signed by it verifies against {@link FAKE_API_SERVER_TLS}'s CA, and vice versa.
 */
export const UNTRUSTED_TLS: TlsFixtureSet = Object.freeze(FIXTURES.untrusted);
