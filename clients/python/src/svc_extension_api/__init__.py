"""Python client of the extension API (contract version 2)."""
from .assertion import CLIENT_ASSERTION_TYPE, AssertionAlgorithm, SigningKey, client_assertion
from .client import ExtensionClient
from .errors import ExtensionApiError, known_code, retry_after_seconds
from .generated.contract import COMMANDS, CONTRACT_VERSION, ERROR_CODES, MANIFEST_VERSION
from .pages import items, offset_pages, pages
from .retries import RetryOptions
from .tokens import Credentials, KeyCredentials, PhiMode, SecretCredentials, TokenSource
from .webhooks import WebhookVerificationError, payload_hash, verify_delivery

__all__ = [
    "CLIENT_ASSERTION_TYPE",
    "AssertionAlgorithm",
    "COMMANDS",
    "CONTRACT_VERSION",
    "ERROR_CODES",
    "MANIFEST_VERSION",
    "Credentials",
    "ExtensionApiError",
    "ExtensionClient",
    "KeyCredentials",
    "PhiMode",
    "RetryOptions",
    "SecretCredentials",
    "SigningKey",
    "TokenSource",
    "WebhookVerificationError",
    "client_assertion",
    "items",
    "known_code",
    "offset_pages",
    "pages",
    "payload_hash",
    "retry_after_seconds",
    "verify_delivery",
]
