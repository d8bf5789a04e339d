"""The extension and the app must speak the same protocol: constants, denylist and proofs.

Imports the extension's ES modules with node and compares them with
``tabrelay.protocol.constants``, ``tabrelay.protocol.cdp`` and ``tabrelay.protocol.handshake``.
A change on one side without the other fails here.
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tabrelay.protocol import cdp, constants
from tabrelay.protocol.handshake import app_proof, extension_proof, new_nonce

SHARED = Path(__file__).resolve().parents[2] / "extension" / "src" / "shared"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(
    NODE is None, reason="node is not installed (make test installs it)"
)

# Names only one side has, on purpose. Anything else must exist on both sides, equal.
# The extension knows its own id (chrome.runtime.id); the app needs the pinned one.
APP_ONLY = {"DEFAULT_MCP_PORT", "MAX_NESTING_DEPTH", "TABRELAY_EXTENSION_ID"}
EXTENSION_ONLY = {
    "RELAY_HOST",
    "KEEPALIVE_INTERVAL_MS",
    "SILENCE_TIMEOUT_MS",
    "HANDSHAKE_TIMEOUT_MS",
}


def run_node(script: str, *args: str) -> Any:
    assert NODE is not None
    completed = subprocess.run(
        [NODE, "--input-type=module", "-e", script, *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def module_url(name: str) -> str:
    return (SHARED / name).as_uri()


@pytest.fixture(scope="module")
def extension_constants() -> dict[str, Any]:
    return run_node(  # type: ignore[no-any-return]
        "const m = await import(process.argv[1]);"
        "console.log(JSON.stringify(Object.fromEntries(Object.entries(m))));",
        module_url("protocol.js"),
    )


def app_constants() -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name in dir(constants):
        if not name[:1].isupper() or name.startswith("_"):
            continue
        value = getattr(constants, name)
        if isinstance(value, type) and issubclass(value, constants.enum.Enum):
            values[name] = {member.name: member.value for member in value}
        elif isinstance(value, tuple):
            values[name] = list(value)
        elif isinstance(value, int | str):
            values[name] = value
    return values


def test_extension_and_app_protocol_constants_are_equal(
    extension_constants: dict[str, Any],
) -> None:
    app = app_constants()
    shared = set(app) - APP_ONLY
    assert shared <= set(extension_constants), (
        f"missing in protocol.js: {shared - set(extension_constants)}"
    )
    for name in sorted(shared):
        assert extension_constants[name] == app[name], f"{name} differs between app and extension"


def test_every_constant_is_on_both_sides_unless_deliberately_one_sided(
    extension_constants: dict[str, Any],
) -> None:
    assert set(extension_constants) - set(app_constants()) == EXTENSION_ONLY
    assert set(app_constants()) - set(extension_constants) == APP_ONLY


def test_protocol_version_matches_the_documented_one(extension_constants: dict[str, Any]) -> None:
    assert extension_constants["PROTOCOL_VERSION"] == constants.PROTOCOL_VERSION == 1


def test_extension_and_app_deny_the_same_cdp_methods() -> None:
    extension = run_node(
        "const d = await import(process.argv[1]);"
        "console.log(JSON.stringify("
        "  {domains: d.BLOCKED_CDP_DOMAINS, methods: d.BLOCKED_CDP_METHODS,"
        "   allowed: d.ALLOWED_IN_BLOCKED_DOMAINS}));",
        module_url("denylist.js"),
    )
    assert set(extension["domains"]) == set(cdp.BLOCKED_CDP_DOMAINS)
    assert set(extension["methods"]) == set(cdp.BLOCKED_CDP_METHODS)
    assert set(extension["allowed"]) == set(cdp.ALLOWED_IN_BLOCKED_DOMAINS)


def test_extension_and_app_judge_every_method_name_alike() -> None:
    names = [
        "Runtime.evaluate",
        "Network.getAllCookies",
        "Network.getAllCookies\n",
        "Target.createTarget",
        "Target.setAutoAttach",
        "Target.setAutoAttach\n",
        "Target.setDiscoverTargets",
        "Page.navigate",
        "page.navigate",
        "Page.Navigate",
        "Browser.close",
        "Storage.getCookies",
        "DOM.getDocument",
        "",
        "Runtime",
        "Runtime.evaluate.x",
        "A1.b2",
    ]
    verdicts = run_node(
        "const d = await import(process.argv[1]); const names = JSON.parse(process.argv[2]);"
        "console.log(JSON.stringify(names.map((n) => d.cdpBlockReason(n) === null)));",
        module_url("denylist.js"),
        json.dumps(names),
    )
    expected = [cdp.cdp_block_reason(name) is None for name in names]
    assert dict(zip(names, verdicts, strict=True)) == dict(zip(names, expected, strict=True))


def test_extension_proofs_are_the_ones_the_app_computes() -> None:
    cases = [
        {
            "token": token,
            "port": port,
            "appNonce": new_nonce(),
            "extensionNonce": new_nonce(),
        }
        for token, port in [
            (secrets.token_urlsafe(32), 23001),
            (secrets.token_urlsafe(32), 1),
            ("ü" * 43, 65535),
            ("a token with spaces and ☃", 40000),
        ]
    ]
    proofs = run_node(
        "const h = await import(process.argv[1]); const cases = JSON.parse(process.argv[2]);"
        "const out = [];"
        "for (const c of cases) {"
        "  const b = {port: c.port, appNonce: c.appNonce, extensionNonce: c.extensionNonce};"
        "  out.push([await h.extensionProof(c.token, b), await h.appProof(c.token, b)]);"
        "}"
        "console.log(JSON.stringify(out));",
        module_url("handshake.js"),
        json.dumps(cases),
    )
    for case, (extension, app) in zip(cases, proofs, strict=True):
        binding = {
            "port": case["port"],
            "app_nonce": case["appNonce"],
            "extension_nonce": case["extensionNonce"],
        }
        assert extension == extension_proof(case["token"], **binding)
        assert app == app_proof(case["token"], **binding)
