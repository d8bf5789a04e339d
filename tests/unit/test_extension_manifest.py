"""The unpacked extension's id is pinned by its manifest key; the e2e tests rely on that id."""

from __future__ import annotations

import re

from e2e.chromium import EXTENSION_DIR, EXTENSION_ID, extension_id_from_key, manifest


def test_manifest_key_gives_the_extension_id_the_tests_and_pairing_use() -> None:
    key = manifest()["key"]
    assert isinstance(key, str)
    assert extension_id_from_key(key) == EXTENSION_ID


def test_extension_id_is_one_the_relay_accepts_as_an_origin() -> None:
    assert re.fullmatch(r"[a-p]{32}", EXTENSION_ID)


def test_no_private_key_is_shipped_with_the_extension() -> None:
    for path in EXTENSION_DIR.rglob("*"):
        if path.is_file() and path.suffix in {".pem", ".key", ".crx"}:
            raise AssertionError(f"{path} must not be in the repository")
        if path.is_file() and path.suffix in {".js", ".json", ".html"}:
            assert "PRIVATE KEY" not in path.read_text(encoding="utf-8"), path
