"""Every dashboard table model passes Qt's model tester, before and after it changes."""

from __future__ import annotations

import time

from pytestqt.modeltest import ModelTester

from tabrelay.approval.gate import ApprovalRequest
from tabrelay.config.settings import PolicyRule
from tabrelay.protocol.messages import TabInfo
from tabrelay.relay.events import HubEvent
from tabrelay.store.commandlog import CommandEntry
from tabrelay.ui.approvals_page import PendingModel, RulesModel
from tabrelay.ui.clients_page import ClientRow, ClientsModel
from tabrelay.ui.commands_page import CommandsModel
from tabrelay.ui.events_model import EventFilter, EventsModel
from tabrelay.ui.tabs_page import TabRow, TabsModel


def cdp(method: str, tab_id: int = 1, browser: str = "b1", **params: object) -> HubEvent:
    return HubEvent("cdp", browser, method, tab_id, dict(params))


def entry(number: int, **changes: object) -> CommandEntry:
    fields: dict[str, object] = {
        "id": number,
        "time": 1_700_000_000.0 + number,
        "client": "cursor",
        "tool": "browser_navigate",
        "arguments": '{"url": "https://example.org/"}',
        "decision": "approved once by the person",
        "status": "ok",
        "duration_ms": 12.5,
        "result_bytes": 2048,
        "browser": "b1",
        "tab_id": 1,
        "origin": "https://example.com",
    }
    fields.update(changes)
    return CommandEntry(**fields)  # type: ignore[arg-type]


def test_the_tabs_model(qtmodeltester: ModelTester) -> None:
    model = TabsModel(activity=lambda key: time.time() - 30 if key[1] == 1 else None)
    qtmodeltester.check(model)
    rows = [
        TabRow("b1", "Chromium 156", TabInfo(1, 1, "https://example.com/a", "A", attached=True)),
        TabRow("b1", "Chromium 156", TabInfo(2, 1, "about:blank", "")),
    ]
    model.set_rows(rows)
    qtmodeltester.check(model)
    assert model.rowCount() == 2
    assert model.data(model.index(0, 1)) == "https://example.com"
    assert model.data(model.index(0, 3)) == "Attached"
    assert model.data(model.index(0, 4)) == "30 s ago"
    assert model.data(model.index(1, 0)) == "about:blank"
    model.set_rows(rows[1:])
    qtmodeltester.check(model)
    assert model.rowCount() == 1


def test_the_events_model(qtmodeltester: ModelTester) -> None:
    model = EventsModel(capacity=5, browser_name=lambda b: f"Browser {b}")
    qtmodeltester.check(model)
    model.add([cdp("Network.requestWillBeSent", requestId="1"), cdp("Page.loadEventFired")])
    qtmodeltester.check(model)
    assert model.data(model.index(0, 1)) == "Browser b1"
    assert model.data(model.index(0, 3)) == "Network.requestWillBeSent"
    assert model.data(model.index(0, 4)) == "requestId=1"
    model.set_filter(EventFilter(domain="Page"))
    qtmodeltester.check(model)
    model.clear()
    qtmodeltester.check(model)


def test_the_events_model_keeps_only_the_newest_events_and_filters_within_them() -> None:
    model = EventsModel(capacity=100)
    removed: list[tuple[int, int]] = []
    inserted: list[tuple[int, int]] = []
    model.rowsRemoved.connect(lambda _parent, first, last: removed.append((first, last)))
    model.rowsInserted.connect(lambda _parent, first, last: inserted.append((first, last)))

    model.add(cdp("Network.dataReceived", tab_id=n % 2) for n in range(80))
    model.add(cdp("Page.frameNavigated", tab_id=n % 2) for n in range(50))
    assert model.total == 100 and model.rowCount() == 100
    assert inserted == [(0, 79), (50, 99)]  # one insert per batch, never one per event
    assert removed == [(0, 29)]  # first the 30 oldest left the ring, in one removal
    assert model.event_at(0) is not None and model.event_at(0).method == "Network.dataReceived"

    model.set_filter(EventFilter(tab_id=1, domain="Page"))
    assert model.rowCount() == 25
    model.set_filter(EventFilter(method="datarec"))  # case-insensitive "contains"
    assert model.rowCount() == 50
    # 60 more: the 50 older matches and 10 Page events leave the ring.
    model.add(cdp("Network.dataReceived") for _ in range(60))
    assert model.rowCount() == 60 and model.total == 100
    assert model.domains == {"Network", "Page"}


def test_the_commands_model(qtmodeltester: ModelTester) -> None:
    model = CommandsModel(limit=3)
    qtmodeltester.check(model)
    model.set_entries([entry(2), entry(1, status="denied", error="denied by the person")])
    qtmodeltester.check(model)
    model.add(entry(3))
    model.add(entry(4, status="error", error="tab 9 does not exist"))
    qtmodeltester.check(model)
    assert model.rowCount() == 3  # the limit keeps the newest
    assert [model.row_at(n).id for n in range(3)] == [4, 3, 2]  # type: ignore[union-attr]

    def shown(column: str) -> object:
        return model.data(model.index(0, CommandsModel.COLUMNS.index(column)))

    assert shown("Status") == "error"
    assert shown("Size") == "2.0 KB"
    assert shown("Duration") == "12 ms"
    model.add(entry(4))  # a row a reload already brought is not added twice
    assert model.rowCount() == 3


def test_the_clients_model(qtmodeltester: ModelTester) -> None:
    model = ClientsModel(clock=lambda: 1000.0)
    qtmodeltester.check(model)
    model.set_rows([ClientRow("cursor", 100.0, 990.0, 2), ClientRow("claude", 100.0, 0.0, 0)])
    qtmodeltester.check(model)
    assert model.data(model.index(0, 1)) == "connected · 2 open requests"
    assert model.data(model.index(0, 2)) == "10 s ago"
    assert model.data(model.index(1, 1)) == "not used yet"
    assert model.data(model.index(1, 2)) == "—"
    model.set_rows([ClientRow("cursor", 100.0, 990.0, 0), ClientRow("claude", 100.0, 1.0, 0)])
    assert model.data(model.index(0, 1)) == "active"
    assert model.data(model.index(1, 1)) == "idle"


def test_the_rules_and_pending_models(qtmodeltester: ModelTester) -> None:
    rules = RulesModel()
    qtmodeltester.check(rules)
    rules.set_rules(
        [PolicyRule(tool="browser_navigate", decision="allow", site="https://example.com")],
        [PolicyRule(tool="*", decision="deny", client="cursor")],
    )
    qtmodeltester.check(rules)
    assert rules.data(rules.index(0, 5)) == "saved"
    assert rules.data(rules.index(1, 0)) == "every tool"
    assert rules.data(rules.index(1, 5)) == "until Tabrelay quits"

    pending = PendingModel(clock=lambda: 1010.0)
    qtmodeltester.check(pending)
    pending.set_requests(
        [
            ApprovalRequest(
                id=1,
                client="cursor",
                tool="browser_click",
                arguments={},
                origin="https://example.com",
                tab_title="Shop",
                tab_id=3,
                created_at=1000.0,
                timeout=60.0,
            )
        ]
    )
    qtmodeltester.check(pending)
    assert pending.data(pending.index(0, 4)) == "50 s"
