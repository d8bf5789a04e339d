"""Secrets in a real Secret Service (GNOME Keyring on a private D-Bus session), not a file."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from support.keychain import SECRET_SERVICE_MISSING, run_in_keyring_session

pytestmark = [
    pytest.mark.keychain,
    pytest.mark.skipif(SECRET_SERVICE_MISSING is not None, reason=str(SECRET_SERVICE_MISSING)),
]


def test_tokens_live_in_the_secret_service_when_one_is_running(tmp_path: Path) -> None:
    probe = textwrap.dedent(
        """
        from tabrelay.config.paths import Paths
        from tabrelay.config.secrets import TokenStore
        paths = Paths.resolve()
        store = TokenStore.open(paths)
        assert not store.insecure, store.problems
        print("backend:", store.backend.description)
        token = store.create_browser_credential("b-1")
        assert TokenStore.open(paths).browser_credential("b-1") == token
        store.create_client_token("cursor")
        assert TokenStore.open(paths).client_token("cursor")
        assert not paths.secrets_file.exists()
        import keyring
        assert keyring.get_password(paths.keyring_service, "browser:b-1") == token
        assert keyring.get_password("tabrelay", "browser:b-1") is None
        store.delete_browser_credential("b-1")
        assert keyring.get_password(paths.keyring_service, "browser:b-1") is None
        print("ok")
        """
    )
    (tmp_path / "tabrelay").mkdir(mode=0o700)
    result = run_in_keyring_session(
        f'"$PYTHON" -c {_quote(probe)}\n'
        'set +e\n"$PYTHON" -m tabrelay doctor\necho "doctor exit $?"\n',
        env={**os.environ, "TABRELAY_HOME": str(tmp_path / "tabrelay"), "PYTHON": sys.executable},
        folder=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "backend: keychain SecretService.Keyring" in result.stdout
    assert "ok\n" in result.stdout
    assert "[ok  ] secrets: keychain SecretService.Keyring" in result.stdout
    assert not (tmp_path / "tabrelay" / "secrets").exists()


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


LOCK = (
    '"$PYTHON" -c "import secretstorage; c = secretstorage.dbus_init(); '
    'secretstorage.get_default_collection(c).lock()"\n'
)


def test_a_locked_keychain_is_where_every_process_looks_and_each_says_so(tmp_path: Path) -> None:
    """Without a display, the unlock prompt fails at once: a cancelled prompt. The CLI, the
    stdio bridge and doctor must agree the secrets are in the keychain, say it is locked and
    what to do, and never start a file of their own."""
    home = tmp_path / "tabrelay"
    home.mkdir(mode=0o700)
    script = (
        '"$PYTHON" -m tabrelay client add agent >/dev/null\n'
        + LOCK
        + "set +e\n"
        + 'for cmd in "client add other" "secrets where" "mcp-stdio --client agent" doctor; do\n'
        + '  echo "== $cmd"; "$PYTHON" -m tabrelay $cmd </dev/null 2>&1; echo "exit $?"\n'
        + "done\n"
    )
    result = run_in_keyring_session(
        script,
        env={**os.environ, "TABRELAY_HOME": str(home), "PYTHON": sys.executable},
        folder=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    sections = dict(part.split("\n", 1) for part in out.split("== ")[1:])
    add = sections["client add other"]
    assert "your keychain is locked" in add and "tabrelay secrets use file" in add
    assert add.rstrip().endswith("exit 1")
    where = sections["secrets where"]
    assert "Secrets live in: keychain SecretService.Keyring" in where
    assert "Problem: your keychain is locked" in where
    bridge = sections["mcp-stdio --client agent"]
    assert "your keychain is locked" in bridge and "No MCP client named" not in bridge
    doctor = sections["doctor"]
    assert "[FAIL] secrets: keychain SecretService.Keyring" in doctor
    assert "your keychain is locked" in doctor
    assert not (home / "secrets" / "secrets.json").exists()
