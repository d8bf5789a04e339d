"""The layering rule of DESIGN §9, checked on the source: who may import whom.

The ranks are the rooms table of docs/architecture.md (bottom to top: errors; protocol; config,
system, store; relay; tools; approval; endpoint; core; ui; the composition roots), so the map
and the code cannot part. A module may import its own rank or lower, and no module imports
itself back through others. Only ui/ and app.py import PySide6 or qasync; only endpoint/
imports mcp.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).parents[2] / "desktop" / "tabrelay"
MAP = Path(__file__).parents[2] / "docs" / "architecture.md"


ROOTS = {"cli", "cli_recipes", "commands", "app", "__main__"}


def rows_of_the_map() -> list[tuple[set[str], int, set[str] | None]]:
    """The rooms table of docs/architecture.md: (rooms, rank, the rooms it names as callers, or
    None for "everyone"); rooms are in backticks, "the roots" are the composition roots."""
    text = MAP.read_text()
    table = text.split("<!-- rooms:begin")[1].split("<!-- rooms:end -->")[0]
    rows = []
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[1].isdigit():
            continue
        callers = cells[3]
        named = set(re.findall(r"`([^`]+)`", callers)) | (
            ROOTS if "the roots" in callers else set()
        )
        rows.append((set(re.findall(r"`([^`]+)`", cells[0])), int(cells[1]),
                     None if callers == "everyone" else named))  # fmt: skip
    return rows


RANKS = {**{room: rank for rooms, rank, _ in rows_of_the_map() for room in rooms}, "__init__": 0}
GUI_ONLY = ("PySide6", "qasync", "shiboken6")


def layer(module_path: Path) -> str:
    relative = module_path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def imported_modules(path: Path) -> list[str]:
    """Every module ``path`` imports, deferred and type-only ones too; ``from a import b`` names
    ``a.b`` (b may be a module of package a)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [f"{node.module}.{alias.name}" for alias in node.names]
    return found


def test_the_map_names_every_room_of_the_package_and_nothing_else() -> None:
    rooms = {layer(path) for path in PACKAGE.rglob("*.py")}
    assert set(RANKS) == rooms
    assert RANKS["errors"] == 0 and RANKS["ui"] > RANKS["core"] > RANKS["endpoint"]


def test_each_room_is_called_only_by_the_rooms_the_map_names() -> None:
    importers: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for name in imported_modules(path):
            parts = name.split(".")
            if parts[0] == "tabrelay" and len(parts) > 1 and parts[1] in RANKS:
                importers.setdefault(parts[1], set()).add(layer(path))
    unnamed = []
    for rooms, _, callers in rows_of_the_map():
        if callers is None:
            continue
        assert callers <= set(RANKS), f"{rooms}: no such room in {callers - set(RANKS)}"
        for room in rooms:
            for caller in sorted(importers.get(room, set()) - rooms - callers - {"__init__"}):
                unnamed.append(f"{caller} calls {room}")
    assert unnamed == []


def test_no_module_imports_a_layer_above_its_own() -> None:
    violations = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own = RANKS[layer(path)]
        for name in imported_modules(path):
            parts = name.split(".")
            # ``from tabrelay import __version__`` names no room (every room is on the map)
            if parts[0] != "tabrelay" or len(parts) < 2 or parts[1] not in RANKS:
                continue
            if RANKS[parts[1]] > own:
                violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert violations == []


def test_only_the_ui_imports_qt_and_only_the_endpoint_imports_mcp() -> None:
    violations = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = layer(path)
        for name in imported_modules(path):
            top = name.split(".")[0]
            if top in GUI_ONLY and where not in ("ui", "app"):
                violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
            if top == "mcp" and where != "endpoint":
                violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert violations == []


def test_protocol_does_no_io() -> None:
    forbidden = {"asyncio", "socket", "websockets", "os", "pathlib", "subprocess", "threading"}
    for path in (PACKAGE / "protocol").rglob("*.py"):
        assert not {n.split(".")[0] for n in imported_modules(path)} & forbidden, path.name


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


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(("tabrelay", *parts)).removesuffix(".__init__")


def import_graph() -> dict[str, set[str]]:
    """Module → the package's modules it imports (``from a import b`` counts ``a.b`` when that
    is a module), read from every import in the file, deferred ones included."""
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and not name.startswith(target + "."):
                    edges.add(target)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_module_imports_itself_back_through_others() -> None:
    """No import cycles anywhere, deferred (in-function) imports included: each cycle is a pair
    of modules that cannot be understood, tested or changed one without the other."""
    graph = import_graph()
    assert "tabrelay.relay.registry" in graph["tabrelay.core"]  # the graph is read, not empty
    assert cycles(graph) == []


# --- inside tools/: its layers (docs/architecture.md, "The tools room, in layers") -------------

TOOLS = PACKAGE / "tools"


def rows_of_the_tools_map() -> list[tuple[set[str], int, set[str]]]:
    """The tool layers table: (layers, rank, the rooms outside tools/ that may import them)."""
    text = MAP.read_text()
    table = text.split("<!-- tool rooms:begin")[1].split("<!-- tool rooms:end -->")[0]
    rows = []
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[1].isdigit():
            continue
        callers = set(re.findall(r"`([^`]+)`", cells[3].split(":")[0])) - {"tools.catalog"}
        rows.append((set(re.findall(r"`([^`]+)`", cells[0])), int(cells[1]),
                     callers | (ROOTS if "the roots" in cells[3] else set())))  # fmt: skip
    return rows


TOOL_RANKS = {layer: rank for layers, rank, _ in rows_of_the_tools_map() for layer in layers}
# Layers of one row are one layer (``budget`` marks words with ``results``); rows of one rank are
# not (the acting engine and the recorders never import each other).
TOOL_ROW = {
    layer: n for n, (layers, _, _) in enumerate(rows_of_the_tools_map()) for layer in layers
}


def tool_layer(dotted: str) -> str | None:
    """The layer of ``tabrelay.tools.<…>`` ("tools.page", "tools.catalog"), None for the package
    itself or a name outside it."""
    parts = dotted.split(".")
    if parts[:2] != ["tabrelay", "tools"] or len(parts) < 3:
        return None
    return f"tools.{parts[2]}"


def test_the_tools_map_names_every_layer_of_tools_and_nothing_else() -> None:
    layers = {tool_layer(module_name(path)) for path in TOOLS.rglob("*.py")} - {None}
    assert set(TOOL_RANKS) == layers
    assert TOOL_RANKS["tools.groups"] > TOOL_RANKS["tools.page"] > TOOL_RANKS["tools.state"]


def layer_breaches(package: Path) -> list[str]:
    """Imports in ``package`` (a copy of the tabrelay package's layout) that the tools map does
    not allow: a layer above or of its rank, another group, a closed layer from outside."""
    tools = package / "tools"
    groups = {path.stem for path in (tools / "groups").glob("*.py")} - {"__init__"}
    opened = {layer: callers for layers, _, callers in rows_of_the_tools_map() for layer in layers}
    breaches = []
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package).with_suffix("").parts
        room = parts[0]
        own = tool_layer(".".join(("tabrelay", *parts))) if room == "tools" else None
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                relative = "." * node.level + (node.module or "")
                breaches.append(f"{path.relative_to(package)} imports from {relative}: relative")
        for name in imported_modules(path):
            target = tool_layer(name)
            if target is None:
                continue
            where = f"{path.relative_to(package)} imports {name}"
            if room != "tools" and room not in opened[target]:
                breaches.append(f"{where}: {target} is closed to {room}")
            elif own is not None and TOOL_ROW[target] != TOOL_ROW[own]:
                if TOOL_RANKS[target] >= TOOL_RANKS[own]:
                    breaches.append(f"{where}: {target} is not below {own}")
            elif own == "tools.groups" == target:
                other = name.split(".")[3:4]
                if other and other[0] in groups and other[0] != path.stem:
                    breaches.append(f"{where}: a group imports another group")
    return breaches


def test_each_import_of_a_tools_layer_is_one_the_map_allows() -> None:
    assert layer_breaches(PACKAGE) == []


def test_a_breach_of_the_tools_map_is_named(tmp_path: Path) -> None:
    """A tree with one import of each kind the map forbids, and ones it allows; a relative
    import is refused whole (the map is read from absolute names)."""
    files = {
        "tools/page/refs.py": "from tabrelay.tools.groups.actions import click\n"
        "from tabrelay.tools.state import tab_state\n",
        "tools/acting/keys.py": "from tabrelay.tools.recorders import recording\n",
        "tools/groups/forms.py": "from tabrelay.tools.groups import actions\n"
        "from tabrelay.tools.groups.forms import x\nfrom tabrelay.tools.page import refs\n",
        "tools/groups/actions.py": "",
        "tools/budget.py": "from tabrelay.tools.results import page_text\n",
        "endpoint/calls.py": "from tabrelay.tools.groups.tabs import in_scope\n"
        "from tabrelay.tools.catalog import BY_NAME\n",
        "core.py": "def later():\n    from tabrelay.tools.page import outline\n",
        "tools/page/outline.py": "from ..groups import actions\n",
    }
    for name, source in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(source)
    assert layer_breaches(tmp_path) == [
        "core.py imports tabrelay.tools.page.outline: tools.page is closed to core",
        "endpoint/calls.py imports tabrelay.tools.groups.tabs.in_scope: tools.groups is closed "
        "to endpoint",
        "tools/acting/keys.py imports tabrelay.tools.recorders.recording: tools.recorders is not "
        "below tools.acting",
        "tools/groups/forms.py imports tabrelay.tools.groups.actions: a group imports another "
        "group",
        "tools/page/outline.py imports from ..groups: relative",
        "tools/page/refs.py imports tabrelay.tools.groups.actions.click: tools.groups is not "
        "below tools.page",
    ]
