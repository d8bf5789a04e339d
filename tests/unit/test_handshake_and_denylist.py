"""The auth proofs and the CDP denylist: pure functions the relay and the extension share."""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

from tabrelay.protocol.cdp import cdp_block_reason
from tabrelay.protocol.handshake import app_proof, extension_proof, new_nonce, proofs_match

TOKEN = "t" * 43
SOURCE = pathlib.Path(__file__).parents[2] / "desktop" / "tabrelay"


def test_proofs_bind_role_port_and_both_nonces() -> None:
    base = {"port": 23001, "app_nonce": "A" * 43, "extension_nonce": "E" * 43}
    proof = extension_proof(TOKEN, **base)  # type: ignore[arg-type]
    assert len(proof) == 43 and "=" not in proof
    assert app_proof(TOKEN, **base) != proof  # type: ignore[arg-type]
    for key, other in (("port", 23002), ("app_nonce", "B" * 43), ("extension_nonce", "F" * 43)):
        assert extension_proof(TOKEN, **{**base, key: other}) != proof  # type: ignore[arg-type]
    assert extension_proof("u" * 43, **base) != proof  # type: ignore[arg-type]


def test_known_vector_matches_the_protocol_document() -> None:
    # HMAC-SHA256(key="secret", msg="tabrelay/1 extension 23001 AAA EEE"), base64url, no padding;
    # computed independently with `openssl dgst -sha256 -hmac secret -binary`.
    assert extension_proof("secret", port=23001, app_nonce="AAA", extension_nonce="EEE") == (
        "cc1_cyEtym5btmaQ51Bi0_8rHWYVU8QaBNULvptb2JQ"
    )


def test_nonces_are_fresh_and_long() -> None:
    nonces = {new_nonce() for _ in range(100)}
    assert len(nonces) == 100
    assert all(len(n) == 43 for n in nonces)


def test_proof_comparison_handles_non_ascii_without_raising() -> None:
    assert not proofs_match("abc", "ü" * 3)
    assert proofs_match("abc", "abc")


def test_secrets_are_only_ever_compared_in_constant_time() -> None:
    """Static check (THREATS R3): no == or != with a token, proof or secret as an operand."""
    secret_like = re.compile(r"(token|proof|secret)(\(\))?$", re.IGNORECASE)
    offenders = []
    for path in SOURCE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare) and any(
                isinstance(op, ast.Eq | ast.NotEq) for op in node.ops
            ):
                operands = [ast.unparse(n) for n in [node.left, *node.comparators]]
                if any(secret_like.search(o) for o in operands):
                    offenders.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert offenders == []


@pytest.mark.parametrize(
    "method",
    [
        "Network.getAllCookies",
        "Network.getCookies",
        "Storage.getCookies",
        "Network.setCookie",
        "Page.setDownloadBehavior",
        "Browser.setDownloadBehavior",
        "Browser.grantPermissions",
        "Fetch.continueWithAuth",
        "WebAuthn.addVirtualAuthenticator",
        "Target.createTarget",
        "Target.attachToTarget",
        "Target.setDiscoverTargets",
        "Target.getTargets",
        "Target.attachToBrowserTarget",
        "SystemInfo.getProcessInfo",
    ],
)
def test_dangerous_cdp_methods_are_blocked(method: str) -> None:
    reason = cdp_block_reason(method)
    assert reason is not None and "blocked by Tabrelay" in reason


@pytest.mark.parametrize("method", ["", "Runtime", "runtime.evaluate", "A.b c", "Page.navigate;x"])
def test_malformed_method_names_are_blocked(method: str) -> None:
    assert "not a CDP method name" in (cdp_block_reason(method) or "")


@pytest.mark.parametrize(
    "method",
    [
        "Runtime.evaluate",
        "Page.navigate",
        "Page.captureScreenshot",
        "Input.dispatchMouseEvent",
        "DOM.getDocument",
        "Accessibility.getFullAXTree",
        "Network.enable",
        "Log.enable",
        "Target.setAutoAttach",  # the tab's own frames in other processes (child sessions)
    ],
)
def test_what_the_tools_need_is_allowed(method: str) -> None:
    assert cdp_block_reason(method) is None
