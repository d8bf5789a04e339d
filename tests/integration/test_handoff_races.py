"""browser_handoff when the person closes the tab before its banner is in: the handoff ends as
"tab closed", the answer an agent gets when the tab goes later (not an error about page code),
and nothing of it stays open. A real core and relay, a scripted extension, a real MCP client."""

from __future__ import annotations

from typing import Any

from support.fake_extension import ExtensionError
from support.harness import allow_everything, running_core
from support.mcp import mcp_client, text_of
from tabrelay.config.paths import Paths


async def test_a_tab_closed_while_the_banner_goes_in_ends_the_handoff_as_closed(
    home: Paths,
) -> None:
    allow_everything(home)
    async with running_core(home) as app:
        extension = await app.extension()
        await app.browser_count(1)

        async def closed_meanwhile(tab_id: int, args: dict[str, Any]) -> Any:
            await extension._tabs_close({"tabId": tab_id})  # the person closes it
            raise ExtensionError(
                f"Tab {tab_id} was closed while Page.addScriptToEvaluateOnNewDocument was running",
                code="no_tab",
            )

        extension.cdp_handlers["Page.addScriptToEvaluateOnNewDocument"] = closed_meanwhile
        token = await app.add_client()
        async with mcp_client(app.base_mcp(), token) as client:
            result = await client.call_tool(
                "browser_handoff", {"tab_id": 1, "reason": "sign in", "timeout": 30}
            )
        assert not result.is_error, text_of(result)
        data = dict(result.structured_content or {})
        assert (data["outcome"], data["ended_by"]) == ("tab closed", "browser")
        assert app.core.handoffs.open() == []


async def test_a_banner_that_cannot_go_into_an_open_tab_is_still_an_error(home: Paths) -> None:
    allow_everything(home)
    async with running_core(home) as app:
        extension = await app.extension()
        await app.browser_count(1)

        async def refused(tab_id: int, args: dict[str, Any]) -> Any:
            raise ExtensionError("Cannot access contents of the page", code="cdp")

        extension.cdp_handlers["Page.addScriptToEvaluateOnNewDocument"] = refused
        token = await app.add_client()
        async with mcp_client(app.base_mcp(), token) as client:
            result = await client.call_tool(
                "browser_handoff", {"tab_id": 1, "reason": "sign in", "timeout": 30}
            )
        assert result.is_error
        assert "could not put Tabrelay's page code in tab 1" in text_of(result)
        assert app.core.handoffs.open() == []
