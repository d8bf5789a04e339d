"""The guard's look at the tab after a tool ran (endpoint/calls.py): only a tab the browser says
is gone (``no_tab``) lets the result through unchecked; a look that fails any other way, with a
code or without one, withholds the result with a clear error, since the tab may show a site
agents may not use by then."""

from __future__ import annotations

from typing import Any

import pytest

from support.fake_extension import ExtensionError, FakeExtension
from support.harness import allow_everything, running_core
from support.mcp import mcp_client, text_of
from tabrelay.config.paths import Paths


def fail_the_next_look(extension: FakeExtension, error: dict[str, Any]) -> None:
    """The page's script runs; after it, the browser fails to say where the tab is: its answer
    carries no tab (as the extension leaves out one it cannot read), and the look fails."""

    async def evaluate(tab_id: int, args: dict[str, Any]) -> dict[str, Any]:
        async def look(params: dict[str, Any]) -> dict[str, Any]:
            raise ExtensionError(error["message"], code=error.get("code"))

        extension.handlers["tabs.get"] = look
        extension.carry = lambda tab_id: None
        return {"result": {"type": "string", "value": "read from the page"}}

    extension.cdp_handlers["Runtime.evaluate"] = evaluate


@pytest.mark.parametrize(
    "error",
    [
        {"message": "Something went wrong."},  # no code: not a word about the tab
        {"message": "Cannot access contents of the page.", "code": "restricted_url"},
    ],
)
async def test_a_look_after_the_call_that_fails_withholds_the_result(
    home: Paths, error: dict[str, Any]
) -> None:
    allow_everything(home)
    async with running_core(home) as app:
        extension = await app.extension()
        await app.browser_count(1)
        fail_the_next_look(extension, error)
        token = await app.add_client()
        async with mcp_client(app.base_mcp(), token) as client:
            result = await client.call_tool(
                "browser_evaluate", {"expression": "document.title", "tab_id": 1}
            )
    assert result.is_error
    said = text_of(result)
    assert "read from the page" not in said
    assert said.startswith("could not look at tab 1 after browser_evaluate ran"), said
    assert error["message"] in said and "withheld" in said


async def test_a_tab_the_browser_says_is_gone_after_the_call_still_gives_the_result(
    home: Paths,
) -> None:
    allow_everything(home)
    async with running_core(home) as app:
        extension = await app.extension()
        await app.browser_count(1)
        fail_the_next_look(extension, {"message": "No tab with id: 1.", "code": "no_tab"})
        token = await app.add_client()
        async with mcp_client(app.base_mcp(), token) as client:
            result = await client.call_tool(
                "browser_evaluate", {"expression": "document.title", "tab_id": 1}
            )
    assert not result.is_error, text_of(result)
    assert text_of(result) == '"read from the page"'
