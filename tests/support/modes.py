"""What is private on disk: file modes, and the paths under a folder that are not private."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def not_private(root: Path) -> list[str]:
    """Every folder under ``root`` (itself included) not 0700 and file not 0600, with its mode."""
    found = [] if mode(root) == 0o700 else [f". {oct(mode(root))}"]
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder, name)
            if path.is_symlink():
                continue
            wanted = 0o700 if path.is_dir() else 0o600
            if mode(path) != wanted:
                found.append(f"{path.relative_to(root)} {oct(mode(path))}")
    return found
