"""The private_key_jwt assertion, verified with the public key as the token endpoint will."""
from __future__ import annotations

import json
import time
from typing import Any, cast

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from svc_extension_api import CLIENT_ASSERTION_TYPE, KeyCredentials, SecretCredentials, client_assertion
from svc_extension_api.assertion import SigningKey
from svc_extension_api.tokens import ClientProof, token_request_body

TOKEN_URL = "https://api.agency.example/api/v1/oauth/token"
NOW = int(time.time())


def pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def public_pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


@pytest.mark.parametrize(
    ("key", "algorithm"),
    [(rsa.generate_private_key(public_exponent=65537, key_size=2048), "RS384"), (ec.generate_private_key(ec.SECP384R1()), "ES384")],
)
def test_the_assertion_is_signed_by_the_key_with_the_claims_smart_asks_for(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey, algorithm: str) -> None:
    assertion = client_assertion("cli_one", TOKEN_URL, pem(key), "key-2026-11", now=NOW)
    header = jwt.get_unverified_header(assertion)
    assert (header["alg"], header["kid"]) == (algorithm, "key-2026-11")
    claims = jwt.decode(assertion, public_pem(key).decode(), algorithms=[algorithm], audience=TOKEN_URL)
    assert claims["iss"] == claims["sub"] == "cli_one"
    assert claims["aud"] == TOKEN_URL
    assert NOW < claims["exp"] <= NOW + 300, "at most five minutes ahead"
    assert claims["jti"] != jwt.decode(client_assertion("cli_one", TOKEN_URL, pem(key), "key-2026-11", now=NOW), options={"verify_signature": False})["jti"], "a new jti each time"
    other: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey = ec.generate_private_key(ec.SECP384R1()) if algorithm == "ES384" else rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(assertion, public_pem(other).decode(), algorithms=[algorithm], audience=TOKEN_URL)


def test_a_key_of_another_kind_is_refused_before_anything_is_sent() -> None:
    with pytest.raises(ValueError, match="RSA .* or EC P-384"):
        client_assertion("cli_one", TOKEN_URL, pem(ec.generate_private_key(ec.SECP256R1())), "k1")


def test_the_token_request_carries_the_assertion_or_the_secret_beside_phi_mode_and_agency_id() -> None:
    key = pem(ec.generate_private_key(ec.SECP384R1()))
    body = token_request_body(KeyCredentials("cli_one", key, "k1", "no_phi", agency_id="demo"), TOKEN_URL, NOW)
    assert body["client_assertion_type"] == CLIENT_ASSERTION_TYPE
    assert jwt.decode(body.pop("client_assertion"), options={"verify_signature": False})["aud"] == TOKEN_URL
    assert body == {"grant_type": "client_credentials", "client_assertion_type": CLIENT_ASSERTION_TYPE, "phi_mode": "no_phi", "agency_id": "demo"}
    secret = token_request_body(SecretCredentials("cli_one", "sec_x", "phi"), TOKEN_URL, NOW)
    assert secret == {"grant_type": "client_credentials", "client_id": "cli_one", "client_secret": "sec_x", "phi_mode": "phi"}


def private_jwk(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> dict[str, str]:
    algorithm = jwt.algorithms.RSAAlgorithm if isinstance(key, rsa.RSAPrivateKey) else jwt.algorithms.ECAlgorithm
    jwk: dict[str, str] = json.loads(cast(Any, algorithm).to_jwk(key))
    return jwk


@pytest.mark.parametrize("form", ["pem text", "key object", "private jwk"])
def test_the_key_is_taken_as_pem_a_key_object_or_a_private_jwk(form: str) -> None:
    key = ec.generate_private_key(ec.SECP384R1())
    forms: dict[str, SigningKey] = {"pem text": pem(key).decode(), "key object": key, "private jwk": private_jwk(key)}
    given = forms[form]
    assertion = client_assertion("cli_one", TOKEN_URL, given, "k1", now=NOW)
    assert jwt.decode(assertion, public_pem(key).decode(), algorithms=["ES384"], audience=TOKEN_URL)["iss"] == "cli_one"


def test_a_public_key_or_an_alg_the_key_cannot_sign_with_is_refused_when_the_credentials_are_made() -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public_jwk = {name: value for name, value in private_jwk(key).items() if name in ("kty", "n", "e")}
    with pytest.raises(ValueError, match="private RSA"):
        KeyCredentials("cli_one", public_jwk, "k1", "no_phi")
    with pytest.raises(ValueError, match="signs with RS384, not ES384"):
        KeyCredentials("cli_one", key, "k1", "no_phi", alg="ES384")
    with pytest.raises(ValueError, match="kid"):
        KeyCredentials("cli_one", key, "", "no_phi")
    assert jwt.get_unverified_header(client_assertion("cli_one", TOKEN_URL, key, "k1", alg="RS384"))["alg"] == "RS384"


def test_each_attempt_of_a_token_request_gets_a_new_assertion_signed_by_the_wall_clock() -> None:
    key = ec.generate_private_key(ec.SECP384R1())
    proof = ClientProof(KeyCredentials("cli_one", key, "k1", "phi"), TOKEN_URL)
    request = httpx.Request("POST", TOKEN_URL)
    bodies = [json.loads(proof.authorize(request).content) for _ in range(2)]
    claims = [jwt.decode(body["client_assertion"], public_pem(key).decode(), algorithms=["ES384"], audience=TOKEN_URL) for body in bodies]
    assert claims[0]["jti"] != claims[1]["jti"], "a retry after a lost answer is not a replay"
    assert abs(claims[0]["iat"] - time.time()) < 30
    assert {name: value for name, value in bodies[0].items() if name != "client_assertion"} == {"grant_type": "client_credentials", "client_assertion_type": CLIENT_ASSERTION_TYPE, "phi_mode": "phi"}
