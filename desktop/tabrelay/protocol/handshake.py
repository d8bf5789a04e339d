"""The challenge–response that proves both sides know the relay token without sending it.

Both proofs are HMAC-SHA256 under the token over the protocol version, the role, the relay
port and both nonces, so a proof is useless for the other role, another port or another
connection. Pure functions; the relay and the tests' fake extension share them.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from tabrelay.protocol.constants import NONCE_BYTES, PROTOCOL_VERSION, ROLE_APP, ROLE_EXTENSION


def new_nonce() -> str:
    """A fresh random nonce, base64url without padding."""
    return _b64(secrets.token_bytes(NONCE_BYTES))


def proof(token: str, *, role: str, port: int, app_nonce: str, extension_nonce: str) -> str:
    """The proof that ``role`` knows ``token`` for this connection."""
    message = f"tabrelay/{PROTOCOL_VERSION} {role} {port} {app_nonce} {extension_nonce}"
    digest = hmac.new(token.encode("utf-8"), message.encode("utf-8"), hashlib.sha256).digest()
    return _b64(digest)


def extension_proof(token: str, *, port: int, app_nonce: str, extension_nonce: str) -> str:
    return proof(
        token, role=ROLE_EXTENSION, port=port, app_nonce=app_nonce, extension_nonce=extension_nonce
    )


def app_proof(token: str, *, port: int, app_nonce: str, extension_nonce: str) -> str:
    return proof(
        token, role=ROLE_APP, port=port, app_nonce=app_nonce, extension_nonce=extension_nonce
    )


def proofs_match(expected: str, given: str) -> bool:
    """Constant-time comparison on bytes (non-ASCII input compares unequal, never raises)."""
    return hmac.compare_digest(expected.encode("utf-8"), given.encode("utf-8"))


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
