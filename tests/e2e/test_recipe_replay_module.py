"""Replaying a recipe in real Chromium (tools/groups/recipes.py), called at module level as the
endpoint will call it: a hand-built recipe runs through a multi-step page (typing, a select, a
checkbox, a key press, a click, a confirm dialog, a navigation, a text to see); a changed page stops
it at step 3 with what it looked for and what is near; a cancel anywhere leaves nothing held down;
no parameter value shows in a result, an error, a progress message or the log.

Pages under tests/e2e/pages/replay/. The ToolContext is made of the running app's own parts, as
``endpoint.calls`` makes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from pathlib import Path
from typing import Any

import pytest

from e2e.agent import Agent
from e2e.cdp import CdpError
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, Page, PageServer, wait_until
from tabrelay.errors import NavigationBlocked, TabrelayError, ToolError
from tabrelay.recipes.model import Locator, Param, Recipe, RecipeError, Step
from tabrelay.recipes.store import RecipeStore
from tabrelay.relay.browser import Browser
from tabrelay.tools.catalog import BY_NAME
from tabrelay.tools.context import ToolContext
from tabrelay.tools.groups.recipes import ListRecipesParams, RunRecipeParams, list_recipes
from tabrelay.tools.results import plain
from tabrelay.tools.state.guard import NavigationGuard

pytestmark = E2E

run_recipe = BY_NAME["browser_run_recipe"].run  # as the endpoint runs it: steps via the catalog

NAME_CANARY = "Ada-canary-7f3e"  # a parameter's value: never in a result, error or log
PASSWORD_CANARY = "pw-canary-91c2d"
NAME = Locator(role="textbox", name="Name", label="Name", css="#name")
SIZE = Locator(role="combobox", name="Size", label="Size", css="#size")
GIFT = Locator(role="checkbox", name="Gift wrap", css="#gift")
PASSWORD = Locator(label="Password", css="#pw")
PLACE = Locator(role="button", name="Place order", css="#place")


def order_recipe(name: str, start: str, done: str) -> Recipe:
    return Recipe(
        name=name,
        created=1_700_000_000.0,
        origin="agent",
        steps=[
            Step(action="navigate", url=start),
            Step(action="type", target=NAME, text="{{name}}"),
            Step(action="check", target=GIFT, checked=True),
            Step(action="select", target=SIZE, options=["Large"]),
            Step(action="type", target=PASSWORD, text="{{password}}"),
            Step(action="press", key="Shift+Tab", target=PASSWORD),
            Step(action="click", target=PLACE),
            Step(action="dialog", accept=True),
            Step(action="expect_text", text="Thanks, {{name}}: a large tea"),
        ],
        params=[Param(name="name", default="Ada"), Param(name="password", secret=True)],
        final_url=done,
        final_text="gift wrap yes, password given",
    )


class Progress:
    def __init__(self) -> None:
        self.messages: list[str] = []

    async def __call__(self, done: float, total: float | None, message: str | None) -> None:
        self.messages.append(f"{done:g}/{total}: {message}")


async def opened(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> tuple[int, Page, str]:
    run = uuid.uuid4().hex[:8]
    start = pages.url(f"replay/order.html?run={run}")
    tab = await agent.open(pages.url(f"index.html?run={run}"))
    page = await browser.attach_page(pages.url(f"index.html?run={run}"))
    return tab, page, start


def assert_no_canary(*texts: str) -> None:
    for text in texts:
        assert NAME_CANARY not in text and PASSWORD_CANARY not in text, text


@pytest.fixture
def store(tmp_path: Path) -> RecipeStore:
    return RecipeStore(tmp_path / "recipes")


async def test_a_recipe_replays_a_multi_step_page_without_showing_its_values(
    agent: Agent,
    browser: ExtensionBrowser,
    pages: PageServer,
    app: AppUnderTest,
    store: RecipeStore,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    tab, page, start = await opened(agent, browser, pages)
    done = pages.url("replay/done.html")
    store.save(order_recipe("order tea", start, done))
    progress = Progress()
    ctx = await app.tool_context(tab, progress=progress, guard=True, recipes=store)

    result = await run_recipe(
        ctx,
        RunRecipeParams(
            name="order tea", params={"name": NAME_CANARY, "password": PASSWORD_CANARY}
        ),
    )

    # What the page did: every step ran with the values given.
    summary = await page.evaluate("document.getElementById('summary').textContent")
    assert summary == (f"Thanks, {NAME_CANARY}: a large tea, gift wrap yes, password given."), (
        summary
    )
    assert result.data is not None
    assert result.data["steps"] == 9
    assert result.data["final_text_found"] is True
    assert result.data["final_url_matched"] is False  # the query carries the order
    assert result.data["title"] == "Order placed"
    assert "Ran recipe 'order tea': 9 step(s)" in plain(result.text)
    assert f"on the recording's page, {done}, apart from its query" in plain(result.text)
    assert "The page shows 'gift wrap yes, password given'" in plain(result.text)
    assert "[secret: " in result.data["url"]  # the name went into the URL: masked there
    # Progress names each step as the recipe holds it, and only grows.
    assert '2/10: step 3/9: check checkbox "Gift wrap"' in progress.messages
    assert '3/10: step 4/9: choose Large in combobox "Size"' in progress.messages
    assert "1/10: step 2/9: type '{{name}}' into textbox \"Name\"" in progress.messages
    assert "9/10: checking the page shows 'gift wrap yes, password given'" in progress.messages
    assert progress.messages[-1] == "10/10: all 9 steps ran"
    counts = [float(m.split("/")[0]) for m in progress.messages]
    assert counts == sorted(counts) and len(set(counts)) >= 10, progress.messages
    assert_no_canary(result.text, str(result.data), *progress.messages, caplog.text)
    await page.close()


async def test_a_changed_page_stops_the_run_at_step_3_saying_what_and_what_is_near(
    agent: Agent,
    browser: ExtensionBrowser,
    pages: PageServer,
    app: AppUnderTest,
    store: RecipeStore,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    tab, page, start = await opened(agent, browser, pages)
    changed = start + "&v=2"  # the shop reworded its gift option
    store.save(order_recipe("order tea", changed, pages.url("replay/done.html")))
    ctx = await app.tool_context(tab, progress=Progress(), guard=True, recipes=store)

    with pytest.raises(ToolError) as failed:
        await run_recipe(
            ctx,
            RunRecipeParams(
                name="order tea",
                params={"name": NAME_CANARY, "password": PASSWORD_CANARY},
                timeout=2,
            ),
        )
    message = plain(failed.value.message)
    assert message.startswith(
        "step 3 of 9 (check checkbox \"Gift wrap\") of recipe 'order tea' failed: "
        'could not find checkbox "Gift wrap" within 2 s (tried role '
    ), message
    assert 'css "#gift": none' in message, message
    assert 'the page offers nearby: checkbox "Wrap it as a present"' in message, message
    assert (
        f"Ran before it: 1. go to {changed}; 2. type '{{{{name}}}}' into textbox \"Name\"."
        in message
    ), message
    assert_no_canary(message, caplog.text)
    # Steps 1 and 2 ran; nothing after step 3 did.
    assert await page.evaluate("document.getElementById('name').value") == NAME_CANARY
    assert await page.evaluate("document.getElementById('pw').value") == ""
    await page.close()


async def test_parameters_are_checked_before_anything_runs_and_recipes_are_listed(
    agent: Agent,
    browser: ExtensionBrowser,
    pages: PageServer,
    app: AppUnderTest,
    store: RecipeStore,
) -> None:
    tab, page, start = await opened(agent, browser, pages)
    store.save(order_recipe("order tea", start, pages.url("replay/done.html")))
    ctx = await app.tool_context(tab, progress=Progress(), guard=True, recipes=store)

    with pytest.raises(RecipeError, match=r"needs a value for password \(--param password=…\)"):
        await run_recipe(ctx, RunRecipeParams(name="order tea"))
    with pytest.raises(RecipeError, match="has no parameter colour"):
        await run_recipe(ctx, RunRecipeParams(name="order tea", params={"colour": "x"}))
    with pytest.raises(RecipeError, match="there is no recipe named 'tea'"):
        await run_recipe(ctx, RunRecipeParams(name="tea"))
    assert await page.evaluate("location.pathname") == "/index.html"  # nothing ran

    listed = await list_recipes(ctx, ListRecipesParams())
    assert plain(listed.text).splitlines()[0] == "1 saved recipe(s):"
    assert "'order tea' (revision 1, 9 steps, recorded from an agent); parameters: name, " in (
        plain(listed.text)
    )
    assert "password (secret, required)" in plain(listed.text)
    assert listed.data is not None and listed.data["recipes"][0]["params"] == [
        {"name": "name", "secret": False, "required": False},
        {"name": "password", "secret": True, "required": True},
    ]
    await page.close()


async def test_a_step_that_takes_the_tab_to_a_blocked_site_stops_the_run(
    agent: Agent,
    browser: ExtensionBrowser,
    pages: PageServer,
    app: AppUnderTest,
    store: RecipeStore,
) -> None:
    tab, page, start = await opened(agent, browser, pages)
    store.save(
        Recipe(
            name="wander",
            created=1_700_000_000.0,
            origin="agent",
            steps=[
                Step(action="navigate", url=start),
                Step(
                    action="click", target=Locator(role="link", name="Our other shop", css="#away")
                ),
                Step(action="type", target=NAME, text="never typed"),
            ],
        )
    )
    ctx = await app.tool_context(tab, progress=Progress(), guard=True, recipes=store)
    settings = app.harness.core.settings_store.current.navigation
    ctx.guard = NavigationGuard(
        settings.model_copy(update={"block": ["localhost"]}), own_ports=ctx.guard.own_ports
    )

    with pytest.raises(NavigationBlocked) as blocked:
        await run_recipe(ctx, RunRecipeParams(name="wander", timeout=5))
    message = plain(blocked.value.message)
    assert message.startswith(
        "step 2 of 3 (click link \"Our other shop\") of recipe 'wander' failed: the tab went to "
        "a site agents may not use ("
    ), message
    assert f"Ran before it: 1. go to {start}." in message
    assert "localhost" in await page.evaluate("location.host")
    await page.close()


async def test_a_run_whose_page_lacks_the_final_text_fails_saying_so(
    agent: Agent,
    browser: ExtensionBrowser,
    pages: PageServer,
    app: AppUnderTest,
    store: RecipeStore,
) -> None:
    tab, page, start = await opened(agent, browser, pages)
    store.save(
        Recipe(
            name="check",
            created=1_700_000_000.0,
            origin="agent",
            steps=[Step(action="navigate", url=start)],
            final_text="Order placed",
        )
    )
    ctx = await app.tool_context(tab, progress=Progress(), guard=True, recipes=store)

    with pytest.raises(ToolError) as failed:
        await run_recipe(ctx, RunRecipeParams(name="check", timeout=1))
    assert plain(failed.value.message).startswith(
        "all 1 step(s) of 'check' ran, but the page does not show 'Order placed', the text the "
        "recording ended on (waited 1 s for 'Order placed': the text never appeared); tab "
    ), plain(failed.value.message)
    await page.close()


PRESSES = {("Input.dispatchMouseEvent", "mousePressed"), ("Input.dispatchKeyEvent", "keyDown"),
           ("Input.dispatchKeyEvent", "rawKeyDown")}  # fmt: skip


class CancelAtPress:
    """Cancels ``run`` while its ``n``-th press (a mouse button or key going down) waits for
    the browser's answer, the way the MCP SDK cancels: every await after the first too."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.send = browser.send_command
        self.n = 0
        self.presses = 0
        self.run: asyncio.Task[Any] | None = None
        self.hit = False

    async def send_command(self, method: str, params: Any = None, *, timeout: Any = None) -> Any:
        if method == "cdp.send" and isinstance(params, dict):
            inner = params.get("params") or {}
            if (params.get("method"), inner.get("type")) in PRESSES and not self.hit:
                self.presses += 1
                if self.presses == self.n:
                    self.hit = True
                    self._cancel()
        return await self.send(method, params, timeout=timeout)

    def _cancel(self) -> None:
        run, loop = self.run, asyncio.get_running_loop()
        assert run is not None

        def again() -> None:
            if not run.done():
                run.cancel()
                loop.call_soon(again)

        loop.call_soon(again)


async def test_cancelling_a_run_at_any_press_leaves_nothing_held_down(
    agent: Agent,
    browser: ExtensionBrowser,
    pages: PageServer,
    app: AppUnderTest,
    store: RecipeStore,
) -> None:
    tab, page, start = await opened(agent, browser, pages)
    store.save(order_recipe("order tea", start, pages.url("replay/done.html")))
    ctx = await app.tool_context(tab, progress=Progress(), guard=True, recipes=store)
    relay = ctx.need_browser()
    hook = CancelAtPress(relay)
    relay.send_command = hook.send_command  # type: ignore[method-assign]
    cancelled = 0
    try:
        for n in range(1, 40):
            hook.n, hook.presses, hook.hit = n, 0, False
            run = asyncio.ensure_future(
                run_recipe(
                    ctx,
                    RunRecipeParams(
                        name="order tea", params={"name": "Ada", "password": "pw"}, timeout=5
                    ),
                )
            )
            hook.run = run
            outcome = (await asyncio.wait_for(asyncio.gather(run, return_exceptions=True), 30))[0]
            if not hook.hit:
                assert not isinstance(outcome, BaseException), outcome
                break  # the run has fewer presses than n: every press was cancelled once
            assert isinstance(outcome, asyncio.CancelledError), (n, outcome)
            cancelled += 1
            assert ctx.held_input == {}, n
            await _settled(ctx, relay)
            held = await _held(page, ctx)
            assert held == {"buttons": [], "keys": []}, (n, held)
    finally:
        relay.send_command = hook.send  # type: ignore[method-assign]
        await page.close()
    # A click, a checkbox, typing, Shift+Tab: the recipe presses at least this often.
    assert cancelled >= 4, cancelled


async def _settled(ctx: ToolContext, relay: Browser) -> None:
    """What the cancelled run left to finish in the background has ended; a confirm its
    released click opened is dismissed, so the page answers again."""
    await wait_until(lambda: not ctx.background, timeout=10, message="background work ends")
    with contextlib.suppress(TabrelayError):
        await relay.cdp(ctx.need_tab().id, "Page.handleJavaScriptDialog", {"accept": False})
    await wait_until(lambda: relay.pending_count == 0, timeout=10, message="commands answered")


async def _held(page: Page, ctx: ToolContext) -> object:
    ask = "document.readyState === 'complete' && typeof heldNow === 'function' && heldNow()"

    async def held() -> object:
        with contextlib.suppress(CdpError, TimeoutError):
            return await page.evaluate(ask, timeout=2)
        return None

    return await wait_until(held, timeout=10, message="the page answers")
