"""What a tool list costs every client: ``tools/list`` of Tabrelay and the peers, in bytes and
tokens, and how portable each list's schemas are.

Each side answers ``tools/list`` to a minimal client of our own (raw JSON-RPC: Streamable HTTP
to ``tabrelay serve`` started as a person starts it, stdio lines to the peers), so nothing an SDK
client drops or adds changes the figure. The measure is the ``result`` object as compact JSON
(UTF-8), the same for all three, and its tokens in tiktoken's ``cl100k_base``. No browser is
needed: the peers start theirs at the first tool call.

tiktoken fetches its ranks file at run time, which this machine cannot; the bpe-openai wheel
ships the same file, and tiktoken itself checks it against the SHA-256 it expects for
cl100k_base, so the counts are tiktoken's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import importlib.resources
import json
import os
import signal
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

from httpmcp import RawMcp
from peers import PEERS, Peer
from rig import AppHome, app_process, wait_for
from stats import Row, row, verdict

from tabrelay.config.settings import SettingsStore

PROTOCOL = "2025-11-25"
LIST_TIMEOUT = 180.0  # npx may fetch a peer first
SIDES = {
    "tabrelay": "Tabrelay (default)",
    "tabrelay-expert": "Tabrelay with browser_cdp on",
    "playwright": "Playwright MCP 0.0.83",
    "devtools": "chrome-devtools-mcp 1.11.0",
}


def compact(result: dict[str, Any]) -> str:
    return json.dumps(result, separators=(",", ":"), ensure_ascii=False)


def cl100k() -> Any:
    """tiktoken's cl100k_base encoding, its ranks read from the bpe-openai wheel's copy."""
    import bpe_openai.data
    import tiktoken
    import tiktoken_ext.openai_public as public
    from tiktoken.load import load_tiktoken_bpe

    packed = importlib.resources.files(bpe_openai.data) / "cl100k_base.tiktoken.gz"
    local = Path(tempfile.gettempdir()) / "tabrelay-bench-cl100k_base.tiktoken"
    if not local.exists():
        local.write_bytes(gzip.decompress(packed.read_bytes()))

    def ranks(_where: str, expected_hash: str | None = None) -> dict[bytes, int]:
        return load_tiktoken_bpe(str(local), expected_hash=expected_hash)  # checks the hash

    with mock.patch.object(public, "load_tiktoken_bpe", ranks):
        return tiktoken.Encoding(**public.cl100k_base())


async def tabrelay_lists(ctx: Any) -> dict[str, dict[str, Any]]:
    """Tabrelay's list on a fresh home, then after the person turned browser_cdp on."""
    home = AppHome.create(ctx.home / "app")
    found: dict[str, dict[str, Any]] = {}
    async with app_process(home, gui=False) as app:
        await app.wait_ready()
        async with RawMcp(home.mcp_port, home.token) as client:
            await client.initialize()
            found["tabrelay"] = await client.request("tools/list", {})
            SettingsStore(home.paths.settings_file).update(
                lambda s: setattr(s, "enable_cdp_tool", True)
            )

            async def expert_listed() -> bool:
                found["tabrelay-expert"] = await client.request("tools/list", {})
                return any(t["name"] == "browser_cdp" for t in found["tabrelay-expert"]["tools"])

            await wait_for(expert_listed, timeout=10, message="browser_cdp listed")
    return found


async def peer_list(peer: Peer, *, log_dir: Path) -> dict[str, Any]:
    """The peer's tools/list result over stdio, with nothing but JSON-RPC lines."""
    work = Path(tempfile.mkdtemp(prefix=f"tabrelay-bench-{peer.key}-", dir=log_dir))
    with (log_dir / f"{peer.key}-tools-list.log").open("ab") as errlog:
        process = await asyncio.create_subprocess_exec(
            "npx", *peer.argv(),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=errlog,
            env={**os.environ, **dict(peer.env)}, cwd=work, start_new_session=True,
            limit=16 * 1024 * 1024,
        )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    async def request(message_id: int, method: str, params: dict[str, Any]) -> Any:
        message = {"jsonrpc": "2.0", "id": message_id, "method": method, "params": params}
        stdin.write(json.dumps(message).encode() + b"\n")
        await stdin.drain()
        while True:
            line = await stdout.readline()
            if not line:
                raise RuntimeError(f"{peer.label} closed its output; see {errlog.name}")
            answer = json.loads(line)
            if answer.get("id") == message_id:
                return answer["result"]

    try:
        async with asyncio.timeout(LIST_TIMEOUT):
            await request(
                1, "initialize",
                {"protocolVersion": PROTOCOL, "capabilities": {},
                 "clientInfo": {"name": "tabrelay-bench", "version": "1"}},
            )  # fmt: skip
            stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            return await request(2, "tools/list", {})  # type: ignore[no-any-return]
    finally:
        stdin.close()  # a stdio MCP server ends with its input
        try:
            async with asyncio.timeout(5):
                await process.wait()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            await process.wait()


def portability(result: dict[str, Any]) -> dict[str, int]:
    """How many tools' input schemas use what OpenAI's strict mode or Gemini refuse or mangle:
    references, null unions, ``title``, ``default``, exclusive bounds, an open object."""
    counts = {"$ref": 0, "null": 0, "title": 0, "default": 0, "exclusive": 0}
    for tool in result["tools"]:
        text = json.dumps(tool.get("inputSchema", {}))
        counts["$ref"] += '"$ref"' in text
        counts["null"] += '"null"' in text
        counts["title"] += '"title"' in text
        counts["default"] += '"default"' in text
        counts["exclusive"] += '"exclusiveM' in text
    return counts


async def tools_list_benchmarks(ctx: Any) -> list[Row]:
    lists = await tabrelay_lists(ctx)
    for peer in PEERS:
        lists[peer.key] = await peer_list(peer, log_dir=ctx.log_dir)
    encoding = cl100k()
    rows: list[Row] = []
    for side, result in lists.items():
        text = compact(result)
        extra = {"group": "tools_list", "side": side}
        label = SIDES[side]
        rows += [
            row(f"tools/list {label}: tools", len(result["tools"]), "", stat="tools", **extra),
            row(f"tools/list {label}: bytes", len(text.encode()), "B", stat="bytes", **extra),
            row(f"tools/list {label}: tokens (cl100k)", len(encoding.encode(text)), "tokens",
                stat="tokens", **extra),
        ]  # fmt: skip
        for what, count in portability(result).items():
            rows.append(
                row(f"tools/list {label}: tools whose schema has {what}", count, "",
                    stat=f"has {what}", **extra)
            )  # fmt: skip
    ours = len(compact(lists["tabrelay"]).encode())
    theirs = len(compact(lists["playwright"]).encode())
    rows.append(
        verdict(
            "tools/list bytes ≤ Playwright MCP's (default tools)", ours, "B", theirs,
            target=f"≤ {theirs:,} B (Playwright MCP)",
        )
    )  # fmt: skip
    return rows


def tools_list_tables(rows: list[Row]) -> list[str]:
    """docs/benchmarks.md's table of the tool lists (report.py calls this)."""
    found = [r for r in rows if r.get("group") == "tools_list"]
    if not found:
        return []
    stats = ["tools", "bytes", "tokens", "has $ref", "has null", "has title", "has default"]
    lines = ["| side | " + " | ".join(stats) + " |", "|---" * (len(stats) + 1) + "|"]
    for side, label in SIDES.items():
        cells = []
        for stat in stats:
            match = [r for r in found if r["side"] == side and r["stat"] == stat]
            cells.append(f"{match[0]['value']:,.0f}" if match else "–")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return ["### tools/list, bytes and tokens (cl100k) a client reads\n", "\n".join(lines) + "\n"]
