"""The MCP SDK is used through its public API only; what 2.3 lacks lives in ``endpoint/sdk.py``.

An AST check keeps private SDK names (``_lowlevel_server``, ``_connection``, overridden private
hooks, private modules, the process-global ``sse_starlette`` state) out of every other module,
and the adapter's few reaches are pinned against the installed SDK, so an upgrade that moves
them fails here, in one place, rather than somewhere in a client's session.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import mcp
import mcp_types
import pytest
from mcp import Client
from mcp.server.connection import Connection
from mcp.server.mcpserver import MCPServer

from tabrelay.endpoint import sdk

PACKAGE = Path(__file__).parents[2] / "desktop" / "tabrelay"
ADAPTER = PACKAGE / "endpoint" / "sdk.py"
SDK_PACKAGES = (Path(mcp.__file__).parent, Path(mcp_types.__file__).parent)
SDK_ROOTS = ("mcp", "mcp_types")
# The SDK's transport internals: reached only through the SDK (their state is process-global).
SDK_INTERNALS = ("sse_starlette",)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def sdk_private_names() -> frozenset[str]:
    """Every private name the SDK defines: functions, classes, attributes it assigns."""
    names: set[str] = set()
    for root in SDK_PACKAGES:
        for path in root.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    found = node.name
                elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                    found = node.attr
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    found = node.target.id
                else:
                    continue
                if _private(found):
                    names.add(found)
    return frozenset(names)


def reaches(path: Path, private: frozenset[str]) -> Iterator[str]:
    """Where ``path`` touches a private SDK name, one line each."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    from_sdk: set[str] = set()  # names this module imported from the SDK
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            top = node.module.split(".")[0]
            if top in SDK_INTERNALS:
                yield f"{node.lineno}: imports {node.module}"
            if top not in SDK_ROOTS:
                continue
            if any(_private(part) for part in node.module.split(".")):
                yield f"{node.lineno}: imports the private module {node.module}"
            for alias in node.names:
                if _private(alias.name):
                    yield f"{node.lineno}: imports {alias.name} from {node.module}"
                from_sdk.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] in SDK_INTERNALS or (
                    parts[0] in SDK_ROOTS and any(_private(p) for p in parts)
                ):
                    yield f"{node.lineno}: imports {alias.name}"
        elif isinstance(node, ast.Attribute) and node.attr in private:
            owner = node.value
            if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                yield f"{node.lineno}: {ast.unparse(node)}"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and node.args[1:]
        ):
            name = node.args[1]
            if isinstance(name, ast.Constant) and name.value in private:
                yield f"{node.lineno}: {ast.unparse(node)}"
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        bases = {ast.unparse(base).split("[")[0].split(".")[0] for base in node.bases}
        if not bases & from_sdk:
            continue
        for item in node.body:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name in private:
                yield f"{item.lineno}: {node.name} overrides the SDK's private {item.name}"


def test_no_module_but_the_adapter_touches_a_private_sdk_name() -> None:
    private = sdk_private_names()
    assert {"_lowlevel_server", "_connection", "_tool_input_schema"} <= private  # the check sees
    found = [
        f"{path.relative_to(PACKAGE)}:{where}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != ADAPTER
        for where in reaches(path, private)
    ]
    assert found == []


def test_the_check_finds_each_kind_of_reach(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from mcp.server.mcpserver import MCPServer\n"
        "from mcp.client._memory import InMemoryTransport\n"
        "from sse_starlette.sse import AppStatus\n"
        "class Mine(MCPServer):\n"
        "    def _tool_input_schema(self, name): ...\n"
        "def f(server, session):\n"
        "    server._lowlevel_server.run()\n"
        "    return getattr(session, '_connection', None)\n"
    )
    found = sorted(reaches(sample, sdk_private_names()), key=lambda line: int(line.split(":")[0]))
    assert [line.split(":")[0] for line in found] == ["2", "3", "5", "7", "8"]


# --- the adapter's reaches, pinned against the installed SDK --------------------------------


def session_catcher(seen: list[Any]) -> Any:
    async def catch(ctx: Any, call_next: Any) -> Any:
        seen.append(ctx.session)
        return await call_next(ctx)

    return catch


async def test_connection_of_finds_the_live_connection_behind_a_request() -> None:
    seen: list[Any] = []
    server: MCPServer[Any] = MCPServer("pinned", middleware=[session_catcher(seen)])
    ended: list[bool] = []
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(Client(server, mode="legacy"))
        await client.list_tools()
        connection = sdk.connection_of(seen[-1])
        assert isinstance(connection, Connection)
        assert sdk.connection_of(seen[0]) is connection  # one per client, across its requests
        connection.exit_stack.callback(ended.append, True)
    assert ended == [True]  # the connection's exit stack runs when the client leaves


def test_connection_of_says_so_when_the_sdk_moved_it() -> None:
    with pytest.raises(sdk.SdkChanged, match="connection"):
        sdk.connection_of(object())  # type: ignore[arg-type]
