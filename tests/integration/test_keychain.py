"""Secrets in a real Secret Service (GNOME Keyring on a private D-Bus session), not a file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.keychain,
    pytest.mark.skipif(
        not (shutil.which("dbus-run-session") and shutil.which("gnome-keyring-daemon")),
        reason="needs dbus-run-session and gnome-keyring-daemon (make test installs them)",
    ),
]


def run_in_keyring_session(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    """Run a shell snippet inside a fresh D-Bus session with an unlocked GNOME Keyring."""
    for folder in ("home", "data", "runtime", "tabrelay"):
        (tmp_path / folder).mkdir(mode=0o700)
    env = {key: value for key, value in os.environ.items() if key != "PYTHON_KEYRING_BACKEND"} | {
        "HOME": str(tmp_path / "home"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_RUNTIME_DIR": str(tmp_path / "runtime"),
        "TABRELAY_HOME": str(tmp_path / "tabrelay"),
        "PYTHON": sys.executable,
    }
    script = 'eval "$(printf pw | gnome-keyring-daemon --unlock --components=secrets)"\n' + body
    return subprocess.run(
        ["dbus-run-session", "--", "bash", "-euc", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_tokens_live_in_the_secret_service_when_one_is_running(tmp_path: Path) -> None:
    probe = textwrap.dedent(
        """
        from tabrelay.config.paths import Paths
        from tabrelay.config.secrets import TokenStore
        paths = Paths.resolve()
        store = TokenStore.open(paths)
        assert not store.insecure, store.problems
        print("backend:", store.backend.description)
        token = store.relay_token()
        assert TokenStore.open(paths).relay_token() == token
        rotated = store.rotate_relay_token()
        assert rotated != token and TokenStore.open(paths).relay_token() == rotated
        store.create_client_token("cursor")
        assert TokenStore.open(paths).client_token("cursor")
        assert not paths.secrets_file.exists()
        import keyring
        assert keyring.get_password(paths.keyring_service, "relay-token") == rotated
        assert keyring.get_password("tabrelay", "relay-token") is None
        print("ok")
        """
    )
    result = run_in_keyring_session(
        tmp_path,
        f'"$PYTHON" -c {_quote(probe)}\n'
        'set +e\n"$PYTHON" -m tabrelay doctor\necho "doctor exit $?"\n',
    )
    assert result.returncode == 0, result.stderr
    assert "backend: SecretService.Keyring" in result.stdout
    assert "ok\n" in result.stdout
    assert "[ok  ] secrets: SecretService.Keyring" in result.stdout
    assert not (tmp_path / "tabrelay" / "secrets").exists()


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"
