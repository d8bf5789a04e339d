"""Opening closed shadow roots to Tabrelay's world (tools/page/shadow_roots.py), against scripted
CDP answers: what is asked, in what order, and what an answer of another shape does (nothing is
opened, nothing raised). The scripts themselves run in real Chromium in
tests/e2e/test_reach_closed_shadow.py; here they only have to parse."""

from __future__ import annotations

from typing import Any

import pytest

from support.scripted import ScriptedTab
from tabrelay.errors import CommandFailed, CommandTimeout
from tabrelay.tools.context import ToolContext
from tabrelay.tools.page import shadow_roots

WORLD = 7


class Page(ScriptedTab):
    objects = "call-group"
    resolve = ToolContext.resolve


def candidates_then(*results: dict[str, Any]) -> list[dict[str, Any]]:
    """Runtime.callFunctionOn answers: CANDIDATES' results in turn, REMEMBER's after each."""
    answers: list[dict[str, Any]] = []
    for result in results:
        answers += [{"result": result}, {"result": {"type": "undefined"}}]
    return answers


async def opened(page: Page) -> int:
    return await shadow_roots.open_closed_roots(page, WORLD)  # type: ignore[arg-type]


async def test_a_page_without_candidates_costs_one_command() -> None:
    page = Page(Runtime_callFunctionOn={"result": {"type": "object", "subtype": "null"}})
    assert await opened(page) == 0
    assert page.methods() == ["Runtime.callFunctionOn"]
    params = page.sent[0][1]
    assert params["functionDeclaration"] == shadow_roots.CANDIDATES
    assert params["executionContextId"] == WORLD


async def test_each_candidate_is_described_and_its_closed_root_given_to_the_world() -> None:
    described = [
        {"node": {"backendNodeId": 10, "shadowRoots": [
            {"backendNodeId": 11, "shadowRootType": "closed"}]}},
        {"node": {"backendNodeId": 20, "shadowRoots": [
            {"backendNodeId": 21, "shadowRootType": "user-agent"}]}},
        CommandFailed("No node with given id found"),  # gone meanwhile
    ]  # fmt: skip
    page = Page(
        Runtime_callFunctionOn=candidates_then(
            {"type": "object", "objectId": "array"}, {"type": "object", "subtype": "null"}
        ),
        Runtime_getProperties={"result": [
            {"name": str(i), "value": {"objectId": f"host-{i}"}} for i in range(3)
        ] + [{"name": "length", "value": {"value": 3}}]},
        DOM_describeNode=described,
        DOM_resolveNode=lambda p: {"object": {"objectId": f"root-{p['backendNodeId']}"}},
    )  # fmt: skip
    assert await opened(page) == 1
    calls = [p for m, p in page.sent if m == "Runtime.callFunctionOn"]
    assert [c["functionDeclaration"] for c in calls] == [
        shadow_roots.CANDIDATES, shadow_roots.REMEMBER, shadow_roots.CANDIDATES,
    ]  # fmt: skip
    token = calls[0]["arguments"][1]["value"]
    assert calls[1]["arguments"] == [{"value": token}, {"objectId": "host-0"},
                                     {"objectId": "root-11"}]  # fmt: skip
    assert calls[2]["arguments"][1]["value"] == token  # the next round: the same read
    resolved = [p for m, p in page.sent if m == "DOM.resolveNode"]
    assert resolved == [{"backendNodeId": 11, "executionContextId": WORLD,
                         "objectGroup": "call-group"}]  # fmt: skip


async def test_candidates_without_a_closed_root_are_still_marked_asked() -> None:
    page = Page(
        Runtime_callFunctionOn=candidates_then({"type": "object", "objectId": "array"}),
        Runtime_getProperties={"result": [{"name": "0", "value": {"objectId": "host-0"}}]},
        DOM_describeNode={"node": {"backendNodeId": 10}},
    )
    assert await opened(page) == 0
    last = page.sent[-1][1]
    assert last["functionDeclaration"] == shadow_roots.REMEMBER
    assert len(last["arguments"]) == 1  # the token alone: nothing to record, all asked


async def test_many_candidates_are_asked_about_in_one_description_of_the_page() -> None:
    tree = {"backendNodeId": 1, "children": [
        {"backendNodeId": 2, "shadowRoots": [{"backendNodeId": 3, "shadowRootType": "closed",
            "children": [{"backendNodeId": 4, "shadowRoots": [
                {"backendNodeId": 5, "shadowRootType": "closed"}]}]}]},
        {"backendNodeId": 6, "contentDocument": {"backendNodeId": 7, "children": [
            {"backendNodeId": 8, "shadowRoots": [
                {"backendNodeId": 9, "shadowRootType": "closed"}]}]}},
        {"backendNodeId": 10, "shadowRoots": [{"backendNodeId": 11, "shadowRootType": "open"}]},
    ]}  # fmt: skip
    page = Page(
        Runtime_callFunctionOn=candidates_then(
            {"type": "number", "value": 5000}, {"type": "object", "subtype": "null"}
        ),
        Runtime_evaluate={"result": {"type": "object", "objectId": "document"}},
        DOM_describeNode={"node": tree},
        DOM_resolveNode=lambda p: {"object": {"objectId": f"node-{p['backendNodeId']}"}},
    )
    assert await opened(page) == 3
    assert ("DOM.describeNode", {"objectId": "document", "depth": -1, "pierce": True}) in page.sent
    remember = next(
        p for m, p in page.sent if p.get("functionDeclaration") == shadow_roots.REMEMBER
    )
    given = [a["objectId"] for a in remember["arguments"][1:]]
    pairs = set(zip(given[::2], given[1::2], strict=True))
    assert pairs == {("node-2", "node-3"), ("node-4", "node-5"), ("node-8", "node-9")}


async def test_closed_roots_inside_closed_roots_are_bounded_by_rounds() -> None:
    rounds = shadow_roots.MAX_ROUNDS
    page = Page(
        Runtime_callFunctionOn=candidates_then(
            *[{"type": "object", "objectId": "array"}] * (rounds + 5)
        ),
        Runtime_getProperties={"result": [{"name": "0", "value": {"objectId": "host"}}]},
        DOM_describeNode={"node": {"backendNodeId": 1, "shadowRoots": [
            {"backendNodeId": 2, "shadowRootType": "closed"}]}},
        DOM_resolveNode={"object": {"objectId": "root"}},
    )  # fmt: skip
    assert await opened(page) == rounds
    assert page.methods().count("DOM.describeNode") == rounds


@pytest.mark.parametrize(
    "answer",
    [
        {"exceptionDetails": {"text": "Uncaught"}, "result": {"type": "object"}},
        {"result": {"type": "string", "value": "nothing"}},
        {"result": {}},
        {},
    ],
)
async def test_an_answer_of_another_shape_opens_nothing_and_raises_nothing(
    answer: dict[str, Any],
) -> None:
    page = Page(Runtime_callFunctionOn=answer)
    assert await opened(page) == 0
    assert page.methods() == ["Runtime.callFunctionOn"]


async def test_a_description_of_another_shape_opens_nothing() -> None:
    page = Page(
        Runtime_callFunctionOn=candidates_then({"type": "number", "value": 500}),
        Runtime_evaluate={"result": {"type": "object", "objectId": "document"}},
        DOM_describeNode={"node": {"backendNodeId": "one", "shadowRoots": [
            {"backendNodeId": None, "shadowRootType": "closed"}, {}]}},
    )  # fmt: skip
    assert await opened(page) == 0


@pytest.mark.parametrize("failure", [CommandTimeout("no answer in 5 s"), CommandFailed("too big")])
async def test_a_page_too_large_to_describe_keeps_its_roots_and_is_not_asked_again(
    failure: Exception,
) -> None:
    page = Page(
        Runtime_callFunctionOn=candidates_then({"type": "number", "value": 10**6}),
        Runtime_evaluate={"result": {"type": "object", "objectId": "document"}},
        DOM_describeNode=failure,
    )
    assert await opened(page) == 0
    last = page.sent[-1][1]
    assert last["functionDeclaration"] == shadow_roots.REMEMBER  # its candidates count as asked
    assert len(last["arguments"]) == 1
    described = [p for m, p in page.sent if m == "DOM.describeNode"]
    assert described == [{"objectId": "document", "depth": -1, "pierce": True}]


async def test_a_page_between_documents_raises_command_failed() -> None:
    page = Page(Runtime_callFunctionOn=CommandFailed("Cannot find context with specified id"))
    with pytest.raises(CommandFailed):
        await opened(page)
