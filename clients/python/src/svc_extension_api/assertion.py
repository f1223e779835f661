"""A client assertion for private_key_jwt (RFC 7523), as SMART Backend Services profiles it."""
from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from typing import Any, Literal, cast

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, load_pem_private_key

CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
MAX_LIFETIME_SECONDS = 300

AssertionAlgorithm = Literal["RS384", "ES384"]
PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
SigningKey = bytes | str | PrivateKey | Mapping[str, Any]
"""A private key as PEM (bytes or text), a `cryptography` key object, or a private JWK (a dict)."""


def private_key(key: SigningKey) -> PrivateKey:
    """The key object of a PEM, a key object or a private JWK; a public key or one of another kind is refused."""
    loaded: object
    if isinstance(key, Mapping):
        # Debian's PyJWT (2.6) has no annotations on PyJWK.
        loaded = cast(Any, jwt.PyJWK)(dict(key)).key
    elif isinstance(key, (bytes, str)):
        loaded = load_pem_private_key(key.encode() if isinstance(key, str) else key, password=None)
    else:
        loaded = key
    if isinstance(loaded, rsa.RSAPrivateKey) or (isinstance(loaded, ec.EllipticCurvePrivateKey) and isinstance(loaded.curve, ec.SECP384R1)):
        return loaded
    raise ValueError("the key must be a private RSA (RS384) or EC P-384 (ES384) key: its public half is the registered one")


def signing_algorithm(key: PrivateKey, alg: AssertionAlgorithm | None = None) -> AssertionAlgorithm:
    """RS384 for an RSA key, ES384 for an EC P-384 key: the two the service accepts; a different `alg` is refused."""
    inferred: AssertionAlgorithm = "RS384" if isinstance(key, rsa.RSAPrivateKey) else "ES384"
    if alg is not None and alg != inferred:
        raise ValueError(f"this key signs with {inferred}, not {alg}")
    return inferred


def client_assertion(client_id: str, token_url: str, key: SigningKey, kid: str, now: float | None = None, alg: AssertionAlgorithm | None = None) -> str:
    """A JWT signed with the registered key `kid`: iss = sub = the client id, aud = the token endpoint's URL,
    exp five minutes ahead at most, and a new jti each time (the service accepts each jti once)."""
    signer = private_key(key)
    issued = int(time.time() if now is None else now)
    claims = {"iss": client_id, "sub": client_id, "aud": token_url, "exp": issued + MAX_LIFETIME_SECONDS, "iat": issued, "jti": str(uuid.uuid4())}
    # PyJWT's annotations take the key as PEM text.
    pem = signer.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()).decode()
    return jwt.encode(claims, pem, algorithm=signing_algorithm(signer, alg), headers={"kid": kid, "typ": "JWT"})
