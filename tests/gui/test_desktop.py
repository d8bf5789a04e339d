"""The desktop UI builds its dashboard on first use and loses nothing by waiting.

The tray app mostly sits in the tray; the dashboard window with its five pages is most of its
idle memory, so it is built when the person first opens it (docs/benchmarks.md, "Idle memory").
"""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from gui.conftest import DesktopFactory, expect, until, within
from tabrelay.relay.events import HubEvent
from tabrelay.ui.dashboard import DashboardWindow
from tabrelay.ui.desktop import DesktopUi
from tabrelay.ui.events_model import CAPACITY


def dashboards_of(ui: DesktopUi) -> list[DashboardWindow]:
    """The dashboard windows that exist for ``ui``, found without asking ``ui`` (which builds)."""
    return [
        widget
        for widget in QApplication.topLevelWidgets()
        if isinstance(widget, DashboardWindow) and widget.tray_actions is ui
    ]


def network_event(n: int) -> HubEvent:
    return HubEvent("cdp", "b1", "Network.dataReceived", 1, {"requestId": str(n)})


async def test_the_dashboard_is_built_when_first_opened_and_shows_what_happened_before(
    desktop: DesktopFactory,
) -> None:
    async with desktop() as desk:
        ui = desk.ui
        assert dashboards_of(ui) == [] and not ui.dashboard_built
        ui.tray.menu.aboutToShow.emit()  # the tray's menu does not need it
        ui.set_paused(True)
        assert dashboards_of(ui) == []

        ui.open_dashboard()
        assert dashboards_of(ui) == [ui.dashboard] and ui.dashboard.isVisible()
        # Banners read the core when the window is built: the pause is there.
        assert ui.dashboard.paused_banner.isVisibleTo(ui.dashboard)
        assert ui.dashboard.pause_action.isChecked()
        first = ui.dashboard
        ui.show_approvals()
        assert dashboards_of(ui) == [first]  # built once
        assert ui.dashboard.pages.currentIndex() == DashboardWindow.PAGES.index("Approvals")


async def test_events_from_before_the_dashboard_opened_are_on_its_events_page_newest_kept(
    desktop: DesktopFactory,
) -> None:
    async with desktop() as desk:
        ui = desk.ui
        hub = desk.harness.core.hub
        dropped = 5  # the oldest, beyond the Events page's capacity
        total = CAPACITY + dropped
        for n in range(total // 2):
            hub.publish(network_event(n))
        ui.bridge.drain_now()
        for n in range(total // 2, total):
            hub.publish(network_event(n))
        ui.bridge.drain_now()
        assert dashboards_of(ui) == []  # delivering events built nothing
        assert len(ui.bridge._recent or ()) == CAPACITY  # kept unparsed, bounded

        ui.show_approvals()  # any first use; the Events page is built with the rest
        page = ui.dashboard.events_page
        assert page.model.total == page.model.rowCount() == CAPACITY
        first, last = page.model.event_at(0), page.model.event_at(CAPACITY - 1)
        assert first is not None and first.params["requestId"] == str(dropped)
        assert last is not None and last.params["requestId"] == str(total - 1)
        assert page.domain_box.findData("Network") >= 0

        # Later events arrive once, after the earlier ones.
        hub.publish(network_event(total))
        ui.bridge.drain_now()
        assert page.model.total == CAPACITY
        newest = page.model.event_at(CAPACITY - 1)
        assert newest is not None and newest.params["requestId"] == str(total)
        second = page.model.event_at(0)
        assert second is not None and second.params["requestId"] == str(dropped + 1)
        assert ui.bridge.take_recent_events() == []  # the bridge keeps nothing any more


async def test_a_client_created_before_the_dashboard_exists_is_listed_when_it_opens(
    desktop: DesktopFactory,
) -> None:
    async with desktop() as desk:
        desk.ui.connect_client(None)
        dialog = desk.ui.connect_dialog
        assert dialog is not None
        dialog.name_edit.setText("my-agent")
        created = expect(dialog.client_created)
        task = dialog.create_client()
        assert task is not None
        await within(task)
        await within(created)
        assert dashboards_of(desk.ui) == []

        page = desk.ui.dashboard.clients_page
        await until(lambda: page.model.rowCount() == 1, message="the new client listed")


async def test_closing_the_ui_without_opening_the_dashboard_does_not_build_it(
    desktop: DesktopFactory,
) -> None:
    async with desktop() as desk:
        ui = desk.ui
        ui.pair_browser()  # a dialog that close() closes
        assert ui.pair_dialog is not None and ui.pair_dialog.isVisible()
        await within(ui.close())
        assert not ui.pair_dialog.isVisible()
        assert dashboards_of(ui) == [] and not ui.dashboard_built
