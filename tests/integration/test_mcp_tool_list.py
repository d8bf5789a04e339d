"""The tool list over the wire: what the budget counts, browser_cdp only while the person has it
on (with list-changed notifications), and arguments refused with clear errors now that the
schemas no longer advertise null.

Real MCP SDK clients (and a raw HTTP exchange for the exact bytes) against a running core with
the scripted extension.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest

from support.harness import RelayHarness, running_core
from support.mcp import INITIALIZE, JSON_HEADERS, PROTOCOL, mcp_client, text_of
from tabrelay.config.paths import Paths
from tabrelay.config.settings import PolicyRule, Settings, SettingsStore
from tabrelay.endpoint.server import listed_json


@pytest.fixture
async def app(home: Paths) -> AsyncIterator[RelayHarness]:
    async with running_core(home) as harness:
        await harness.extension()
        await harness.browser_count(1)
        yield harness


async def raw_tools_list(app: RelayHarness, token: str) -> dict[str, Any]:
    """tools/list as a 2025-11-25 client reads it off the wire, below any SDK."""
    url = f"{app.base_mcp()}/mcp"
    headers = {**JSON_HEADERS, "Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers) as http:
        opened = await http.post(url, json=INITIALIZE)
        session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
        session["Mcp-Protocol-Version"] = PROTOCOL
        await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                        headers=session)  # fmt: skip
        reply = await http.post(
            url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=session
        )
    body = reply.text
    if reply.headers["content-type"].startswith("text/event-stream"):
        body = next(line[5:] for line in body.splitlines() if line.startswith("data:"))
    result: dict[str, Any] = json.loads(body)["result"]
    return result


async def test_the_wire_carries_exactly_the_list_the_budget_counts(app: RelayHarness) -> None:
    token = await app.add_client()
    result = await raw_tools_list(app, token)
    counted = listed_json(Settings())
    assert result == json.loads(counted)  # the same, keys perhaps in another order
    assert len(json.dumps(result, separators=(",", ":"), ensure_ascii=False)) == len(counted)
    assert "browser_cdp" not in {t["name"] for t in result["tools"]}


async def test_browser_cdp_is_not_listed_nor_callable_on_a_fresh_home(app: RelayHarness) -> None:
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool("browser_cdp", {"method": "Page.reload"})
    assert "browser_cdp" not in names and "browser_evaluate" in names
    assert result.is_error
    assert text_of(result) == (
        "browser_cdp is turned off; the person can enable it in Tabrelay's settings"
    )
    assert app.tool_approver.requests == []  # nobody is asked about a tool that is off
    assert not [c for c in app.extensions[0].cdp_calls if c[1] == "Page.reload"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_clients_hear_when_the_person_turns_browser_cdp_on_and_off(
    app: RelayHarness, mode: str
) -> None:
    token = await app.add_client()
    heard: asyncio.Queue[str] = asyncio.Queue()

    async def on_message(message: Any) -> None:
        kind = type(getattr(message, "root", message)).__name__
        if "ToolListChanged" in kind:
            heard.put_nowait(kind)

    # Another process (the settings dialog, an edited file) changes the setting.
    store = SettingsStore(app.paths.settings_file)

    def switch(on: bool) -> None:
        store.update(lambda s: setattr(s, "enable_cdp_tool", on))

    async with mcp_client(app.base_mcp(), token, mode=mode, message_handler=on_message) as client:

        async def names() -> set[str]:
            return {t.name for t in (await client.list_tools()).tools}

        assert "browser_cdp" not in await names()
        for on in (True, False):
            if mode == "legacy":
                await asyncio.to_thread(switch, on)
                async with asyncio.timeout(5):
                    await heard.get()
            else:
                async with client.listen(tools_list_changed=True) as events:
                    await asyncio.to_thread(switch, on)
                    async with asyncio.timeout(5):
                        event = await anext(aiter(events))
                    assert type(event).__name__ == "ToolsListChanged"
            assert ("browser_cdp" in await names()) is on
        # A change that lists nothing new is not announced.
        while not heard.empty():
            heard.get_nowait()  # the modern stream's events reach the message handler too
        rule = PolicyRule(tool="browser_snapshot", decision="allow")
        async with contextlib.AsyncExitStack() as stack:
            if mode != "legacy":
                await stack.enter_async_context(client.listen(tools_list_changed=True))
            await asyncio.to_thread(store.update, lambda s: s.policy_rules.append(rule))
            async with asyncio.timeout(5):
                while rule not in app.core.settings_store.current.policy_rules:
                    await asyncio.sleep(0.01)  # the core read the file and applied it
            await client.list_tools()  # a round trip after it: a notification would be first
        assert heard.empty()


async def test_the_expert_tool_takes_its_free_form_params_as_json_text(
    app: RelayHarness,
) -> None:
    def expert(settings: Settings) -> None:
        settings.enable_cdp_tool = True
        settings.policy_rules.append(PolicyRule(tool="*", decision="allow"))

    await asyncio.to_thread(app.core.settings_store.update, expert)
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        as_text = await client.call_tool(
            "browser_cdp",
            {"method": "Input.insertText", "params": '{"text": "hunter2-json"}', "tab_id": 1},
        )
        not_an_object = await client.call_tool(
            "browser_cdp", {"method": "Page.reload", "params": "[1, 2]", "tab_id": 1}
        )
    assert tools["browser_cdp"].input_schema["properties"]["params"]["type"] == "string"
    assert not as_text.is_error, text_of(as_text)
    calls = app.extensions[0].cdp_calls
    assert [p for _, m, p in calls if m == "Input.insertText"] == [{"text": "hunter2-json"}]
    assert not_an_object.is_error
    assert text_of(not_an_object) == (
        "invalid arguments for browser_cdp: params: Input should be a valid dictionary"
    )
    assert app.core.command_log is not None
    logged = " ".join(r.arguments for r in app.core.command_log.recent(10))
    assert "hunter2-json" not in logged  # decoded before the log's redaction saw it


async def test_null_missing_and_wrong_types_are_refused_clearly_and_change_nothing(
    app: RelayHarness,
) -> None:
    extension = app.extensions[0]
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token) as client:
        null_text = await client.call_tool("browser_type", {"ref": "e1", "text": None})
        no_text = await client.call_tool("browser_type", {"ref": "e1"})
        word_for_id = await client.call_tool("browser_close_tab", {"tab_id": "one"})
        null_id = await client.call_tool("browser_close_tab", {"tab_id": None})
        listed = await client.call_tool("browser_list_tabs", {"browser": None})
        navigated = await client.call_tool(
            "browser_navigate",
            {"url": "https://example.org/", "tab_id": None, "wait_until": None, "timeout": None},
        )
    assert text_of(null_text) == (
        "invalid arguments for browser_type: text: Input should be a valid string"
    )
    assert text_of(no_text) == "invalid arguments for browser_type: text: Field required"
    assert text_of(word_for_id) == (
        "invalid arguments for browser_close_tab: tab_id: Input should be a valid integer, "
        "unable to parse string as an integer"
    )
    assert text_of(null_id) == (
        "invalid arguments for browser_close_tab: tab_id: Input should be a valid integer"
    )
    assert all(r.is_error for r in (null_text, no_text, word_for_id, null_id))
    assert set(extension.tabs) == {1, 2}  # nothing typed, nothing closed
    assert not [c for c in extension.cdp_calls if c[1].startswith("Input.")]
    # null for an optional argument is the same as leaving it out
    assert not listed.is_error and [t["id"] for t in listed.structured_content["tabs"]] == [1, 2]
    assert not navigated.is_error, text_of(navigated)
    assert extension.tabs[1]["url"] == "https://example.org/"
    assert app.core.command_log is not None
    statuses = [r.status for r in reversed(app.core.command_log.recent(10))]
    assert statuses == ["error"] * 4 + ["ok"] * 2  # every call logged, the refused ones too
