"""A page that cannot be described, or hangs, never holds up or fails the question.

The scripted extension plays a page that answers some commands and never others: the person is
still asked within the step timeout, the element says it could not be described (or comes
without a picture), and the outline's removal is sent even when its drawing never answered.
Real pages are tests/e2e/test_approval_targets.py's.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from typing import Any

import pytest

from support.fake_extension import TINY_PNG, FakeExtension
from support.harness import RelayHarness, ScriptedToolApprover, running_core
from support.mcp import mcp_client, text_of
from tabrelay.approval.gate import Choice
from tabrelay.config.paths import Paths
from tabrelay.tools import targets

STEP = 0.2  # the tests' step timeout, so a hung step costs little


@pytest.fixture
async def app(home: Paths, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[RelayHarness]:
    monkeypatch.setattr(targets, "STEP_TIMEOUT", STEP)
    async with running_core(home, tool_approver=ScriptedToolApprover(Choice.DENY)) as harness:
        await harness.extension()
        await harness.browser_count(1)
        yield harness


async def never(tab_id: int, args: dict[str, Any]) -> Any:
    await asyncio.Event().wait()


def a_button(extension: FakeExtension, *, hang: str | None = None) -> None:
    """The page holds one button, ``#buy``; ``hang`` names the step it never answers."""

    async def evaluate(tab_id: int, args: dict[str, Any]) -> Any:
        return {"result": {"type": "object", "objectId": "buy-1"}}

    async def describe(tab_id: int, args: dict[str, Any]) -> Any:
        return {"node": {"backendNodeId": 7, "nodeName": "BUTTON"}}

    async def resolve(tab_id: int, args: dict[str, Any]) -> Any:
        return {"object": {"objectId": "buy-1"}}

    async def ax(tab_id: int, args: dict[str, Any]) -> Any:
        button = {"backendDOMNodeId": 7, "role": {"value": "button"}, "name": {"value": "Buy"}}
        return {"nodes": [button]}

    async def call(tab_id: int, args: dict[str, Any]) -> Any:
        function = args["functionDeclaration"]
        if "attachShadow" in function:  # the outline
            if hang == "outline":
                await asyncio.Event().wait()
            return {"result": {"value": True}}
        if "querySelectorAll('[data-tabrelay" in function:  # its removal
            return {"result": {}}
        return {"result": {"value": {"field": False, "type": "", "text": "Buy"}}}

    async def quads(tab_id: int, args: dict[str, Any]) -> Any:
        return {"quads": [[10, 10, 60, 10, 60, 30, 10, 30]]}

    handlers = {
        "Runtime.evaluate": evaluate,
        "DOM.describeNode": describe,
        "DOM.resolveNode": resolve,
        "Accessibility.getPartialAXTree": ax,
        "Runtime.callFunctionOn": call,
        "DOM.getContentQuads": quads,
    }
    if hang in ("Accessibility.getPartialAXTree", "Page.captureScreenshot"):
        handlers[hang] = never
    extension.cdp_handlers.update(handlers)


def functions(extension: FakeExtension, marker: str) -> list[dict[str, Any]]:
    return [
        args
        for _, method, args in extension.cdp_calls
        if method == "Runtime.callFunctionOn" and marker in args["functionDeclaration"]
    ]


async def click(app: RelayHarness) -> str:
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token) as client:
        result = await asyncio.wait_for(
            client.call_tool("browser_click", {"selector": "#buy"}), 10 * STEP + 5
        )
    assert result.is_error
    return text_of(result)


async def test_an_element_is_described_outlined_pictured_and_unoutlined(app: RelayHarness) -> None:
    extension = app.extensions[0]
    a_button(extension)
    assert "denied by the person" in await click(app)
    [request] = app.tool_approver.requests
    [target] = request.targets
    assert (target.role, target.name, target.frame, target.problem) == (
        "button",
        "Buy",
        "main frame",
        None,
    )
    assert target.picture == base64.b64decode(TINY_PNG)  # the simulated page's screenshot
    [outline] = functions(extension, "attachShadow")
    [removal] = functions(extension, "querySelectorAll('[data-tabrelay-highlight")
    token, label = (a["value"] for a in outline["arguments"][:2])
    assert label == "Tabrelay: the agent wants to click this"
    assert removal["arguments"] == [{"value": token}] and removal["objectId"] == "buy-1"
    [row] = await asyncio.to_thread(app.core.command_log.recent, 1)  # type: ignore[union-attr]
    assert row.targets == '#buy: button "Buy", in the main frame'  # its text is its name


@pytest.mark.parametrize(
    ("hang", "problem"),
    [
        ("Accessibility.getPartialAXTree", "the page did not answer in time"),
        ("outline", None),
        ("Page.captureScreenshot", None),
    ],
)
async def test_a_hung_page_is_skipped_and_the_person_is_still_asked(
    app: RelayHarness, hang: str, problem: str | None
) -> None:
    extension = app.extensions[0]
    a_button(extension, hang=hang)
    started = asyncio.get_running_loop().time()
    assert "denied by the person" in await click(app)
    assert asyncio.get_running_loop().time() - started < 3 * STEP + 2
    [request] = app.tool_approver.requests
    [target] = request.targets
    assert target.problem == problem
    if problem is not None:
        assert target.describe() == f"#buy: could not be described ({problem})"
        assert not functions(extension, "attachShadow")  # nothing to outline
    else:
        # An outline that never answered is still taken away, by the same token.
        [outline] = functions(extension, "attachShadow")
        [removal] = functions(extension, "querySelectorAll('[data-tabrelay-highlight")
        assert removal["arguments"][0] == outline["arguments"][0]
        assert target.picture is None if hang == "Page.captureScreenshot" else target.picture


async def test_an_element_that_is_not_there_is_said_so_and_still_asked(app: RelayHarness) -> None:
    # The simulated page's Runtime.evaluate finds no element for any selector.
    assert "denied by the person" in await click(app)
    [request] = app.tool_approver.requests
    [target] = request.targets
    assert target.describe() == (
        "#buy: could not be described (nothing on the page matches the selector '#buy')"
    )
    [row] = await asyncio.to_thread(app.core.command_log.recent, 1)  # type: ignore[union-attr]
    assert row.targets == target.describe()
