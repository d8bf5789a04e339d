"""The MCP endpoint with the real SDK client over Streamable HTTP and HTTP+SSE.

The browser here is the scripted extension (a simulated browser); tests/e2e runs the same
tools against real Chromium. What these check is the endpoint's own behaviour: the catalog,
results and errors, approvals and the command log, resources and notifications, progress and
cancellation.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from support.harness import RelayHarness, ScriptedToolApprover, running_core
from support.mcp import mcp_client, text_of, unfenced
from tabrelay.approval.gate import ApprovalRequest, Choice
from tabrelay.config.paths import Paths
from tabrelay.config.settings import PolicyRule, SettingsStore
from tabrelay.core import NOTIFY_DELAY

TRANSPORTS = ["http", "sse"]


@pytest.fixture
async def app(home: Paths) -> AsyncIterator[RelayHarness]:
    async with running_core(home) as harness:
        await harness.extension()
        await harness.browser_count(1)
        yield harness


async def rows(harness: RelayHarness) -> list[Any]:
    assert harness.core.command_log is not None
    return list(reversed(await asyncio.to_thread(harness.core.command_log.recent, 100)))


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_catalog_is_listed_with_schemas_and_hints(
    app: RelayHarness, transport: str
) -> None:
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token, transport=transport) as client:  # type: ignore[arg-type]
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {
        "browser_status",
        "browser_list_tabs",
        "browser_new_tab",
        "browser_close_tab",
        "browser_activate_tab",
        "browser_navigate",
        "browser_evaluate",
        "browser_screenshot",
        "browser_get_content",
    } <= set(tools)
    assert not [n for n in tools if "policy" in n or "approv" in n or "pair" in n or "token" in n]
    assert tools["browser_list_tabs"].annotations.read_only_hint is True
    assert tools["browser_close_tab"].annotations.destructive_hint is True
    navigate = tools["browser_navigate"].input_schema
    assert navigate["additionalProperties"] is False
    assert "description" in navigate["properties"]["url"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_read_only_tools_run_without_asking_and_are_logged(
    app: RelayHarness, transport: str
) -> None:
    token = await app.add_client("cursor")
    async with mcp_client(app.base_mcp(), token, transport=transport, name="Cursor") as client:  # type: ignore[arg-type]
        status = await client.call_tool("browser_status", {})
        tabs = await client.call_tool("browser_list_tabs", {})
    assert not status.is_error and "1 browser(s) connected" in text_of(status)
    assert not tabs.is_error
    assert "[1] Example — https://example.com/  (active)" in text_of(tabs)
    assert [t["id"] for t in tabs.structured_content["tabs"]] == [1, 2]
    assert app.tool_approver.requests == []
    logged = await rows(app)
    assert [(r.client, r.tool, r.status) for r in logged] == [
        ("cursor", "browser_status", "ok"),
        ("cursor", "browser_list_tabs", "ok"),
    ]
    assert logged[1].decision == "allowed by default (allow)"
    assert logged[1].result_bytes > 0


async def test_an_acting_tool_asks_shows_the_real_origin_and_changes_the_page(
    app: RelayHarness,
) -> None:
    token = await app.add_client()
    extension = app.extensions[0]
    async with mcp_client(app.base_mcp(), token, name="Claude") as client:
        result = await client.call_tool(
            "browser_navigate", {"url": "https://example.org/next", "tab_id": 1}
        )
    assert not result.is_error, text_of(result)
    assert "https://example.org/next" in text_of(result)
    assert extension.tabs[1]["url"] == "https://example.org/next"
    [request] = app.tool_approver.requests
    assert request.tool == "browser_navigate"
    assert request.origin == "https://example.com"  # where the tab was, as the browser said
    assert request.client == "test-agent" and request.client_reported == "Claude 1.0"
    assert request.arguments == {"url": "https://example.org/next", "tab_id": 1}
    [row] = await rows(app)
    assert (row.tool, row.tab_id, row.origin, row.decision, row.status) == (
        "browser_navigate",
        1,
        "https://example.com",
        "approved once by the person",
        "ok",
    )


async def test_a_denied_call_leaves_the_page_untouched_and_says_so(home: Paths) -> None:
    async with running_core(home, tool_approver=ScriptedToolApprover(Choice.DENY)) as app:
        extension = await app.extension()
        await app.browser_count(1)
        token = await app.add_client()
        async with mcp_client(app.base_mcp(), token) as client:
            result = await client.call_tool("browser_navigate", {"url": "https://evil.test/"})
        assert result.is_error
        assert text_of(result) == "denied by the person: they did not allow browser_navigate"
        assert extension.tabs[1]["url"] == "https://example.com/"
        assert not [c for c in extension.cdp_calls if c[1] == "Page.navigate"]
        [row] = await rows(app)
        assert (row.status, row.decision) == ("denied", "denied by the person")
        assert "denied by the person" in (row.error or "")


async def test_headless_ask_is_refused_with_how_to_allow_it(home: Paths) -> None:
    async with running_core(home) as app:
        app.core.gate.approver = None
        await app.extension()
        await app.browser_count(1)
        token = await app.add_client()
        async with mcp_client(app.base_mcp(), token) as client:
            result = await client.call_tool("browser_evaluate", {"expression": "1+1"})
        assert result.is_error
        assert "running headless" in text_of(result)
        assert "tabrelay policy set browser_evaluate allow --site https://example.com" in text_of(
            result
        )


async def test_a_page_that_moves_to_another_site_after_approval_aborts_the_call(
    app: RelayHarness,
) -> None:
    extension = app.extensions[0]

    async def navigate_away(request: ApprovalRequest) -> None:
        extension.tabs[1]["url"] = "https://bank.example/transfer"

    app.tool_approver.while_deciding = navigate_away
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token) as client:
        result = await client.call_tool(
            "browser_evaluate", {"expression": "document.forms[0].submit()"}
        )
    assert result.is_error
    assert "changed from 'https://example.com' to 'https://bank.example'" in text_of(result)
    assert not [c for c in extension.cdp_calls if c[1] == "Runtime.evaluate"]
    [row] = await rows(app)
    assert row.status == "error" and row.origin == "https://example.com"


async def test_rules_decide_before_asking(app: RelayHarness) -> None:
    store = SettingsStore(app.paths.settings_file)
    store.update(
        lambda s: s.policy_rules.extend(
            [
                PolicyRule(tool="browser_evaluate", decision="allow", site="https://example.com"),
                PolicyRule(tool="browser_navigate", decision="deny"),
            ]
        )
    )
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token) as client:
        allowed = await client.call_tool("browser_evaluate", {"expression": "1+1"})
        denied = await client.call_tool("browser_navigate", {"url": "https://example.org/"})
        other_site = await client.call_tool("browser_evaluate", {"expression": "2", "tab_id": 2})
    assert text_of(allowed) == '"evaluated 1+1"'
    assert text_of(denied).startswith("denied by a rule (deny browser_navigate)")
    assert not other_site.is_error
    assert [r.tool for r in app.tool_approver.requests] == ["browser_evaluate"]  # only tab 2
    assert app.tool_approver.requests[0].origin == "https://example.org"


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "javascript:alert(document.cookie)",
        "data:text/html,<script>alert(1)</script>",
        "chrome://settings",
        "view-source:https://example.com/",
    ],
)
async def test_dangerous_urls_are_refused_before_any_browser_command(
    app: RelayHarness, url: str
) -> None:
    token = await app.add_client()
    extension = app.extensions[0]
    async with mcp_client(app.base_mcp(), token) as client:
        navigate = await client.call_tool("browser_navigate", {"url": url})
        new_tab = await client.call_tool("browser_new_tab", {"url": url})
    assert navigate.is_error and "URLs are refused" in text_of(navigate)
    assert new_tab.is_error and "URLs are refused" in text_of(new_tab)
    assert not [c for c in extension.cdp_calls if c[1] == "Page.navigate"]
    assert len(extension.tabs) == 2


async def test_tabrelay_own_ports_are_refused(app: RelayHarness) -> None:
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token) as client:
        for url in (
            f"http://127.0.0.1:{app.port}/api/browser-relay/config",
            f"http://localhost:{app.mcp_port}/mcp",
        ):
            result = await client.call_tool("browser_navigate", {"url": url})
            assert result.is_error and "Tabrelay itself" in text_of(result)


async def test_new_tab_opens_in_the_tabrelay_group_and_loads(app: RelayHarness) -> None:
    token = await app.add_client()
    extension = app.extensions[0]
    async with mcp_client(app.base_mcp(), token) as client:
        result = await client.call_tool("browser_new_tab", {"url": "https://example.net/"})
        closed = await client.call_tool("browser_close_tab", {"tab_id": 3})
        gone = await client.call_tool("browser_activate_tab", {"tab_id": 3})
    assert not result.is_error, text_of(result)
    assert result.structured_content["tab_id"] == 3
    assert [c["method"] for c in extension.commands][:2] == ["tabs.create", "tabs.group"]
    assert not closed.is_error and 3 not in extension.tabs
    assert gone.is_error and "tab 3 does not exist" in text_of(gone)


async def test_back_forward_and_reload(app: RelayHarness) -> None:
    token = await app.add_client()
    extension = app.extensions[0]
    async with mcp_client(app.base_mcp(), token) as client:
        await client.call_tool("browser_navigate", {"url": "https://example.com/a"})
        forward = await client.call_tool("browser_navigate", {"action": "forward"})
        back = await client.call_tool("browser_navigate", {"action": "back"})
        assert extension.tabs[1]["url"] == "https://example.com/"
        reload = await client.call_tool("browser_navigate", {"action": "reload"})
        both = await client.call_tool(
            "browser_navigate", {"url": "https://x.test/", "action": "back"}
        )
    assert forward.is_error and "there is no next page" in text_of(forward)
    assert not back.is_error, text_of(back)
    assert not reload.is_error
    assert both.is_error and "either 'url' or 'action'" in text_of(both)


async def test_bad_arguments_get_a_clear_error_naming_the_field(app: RelayHarness) -> None:
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token) as client:
        typo = await client.call_tool("browser_evaluate", {"expresion": "1"})
        wrong_type = await client.call_tool("browser_close_tab", {"tab_id": "one"})
        unknown = await client.call_tool("browser_teleport", {})
        no_browser = await client.call_tool("browser_list_tabs", {"browser": "nope"})
    assert typo.is_error and "expresion: Extra inputs are not permitted" in text_of(typo)
    assert wrong_type.is_error and "tab_id" in text_of(wrong_type)
    assert unknown.is_error and "unknown tool 'browser_teleport'" in text_of(unknown)
    assert no_browser.is_error and "no browser with id 'nope'" in text_of(no_browser)


async def test_screenshots_come_back_as_images(app: RelayHarness) -> None:
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token) as client:
        result = await client.call_tool("browser_screenshot", {"format": "png"})
    assert not result.is_error
    image = result.content[1]
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data).startswith(b"\x89PNG")


async def test_no_browser_connected_says_what_to_do(home: Paths) -> None:
    async with running_core(home) as app:
        token = await app.add_client()
        async with mcp_client(app.base_mcp(), token) as client:
            result = await client.call_tool("browser_list_tabs", {})
            status = await client.call_tool("browser_status", {})
    assert result.is_error
    assert text_of(result) == (
        "no browser connected: open Chrome with the Tabrelay extension and pair it"
    )
    assert "No browser is connected" in text_of(status)


async def test_progress_is_reported_and_cancellation_stops_a_waiting_call(
    app: RelayHarness,
) -> None:
    extension = app.extensions[0]
    extension.emit_load_events = False  # the page never finishes loading
    token = await app.add_client()
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async with mcp_client(app.base_mcp(), token) as client:
        call = asyncio.create_task(
            client.call_tool(
                "browser_navigate", {"url": "https://slow.test/"}, progress_callback=on_progress
            )
        )
        async with asyncio.timeout(10):  # the wait for the person first, then the tool's
            while not any(message == "waiting for load" for _, _, message in progress):
                await asyncio.sleep(0.01)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        async with asyncio.timeout(5):
            while not (logged := await rows(app)):
                await asyncio.sleep(0.02)
    assert "waiting for the person" in str(progress[0][2])
    assert progress[-1][2] == "waiting for load"
    assert logged[0].status == "cancelled"


async def test_cancelling_a_call_withdraws_its_pending_approval(home: Paths) -> None:
    approver = ScriptedToolApprover(answer=None)
    async with running_core(home, tool_approver=approver) as app:
        await app.extension()
        await app.browser_count(1)
        token = await app.add_client()
        async with mcp_client(app.base_mcp(), token) as client:
            call = asyncio.create_task(client.call_tool("browser_evaluate", {"expression": "1"}))
            async with asyncio.timeout(10):
                while not app.core.gate.pending:
                    await asyncio.sleep(0.01)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            async with asyncio.timeout(5):
                while app.core.gate.pending or not approver.withdrawn:
                    await asyncio.sleep(0.01)
        assert [r.tool for r in approver.withdrawn] == ["browser_evaluate"]


async def test_resources_list_and_read_tabs(app: RelayHarness) -> None:
    token = await app.add_client()

    async def page_html(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        # The simulated browser cannot run the page script; it answers what a page would.
        html = "<h1>Example Domain</h1><p>For use in examples.</p>"
        return {"result": {"type": "object", "value": {"html": html, "title": "Example"}}}

    async def frames(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        return {"frameTree": {"frame": {"id": "main", "url": "https://example.com/"}}}

    async def world(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        return {"executionContextId": 7}

    async def no_editors(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        return {"result": {"type": "object", "subtype": "null", "value": None}}

    handlers = app.extensions[0].cdp_handlers
    handlers["Page.getFrameTree"], handlers["Page.createIsolatedWorld"] = frames, world
    handlers["Runtime.evaluate"], handlers["Runtime.callFunctionOn"] = no_editors, page_html
    async with mcp_client(app.base_mcp(), token) as client:
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        tabs = json.loads((await client.read_resource("tabrelay://tabs")).contents[0].text)
        browser = tabs[0]["browser"]
        read = await client.read_resource(f"tabrelay://tab/{browser}/1")
        page = unfenced(read.contents[0].text)
    assert [str(r.uri) for r in resources] == ["tabrelay://tabs"]
    assert [t.uri_template for t in templates] == ["tabrelay://tab/{browser}/{tab_id}"]
    assert [(t["id"], t["url"]) for t in tabs] == [
        (1, "https://example.com/"),
        (2, "https://example.org/news"),
    ]
    assert page.startswith("# Example\nhttps://example.com/")
    assert "# Example Domain\n\nFor use in examples." in page


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_clients_hear_when_the_tab_list_changes(app: RelayHarness, mode: str) -> None:
    token = await app.add_client()
    heard = asyncio.Event()

    async def on_message(message: Any) -> None:
        if "ResourceListChanged" in type(getattr(message, "root", message)).__name__:
            heard.set()

    extension = app.extensions[0]
    async with mcp_client(app.base_mcp(), token, mode=mode, message_handler=on_message) as client:
        if mode == "legacy":
            await client.list_resources()
            await extension.send(
                {
                    "type": "tab_event",
                    "event": "created",
                    "tab": {"id": 9, "url": "https://new.test/"},
                }
            )
            async with asyncio.timeout(5):
                await heard.wait()
        else:
            async with client.listen(resources_list_changed=True) as events:
                await extension.send(
                    {
                        "type": "tab_event",
                        "event": "created",
                        "tab": {"id": 9, "url": "https://new.test/"},
                    }
                )
                async with asyncio.timeout(5):
                    event = await anext(aiter(events))
                assert type(event).__name__ == "ResourcesListChanged"


async def test_a_stopping_app_announces_nothing_after_it_stopped(home: Paths) -> None:
    announced: list[float] = []
    async with running_core(home) as app:
        endpoint = app.core.endpoint
        assert endpoint is not None

        async def record() -> None:
            announced.append(asyncio.get_running_loop().time())

        endpoint.resources_changed = record  # type: ignore[method-assign]
        await app.extension()
        await app.browser_count(1)
        async with asyncio.timeout(5):
            while not announced:  # the connection's own notification
                await asyncio.sleep(0.01)
        announced.clear()
    await asyncio.sleep(NOTIFY_DELAY * 3)  # stopping disconnected the browser: a change
    assert announced == []
    assert not [t for t in asyncio.all_tasks() if "resources_changed" in repr(t.get_coro())]


async def test_with_only_shared_tabs_in_scope_other_tabs_are_not_even_listed(
    app: RelayHarness,
) -> None:
    extension = app.extensions[0]
    extension.tabs[2]["shared"] = True  # the person shared tab 2 from the popup
    await asyncio.to_thread(
        app.core.settings_store.update, lambda s: setattr(s, "tab_scope", "shared")
    )
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token) as client:
        listed = await client.call_tool("browser_list_tabs", {})
        hidden = await client.call_tool("browser_get_content", {"tab_id": 1})
        opened = await client.call_tool("browser_new_tab", {"url": "https://agent.example/"})
        again = await client.call_tool("browser_list_tabs", {})
    assert [t["id"] for t in listed.structured_content["tabs"]] == [2]
    assert hidden.is_error and "does not exist or is not shared" in text_of(hidden)
    new_id = opened.structured_content["tab_id"]
    assert [t["id"] for t in again.structured_content["tabs"]] == [2, new_id]


async def test_the_log_says_how_each_call_was_denied_and_activity_is_counted(
    app: RelayHarness,
) -> None:
    assert app.core.runner is not None
    counts: list[int] = []
    app.core.runner.add_activity_listener(counts.append)
    store = app.core.settings_store
    await asyncio.to_thread(
        store.update,
        lambda s: s.policy_rules.append(PolicyRule(tool="browser_navigate", decision="deny")),
    )
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token) as client:
        await client.call_tool("browser_navigate", {"url": "https://example.org/"})
        app.core.gate.set_paused(True)
        await client.call_tool("browser_list_tabs", {})
        app.core.gate.set_paused(False)
    by_rule, paused = await rows(app)
    assert by_rule.decision == "denied by deny browser_navigate"
    assert paused.decision == "denied: agent access paused"
    assert counts == [1, 0, 1, 0]
    assert app.core.runner.active_calls == 0
