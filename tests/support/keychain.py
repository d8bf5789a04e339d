"""A real Secret Service for keychain tests: GNOME Keyring in a private D-Bus session."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

SECRET_SERVICE_MISSING = (
    None
    if shutil.which("dbus-run-session") and shutil.which("gnome-keyring-daemon")
    else "needs dbus-run-session and gnome-keyring-daemon (make test installs them)"
)


def run_in_keyring_session(
    script: str, *, env: Mapping[str, str], folder: Path
) -> subprocess.CompletedProcess[str]:
    """Run a shell snippet inside a fresh D-Bus session with an unlocked GNOME Keyring.

    ``env`` is the snippet's environment without its PYTHON_KEYRING_BACKEND (so keyring finds
    the Secret Service); HOME and the XDG data and runtime folders are new, under ``folder``.
    """
    private = {name: folder / f"keyring-{name}" for name in ("home", "data", "runtime")}
    for path in private.values():
        path.mkdir(mode=0o700)
    session_env = {k: v for k, v in env.items() if k != "PYTHON_KEYRING_BACKEND"} | {
        "HOME": str(private["home"]),
        "XDG_DATA_HOME": str(private["data"]),
        "XDG_RUNTIME_DIR": str(private["runtime"]),
    }
    unlock = 'eval "$(printf pw | gnome-keyring-daemon --unlock --components=secrets)"\n'
    return subprocess.run(
        ["dbus-run-session", "--", "bash", "-euc", unlock + script],
        env=session_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
