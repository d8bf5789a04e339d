"""The open handoffs (tools/groups/handoff.py's ``Handoffs``), the refusal agents get on a
handed-over tab, the tool's parameters, and the event hub's muting of a handed-over tab
(relay/events.py)."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from tabrelay.errors import ToolError
from tabrelay.relay.events import EventHub, HubEvent
from tabrelay.tools.groups.handoff import DEFAULT_TIMEOUT, HandoffParams, banner_source
from tabrelay.tools.state.handoffs import REFUSAL, Handoffs, refusal


def begin(handoffs: Handoffs, tab_id: int = 7, browser_id: str = "b1") -> str:
    opened, _ended = handoffs.begin(
        browser_id,
        tab_id,
        reason="sign in",
        client="agent",
        timeout=60,
        url="https://example.test/",
        title="Example",
    )
    return opened.id


async def test_handoff_ids_are_long_random_and_never_repeat() -> None:
    handoffs = Handoffs()
    ids = [begin(handoffs, tab_id=n) for n in range(2000)]
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 16 and int(i, 16) >= 0 for i in ids)  # 64 bits, hex, typed by a person
    assert len({i[:4] for i in ids}) > 1000  # not a counter under a fixed prefix


async def test_an_open_handoff_is_listed_found_by_tab_and_dropped() -> None:
    handoffs = Handoffs()
    told: list[int] = []
    stop = handoffs.add_listener(lambda: told.append(len(handoffs.open())))
    handoff_id = begin(handoffs)
    (opened,) = handoffs.open()
    assert (opened.id, opened.tab_id, opened.reason, opened.client) == (
        handoff_id,
        7,
        "sign in",
        "agent",
    )
    assert opened.deadline == pytest.approx(opened.started + 60)
    assert handoffs.of_tab("b1", 7) == opened
    assert handoffs.of_tab("b1", 8) is None and handoffs.of_tab("b2", 7) is None
    handoffs.drop(handoff_id)
    handoffs.drop(handoff_id)  # twice: told once
    assert handoffs.open() == [] and handoffs.of_tab("b1", 7) is None
    assert told == [1, 0]
    stop()
    begin(handoffs)
    assert told == [1, 0]  # stopped listening


async def test_a_second_handoff_of_the_same_tab_fails_clearly() -> None:
    handoffs = Handoffs()
    begin(handoffs)
    with pytest.raises(ToolError, match="tab 7 is already handed to the person"):
        begin(handoffs)
    begin(handoffs, browser_id="b2")  # the same tab id in another browser is another tab
    assert len(handoffs.open()) == 2


async def test_ending_resolves_the_waiting_call_once_and_unknown_ids_are_refused() -> None:
    handoffs = Handoffs()
    opened, ended = handoffs.begin("b1", 3, reason="pay", client=None, timeout=10, url="", title="")
    assert handoffs.end("no-such-id", "done", "cli") is False
    assert handoffs.end(opened.id, "done", "tray") is True
    assert handoffs.end(opened.id, "cancelled", "dashboard") is False  # already ending
    assert await asyncio.wait_for(ended, 1) == ("done", "tray")
    with pytest.raises(ValueError, match="done or cancelled"):
        handoffs.end(opened.id, "timeout", "cli")  # type: ignore[arg-type]
    handoffs.drop(opened.id)
    assert handoffs.end(opened.id, "done", "cli") is False


async def test_a_failing_listener_does_not_keep_the_others_from_being_told() -> None:
    handoffs = Handoffs()
    told: list[str] = []

    def broken() -> None:
        raise RuntimeError("a broken listener")

    handoffs.add_listener(broken)
    handoffs.add_listener(lambda: told.append("told"))
    begin(handoffs)
    assert told == ["told"]


async def test_agent_calls_on_a_handed_over_tab_get_the_refusal() -> None:
    handoffs = Handoffs()
    assert refusal(handoffs, "b1", 7) is None
    begin(handoffs)
    message = refusal(handoffs, "b1", 7)
    assert message is not None and REFUSAL in message and "tab 7" in message
    assert refusal(handoffs, "b1", 8) is None


def test_the_reason_is_one_trimmed_line_of_plain_text() -> None:
    assert HandoffParams(reason="  sign in  ").reason == "sign in"
    assert HandoffParams(reason="sign in").timeout == DEFAULT_TIMEOUT
    assert HandoffParams(reason="x" * 300, timeout=900).timeout == 900
    bad = [
        {"reason": ""},
        {"reason": "   "},
        {"reason": "x" * 301},
        {"reason": "sign\nin"},
        {"reason": "sign\x00in"},
        {"reason": "pay \u202eyap"},  # a bidi override
        {"reason": "a\u200bb"},  # a zero-width space
        {"reason": "ok", "timeout": 9},
        {"reason": "ok", "timeout": 901},
        {},
        {"reason": "ok", "extra": 1},
    ]
    for arguments in bad:
        with pytest.raises(ValidationError):
            HandoffParams.model_validate(arguments)


def test_the_banner_carries_the_reason_as_a_string_never_as_code() -> None:
    hostile = '"); alert(1); ("</script><b>'
    source = banner_source(hostile)
    assert hostile not in source  # escaped into a JSON string
    assert '"\\"); alert(1); (\\"</script><b>"' in source
    assert "textContent" in source and "innerHTML" not in source


# --- muting ---------------------------------------------------------------------------------


def event(kind: str, method: str, tab_id: int | None = 7, browser_id: str = "b1") -> HubEvent:
    return HubEvent(kind, browser_id, method, tab_id)  # type: ignore[arg-type]


def test_a_muted_tabs_events_reach_only_the_subscriptions_that_hear_muted_tabs() -> None:
    hub = EventHub()
    watcher = hub.subscribe()  # as the dashboard and the observer subscribe
    answering = hub.subscribe(hears_muted=True)  # as the guard and Tabrelay's page code do
    unmute = hub.mute("b1", 7)
    assert hub.muted("b1", 7) and not hub.muted("b1", 8)
    sent = [
        event("cdp", "Runtime.consoleAPICalled"),
        event("cdp", "Network.requestWillBeSent"),
        event("tab", "updated"),
        event("tab", "removed"),  # the tab's closing is no secret: every owner must drop it
        event("cdp", "Runtime.consoleAPICalled", tab_id=8),  # another tab
        event("cdp", "Runtime.consoleAPICalled", browser_id="b2"),  # another browser's tab 7
        event("alert", "navigation_blocked"),  # alerts are the person's own news
    ]
    for one in sent:
        hub.publish(one)
    assert answering.drain() == sent
    assert watcher.drain() == sent[3:]
    assert hub.withheld == 3
    unmute()
    unmute()  # again: nothing
    hub.publish(sent[0])
    assert watcher.drain() == [sent[0]]


def test_muting_is_counted_so_each_owner_unmutes_only_its_own() -> None:
    hub = EventHub()
    watcher = hub.subscribe()
    first = hub.mute("b1", 7)
    second = hub.mute("b1", 7)
    first()
    first()
    hub.publish(event("cdp", "Page.frameNavigated"))
    assert watcher.drain() == []
    second()
    hub.publish(event("cdp", "Page.frameNavigated"))
    assert len(watcher.drain()) == 1
    assert not hub.muted("b1", 7)
