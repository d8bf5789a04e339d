"""Page scripts held in Python strings, checked by node: they must at least parse."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def assert_scripts_parse(folder: Path, *scripts: str) -> None:
    """Each of ``scripts`` (a function or expression) parses as JavaScript (``node --check``)."""
    node = shutil.which("node")
    assert node, "node is not installed; make test installs it"
    for index, script in enumerate(scripts):
        source = folder / f"script{index}.js"
        source.write_text(f"const f = ({script.strip()});\n")
        checked = subprocess.run(
            [node, "--check", str(source)], capture_output=True, text=True, check=False
        )
        assert checked.returncode == 0, (index, checked.stderr)
