"""`make run` puts `tabrelay` on PATH, so the README's commands work as printed (the bug:
"tabrelay: command not found" after `make run`)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _launcher(folder: Path) -> str:
    result = subprocess.run(
        ["make", "-s", "launcher", f"LAUNCHER_DIR={folder}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "PATH": "/usr/bin:/bin"},
    )
    return result.stdout


def test_make_run_links_tabrelay_into_the_persons_bin_and_says_where(tmp_path: Path) -> None:
    folder = tmp_path / "home" / ".local" / "bin"
    said = _launcher(folder)
    link = folder / "tabrelay"
    assert link.is_symlink() and link.resolve() == (ROOT / ".venv" / "bin" / "tabrelay").resolve()
    assert f"The tabrelay command: {link}" in said
    assert "is not on your PATH yet" in said  # and how to fix that
    version = subprocess.run(
        ["tabrelay", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "PATH": f"{folder}:/usr/bin:/bin"},
    )
    assert version.stdout.startswith("tabrelay ")
    assert _launcher(folder).count("The tabrelay command") == 1  # again: same link, no error


def test_a_tabrelay_that_is_not_our_link_is_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    theirs = folder / "tabrelay"
    theirs.write_text("#!/bin/sh\necho theirs\n")
    said = _launcher(folder)
    assert "exists and is not a link: left alone" in said
    assert theirs.read_text() == "#!/bin/sh\necho theirs\n" and not theirs.is_symlink()
