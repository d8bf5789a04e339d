"""The guard in frames of other processes (``interception._guard_frame``): a frame Chrome
attaches a guarded tab to gets its document loads held in its own session, and is asked to
attach to the frames inside it; anything else Chrome might attach (a worker) is left alone. A
real core and relay, a scripted extension, a real MCP client."""

from __future__ import annotations

import asyncio
from typing import Any

from support.harness import allow_everything, running_core
from support.mcp import mcp_client, text_of
from tabrelay.config.paths import Paths
from tabrelay.tools.state.tab_state import AUTO_ATTACH


def attached(session: str, kind: str) -> dict[str, Any]:
    return {
        "type": "cdp_event",
        "tabId": 1,
        "method": "Target.attachedToTarget",
        "params": {
            "sessionId": session,
            "targetInfo": {"targetId": f"T-{session}", "type": kind, "url": "https://pay.test/"},
            "waitingForDebugger": False,
        },
    }


async def test_a_frame_of_a_guarded_tab_is_guarded_in_its_session_and_a_worker_is_not(
    home: Paths,
) -> None:
    allow_everything(home)
    async with running_core(home) as app:
        extension = await app.extension()
        await app.browser_count(1)
        token = await app.add_client()
        async with mcp_client(app.base_mcp(), token) as client:
            result = await client.call_tool("browser_evaluate", {"expression": "1", "tab_id": 1})
            assert not result.is_error, text_of(result)  # an agent drives tab 1: guarded
        before = len(extension.commands)
        await extension.send(attached("worker-1", "service_worker"))
        await extension.send(attached("frame-1", "iframe"))
        for _ in range(100):
            sent = [c["params"] for c in extension.commands[before:] if c["method"] == "cdp.send"]
            if len(sent) >= 2:
                break
            await asyncio.sleep(0.02)
        assert [(p["method"], p.get("sessionId"), p.get("params")) for p in sent] == [
            ("Fetch.enable", "frame-1", {"patterns": [
                {"resourceType": "Document", "requestStage": "Request"}]}),
            ("Target.setAutoAttach", "frame-1", AUTO_ATTACH),
        ]  # fmt: skip
        state = app.core.tabs.get(app.core.registry.resolve().id, 1)
        assert state is not None and state.session.children == {"T-frame-1": "frame-1"}
        assert "frame-1" in state.session.auto_attached
