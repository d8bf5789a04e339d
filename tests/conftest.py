"""Test-wide setup: no test touches the person's real config, keychain or display."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

# Before anything imports keyring or Qt: the file fallback unless a test asks for a real
# keychain (tests/integration/test_keychain.py starts its own Secret Service), and Qt offscreen.
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from support.harness import RelayHarness, running_core
from tabrelay.config.paths import Paths


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Paths:
    monkeypatch.setenv("TABRELAY_HOME", str(tmp_path / "home"))
    return Paths.resolve()


@pytest.fixture
async def relay(home: Paths) -> AsyncIterator[RelayHarness]:
    """A running core whose relay listens on a free port, with the test extension paired."""
    async with running_core(home) as harness:
        yield harness
