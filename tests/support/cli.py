"""The `tabrelay` command line run as a person would, against a test's Tabrelay home."""

from __future__ import annotations

import subprocess
import sys

from tabrelay.config.paths import Paths


def run_cli(paths: Paths, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``tabrelay ARGS`` (no keychain, a bare PATH); it must succeed."""
    env = {
        "TABRELAY_HOME": str(paths.config_dir.parent),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "PATH": "/usr/bin:/bin",
    }
    done = subprocess.run(
        [sys.executable, "-m", "tabrelay", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done
