"""A client assertion for private_key_jwt (RFC 7523), as SMART Backend Services profiles it."""
from __future__ import annotations

import time
import uuid

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import load_pem_private_key

CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
MAX_LIFETIME_SECONDS = 300


def signing_algorithm(private_key_pem: bytes) -> str:
    """RS384 for an RSA key, ES384 for an EC P-384 key: the two the service accepts."""
    key = load_pem_private_key(private_key_pem, password=None)
    if isinstance(key, rsa.RSAPrivateKey):
        return "RS384"
    if isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP384R1):
        return "ES384"
    raise ValueError("the private key must be RSA (RS384) or EC P-384 (ES384)")


def client_assertion(client_id: str, token_url: str, private_key_pem: bytes, kid: str, now: float | None = None) -> str:
    """A JWT signed with the registered key `kid`: iss = sub = the client id, aud = the token endpoint's URL,
    exp five minutes ahead at most, and a new jti each time (the service accepts each jti once)."""
    issued = int(time.time() if now is None else now)
    claims = {"iss": client_id, "sub": client_id, "aud": token_url, "exp": issued + MAX_LIFETIME_SECONDS, "iat": issued, "jti": str(uuid.uuid4())}
    return jwt.encode(claims, private_key_pem.decode(), algorithm=signing_algorithm(private_key_pem), headers={"kid": kid, "typ": "JWT"})
