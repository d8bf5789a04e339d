"""``make screenshots``: the real tray app on a desktop under Xvfb, with real Chromium.

The desktop is ``support.desktop.DesktopSession``, the one the first-run test uses: Xvfb,
openbox (window frames), trayer (the system tray), a private D-Bus session and an unlocked
GNOME Keyring. On it a throwaway Tabrelay home and the tray app itself, through
``tabrelay.app.main`` with a driver that plays a short session: Chromium with the unpacked
extension asks to pair (the pairing dialog), opens the local test pages, an MCP client lists
tabs, reads a page, takes a screenshot, navigates (approved in the dialog), tries JavaScript
(denied), then reads the order form and clicks its button (the dialog describes and pictures
the button; the page outlines it while the person decides), then hands the person the form's
tab (browser_handoff). Along the way it saves PNGs into ``docs/screenshots/``: the tray menu,
the dashboard's Tabs, Events, Commands and Recipes pages, the dashboard's handoff banner, both
approval dialogs, the outlined button in the page, the pairing dialog and the Connect dialog.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from support.desktop import DESKTOP_MISSING, DesktopSession  # noqa: E402

OUT = REPO / "docs" / "screenshots"
CONVERT = "/usr/bin/convert"  # ImageMagick's; ENVIRONMENT.md: not a stand-in on PATH
BACKGROUND = "#5f6b7a"
FORM_BUTTON = "Place order"  # the button of tests/e2e/pages/tools/form.html the agent clicks


def log(message: str) -> None:
    print(f"screenshots: {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def paint_background(desk: DesktopSession) -> None:
    """A calm, even desktop behind the tray (xsetroot if there, else ImageMagick's)."""
    if shutil.which("xsetroot"):
        desk.run("xsetroot", "-solid", BACKGROUND)
    elif shutil.which("display"):
        # It paints the root window, then exits with 1 all the same (ImageMagick 6.9).
        desk.run("display", "-window", "root", f"xc:{BACKGROUND}", check=False)


def screen_size() -> tuple[int, int]:
    from PySide6.QtGui import QGuiApplication

    screen = QGuiApplication.primaryScreen().geometry()
    return screen.width(), screen.height()


async def capture(
    display: str, name: str, *, window: Any = None, rect: tuple[int, int, int, int] | None = None
) -> Path:
    """Save a window (with its frame) or a screen region as docs/screenshots/NAME.png."""
    # Let Qt paint and the window manager settle. Never processEvents() here: under qasync
    # that would step other asyncio tasks from inside this one.
    await asyncio.sleep(0.8)
    target = OUT / f"{name}.png"
    if window is not None:
        # openbox frames every window it manages; Qt learns the frame a little later.
        await until(
            lambda: window.frameGeometry() != window.geometry(), f"{name}: the window's frame", 5
        )
        # The frame as the window manager drew it (title bar included), read once it settled.
        geometry = window.frameGeometry()
        rect = (geometry.x(), geometry.y(), geometry.width(), geometry.height())
    assert rect is not None
    screen_width, screen_height = screen_size()
    x, y, width, height = rect
    x, y = max(0, x), max(0, y)
    width, height = min(width, screen_width - x), min(height, screen_height - y)
    xwd = await asyncio.create_subprocess_exec(
        "xwd", "-root", "-silent", "-display", display, stdout=subprocess.PIPE
    )
    raw, _ = await xwd.communicate()
    convert = await asyncio.create_subprocess_exec(
        CONVERT,
        "xwd:-",
        "-crop",
        f"{width}x{height}+{x}+{y}",
        "+repage",
        "-strip",
        f"png:{target}",
        stdin=subprocess.PIPE,
    )
    await convert.communicate(raw)
    if convert.returncode != 0 or not target.is_file():
        raise RuntimeError(f"could not save {target}")
    log(f"saved {target.relative_to(REPO)}")
    return target


async def capture_page(page: Any, name: str, *, element: str, context: str) -> Path:
    """Save part of a tab, as Chrome renders it: from the element ``context`` selects down
    to a little below the one ``element`` selects.

    Through the harness's own CDP session on the tab (``Page.captureScreenshot``), so what the
    page shows is pictured as is: the outline and label Tabrelay drew included.
    """
    box = await page.evaluate(
        "(() => { const box = (s) => document.querySelector(s).getBoundingClientRect();"
        f" const e = box({json.dumps(element)}), c = box({json.dumps(context)});"
        " return {top: c.top + scrollY, right: e.right + scrollX, bottom: e.bottom + scrollY,"
        " width: document.documentElement.scrollWidth}; })()"
    )
    # The left edge stays clear of the extension's frame around a tab an agent uses.
    left, top = 12.0, max(0.0, box["top"] - 4)
    right = min(float(box["width"]) - left, max(640.0, box["right"] + 160))
    clip = {"x": left, "y": top, "width": right - left, "height": box["bottom"] + 48 - top}
    shot = await page.session.send(
        "Page.captureScreenshot", {"format": "png", "clip": clip | {"scale": 1}}, timeout=20
    )
    target = OUT / f"{name}.png"
    target.write_bytes(base64.b64decode(shot["data"]))
    log(f"saved {target.relative_to(REPO)}")
    return target


async def until(condition: Callable[[], Any], what: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout:g} s")
        await asyncio.sleep(0.1)


def expect(signal: Any) -> asyncio.Future[Any]:
    """The next value ``signal`` emits (connected now, before what makes it emit)."""
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def seen(value: Any) -> None:
        if not future.done():
            future.set_result(value)

    def forget(_future: asyncio.Future[Any]) -> None:
        with contextlib.suppress(RuntimeError, TypeError):
            signal.disconnect(seen)

    signal.connect(seen)
    future.add_done_callback(forget)
    return future


async def outlines_gone(outlines: Callable[[], Awaitable[int]]) -> bool:
    return await outlines() == 0


def centre(window: Any, *, top: int = 40) -> None:
    """Put a window in the middle of the screen, below the tray."""
    screen_width, screen_height = screen_size()
    size = window.frameGeometry()
    window.move(
        max(0, (screen_width - size.width()) // 2),
        max(top, (screen_height - size.height()) // 2),
    )


ORDER_RECIPE = "Order a pizza"


def order_recipe(url: str) -> Any:
    """A recipe as a person would keep one from the order form: a navigation, fields, a
    choice, a secret parameter, the button, and what the page says at the end."""
    from tabrelay.recipes.model import Locator, Param, Recipe, Step

    def field(label: str, css: str) -> Locator:
        return Locator(role="textbox", name=label, label=label, css=css)

    return Recipe(
        name=ORDER_RECIPE,
        created=time.time(),
        origin="agent",
        client="claude-code",
        steps=[
            Step(action="navigate", url=url),
            Step(action="type", target=field("Name *", "#name"), text="{{name}}"),
            Step(action="type", target=field("Email", "#email"), text="{{email}}"),
            Step(action="type", target=field("Password", "#password"), text="{{password}}"),
            Step(
                action="select",
                target=Locator(role="combobox", name="Size", label="Size", css="#size"),
                options=["Large"],
            ),
            Step(
                action="check",
                target=Locator(role="radio", name="Express", css="#express"),
                checked=True,
            ),
            Step(action="click", target=Locator(role="button", name=FORM_BUTTON, css="#submit")),
            Step(action="expect_text", text="Thank you"),
        ],
        params=[
            Param(name="name", default="Ada Lovelace"),
            Param(name="email", default="ada@example.com"),
            Param(name="password", secret=True),
        ],
        final_url=url,
    )


def session(display: str, pages: Any) -> Callable[[Any, Any], Awaitable[None]]:
    """The driver: what a person and an agent do, with a screenshot at each step."""

    async def drive(core: Any, ui: Any) -> None:
        from PySide6.QtCore import QPoint

        from e2e.agent import ref
        from e2e.chromium import chromium_path
        from e2e.harness import DefaultPortGuard, ExtensionBrowser
        from support.mcp import mcp_client, text_of

        await until(lambda: ui.tray.icon.geometry().width() > 0, "the tray icon shows")
        ui.notifier.tray = None  # keep notification balloons out of the pictures
        dashboard = ui.dashboard
        dashboard.hide()

        binary = chromium_path()
        if binary is None:
            raise RuntimeError("Chromium is missing: `make system-test` installs it")
        async with DefaultPortGuard():
            browser = await ExtensionBrowser.launch(binary)
        try:
            shown = expect(ui.pairing_approver.dialog_shown)
            await browser.set_relay_port(core.relay.port)
            pairing = await asyncio.wait_for(shown, 30)
            centre(pairing)
            await until(lambda: pairing.allow_button.isEnabled(), "Allow wakes up")
            await capture(display, "pairing-dialog", window=pairing)
            pairing.allow_button.click()
            extension = await until(lambda: core.registry.all(), "the extension connects", 40)
            relay_browser = extension[0]

            index = await browser.open_page(pages.url("index.html"))
            await browser.open_page(pages.url("tools/article.html"))
            form = await browser.open_page(pages.url("tools/form.html"))
            for target in await browser.page_targets():
                if target["url"] == "about:blank":  # the window's first, empty tab
                    await browser.cdp.send("Target.closeTarget", {"targetId": target["targetId"]})
            await relay_browser.list_tabs()
            index_tab = await browser.tab_id_of(pages.url("index.html"))
            form_tab = await browser.tab_id_of(pages.url("tools/form.html"))

            new = await asyncio.to_thread(core.clients.add, "claude-code")
            await until(lambda: core.client_tokens().get("claude-code") == new.token, "token")
            base = f"http://127.0.0.1:{core.endpoint.port}"
            async with mcp_client(base, new.token, name="claude-code") as client:
                await client.call_tool("browser_status", {})
                await client.call_tool("browser_list_tabs", {})
                await client.call_tool("browser_get_content", {"tab_id": index_tab})
                await client.call_tool("browser_screenshot", {"tab_id": index_tab})

                # The approval dialog, with a second request queued behind it.
                dialog_shown = expect(ui.approver.dialog_shown)
                navigate = asyncio.ensure_future(
                    client.call_tool(
                        "browser_navigate",
                        {"tab_id": index_tab, "url": pages.url("second.html")},
                    )
                )
                dialog = await asyncio.wait_for(dialog_shown, 20)
                evaluate = asyncio.ensure_future(
                    client.call_tool(
                        "browser_evaluate",
                        {"tab_id": index_tab, "expression": "document.cookie.length"},
                    )
                )
                await until(lambda: ui.approver.waiting == 1, "the second request queues")
                centre(dialog)
                await until(lambda: dialog.allow_enabled, "Allow wakes up")
                await capture(display, "approval-dialog", window=dialog)
                second = expect(ui.approver.dialog_shown)
                dialog.once_button.click()
                await asyncio.wait_for(navigate, 20)
                (await asyncio.wait_for(second, 20)).deny_button.click()
                await asyncio.wait_for(evaluate, 20)

                # A click on an element the agent found in a snapshot: the dialog describes
                # and pictures it, and the page outlines it while the person decides.
                # The person has scrolled down to the button (the window is 800 px tall).
                await form.evaluate(
                    "document.getElementById('submit').scrollIntoView({block: 'center'})"
                )
                snapshot = await client.call_tool("browser_snapshot", {"tab_id": form_tab})
                button = ref(text_of(snapshot), "button", FORM_BUTTON)
                element_shown = expect(ui.approver.dialog_shown)
                click = asyncio.ensure_future(
                    client.call_tool("browser_click", {"tab_id": form_tab, "ref": button})
                )
                element = await asyncio.wait_for(element_shown, 20)
                if not element.target_pictures:
                    raise RuntimeError("the dialog shows no picture of the button")
                centre(element)
                await until(lambda: element.allow_enabled, "Allow wakes up")
                await capture(display, "approval-dialog-element", window=element)

                async def outlines() -> int:
                    count = "document.querySelectorAll('[data-tabrelay-highlight]').length"
                    return int(await form.evaluate(count))

                await until(outlines, "the page outlines the button")
                await capture_page(
                    form, "approval-highlight", element="#submit", context="label[for=toppings]"
                )
                element.once_button.click()
                clicked = await asyncio.wait_for(click, 20)
                if clicked.is_error:
                    raise RuntimeError(f"the click failed: {text_of(clicked)}")
                await until(lambda: outlines_gone(outlines), "the outline goes")

                # Events from an attached tab: attach from the dashboard, then reload.
                await core.attach_tab(relay_browser.id, index_tab)
                await index.session.send("Page.reload")
                await client.call_tool("browser_list_tabs", {})

            # The tray menu, opened at the icon.
            ui.tray.menu.aboutToShow.emit()
            icon = ui.tray.icon.geometry()
            menu = ui.tray.menu
            menu.popup(QPoint(icon.x(), icon.y() + icon.height() + 2))
            await until(lambda: menu.isVisible(), "the menu opens")
            menu_frame = menu.frameGeometry()
            left = min(menu_frame.x(), icon.x()) - 260
            await capture(
                display,
                "tray-menu",
                rect=(left, 0, screen_size()[0] - left, menu_frame.bottom() + 24),
            )
            menu.hide()

            dashboard.resize(1180, 700)
            centre(dashboard)
            dashboard.show_page("Tabs")
            dashboard.bring_up()
            tabs = dashboard.tabs_page
            tabs.refresh()
            tabs.select(relay_browser.id, index_tab)
            await capture(display, "dashboard-tabs", window=dashboard)

            dashboard.show_page("Events")
            events = dashboard.events_page
            await until(lambda: events.model.rowCount() > 5, "events arrive", 20)
            events.follow_box.setChecked(False)
            for row in range(events.model.rowCount()):
                event = events.model.event_at(row)
                if event is not None and event.method == "Network.requestWillBeSent":
                    events.view.selectRow(row)
                    events.view.scrollTo(events.model.index(row, 0))
                    break
            await capture(display, "dashboard-events", window=dashboard)

            dashboard.show_page("Commands")
            commands = dashboard.commands_page
            await commands.reload()
            for row in range(commands.model.rowCount()):
                entry = commands.model.row_at(row)
                if entry is not None and entry.tool == "browser_click":
                    commands.view.selectRow(row)  # the click the person approved
                    break
            # The details pane at what the click touched (the table's Touches column is
            # off to the right at this width).
            touched = commands.detail.document().find('"targets"')
            if touched.isNull():
                raise RuntimeError("the command log kept no targets for the click")
            touched.clearSelection()
            commands.detail.setTextCursor(touched)
            commands.detail.centerCursor()
            await capture(display, "dashboard-commands", window=dashboard)

            # The Recipes page: the order form kept as a recipe, its steps beside it.
            core.recipes.save(order_recipe(pages.url("tools/form.html")))
            dashboard.show_page("Recipes")
            recipes = dashboard.recipes_page
            recipes.refresh_recordings()
            recipes.refresh_recipes()
            recipes.select_recipe(ORDER_RECIPE)
            await capture(display, "dashboard-recipes", window=dashboard)

            # An agent hands the person the form's tab: the dashboard's banner.
            async with mcp_client(base, new.token, name="claude-code") as client:
                handoff = asyncio.ensure_future(
                    client.call_tool(
                        "browser_handoff",
                        {"tab_id": form_tab, "reason": "Sign in with your 2FA code"},
                    )
                )
                banner = dashboard.handoffs_banner
                await until(lambda: banner.isVisible(), "the handoff banner shows")
                dashboard.show_page("Tabs")
                dashboard.bring_up()
                await capture(display, "dashboard-handoff", window=dashboard)
                # The banner on the page itself, where the person presses Done or Cancel.
                await until(
                    lambda: form.evaluate("!!document.querySelector('[data-tabrelay-handoff]')"),
                    "the banner shows on the page",
                )
                shot = await form.session.send(
                    "Page.captureScreenshot",
                    {"format": "png", "clip": {"x": 0, "y": 0, "width": 1280, "height": 160,
                                               "scale": 1}},
                    timeout=20,
                )  # fmt: skip
                (OUT / "handoff-banner.png").write_bytes(base64.b64decode(shot["data"]))
                log("saved docs/screenshots/handoff-banner.png")
                next(iter(banner.rows.values())).done_button.click()
                ended = await asyncio.wait_for(handoff, 20)
                if ended.is_error:
                    raise RuntimeError(f"the handoff failed: {text_of(ended)}")
            dashboard.hide()

            # The Connect dialog, as the tray's "Connect an MCP client ▸ Cursor" opens it,
            # once the person pressed "Create client": the token and the snippet.
            ui.connect_client("cursor")
            connect = ui.connect_dialog
            connect.create_button.click()
            await until(lambda: connect.step_two.isVisible(), "the client is created")
            centre(connect)
            await capture(display, "connect-dialog", window=connect)
            connect.close()
        finally:
            await browser.close()

    return drive


def main() -> int:
    missing = DESKTOP_MISSING or next(
        (
            f"needs {tool} (make screenshots installs it)"
            for tool in ("xwd", CONVERT)
            if not shutil.which(tool)
        ),
        None,
    )
    if missing is not None:
        log(missing)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="tabrelay-screenshots-"))
    try:
        with contextlib.ExitStack() as stack:
            desk = stack.enter_context(DesktopSession(scratch / "desktop"))
            paint_background(desk)
            # The app runs in this process: it lives in the session as a program started
            # there would, with a throwaway home.
            for key in ("PYTHON_KEYRING_BACKEND", "WAYLAND_DISPLAY"):
                os.environ.pop(key, None)
            os.environ.update(desk.env | {"TABRELAY_HOME": str(scratch / "tabrelay")})

            from e2e.harness import PageServer
            from tabrelay.app import main as app_main
            from tabrelay.config.paths import Paths
            from tabrelay.config.settings import Settings, SettingsStore

            paths = Paths.resolve()

            def ports(settings: Settings) -> None:
                settings.relay_port = free_port()
                settings.mcp_port = free_port()

            SettingsStore(paths.settings_file).update(ports)
            pages = stack.enter_context(PageServer())
            code = app_main(paths, driver=session(desk.display, pages))
            log(f"the app exited with {code}")
            return code
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
