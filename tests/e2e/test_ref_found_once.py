"""An acting call finds its ref's element once (``ToolContext.found``): the approval's
description of what it touches, the recipe's locator, the secret check and the action share
the page object, where each used to ask the page again for the ref's frames, document and node
(three relay round trips each time); and it is made an object of Tabrelay's world once
(``ToolContext.adopted``: the effect's facts and the recipe's locator are read there). So the
element is resolved twice, once in each world. What a changed page does to that object is in
test_approval_targets.py (the element shown is the one acted on, or the ref is stale)."""

from __future__ import annotations

import asyncio

from e2e.agent import Agent, ref
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, PageServer
from e2e.test_evaluate_carries_its_tab import recorded
from support.harness import allow_everything

pytestmark = E2E


async def test_a_typing_call_finds_its_field_once_and_a_click_its_checkbox_once(
    app: AppUnderTest, agent: Agent, pages: PageServer
) -> None:
    await asyncio.to_thread(allow_everything, app.paths)
    tab = await agent.open(pages.url("tools/form.html"))
    snapshot = await agent.snapshot(tab)
    name, gift = ref(snapshot, "textbox", "Name *"), ref(snapshot, "checkbox", "Gift wrap")
    await agent.ok("browser_type", tab_id=tab, ref=name, text="set-up")  # the tab's set-up
    sent = recorded(app, tab)
    try:
        await agent.ok("browser_type", tab_id=tab, ref=name, text="Ada")
        assert sent.count("cdp.send DOM.getDocument") == 1, sent
        assert sent.count("cdp.send DOM.resolveNode") == 2, sent
        value = "document.getElementById('name').value"
        assert await agent.ok("browser_evaluate", tab_id=tab, expression=value) == '"Ada"'
        sent.clear()
        await agent.ok("browser_click", tab_id=tab, ref=gift)
        assert sent.count("cdp.send DOM.getDocument") == 1, sent
        assert sent.count("cdp.send DOM.resolveNode") == 2, sent
        checked = "document.getElementById('gift').checked"
        assert await agent.ok("browser_evaluate", tab_id=tab, expression=checked) == "true"
    finally:
        vars(app.browsers()[0]).pop("send_command")
