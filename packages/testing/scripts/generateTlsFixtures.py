#!/usr/bin/env python3
"""Regenerates packages/testing/tls/fixtures.json: the test-only CA, server and client
certificates of FakeApiServer's HTTPS mode (ECDSA P-256, valid 2020-01-01 .. 2126-01-01), which
src/tls/tlsFixtures.ts reads.

Needs the `cryptography` package (pip install cryptography). Only for regeneration: tests and CI
read the committed PEM data and never run this script (no openssl, no network at run time).

    python3 packages/testing/scripts/generateTlsFixtures.py > packages/testing/tls/fixtures.json
"""
import datetime
import json
import ipaddress

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

NOT_BEFORE = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
NOT_AFTER = datetime.datetime(2126, 1, 1, tzinfo=datetime.timezone.utc)


def name(cn, org=None):
    attrs = []
    if org:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(attrs)


def key_pem(key):
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def cert_pem(cert):
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def make_ca(cn):
    key = ec.generate_private_key(ec.SECP256R1())
    subject = name(cn)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOT_BEFORE)
        .not_valid_after(NOT_AFTER)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def make_leaf(ca_key, ca_cert, subject, usage, san=None):
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOT_BEFORE)
        .not_valid_after(NOT_AFTER)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True
        )
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
    )
    if san:
        builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
    return key, builder.sign(ca_key, hashes.SHA256())


def fixture_set(prefix, san):
    """A CA `kinformer-<prefix>-ca` with a server (`-apiserver`) and a client (`-admin`) leaf."""
    ca_key, ca = make_ca(f"kinformer-{prefix}-ca")
    server_key, server = make_leaf(
        ca_key, ca, name(f"kinformer-{prefix}-apiserver"), ExtendedKeyUsageOID.SERVER_AUTH, san
    )
    admin = f"kinformer-{prefix}-admin"
    client_key, client = make_leaf(
        ca_key, ca, name(admin, "system:masters"), ExtendedKeyUsageOID.CLIENT_AUTH
    )
    return {
        "ca": cert_pem(ca),
        "serverCert": cert_pem(server),
        "serverKey": key_pem(server_key),
        "clientCert": cert_pem(client),
        "clientKey": key_pem(client_key),
        "clientCommonName": admin,
    }


LOCALHOST = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
trusted = fixture_set("fake", LOCALHOST + [x509.IPAddress(ipaddress.ip_address("::1"))])
untrusted = fixture_set("untrusted", LOCALHOST)
print(json.dumps({"trusted": trusted, "untrusted": untrusted}, indent=2))
