"""Cancellation against the relay: a cancelled call leaves nothing behind and never freezes the
loop (the scripted extension holds the input commands; real pages are the e2e suite's)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from typing import Any

from support.fake_extension import EXTENSION_ID, FakeExtension
from support.harness import RelayHarness
from support.mcp import mcp_client
from support.watchdog import LoopWatch
from tabrelay.config.paths import Paths
from tabrelay.config.settings import PolicyRule
from tabrelay.endpoint.calls import Caller
from tabrelay.tools.catalog import BY_NAME


async def no_progress(done: float, total: float | None, message: str | None) -> None:
    pass


def nothing_focused(extension: FakeExtension) -> None:
    """The scripted page has nothing focused, in its own world and in Tabrelay's, where a key
    with no target is checked before it is pressed (``refs.focus_kept``)."""

    async def frame_tree(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        frame = {"id": "main", "loaderId": "loader-1", "url": extension.tabs[tab_id]["url"]}
        return {"frameTree": {"frame": frame}}

    async def world(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        return {"executionContextId": 7}

    async def evaluate(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        expression = str(args.get("expression", ""))
        if ":focus" not in expression:
            return {"result": {"type": "string", "value": f"evaluated {expression}"}}
        if "contextId" in args:  # Tabrelay's world: is nothing focused?
            return {"result": {"type": "boolean", "value": True}}
        return {"result": {"type": "object", "subtype": "null", "value": None}}

    extension.cdp_handlers.update(
        {
            "Page.getFrameTree": frame_tree,
            "Page.createIsolatedWorld": world,
            "Runtime.evaluate": evaluate,
        }
    )


async def test_cancelling_a_key_press_that_waits_for_its_answer_keeps_the_loop_turning(
    relay: RelayHarness,
) -> None:
    extension = await relay.extension()
    await relay.browser_count(1)
    pressed = asyncio.Event()

    async def held(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        if args.get("type") in ("keyDown", "rawKeyDown"):
            pressed.set()
            await asyncio.Event().wait()  # a page handler stuck in its keydown listener
        return {}

    extension.cdp_handlers["Input.dispatchKeyEvent"] = held
    nothing_focused(extension)
    runner = relay.core.runner
    assert runner is not None
    subscribers = relay.core.hub.subscriber_count
    async with LoopWatch() as watch:
        call = asyncio.create_task(
            runner.call(BY_NAME["browser_press_key"], {"key": "Enter"}, Caller("t"), no_progress)
        )
        await asyncio.wait_for(pressed.wait(), 5)
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        for _ in range(20):  # a few turns of the loop: anything left spinning shows as a gap
            await asyncio.sleep(0.01)
    assert not watch.frozen, "the loop froze after the cancel"
    assert watch.max_gap_ms < 100
    assert relay.core.hub.subscriber_count == subscribers
    browser = relay.core.registry.resolve(None)
    assert browser.pending_count == 0
    assert runner.active_calls == 0


async def test_sigterm_stops_the_app_within_five_seconds_with_a_browser_and_a_call_in_flight(
    home: Paths,
) -> None:
    env = {**os.environ, "TABRELAY_HOME": str(home.config_dir.parent)}
    added = await _cli(env, "pair", "add", EXTENSION_ID)
    credential = re.search(r"\n  (\S{43})\n", added)
    client = re.search(r"\n  (\S{43})\n", await _cli(env, "client", "add", "agent"))
    assert credential and client
    serve = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tabrelay", "serve", "--relay-port", "0", "--mcp-port", "0",
        env=env, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert serve.stderr is not None
        async with asyncio.timeout(30):
            while not (ports := _PORTS.search((await serve.stderr.readline()).decode())):
                pass
        extension = FakeExtension(int(ports["relay"]), credential.group(1))
        await extension.connect()
        async with mcp_client(f"http://127.0.0.1:{ports['mcp']}", client.group(1)) as agent:
            waiting = asyncio.create_task(agent.call_tool("browser_wait_for", {"seconds": 30}))
            async with asyncio.timeout(10):  # the call runs: it prepared the tab
                while not any(m == "Fetch.enable" for _, m, _ in extension.cdp_calls):
                    await asyncio.sleep(0.02)
            started = time.monotonic()
            serve.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(serve.wait(), 10)
            stopped = time.monotonic() - started
            waiting.cancel()
            await asyncio.gather(waiting, return_exceptions=True)
        await extension.close()
    finally:
        if serve.returncode is None:
            serve.kill()
            await serve.wait()
    assert code == 0
    assert stopped < 5.0, f"stopped {stopped:.1f} s after SIGTERM"


_PORTS = re.compile(
    r"relay on ws://127\.0\.0\.1:(?P<relay>\d+)/.*MCP on http://127\.0\.0\.1:(?P<mcp>\d+)/"
)


async def _cli(env: dict[str, str], *args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tabrelay", *args, env=env, stdout=subprocess.PIPE
    )
    out, _ = await process.communicate()
    assert process.returncode == 0
    return out.decode()


async def test_a_client_cancelling_a_call_that_holds_a_key_gets_the_key_let_go(
    relay: RelayHarness,
) -> None:
    """As the MCP SDK cancels a handler (a cancel scope that cancels every await after it):
    the release must still reach the page."""
    await asyncio.to_thread(
        relay.core.settings_store.update,
        lambda s: s.policy_rules.append(PolicyRule(tool="*", decision="allow")),
    )
    extension = await relay.extension()
    await relay.browser_count(1)
    pressed = asyncio.Event()

    async def stuck_on_the_key(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        if args.get("type") == "rawKeyDown" and args.get("key") == "a":
            pressed.set()
            await asyncio.Event().wait()  # the page's keydown handler never returns
        return {}

    extension.cdp_handlers["Input.dispatchKeyEvent"] = stuck_on_the_key
    nothing_focused(extension)
    token = await relay.add_client()
    async with mcp_client(relay.base_mcp(), token) as client:
        call = asyncio.create_task(client.call_tool("browser_press_key", {"key": "Control+a"}))
        await asyncio.wait_for(pressed.wait(), 5)
        call.cancel()  # the client sends notifications/cancelled
        await asyncio.gather(call, return_exceptions=True)

        def released() -> set[str]:
            return {
                str(args.get("key"))
                for _, method, args in extension.cdp_calls
                if method == "Input.dispatchKeyEvent" and args.get("type") == "keyUp"
            }

        async with asyncio.timeout(5):
            while released() != {"a", "Control"}:
                await asyncio.sleep(0.02)
