"""What a form tool's error says about a secret field: never the value asked for, nor (for a
select of card details) its choices — errors land in the command log (review of issue 14)."""

from __future__ import annotations

from typing import Any

import pytest

from tabrelay.errors import ToolError
from tabrelay.tools.groups import forms
from tabrelay.tools.page.refs import Located
from tabrelay.tools.results import page_text

CANARY = "12/29-CANARY"


class PageSays:
    """A tool context whose page answers every element function with ``answer``."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    async def cdp(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        assert method == "Runtime.callFunctionOn"
        return {"result": {"value": self.answer}}

    async def call_on(self, object_id: str, function: str, *args: Any) -> dict[str, Any]:
        return await self.cdp("Runtime.callFunctionOn", {"objectId": object_id})


def select(secret: str | None) -> Located:
    return Located("obj-1", 0, 0, "select", "", True, secret, "combobox “Expiry”")


@pytest.mark.parametrize(
    "answer",
    [
        {"error": "missing", "value": CANARY, "options": ["01/27 CANARY-OPTION"]},
        {"error": "disabled_option", "value": CANARY},
    ],
)
async def test_a_card_detail_select_never_quotes_the_value_or_its_options(answer: Any) -> None:
    with pytest.raises(ToolError) as refused:
        await forms._choose(PageSays(answer), select("card detail"), [CANARY], "Expiry")  # type: ignore[arg-type]
    assert "CANARY" not in str(refused.value), str(refused.value)


async def test_a_plain_select_still_says_what_it_offers() -> None:
    answer = {"error": "missing", "value": "Mars", "options": ["Earth", "Venus"]}
    with pytest.raises(ToolError) as raised:
        await forms._choose(PageSays(answer), select(None), ["Mars"], "Planet")  # type: ignore[arg-type]
    # The options are the page's words, marked as such.
    said = f"has no option 'Mars'; its options: {page_text(repr('Earth') + ', ' + repr('Venus'))}"
    assert said in raised.value.message
