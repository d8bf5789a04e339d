"""``page_outline`` turns the outline script's answer into nodes shaped like Chrome's
accessibility tree, and refuses an answer of any other shape whole. The script itself runs in
real pages in tests/e2e (test_page_outline.py, the snapshot tests)."""

from __future__ import annotations

import hashlib
import json
from types import SimpleNamespace
from typing import Any

import pytest

from tabrelay.errors import CommandFailed
from tabrelay.tools.page import page_outline
from tabrelay.tools.page.outline import PROPERTIES, build_outline
from tabrelay.tools.scripts import page_scripts
from tabrelay.tools.state.tab_state import DETACHED, SessionState


def answer(frames: list[dict[str, Any]], editors: Any = None, withheld: Any = None) -> str:
    return json.dumps({"frames": frames, "editors": editors or [], "withheld": withheld or {}})


TOP = {
    "owner": None,
    "url": "https://shop.example/",
    "nodes": [
        [0, -1, "RootWebArea", "Shop", 0, None, None, 0],
        [7, 0, "heading", "Pay", 1, None, {"level": 1}, 0],
        [8, 1, "StaticText", "Pay", 0, None, None, 0],
        [9, 0, "textbox", "Code", 0, None, {"secret": "one-time code", "focusable": True}, 1],
        [10, 0, "generic", "", 0, None, None, 2 | 4 | 8 | 16],
        [11, 0, "Iframe", "Card", 0, None, None, 0],
    ],
}


def test_rows_become_nodes_shaped_like_chromes_tree() -> None:
    page = page_outline.decode(answer([TOP], [[9, 10], None]), "main-frame", 2)
    (frame,) = page.frames
    assert (frame.frame_id, frame.url, frame.owner) == ("main-frame", "https://shop.example/", None)
    root, heading, text, code, generic, iframe = frame.nodes
    assert root["childIds"] == [
        heading["nodeId"],
        code["nodeId"],
        generic["nodeId"],
        iframe["nodeId"],
    ]
    assert "backendDOMNodeId" not in root and "parentId" not in root
    assert heading["backendDOMNodeId"] == 7 and heading["parentId"] == root["nodeId"]
    assert heading["name"] == {
        "value": "Pay",
        "sources": [{"type": "contents", "value": {"value": "Pay"}}],
        "whole": True,  # not cut after 100 descendants, as Chrome's names are
    }
    assert heading[PROPERTIES] == {"level": 1}  # by name, as the walk reads them
    assert text["role"] == {"value": "StaticText"}
    # The kind of secret is the app's to know; it is no property of the node.
    assert code[PROPERTIES] == {"focusable": True}
    assert page.secrets == {9: "one-time code"}
    assert generic["ignored"] is True
    assert (page.clickable, page.inline, page.script_focus, page.visible) == (
        {9},
        {10},
        {10},
        {10},
    )
    assert page.editors == [(9, 10), None]  # the second editor moved meanwhile


def test_frames_that_were_not_read_say_why() -> None:
    frames = [
        TOP,
        {"owner": 11, "url": "https://pay.example/", "nodes": [], "error": "cross-origin"},
        {"owner": 12, "url": "https://bad.example/", "nodes": [], "refused": True},
    ]
    page = page_outline.decode(answer(frames), "main-frame", 0)
    assert [(f.owner, f.error, f.refused) for f in page.frames] == [
        (None, None, None),
        (11, "cross-origin", None),
        (12, None, "agents may not use it"),
    ]
    outline = build_outline(page.frames, assign_ref=lambda node, frame: f"e{node}")
    assert "(cross-origin frame https://pay.example/ is not included" in outline.text


def test_what_a_person_cannot_see_is_counted_and_flagged() -> None:
    """Text left out is counted by why; a control out of sight stays, flagged; a name that says
    otherwise than the button shows is flagged without its words (the script put the drawn
    label in their place)."""
    rows = [
        [0, -1, "RootWebArea", "Shop", 0, None, None, 0],
        [7, 0, "link", "Skip to content", 1, None, {"unseen": True, "focusable": True}, 0],
        [8, 0, "button", "Save", 1, None, {"differs": True, "focusable": True}, 0],
        [9, 0, "button", "Close", 0, None, {"focusable": True}, 0],
    ]
    frames = [{"owner": None, "url": "https://shop.example/", "nodes": rows}]
    page = page_outline.decode(
        answer(frames, [], {"transparent": 2, "covered": 1}), "main-frame", 0
    )
    assert page.withheld == {"transparent": 2, "covered": 1}
    outline = build_outline(page.frames, assign_ref=lambda node, frame: f"e{node}")
    assert outline.lines == [
        'link "Skip to content" [e7] (not shown on screen)',
        'button "Save" [e8] (its accessible name differs: not shown)',
        'button "Close" [e9]',
    ]
    assert page_scripts.withheld_note(page.withheld) == (
        "(left out 3 texts a sighted person cannot see: 2 transparent, 1 covered)"
    )


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "not json",
        "[]",
        json.dumps({"frames": 1, "editors": []}),
        json.dumps({"frames": []}),  # no editors
        answer([{"owner": None, "url": "", "nodes": [[1, -1, "button"]]}]),  # a short row
        answer([{"owner": None, "url": "", "nodes": [[1, 3, "button", "", 0, None, None, 0]]}]),
        answer([{"owner": None, "url": "", "nodes": [[1, 0, "button", "", 0, None, None, 0]]}]),
        answer([{"owner": None, "url": "", "nodes": [[1, -1, "button", "", 0, None, [], 0]]}]),
        answer([{"owner": None, "url": "", "nodes": [[1, -1, "button", "", 0, None, None, "x"]]}]),
        answer([TOP], [["nine", 10]]),
        answer([TOP], [9]),  # not a pair
        answer([TOP], [[9]]),
        answer([TOP], [[9, 10], [11, 12]]),  # more than were handed in
        answer([TOP], [[9, 10]], withheld={"transparent": "many"}),
        answer([TOP], [[9, 10]], withheld=["transparent"]),
    ],
)
def test_an_answer_of_another_shape_is_refused_whole(text: Any) -> None:
    with pytest.raises(CommandFailed, match="malformed"):
        page_outline.decode(text, "main-frame", 1)


def test_the_answer_says_a_document_still_parsing_and_the_tools_it_declares() -> None:
    listed = json.dumps([{"name": "search", "description": "Find", "schema": "{}", "readOnly": 1}])
    value = json.loads(answer([TOP]))
    page = page_outline.decode(json.dumps(value | {"parsing": True, "tools": listed}), "F", 0)
    assert page.parsing and [t.name for t in page.tools] == ["search"]
    page = page_outline.decode(answer([TOP]), "F", 0)  # a frame's, or a page declaring none
    assert not page.parsing and page.tools == []
    odd = page_outline.decode(json.dumps(value | {"parsing": "yes", "tools": {"x": 1}}), "F", 0)
    assert not odd.parsing and odd.tools == []


class Worlds:
    """A tab's context as ``page_outline.world`` uses it: each world asked for is a new id."""

    def __init__(self) -> None:
        self.state = SimpleNamespace(session=SessionState())
        self.made = 0

    async def cdp(self, method: str, params: dict[str, Any], session: str | None = None) -> Any:
        assert method == "Page.createIsolatedWorld" and params["worldName"] == page_outline.WORLD
        self.made += 1
        return {"executionContextId": 100 + self.made}


async def test_a_world_is_asked_for_once_per_document_it_is_known_by() -> None:
    ctx = Worlds()
    first = await page_outline.world(ctx, "F", loader="L1")  # type: ignore[arg-type]
    assert await page_outline.world(ctx, "F", loader="L1") == first  # type: ignore[arg-type]
    assert ctx.made == 1
    # Another document of the frame, a frame of another process, or a read that does not know
    # the document: asked for again.
    assert await page_outline.world(ctx, "F", loader="L2") != first  # type: ignore[arg-type]
    await page_outline.world(ctx, "F", "S1", loader="L1")  # type: ignore[arg-type]
    await page_outline.world(ctx, "F")  # type: ignore[arg-type]
    await page_outline.world(ctx, "F")  # type: ignore[arg-type]
    assert ctx.made == 5
    # A child session that goes takes its worlds; a new debugger session, all of them.
    ctx.state.session.learn(DETACHED, {"sessionId": "S1"}, None)
    assert set(ctx.state.session.worlds) == {("", "F", "L1"), ("", "F", "L2")}
    ctx.state.session.fresh()
    assert ctx.state.session.worlds == {}
    await page_outline.world(ctx, "F", loader="L1")  # type: ignore[arg-type]
    assert ctx.made == 6


class Outlines:
    """A world that has the outline's code kept, or not (a world made anew keeps nothing)."""

    def __init__(self, keeps: bool) -> None:
        self.keeps = keeps
        self.sent: list[str] = []

    async def cdp(
        self,
        method: str,
        params: dict[str, Any],
        session: str | None = None,
        with_tab: bool = False,
    ) -> Any:
        assert method == "Runtime.callFunctionOn" and params["awaitPromise"]
        assert with_tab is (session is None), "the top frame's outline carries the tab"
        declared = params["functionDeclaration"]
        self.sent.append("whole" if page_outline.OUTLINE.strip() in declared else "call")
        if declared == page_outline._RUN_KEPT and not self.keeps:
            return {"result": {"type": "object", "subtype": "null", "value": None}}
        self.keeps = True
        return {"result": {"type": "string", "value": answer([TOP])}}


@pytest.mark.parametrize(
    ("read_before", "keeps", "sent"),
    [(False, False, ["whole"]), (True, True, ["call"]), (True, False, ["call", "whole"])],
    ids=["a world read first", "a world read before", "a world that lost it"],
)
async def test_the_outline_is_sent_whole_once_per_world_and_called_after(
    read_before: bool, keeps: bool, sent: list[str]
) -> None:
    ctx = Outlines(keeps)
    said = await page_outline._run_outline(ctx, 7, [], kept=read_before)  # type: ignore[arg-type]
    assert ctx.sent == sent and said["result"]["value"] == answer([TOP])
    assert page_outline._KEPT in page_outline._KEEP_AND_RUN
    assert page_outline._KEPT.endswith(
        hashlib.sha256(page_outline.OUTLINE.encode()).hexdigest()[:16]
    )  # another version's code is never called


def test_a_world_s_seal_is_the_app_s_own_and_names_one_document() -> None:
    """The seal a world keeps (``_KEEP_AND_RUN``'s first argument) is made from the tab
    session's secret and the document's key: another document, another tab session, or a page
    that read Tabrelay's source gets none of its seals."""
    ctx = SimpleNamespace(state=SimpleNamespace(session=SessionState()))
    other = SimpleNamespace(state=SimpleNamespace(session=SessionState()))
    seal = page_outline._seal(ctx, ("", "F", "L1"))  # type: ignore[arg-type]
    assert seal == page_outline._seal(ctx, ("", "F", "L1"))  # type: ignore[arg-type]
    assert seal != page_outline._seal(ctx, ("", "F", "L2"))  # type: ignore[arg-type]
    assert seal != page_outline._seal(other, ("", "F", "L1"))  # type: ignore[arg-type]
    assert len(seal) == 64 and len(ctx.state.session.secret) == 32
    assert ctx.state.session.secret.hex() not in repr(ctx.state.session)
    ctx.state.session.fresh()  # a new debugger session keeps the secret, forgets the worlds
    assert page_outline._seal(ctx, ("", "F", "L1")) == seal  # type: ignore[arg-type]
    assert "function (seal, ...args)" in page_outline._KEEP_AND_RUN
    assert page_outline._SEALED in page_outline._RUN_SEALED


@pytest.mark.parametrize(
    "value",
    [
        None,
        "an outline without a seal",
        [],
        ["seal"],
        ["seal", "outline", "more"],
        [7, "outline"],
        [None, "outline"],
        ["a guess", "outline"],
        ["SEAL", "outline"],
        ["séal", "outline"],  # not ASCII: compared as bytes, not refused with an error
        ["seal\x00", "outline"],
        {"0": "seal", "1": "outline"},
    ],
)
def test_an_answer_without_the_seal_is_no_outline(value: Any) -> None:
    """What a world that is not Tabrelay's may answer (any JSON value): no outline."""
    assert page_outline.sealed(value, "seal") is None
    assert page_outline.sealed(["seal", "outline"], "seal") == "outline"


class Again:
    """A tab read before (its top document's world known, and read at once next) whose world
    answers ``value`` (given the seal) or fails; the tab is at ``url``."""

    def __init__(self, value: Any, *, url: str = "https://shop.example/") -> None:
        self.state = SimpleNamespace(session=SessionState())
        self.key = ("", "main-frame", "L1")
        self.state.session.worlds[self.key] = 41
        self.state.session.again = self.key
        self.value = value
        self.tab = SimpleNamespace(id=5, url=url)
        self.sent: list[dict[str, Any]] = []

    def need_tab(self) -> Any:
        return self.tab

    def need_browser(self) -> Any:
        async def get_tab(tab_id: int) -> Any:
            assert tab_id == 5
            return self.tab

        return SimpleNamespace(get_tab=get_tab)

    async def cdp(self, method: str, params: dict[str, Any], with_tab: bool = False) -> Any:
        assert method == "Runtime.callFunctionOn" and with_tab
        assert params["functionDeclaration"] == page_outline._RUN_SEALED
        assert params["executionContextId"] == 41
        self.sent.append(params)
        if isinstance(self.value, Exception):
            raise self.value
        if callable(self.value):
            return self.value(page_outline._seal(self, self.key))  # type: ignore[arg-type]
        return {"result": {"value": self.value}}


def sealed_answer(text: str) -> Any:
    return lambda seal: {"result": {"type": "object", "value": [seal, text]}}


async def test_a_document_read_last_is_read_again_at_once() -> None:
    ctx = Again(sealed_answer(answer([TOP])))
    again = await page_outline.read_again(ctx, viewport=True, tools=True)  # type: ignore[arg-type]
    assert again is not None and (again.frame_id, again.loader) == ("main-frame", "L1")
    assert [f.frame_id for f in again.page.frames] == ["main-frame"]
    assert [a["value"] for a in ctx.sent[0]["arguments"]] == [True, [], True, True, []]
    assert ctx.state.session.again == ctx.key  # and again next time


@pytest.mark.parametrize(
    ("value", "world_kept"),
    [
        (CommandFailed("Cannot find context with specified id"), False),
        ({"result": {"value": answer([TOP])}}, False),  # no seal: not Tabrelay's world
        ({"result": {"value": None}}, False),  # a world that lost its code
        (sealed_answer('{"closed": 2}'), True),  # closed roots to open first
        (sealed_answer(answer([TOP, {"owner": 11, "url": "x", "nodes": []}])), True),
        (sealed_answer(json.dumps(json.loads(answer([TOP])) | {"codeEditors": True})), True),
        (sealed_answer("not JSON"), True),
        (lambda seal: {"exceptionDetails": {"text": "Uncaught"}, "result": {}}, False),
    ],
    ids=[
        "its world gone",
        "another world",
        "a world without the code",
        "closed shadow roots",
        "a frame now",
        "a code editor now",
        "a malformed answer",
        "a script error",
    ],
)
async def test_a_document_that_needs_more_than_its_world_is_read_the_long_way(
    value: Any, world_kept: bool
) -> None:
    ctx = Again(value)
    assert await page_outline.read_again(ctx, viewport=False) is None  # type: ignore[arg-type]
    assert ctx.state.session.again is None  # the long read says whether next time may be so
    assert (ctx.key in ctx.state.session.worlds) is world_kept


async def test_a_document_at_another_address_than_the_tab_s_is_read_the_long_way() -> None:
    ctx = Again(sealed_answer(answer([TOP])), url="https://shop.example/elsewhere")
    assert await page_outline.read_again(ctx, viewport=False) is None  # type: ignore[arg-type]
    assert ctx.state.session.again is None


async def test_nothing_is_read_at_once_without_a_document_read_last_and_its_world() -> None:
    ctx = Again(AssertionError("nothing is sent"))
    ctx.state.session.again = None
    assert await page_outline.read_again(ctx, viewport=False) is None  # type: ignore[arg-type]
    ctx.state.session.again = ctx.key
    del ctx.state.session.worlds[ctx.key]  # the move was heard: its world forgotten
    assert await page_outline.read_again(ctx, viewport=False) is None  # type: ignore[arg-type]
    assert ctx.sent == []
