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
