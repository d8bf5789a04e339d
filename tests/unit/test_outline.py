"""The snapshot outline built from a recorded accessibility tree (Chromium 156, a form page
with a shadow root and a same-origin iframe; see tests/unit/data/ax_form.json), and from small
trees built in the tests for budgets, text runs, click wrappers and editors."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from tabrelay.tools.page.outline import (
    HIDDEN_VALUE,
    MAX_LINES,
    MAX_NAME,
    MAX_OPTIONS,
    MAX_TEXT,
    MAX_VALUE,
    PARTIAL_EDITOR,
    READ_WHOLE,
    EditorText,
    FrameTree,
    Outline,
    build_outline,
    search,
)

DATA = json.loads((Path(__file__).parent / "data" / "ax_form.json").read_text())


def outline(**options: Any) -> tuple[Outline, dict[tuple[int, str], str]]:
    frames = [FrameTree("main", DATA["main"], DATA["url"])]
    frames += [FrameTree(f["id"], f["nodes"], f["url"], f["owner"]) for f in DATA["frames"]]
    counter = itertools.count(1)
    refs: dict[tuple[int, str], str] = {}

    def assign(backend: int, frame: str) -> str:
        return refs.setdefault((backend, frame), f"e{next(counter)}")

    built = build_outline(
        frames,
        assign_ref=assign,
        clickable=frozenset(DATA["clickable"]),
        base_url=DATA["url"],
        **options,
    )
    return built, refs


def test_the_outline_reads_like_the_page() -> None:
    built, _ = outline()
    assert built.text == "\n".join(
        [
            "banner",
            " nav",
            '  link "Home" [e1] → /',
            '  link "Shop" [e2] → /shop',
            "main",
            ' heading[1] "Place an order"',
            " text: Fill in the form below. Fields marked * are required.",
            " form",
            '  textbox "Name *" [e3] required',
            '  textbox "Email" [e4]',
            '  textbox "Password" [e5]',
            '  textbox "Notes" [e6] value="hello" multiline',
            '  combobox "Size" [e7] value="Medium" options: Small | Medium | Large',
            '  checkbox "Gift wrap" [e8] checked',
            '  group "Delivery"',
            '   radio "Standard" [e9] checked',
            '   radio "Express" [e10]',
            '  textbox "Message" [e11] value="Editable" richtext',
            '  button "Place order" [e12]',
            '  button "Disabled" [e13] disabled',
            ' button "Shadow button" [e14]',
            ' textbox "Shadow input" [e15]',
            ' iframe "Inner"',
            "  text: Inside the frame",
            '  button "Frame button" [e16]',
            '  link "Frame link" [e17] → /frame.html#x',
            "contentinfo",
            " text: © 2026 Shop",
        ]
    )


def test_every_interactive_element_has_a_ref_bound_to_its_node_and_frame() -> None:
    built, refs = outline()
    assert [e.ref for e in built.elements] == [f"e{n}" for n in range(1, 18)]
    frame_button = next(e for e in built.elements if e.name == "Frame button")
    assert frame_button.frame_id == DATA["frames"][0]["id"]
    assert refs[(frame_button.backend_node_id, frame_button.frame_id)] == frame_button.ref
    again, _ = outline()
    assert again.text == built.text  # stable for the same page


def test_depth_cuts_nesting_and_counts_what_it_left_out() -> None:
    assert outline(max_depth=1)[0].text.splitlines() == ["banner", "main", "contentinfo"]
    built, _ = outline(max_depth=2)
    assert built.text.splitlines() == [
        "banner",
        " nav",
        "main",
        ' heading[1] "Place an order"',
        " text: Fill in the form below. Fields marked * are required.",
        " form",
        ' button "Shadow button" [e1]',
        ' textbox "Shadow input" [e2]',
        ' iframe "Inner"',
        "contentinfo",
        " text: © 2026 Shop",
    ]
    assert built.omitted_below_depth == 18


def test_viewport_filter_keeps_only_on_screen_nodes() -> None:
    heading = next(n for n in DATA["main"] if n.get("name", {}).get("value") == "Place an order")
    built, _ = outline(visible=frozenset({heading["backendDOMNodeId"]}))
    assert 'heading[1] "Place an order"' in built.text
    assert "Place order" not in built.text


def test_a_frame_that_cannot_be_read_says_how_to_reach_it() -> None:
    frames = [
        FrameTree("main", DATA["main"], DATA["url"]),
        FrameTree("x", [], "https://ads.example/frame", DATA["frames"][0]["owner"], error="no"),
    ]
    built = build_outline(frames, assign_ref=lambda b, f: f"e{b}")
    assert (
        "  (cross-origin frame https://ads.example/frame is not included; open that URL with "
        "browser_new_tab to read it)" in built.lines
    )


def test_search_by_text_and_role() -> None:
    built, _ = outline()
    assert search(built, text="order", role=None) == [
        'heading[1] "Place an order"',
        'button "Place order" [e12]',
    ]
    assert search(built, text=None, role="radio") == [
        'radio "Standard" [e9] checked',
        'radio "Express" [e10]',
    ]
    assert search(built, text="shadow", role="button") == ['button "Shadow button" [e14]']
    assert search(built, text="nothing like it", role=None) == []


# --- budgets, text runs, wrappers and editors, on small trees built here ----------------------


def ax(
    role: str,
    *children: dict[str, Any],
    name: str = "",
    by: str = "attribute",
    backend: int | None = None,
    value: str | None = None,
    ignored: bool = False,
    **props: Any,
) -> dict[str, Any]:
    """An accessibility node as Chrome describes it; ``by`` is where its name came from."""
    return {
        "role": role, "children": children, "name": name, "by": by, "backend": backend,
        "value": value, "ignored": ignored, "props": props,
    }  # fmt: skip


def text(words: str) -> dict[str, Any]:
    return ax("StaticText", name=words)


def built(
    root: dict[str, Any],
    *,
    clickable: set[int] = frozenset(),  # type: ignore[assignment]
    inline: set[int] = frozenset(),  # type: ignore[assignment]
    script_focus: set[int] = frozenset(),  # type: ignore[assignment]
    pointer: set[int] = frozenset(),  # type: ignore[assignment]
    editors: dict[int, EditorText] | None = None,
    visible: set[int] | None = None,
    secrets: dict[int, str] | None = None,
) -> tuple[Outline, dict[int, str]]:
    """The outline of a page whose body is ``root``; refs by backend node id."""
    nodes: list[dict[str, Any]] = []
    ids = itertools.count(1)

    def add(spec: dict[str, Any], parent: dict[str, Any] | None) -> None:
        node_id = str(next(ids))
        backend = spec["backend"] if spec["backend"] is not None else 1000 + int(node_id)
        node: dict[str, Any] = {
            "nodeId": node_id,
            "ignored": spec["ignored"],
            "role": {"type": "role", "value": spec["role"]},
            "backendDOMNodeId": backend,
            "childIds": [],
            "properties": [
                {"name": key, "value": {"type": "booleanOrUndefined", "value": flag}}
                for key, flag in spec["props"].items()
            ],
        }
        if spec["name"]:
            source = {
                "type": spec["by"],
                "value": {"type": "computedString", "value": spec["name"]},
            }
            node["name"] = {"type": "computedString", "value": spec["name"], "sources": [source]}
        if spec["value"] is not None:
            node["value"] = {"type": "string", "value": spec["value"]}
        if parent is not None:
            node["parentId"] = parent["nodeId"]
            parent["childIds"].append(node_id)
        nodes.append(node)
        for child in spec["children"]:
            add(child, node)

    add(ax("RootWebArea", root, name="Page"), None)
    refs: dict[int, str] = {}

    def assign(backend: int, frame: str) -> str:
        return refs.setdefault(backend, f"e{len(refs) + 1}")

    outline = build_outline(
        [FrameTree("main", nodes, "https://docs.example/")],
        assign_ref=assign,
        clickable=frozenset(clickable),
        inline=frozenset(inline),
        script_focus=frozenset(script_focus),
        pointer=frozenset(pointer),
        editors=editors,
        visible=frozenset(visible) if visible is not None else None,
        base_url="https://docs.example/",
        secrets=secrets,
    )
    return outline, refs


def test_long_names_texts_and_values_fit_a_generous_budget_whole() -> None:
    signature = "subprocess.Popen(" + ", ".join(f"arg{n}=None" for n in range(40)) + ")"
    query = "\n".join(f"line {n} of the query" for n in range(60))
    page, _ = built(
        ax(
            "main",
            ax("term", text(signature), name=signature, by="contents"),
            ax("paragraph", text("word " * 90)),
            ax("textbox", name="SQL", value=query, editable="plaintext", multiline=True),
        )
    )
    assert len(signature) > 400 and len(query) > 900
    assert f' term "{signature}"' in page.lines
    assert " text: " + ("word " * 90).strip() in page.lines
    assert f' textbox "SQL" [e1] value={json.dumps(query)} multiline' in page.lines
    assert "…" not in page.text


def test_a_shortened_name_text_or_value_gets_a_ref_and_says_how_to_read_it_whole() -> None:
    page, refs = built(
        ax(
            "main",
            ax("term", text("x" * 900), name="x" * 900, by="contents", backend=7),
            ax("paragraph", text("y" * 900), backend=8),
            ax("textbox", name="Body", value="z" * 3000, backend=9, editable="plaintext"),
            ax(
                "combobox",
                *(ax("option", name=f"Choice {n}") for n in range(MAX_OPTIONS + 5)),
                name="Pick",
                backend=10,
            ),
        )
    )
    assert page.lines == [
        "main",
        f' term "{"x" * (MAX_NAME - 1)}…" ' + READ_WHOLE.format(ref=refs[7]),
        f" text: {'y' * (MAX_TEXT - 1)}… " + READ_WHOLE.format(ref=refs[8]),
        f' textbox "Body" [{refs[9]}] value="{"z" * (MAX_VALUE - 1)}…" '
        + READ_WHOLE.format(ref=refs[9]),
        f' combobox "Pick" [{refs[10]}] options: '
        + " | ".join(f"Choice {n}" for n in range(MAX_OPTIONS))
        + " "
        + READ_WHOLE.format(ref=refs[10]),
    ]
    # The refs name the elements that hold the whole text.
    assert {e.ref: e.backend_node_id for e in page.elements} == {
        refs[7]: 7, refs[8]: 8, refs[9]: 9, refs[10]: 10,
    }  # fmt: skip


def test_a_text_that_keeps_its_line_breaks_is_read_line_by_line_within_a_budget() -> None:
    """A <pre>'s text (the page script keeps its line breaks): one text line per line, none
    empty, spaces collapsed; a long one is cut, and past MAX_LINES characters in all the rest
    is left to ``browser_get_content`` by the last line's ref."""
    trace = 'Traceback (most recent call last):\n  File "cell", line 1\n\nZeroDivisionError\n'
    page, _ = built(ax("generic", ax("generic", text(trace), backend=31), text("Done.")))
    assert page.lines == [
        "text: Traceback (most recent call last):",
        'text: File "cell", line 1',
        "text: ZeroDivisionError",
        "text: Done.",
    ]
    log = "\n".join(f"{n:04} " + "z" * 95 for n in range(40)) + "\n" + "w" * 900
    page, refs = built(ax("paragraph", text(log), backend=32))
    shown = [line.removeprefix("text: ") for line in page.lines]
    assert shown[:19] == [f"{n:04} " + "z" * 95 for n in range(19)]
    assert shown[19] == "0019 " + "z" * 95 + " " + READ_WHOLE.format(ref=refs[32])
    assert len(page.lines) == 20 and MAX_LINES == 20 * 100
    tail = "\n".join(["y" * 100] * 19 + ["q" * 300])  # the last line meets the budget's end
    page, refs = built(ax("paragraph", text(tail), backend=34))
    assert page.lines[-1] == f"text: {'q' * 99}… " + READ_WHOLE.format(ref=refs[34])
    cut, refs = built(ax("paragraph", text("v" * 900 + "\nnext"), backend=33))
    assert cut.lines == [
        f"text: {'v' * (MAX_TEXT - 1)}…",
        "text: next " + READ_WHOLE.format(ref=refs[33]),
    ]


def test_text_runs_on_through_inline_elements_and_stops_at_blocks() -> None:
    paragraph = ax(
        "paragraph",
        text("Copy "),
        ax("emphasis", text("src"), backend=21),
        text(" to "),
        ax("code", text("dst"), backend=22),
        text("."),
        ax("generic", text("A block of its own."), backend=23),
    )
    page, _ = built(paragraph, inline={21, 22})
    assert page.lines == ["text: Copy src to dst.", "text: A block of its own."]
    apart, _ = built(paragraph)  # nothing known to be inline: each element is its own line
    assert apart.lines[:2] == ["text: Copy", "text: src"]


def test_an_element_named_by_its_contents_does_not_say_its_text_again() -> None:
    term = ax(
        "term",
        text("copytree("),
        ax("emphasis", text("src")),
        text(")"),
        ax("code", text("inline")),
        ax("img", name="warning icon"),
        ax("link", text("¶"), name="¶", by="contents", url="https://docs.example/#copytree"),
        name="copytree(src)inline¶",
        by="contents",
    )
    page, _ = built(term)
    assert page.lines == [
        'term "copytree(src)inline¶"',
        ' img "warning icon"',
        ' link "¶" [e1] → /#copytree',
    ]
    labelled, _ = built(ax("region", text("Body text"), name="Notes"))
    assert labelled.lines == ['region "Notes"', " text: Body text"]


def test_a_wrapper_listening_for_clicks_on_what_it_holds_is_no_target() -> None:
    """Named or not, a wrapper around a control is no control of its own (one line per
    control, issue 24); a clickable element that holds only text is named by it, as a button
    would be; a Tab stop keeps its ref and says where it is."""
    page, refs = built(
        ax(
            "generic",
            ax("main", ax("button", text("Save"), name="Save", by="contents"), backend=32),
            ax("generic", text("Open the recipe"), backend=33),
            ax("generic", ax("link", name="Inside", url="/in"), name="Card", backend=34),
            ax("generic", ax("button", name="Scrolled"), focusable=True, backend=35),
            ax("generic", ax("button", name="Tab stop"), focusable=True, backend=36),
            backend=31,
        ),
        clickable={31, 32, 33, 34},
        script_focus={35},
    )
    assert page.lines == [
        "main",
        ' button "Save" [e1]',
        'clickable "Open the recipe" [e2]',
        'link "Inside" [e3] → /in',
        'button "Scrolled" [e4]',
        "clickable [e5] (no name: empty)",
        ' button "Tab stop" [e6]',
    ]
    assert not {31, 32, 34, 35} & refs.keys()


def test_a_control_s_wrapper_and_the_icons_inside_it_make_one_line() -> None:
    """A toolbar button as design systems build it (JupyterLab's): a wrapper named like the
    button and drawn clickable, the button, and an icon whose parts are clickable too."""
    icon = ax("image", ax("generic", backend=44), ax("generic", backend=45), backend=43)
    page, refs = built(
        ax(
            "toolbar",
            ax(
                "generic",
                ax("button", text(" "), icon, name="Save (Ctrl+S)", backend=42),
                name="Save (Ctrl+S)",
                backend=41,
            ),
            name="Notebook",
        ),
        clickable={44, 45},
        pointer={41, 43},
    )
    assert page.lines == ['toolbar "Notebook"', ' button "Save (Ctrl+S)" [e1]']
    assert list(refs) == [42]


def test_a_click_handler_with_nothing_to_show_makes_no_line() -> None:
    """An empty element with a handler but not drawn as something to click (a collapser's
    edge, a focus or drag handler) is no target; drawn with a pointing hand, it is, and says
    what it holds and where it is."""
    page, refs = built(
        ax(
            "list",
            ax("listitem", ax("generic", backend=51), text("First"), name="", backend=50),
            ax("listitem", ax("generic", ax("image"), backend=53), text("Second"), backend=52),
            name="Cells",
        ),
        clickable={51, 53},
        pointer={53},
    )
    assert page.lines == [
        'list "Cells"',
        " listitem",
        "  text: First",
        " listitem",
        "  clickable [e1] (no name: an image, in listitem)",
        "  text: Second",
    ]
    assert list(refs) == [53]


def test_text_under_an_element_named_otherwise_is_read() -> None:
    """A notebook cell labelled "Code Cell Content with Output" that takes focus by script:
    its prompt, code and output are listed under it (the output was lost, issue 24); a
    button's label glyph is not."""
    cell = ax(
        "generic",
        text("[1]:"),
        ax("textbox", value="print(n)", editable="plaintext", focusable=True, backend=61),
        ax("generic", text("RESULT=332833500"), backend=62),
        ax("table", ax("row", ax("cell", text("North"), name="North", by="contents"))),
        ax("button", text("×"), name="Close", backend=63),
        name="Code Cell Content with Output",
        focusable=True,
        backend=60,
    )
    page, _ = built(cell, script_focus={60})
    assert page.lines == [
        "text: [1]:",
        'textbox [e1] value="print(n)"',
        "text: RESULT=332833500",
        "table",
        " row",
        '  cell "North"',
        'button "Close" [e2]',
    ]


def test_a_code_editor_is_its_input_named_and_holding_the_editor_s_text() -> None:
    def editor(*panel: dict[str, Any]) -> dict[str, Any]:
        """As CodeMirror draws one: an input, a scroller of lines and gutters, its panels."""
        return ax(
            "generic",
            ax("generic", ax("textbox", backend=41, editable="plaintext", multiline=True)),
            ax(
                "generic",
                ax("generic", text("1")),
                ax("code", ax("generic", text("select 1"), backend=42)),
                backend=43,
                focusable=True,
            ),
            *panel,
            backend=40,
        )

    text_of = {41: EditorText("select 1\n  from t", True, box=40, label="SQL query")}
    drawn: dict[str, Any] = {"clickable": {40, 42}, "script_focus": {43}}
    page, refs = built(ax("form", editor(), ax("button", name="Run")), editors=text_of, **drawn)
    assert page.lines == [
        "form",
        ' textbox "SQL query" [e1] value="select 1\\n  from t" multiline',
        ' button "Run" [e2]',
    ]
    assert len(refs) == 2 and refs[41] == "e1"
    # What the editor opens inside itself is there to be used (a search panel).
    search = ax("search", ax("textbox", name="Find", editable="plaintext"), text("Find:"))
    panel, _ = built(editor(search), editors=text_of, **drawn)
    assert panel.lines == [
        'textbox "SQL query" [e1] value="select 1\\n  from t" multiline',
        'textbox "Find" [e2]',
    ]
    on_screen, _ = built(editor(), editors=text_of, visible={40, 42, 43}, **drawn)
    assert on_screen.lines == ['textbox "SQL query" [e1] value="select 1\\n  from t" multiline']
    partial, _ = built(editor(), editors={41: EditorText("select 1", False, box=40)}, **drawn)
    assert partial.lines == [f'textbox [e1] value="select 1" multiline {PARTIAL_EDITOR}']


def test_a_contenteditable_shows_its_text_once_on_its_own_line() -> None:
    page, _ = built(
        ax(
            "textbox",
            ax("heading", text("Notes"), name="Notes", by="contents", level=2, editable="richtext"),
            ax("paragraph", text("First."), editable="richtext"),
            name="Comment",
            value="Notes\n\nFirst.",
            editable="richtext",
            multiline=True,
        ),
        clickable={1003, 1005},
    )
    assert page.lines == ['textbox "Comment" [e1] value="Notes\\n\\nFirst." richtext multiline']


def test_lines_that_say_nothing_go_but_a_table_keeps_its_empty_cells() -> None:
    page, _ = built(
        ax(
            "main",
            ax("status"),
            ax("button", ax("img"), name="Bold", by="attribute"),
            ax("table", ax("row", ax("cell", text("a"), name="a", by="contents"), ax("cell"))),
            ax("list", ax("listitem", ax("img"))),
        )
    )
    assert page.lines == [
        "main",
        ' button "Bold" [e1]',
        " table",
        "  row",
        '   cell "a"',
        "   cell",
    ]


def test_a_name_chrome_stopped_computing_is_read_whole_from_the_text_below() -> None:
    params = [f"arg{n}=None" for n in range(30)]
    pieces = [ax("emphasis", text(p), backend=100 + n) for n, p in enumerate(params)]
    separated = [part for piece in pieces for part in (piece, text(", "))][:-1]
    signature = "Popen(" + ", ".join(params) + ")"
    term = ax(
        "term",
        text("Popen("),
        *separated,
        text(")"),
        ax("generic", text("New in 3.2"), backend=99),  # a block: apart by a space
        name=signature[:290],  # where Chrome stopped, after 100 descendants
        by="contents",
    )
    page, _ = built(term, inline=set(range(100, 130)))
    assert page.lines == [f'term "{signature} New in 3.2"']


def test_a_secret_field_keeps_its_ref_but_not_its_value_nor_a_card_select_its_options() -> None:
    page = ax(
        "form",
        ax("textbox", name="Code", backend=1, value="481516", focusable=True),
        ax("textbox", name="Shown password", backend=2, value="hunter2", focusable=True),
        ax(
            "combobox", ax("option", name="01"), ax("option", name="07"),
            name="Expiry month", backend=3, value="07", focusable=True,
        ),
        ax("textbox", name="Name", backend=4, value="Ada", focusable=True),
    )  # fmt: skip
    secrets = {1: "one-time code", 2: "password", 3: "card detail"}
    outline, refs = built(page, secrets=secrets)
    assert outline.text == "\n".join(
        [
            "form",
            f' textbox "Code" [{refs[1]}] {HIDDEN_VALUE.format(kind="one-time code")}',
            f' textbox "Shown password" [{refs[2]}] {HIDDEN_VALUE.format(kind="password")}',
            f' combobox "Expiry month" [{refs[3]}] {HIDDEN_VALUE.format(kind="card detail")}',
            f' textbox "Name" [{refs[4]}] value="Ada"',
        ]
    )
    assert "481516" not in str(outline.elements) and "hunter2" not in str(outline.nodes)
