"""The layering rule of DESIGN §9, checked on the source: who may import whom.

Ranks, bottom to top: errors; protocol (pure, no I/O); config, system, store; relay; tools;
approval; endpoint; core (the Qt-free core both front ends run); ui; the composition roots
(cli, commands, app). A module may import its own rank or lower. Only ui/ and app.py import
PySide6 or qasync; only endpoint/ imports mcp.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).parents[2] / "desktop" / "tabrelay"
RANKS = {
    "errors": 0,
    "protocol": 1,
    "config": 2,
    "system": 2,
    "store": 2,
    "relay": 3,
    "tools": 4,
    "approval": 5,
    "endpoint": 6,
    "core": 7,
    "ui": 8,
    "cli": 9,
    "commands": 9,
    "app": 9,
    "__main__": 9,
    "__init__": 0,
}
GUI_ONLY = ("PySide6", "qasync", "shiboken6")


def layer(module_path: Path) -> str:
    relative = module_path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def imports(module_path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(module_path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


def test_no_module_imports_a_layer_above_its_own() -> None:
    violations = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own = RANKS[layer(path)]
        for name in imports(path):
            parts = name.split(".")
            if parts[0] != "tabrelay" or len(parts) < 2:
                continue
            target = parts[1]
            if RANKS[target] > own:
                violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert violations == []


def test_only_the_ui_imports_qt_and_only_the_endpoint_imports_mcp() -> None:
    violations = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = layer(path)
        for name in imports(path):
            top = name.split(".")[0]
            if top in GUI_ONLY and where not in ("ui", "app"):
                violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
            if top == "mcp" and where != "endpoint":
                violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert violations == []


def test_protocol_does_no_io() -> None:
    forbidden = {"asyncio", "socket", "websockets", "os", "pathlib", "subprocess", "threading"}
    for path in (PACKAGE / "protocol").rglob("*.py"):
        assert not {n.split(".")[0] for n in imports(path)} & forbidden, path.name


def test_the_core_imports_and_starts_with_qt_blocked() -> None:
    """Import every core module in a fresh interpreter where PySide6 and qasync cannot load."""
    core_modules = sorted(
        "tabrelay."
        + ".".join(p.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")
        for p in PACKAGE.rglob("*.py")
        if layer(p) not in ("ui", "app", "__main__")
    )
    script = f"""
import importlib, importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {GUI_ONLY!r}:
            raise ImportError("blocked by the layering test: " + name)
sys.meta_path.insert(0, Block())
for name in {core_modules!r}:
    importlib.import_module(name)
from tabrelay.cli import main
try:
    main(["--help"])
except SystemExit as done:
    assert done.code == 0
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "usage: tabrelay" in result.stdout
