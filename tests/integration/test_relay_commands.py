"""Commands over a real relay socket: every seed method, concurrency, disconnects, timeouts."""

from __future__ import annotations

import asyncio
import time

import pytest

from support.fake_extension import OTHER_EXTENSION_ID, FakeExtension
from support.harness import RelayHarness
from support.mcp import mcp_client, text_of
from tabrelay.config.settings import PolicyRule, Settings
from tabrelay.errors import (
    BrowserDisconnected,
    CdpMethodBlocked,
    CommandFailed,
    CommandTimeout,
    NoBrowserError,
    TooManyPendingCommands,
)
from tabrelay.protocol.constants import ErrorCode


async def test_every_seed_method_round_trips_for_a_seed_extension(relay: RelayHarness) -> None:
    extension = await relay.extension(seed=True)
    await relay.browser_count(1)
    browser = relay.core.registry.resolve()
    assert browser.seed and browser.id.startswith("seed-")

    tabs = await browser.list_tabs()
    assert [t.url for t in tabs] == ["https://example.com/", "https://example.org/news"]
    created = await browser.create_tab("https://example.net/")
    assert created.url == "https://example.net/" and created.id == 3
    navigated = await browser.navigate(1, "https://example.com/next")
    assert navigated.url == "https://example.com/next"
    assert (await browser.screenshot()).startswith("data:image/png;base64,")
    await browser.attach(2)
    assert extension.attached == {2}
    result = await browser.cdp(2, "Runtime.evaluate", {"expression": "1+1"})
    assert result["result"]["value"] == "evaluated 1+1"
    await browser.detach(2)
    assert extension.attached == set()
    methods = [c["method"] for c in extension.commands]
    assert methods == [
        "tabs.list",
        "tabs.create",
        "tabs.navigate",
        "tabs.screenshot",
        "debugger.attach",
        "cdp.send",
        "debugger.detach",
    ]
    assert all(isinstance(c["id"], str) for c in extension.commands)


async def test_seed_extension_is_not_offered_extended_methods(relay: RelayHarness) -> None:
    extension = await relay.extension(seed=True)
    await relay.browser_count(1)
    with pytest.raises(CommandFailed, match=r"does not support tabs\.close") as failed:
        await relay.core.registry.resolve().close_tab(1)
    assert failed.value.code == ErrorCode.UNKNOWN_METHOD  # the protocol's code, as if it answered
    assert extension.commands == []


async def test_tabrelay_extension_gets_the_methods_it_announced(relay: RelayHarness) -> None:
    extension = await relay.extension()
    await relay.browser_count(1)
    browser = relay.core.registry.resolve()
    assert browser.name == "FakeChrome 1.0" and not browser.seed
    await browser.activate_tab(2)
    assert (await browser.get_tab(2)).active
    await browser.close_tab(2)
    assert 2 not in extension.tabs


async def test_two_hundred_concurrent_commands_answered_out_of_order(relay: RelayHarness) -> None:
    extension = await relay.extension()
    await relay.browser_count(1)
    browser = relay.core.registry.resolve()
    extension.hold_replies = True
    calls = [
        asyncio.create_task(browser.cdp(1, "Runtime.evaluate", {"expression": f"n{i}"}))
        for i in range(200)
    ]
    await extension.held_count(200)
    await extension.release_held(shuffle=True)
    results = await asyncio.gather(*calls)
    assert [r["result"]["value"] for r in results] == [f"evaluated n{i}" for i in range(200)]
    assert browser.pending_count == 0


async def test_disconnect_fails_a_thousand_pending_commands_within_100_ms(
    relay: RelayHarness,
) -> None:
    extension = await relay.extension()
    await relay.browser_count(1)
    browser = relay.core.registry.resolve()
    extension.hold_replies = True
    calls = [asyncio.create_task(browser.cdp(1, "Page.enable")) for _ in range(1000)]
    await extension.held_count(1000)
    tasks_before = len(asyncio.all_tasks())

    assert extension.connection is not None
    lost = asyncio.get_running_loop().create_future()
    relay.core.registry.add_listener(
        lambda change, _: (
            change == "disconnected" and not lost.done() and lost.set_result(time.perf_counter())
        )
    )
    extension.connection.transport.abort()  # the connection drops, as when a service worker dies
    failed_at: list[float] = []
    for call in calls:
        call.add_done_callback(lambda _: failed_at.append(time.perf_counter()))
    results = await asyncio.gather(*calls, return_exceptions=True)
    elapsed = max(failed_at) - await lost
    assert all(isinstance(r, BrowserDisconnected) for r in results)
    assert "disconnected" in str(results[0])
    assert elapsed < 0.1, f"pending commands took {elapsed * 1000:.0f} ms to fail after the drop"
    assert browser.pending_count == 0
    await relay.browser_count(0)
    assert len(asyncio.all_tasks()) <= tasks_before - 1000 + 1
    with pytest.raises(NoBrowserError, match="no browser connected"):
        relay.core.registry.resolve()


async def test_a_command_times_out_and_its_late_answer_is_dropped(relay: RelayHarness) -> None:
    extension = await relay.extension()
    await relay.browser_count(1)
    browser = relay.core.registry.resolve()
    extension.hold_replies = True
    with pytest.raises(CommandTimeout, match=r"did not answer cdp.send within 0.05 s"):
        await browser.cdp(1, "Page.enable", timeout=0.05)
    assert browser.pending_count == 0
    await extension.release_held()  # the late answer arrives and is ignored
    extension.hold_replies = False
    result = await browser.cdp(1, "Runtime.evaluate", {"expression": "after"})
    assert result["result"]["value"] == "evaluated after"


async def test_unknown_and_duplicate_answer_ids_are_dropped(relay: RelayHarness) -> None:
    extension = await relay.extension()
    await relay.browser_count(1)
    browser = relay.core.registry.resolve()
    await extension.send({"id": "999999", "result": {"forged": True}})
    first = await browser.cdp(1, "Runtime.evaluate", {"expression": "a"})
    await extension.send({"id": extension.commands[-1]["id"], "result": "duplicate"})
    second = await browser.cdp(1, "Runtime.evaluate", {"expression": "b"})
    assert first["result"]["value"] == "evaluated a"
    assert second["result"]["value"] == "evaluated b"
    assert extension.errors == []  # dropped quietly, not treated as an attack


async def test_pending_commands_are_bounded(relay: RelayHarness) -> None:
    extension = await relay.extension()
    await relay.browser_count(1)
    browser = relay.core.registry.resolve()
    browser._max_pending = 5  # the default (4096) is the same code path, only slower to fill
    extension.hold_replies = True
    calls = [asyncio.create_task(browser.cdp(1, "Page.enable")) for _ in range(5)]
    await extension.held_count(5)
    with pytest.raises(TooManyPendingCommands, match="5 commands waiting"):
        await browser.cdp(1, "Page.enable")
    await extension.release_held()
    await asyncio.gather(*calls)


async def test_extension_errors_become_command_failed(relay: RelayHarness) -> None:
    await relay.extension()
    await relay.browser_count(1)
    browser = relay.core.registry.resolve()
    with pytest.raises(CommandFailed, match="No tab with id: 77"):
        await browser.cdp(77, "Page.enable")


async def test_denylisted_cdp_methods_never_leave_the_app(relay: RelayHarness) -> None:
    extension = await relay.extension()
    await relay.browser_count(1)
    browser = relay.core.registry.resolve()
    for method in (
        "Network.getAllCookies",
        "Storage.getCookies",
        "Target.createTarget",
        "nonsense",
    ):
        with pytest.raises(CdpMethodBlocked):
            await browser.cdp(1, method)
    assert extension.commands == []


async def test_several_browsers_connect_at_once_and_are_addressed_by_id(
    relay: RelayHarness,
) -> None:
    other = await relay.pair(OTHER_EXTENSION_ID)
    await relay.extension(instance="one", browser="Chrome 131")
    await relay.extension(
        instance="two", browser="Edge 131", extension_id=OTHER_EXTENSION_ID, token=other
    )
    await relay.browser_count(2)
    with pytest.raises(NoBrowserError, match="several browsers are connected"):
        relay.core.registry.resolve()
    by_name = {b.name: b for b in relay.core.registry.all()}
    edge = relay.core.registry.resolve(by_name["Edge 131"].id)
    assert edge.extension_id == OTHER_EXTENSION_ID
    assert len(await edge.list_tabs()) == 2
    with pytest.raises(NoBrowserError, match="no browser with id 'nope'"):
        relay.core.registry.resolve("nope")


async def test_status_and_tab_events_update_the_browser_and_reach_the_hub(
    relay: RelayHarness,
) -> None:
    subscription = relay.core.hub.subscribe()
    changes: list[str] = []
    relay.core.registry.add_listener(lambda change, browser: changes.append(change))
    extension = await relay.extension()
    await relay.browser_count(1)
    browser = relay.core.registry.resolve()
    await browser.create_tab("https://example.net/")
    await browser.attach(3)
    await extension.send(
        {
            "type": "cdp_event",
            "tabId": 3,
            "method": "Page.loadEventFired",
            "params": {"timestamp": 1.5},
        }
    )
    events = []
    async with asyncio.timeout(5):
        while len(events) < 2:
            events.extend(await subscription.wait())
    assert [(e.kind, e.method, e.tab_id) for e in events] == [
        ("tab", "created", 3),
        ("cdp", "Page.loadEventFired", 3),
    ]
    assert events[1].params == {"timestamp": 1.5}
    assert browser.attached_tabs == {3}
    assert 3 in browser.tabs
    assert changes[0] == "connected" and "updated" in changes


async def test_an_answer_does_not_overwrite_a_newer_tab_event(relay: RelayHarness) -> None:
    extension = await relay.extension()
    await relay.browser_count(1)
    browser = relay.core.registry.resolve()
    await browser.cdp(1, "Runtime.evaluate", {"expression": "1"})  # the cache is stale: ask
    extension.hold_replies = True
    lookup = asyncio.create_task(browser.get_tab(1))
    await extension.held_count(1)
    # While tabs.get is on its way, the page changes its title: the event is the newest word.
    await extension.send(
        {
            "type": "tab_event",
            "event": "updated",
            "tab": {"id": 1, "url": "https://example.com/", "title": "New title"},
        }
    )
    async with asyncio.timeout(5):
        while browser.tabs.get(1) is None or browser.tabs[1].title != "New title":
            await asyncio.sleep(0.005)
    await extension.release_held()
    answered = await lookup
    assert answered.title == "Example"  # what the browser said when asked
    assert browser.tabs[1].title == "New title"  # the cache keeps the newer state


async def test_only_an_extension_that_lets_held_loads_through_is_asked_to_hold_them(
    relay: RelayHarness,
) -> None:
    """A seed extension would leave its tabs unable to load anything once the app is gone:
    tools check its tabs before and after instead."""
    await asyncio.to_thread(
        relay.core.settings_store.update,
        lambda s: s.policy_rules.append(PolicyRule(tool="*", decision="allow")),
    )
    token = await relay.add_client()
    for seed in (True, False):
        extension = await relay.extension(seed=seed, instance=None if seed else "modern")
        await relay.browser_count(1)
        async with mcp_client(relay.base_mcp(), token) as client:
            result = await client.call_tool("browser_evaluate", {"expression": "1", "tab_id": 1})
        assert not result.is_error, text_of(result)
        enabled = {m for _, m, _ in extension.cdp_calls if m.endswith(".enable")}
        assert ("Fetch.enable" in enabled) is (not seed), (seed, enabled)
        await extension.close()
        await relay.browser_count(0)


async def test_the_expert_cdp_tool_cannot_take_the_guard_apart_or_log_typed_text(
    relay: RelayHarness,
) -> None:
    def expert(settings: Settings) -> None:
        settings.enable_cdp_tool = True
        settings.policy_rules.append(PolicyRule(tool="*", decision="allow"))

    await asyncio.to_thread(relay.core.settings_store.update, expert)
    extension = await relay.extension()
    await relay.browser_count(1)
    token = await relay.add_client()
    own = f"http://127.1:{relay.port}/healthz"
    async with mcp_client(relay.base_mcp(), token) as client:
        fetch = await client.call_tool("browser_cdp", {"method": "Fetch.disable", "tab_id": 1})
        frames = await client.call_tool(
            "browser_cdp",
            {"method": "Target.setAutoAttach", "params": {"autoAttach": False}, "tab_id": 1},
        )
        # An object id marked as a frame's in another process is not routed there: raw is raw.
        marked = await client.call_tool(
            "browser_cdp",
            {"method": "DOM.describeNode", "params": {"objectId": "child~1.2.3"}, "tab_id": 1},
        )
        navigate = await client.call_tool(
            "browser_cdp", {"method": "Page.navigate", "params": {"url": own}, "tab_id": 1}
        )
        typed = await client.call_tool(
            "browser_cdp",
            {"method": "Input.insertText", "params": {"text": "hunter2-cdp"}, "tab_id": 1},
        )
    assert fetch.is_error and "navigation guard" in text_of(fetch)
    assert frames.is_error and "frames of other sites" in text_of(frames)
    assert not marked.is_error, text_of(marked)
    sent = [(m, a) for _, m, a in extension.cdp_calls if m == "DOM.describeNode"]
    assert sent == [("DOM.describeNode", {"objectId": "child~1.2.3"})]
    assert all("sessionId" not in c.get("params", {}) for c in extension.commands)
    assert navigate.is_error and "is Tabrelay itself" in text_of(navigate)
    assert not typed.is_error, text_of(typed)
    assert relay.core.command_log is not None
    logged = " ".join(r.arguments for r in relay.core.command_log.recent(10))
    assert "hunter2-cdp" not in logged and "[secret: 11 characters]" in logged


async def test_a_browser_that_leaves_as_it_arrives_leaves_the_registry_too(
    relay: RelayHarness,
) -> None:
    # It closes right after its hello: the app's first question (tabs.list) meets a closing
    # connection and fails before the read loop sees the close. The registry must not keep it.
    for n in range(10):
        extension = FakeExtension(relay.port, relay.token, instance=f"brief-{n}")
        await extension.connect(read=False)
        assert extension.connection is not None
        await extension.connection.close()
    await relay.browser_count(0)
    assert relay.core.registry.all() == []
