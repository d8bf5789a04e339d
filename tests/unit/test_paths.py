"""Where files go: TABRELAY_HOME puts everything under one folder and namespaces the keychain."""

from __future__ import annotations

from pathlib import Path

from tabrelay.config.paths import KEYRING_SERVICE, Paths


def test_tabrelay_home_moves_everything_and_namespaces_the_keychain(tmp_path: Path) -> None:
    paths = Paths.resolve({"TABRELAY_HOME": str(tmp_path)})
    for folder in (paths.config_dir, paths.data_dir, paths.log_dir, paths.secrets_dir):
        assert folder.is_relative_to(tmp_path)
    assert paths.keyring_service != KEYRING_SERVICE
    other = Paths.resolve({"TABRELAY_HOME": str(tmp_path / "other")})
    assert other.keyring_service != paths.keyring_service


def test_without_tabrelay_home_the_platform_dirs_and_the_plain_service_are_used() -> None:
    paths = Paths.resolve({})
    assert paths.keyring_service == KEYRING_SERVICE
    assert "Tabrelay" in str(paths.config_dir) or "tabrelay" in str(paths.config_dir).lower()
