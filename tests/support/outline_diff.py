"""Holds a snapshot's outline against Chrome's own accessibility tree (issue 24).

Pure: given Chrome's tree (``Accessibility.getFullAXTree`` of a page and its frames, in page
order) and the outline ``browser_snapshot`` built of the same page, it says what a screen-reader
user gets from Chrome that the outline lost, what the outline says that Chrome's tree does not,
which of Chrome's controls got no ref, and how many outline lines are noise (a bare
``clickable [eN]``, a control twice).

What counts as "what a screen-reader user gets" (the reference ``items``):

- every text Chrome's tree holds (``StaticText``), except where an ancestor's name already says
  it (a name computed from contents, or a role whose children are presentational: a button's
  label, a tab's, an image's) and except glyphs of icon fonts (private-use characters);
- every name Chrome gives a node a screen reader announces with its name (not ``generic`` and
  the other roles ARIA forbids naming; not a row's name made of its cells, which each say it);
- a ref for every node that is a control (its role takes input) or a stop of its own in the
  Tab order (focusable, and not ``tabindex="-1"``), inside a name from contents too (a cell of
  a row), but not inside a role whose children are presentational (a button's icon), nor the
  parts Chrome draws inside a colour, date or time field.

Nodes Chrome ignores are left out, and so are their texts; list markers (bullets, numbers) are
drawing, not text.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# Roles whose children are presentational (WAI-ARIA 1.2, "Children Presentational: True"):
# their text is their name, never read apart.
PRESENTATIONAL_CHILDREN = frozenset(
    {
        "button", "checkbox", "img", "image", "menuitemcheckbox", "menuitemradio", "meter",
        "option", "progressbar", "radio", "scrollbar", "separator", "slider", "switch", "tab",
        "ToggleButton", "PopUpButton", "DisclosureTriangle", "textbox", "searchbox",
        "spinbutton", "combobox",
    }
)  # fmt: skip
# Fields Chrome draws with parts of their own (a date's month, day and year, its picker's
# button): one control, whose value the outline says and the typing tools set whole; the
# parts are none of the reference.
DRAWN_IN_PARTS = frozenset({"ColorWell", "Date", "DateTime", "InputTime"})
# Roles a screen reader announces without a name, or whose name ARIA forbids.
UNNAMED = frozenset(
    {
        "generic", "none", "presentation", "paragraph", "StaticText", "LabelText", "Legend",
        "caption", "code", "deletion", "emphasis", "insertion", "mark", "strong", "subscript",
        "superscript", "time", "term", "definition", "ListMarker", "LineBreak", "section",
        "RootWebArea", "WebArea", "Pre", "Abbr", "Ruby", "SectionHeader", "SectionFooter",
        "blockquote", "DescriptionList", "rowgroup", "InlineTextBox", "Iframe",
    }
)  # fmt: skip
# Roles that take input or act: each needs a ref of its own.
CONTROLS = frozenset(
    {
        "button", "link", "textbox", "searchbox", "checkbox", "radio", "combobox", "listbox",
        "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "switch", "slider",
        "spinbutton", "treeitem", "ComboBoxMenuButton", "PopUpButton", "DisclosureTriangle",
        "ToggleButton", "option", *DRAWN_IN_PARTS,
    }
)  # fmt: skip
# Roles whose line shows what is drawn in them (``page_outline``'s names from contents).
DRAWN_NAMES = frozenset(
    {
        "button", "link", "heading", "cell", "gridcell", "columnheader", "rowheader", "option",
        "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "checkbox", "radio", "switch",
        "treeitem", "tooltip", "DisclosureTriangle", "term", "caption",
    }
)  # fmt: skip
STATES = frozenset(
    {"checked", "pressed", "selected", "expanded", "disabled", "required", "invalid", "readonly"}
)
# How many outline texts after the last item found the next one is looked for in.
AHEAD = 60
BARE = re.compile(r"^\s*clickable \[e\d+\]")
REF = re.compile(r"\[(e\d+)\]")


@dataclass(frozen=True, slots=True)
class Item:
    """A text or a name Chrome's tree gives a screen-reader user, in page order."""

    text: str  # as a person reads it: whitespace collapsed, case folded
    backend: int | None  # the DOM node it belongs to
    role: str
    needs_ref: bool = False


@dataclass(slots=True)
class Report:
    """What one page's outline lost, added and repeated against Chrome's tree."""

    chrome_lines: int = 0
    our_lines: int = 0
    missing: list[Item] = field(default_factory=list)  # not in the outline at all
    out_of_order: list[Item] = field(default_factory=list)  # in the outline, but before
    without_ref: list[Item] = field(default_factory=list)  # a control the outline gave no ref
    extra: list[str] = field(default_factory=list)  # outline texts Chrome's tree lacks
    bare: list[str] = field(default_factory=list)  # `clickable [eN]` lines
    duplicated: list[str] = field(default_factory=list)  # a ref line repeating its parent's

    def row(self) -> dict[str, int]:
        return {
            "chrome_lines": self.chrome_lines,
            "our_lines": self.our_lines,
            "missing": len(self.missing) + len(self.out_of_order),
            "without_ref": len(self.without_ref),
            "extra": len(self.extra),
            "bare": len(self.bare),
            "duplicated": len(self.duplicated),
        }

    def explain(self, limit: int = 15) -> str:
        """The first of each kind of difference, for a failing test's message."""
        parts = [json.dumps(self.row())]
        for title, found in (
            ("missing", [f"{i.role} {i.text!r}" for i in self.missing]),
            ("out of order", [f"{i.role} {i.text!r}" for i in self.out_of_order]),
            ("without a ref", [f"{i.role} {i.text!r} #{i.backend}" for i in self.without_ref]),
            ("extra", self.extra),
            ("bare", self.bare),
            ("duplicated", self.duplicated),
        ):
            if found:
                parts.append(f"{title}: " + "; ".join(found[:limit]))
        return "\n".join(parts)


def normal(text: str) -> str:
    """Text as it reads: icon-font glyphs and control characters dropped, whitespace collapsed,
    case folded (Chrome's tree applies ``text-transform``, the DOM does not)."""
    kept = "".join(
        " " if c.isspace() else c
        for c in text
        if unicodedata.category(c) not in ("Co", "Cc", "Cf") or c.isspace()
    )
    return " ".join(kept.split()).casefold()


def _value(node: Mapping[str, Any], key: str) -> Any:
    entry = node.get(key)
    return entry.get("value") if isinstance(entry, dict) else None


def _props(node: Mapping[str, Any]) -> dict[str, Any]:
    return {
        p["name"]: p.get("value", {}).get("value")
        for p in node.get("properties", [])
        if isinstance(p, dict) and "name" in p
    }


def _from_contents(node: Mapping[str, Any]) -> bool:
    name = node.get("name")
    for source in name.get("sources", []) if isinstance(name, dict) else []:
        if isinstance(source, dict) and "value" in source and not source.get("superseded"):
            return source.get("type") == "contents"
    return False


@dataclass(frozen=True, slots=True)
class ChromeFrame:
    """One frame's nodes from ``Accessibility.getFullAXTree``, and the backend node of the
    ``<iframe>`` showing it (None for the page's top frame)."""

    nodes: list[dict[str, Any]]
    owner: int | None = None


def chrome_items(
    frames: list[ChromeFrame], *, script_focus: Iterable[int] = (), unseen: Iterable[int] = ()
) -> tuple[list[Item], int]:
    """The reference items of a page's tree in page order (frames inline at their
    ``<iframe>``), and the number of lines Chrome's tree prints (its non-ignored nodes).
    ``script_focus`` lists the backend nodes with ``tabindex="-1"``: focusable, but not a stop
    of their own. ``unseen`` lists the nodes a sighted person cannot see (issue 25): their
    texts are not page text, and only controls among them keep their names; a name that says
    something else than the text drawn in its node is expected as drawn."""
    by_owner = {f.owner: f for f in frames[1:] if f.owner is not None}
    by_script = set(script_focus)
    hidden = set(unseen)
    items: list[Item] = []
    lines = 0

    def walk(frame: ChromeFrame) -> None:
        nodes = {n["nodeId"]: n for n in frame.nodes}
        roots = [n for n in frame.nodes if n.get("parentId") not in nodes]
        for root in roots:
            visit(root, nodes, covered=False)

    def visit(
        node: dict[str, Any],
        nodes: dict[str, Any],
        *,
        covered: bool,
        part: bool = False,
        presentational: bool = False,
    ) -> None:
        """``covered``: an ancestor's name says this node's text; ``part``: it is drawn inside
        a field (DRAWN_IN_PARTS); ``presentational``: inside a role whose children are
        (PRESENTATIONAL_CHILDREN), it is no control of its own. A control inside a name from
        contents (a focusable cell in a row) still needs its ref."""
        nonlocal lines
        role = str(_value(node, "role") or "")
        if role in ("InlineTextBox", "ListMarker"):
            return
        backend = node.get("backendDOMNodeId")
        ignored = bool(node.get("ignored"))
        below_covered = covered
        if part:
            lines += not ignored
        elif not ignored:
            lines += 1
            name = normal(str(_value(node, "name") or ""))
            props = _props(node)
            needs_ref = role in CONTROLS or (
                props.get("focusable") is True
                and role not in ("RootWebArea", "WebArea", "Iframe")
                and backend not in by_script
            )
            if role == "StaticText":
                # Line by line where the page keeps its line breaks (a <pre>), as the outline.
                lines_of = str(_value(node, "name") or "").split("\n")
                if name and not covered and backend not in hidden:
                    items.extend(Item(t, backend, role) for t in map(normal, lines_of) if t)
            elif (
                name
                and role not in UNNAMED
                and (backend not in hidden or needs_ref)
                and not (role == "row" and _from_contents(node))  # its cells say it, each
            ):
                if hidden and role in DRAWN_NAMES and backend not in hidden:
                    name = _as_drawn(name, node, nodes, hidden)
                items.append(Item(name, backend, role, needs_ref and not presentational))
                below_covered = covered or _from_contents(node) or role in PRESENTATIONAL_CHILDREN
            elif needs_ref and not presentational:
                items.append(Item("", backend, role, True))
            if role in PRESENTATIONAL_CHILDREN:
                below_covered = True
        for child_id in node.get("childIds", []):
            child = nodes.get(child_id)
            if child is not None:
                visit(
                    child,
                    nodes,
                    covered=below_covered,
                    part=part or role in DRAWN_IN_PARTS,
                    presentational=presentational or role in PRESENTATIONAL_CHILDREN,
                )
        if role == "Iframe" and backend in by_owner:
            walk(by_owner[backend])

    walk(frames[0])
    return items, lines


def _as_drawn(name: str, node: dict[str, Any], nodes: dict[str, Any], hidden: set[int]) -> str:
    """``name``, or the text drawn inside ``node`` when that says something else (words
    apart) and is a word at least (not an icon)."""
    parts: list[str] = []
    stack = list(reversed(node.get("childIds", [])))
    while stack:
        child = nodes.get(stack.pop())
        if child is None or child.get("ignored"):
            continue
        if _value(child, "role") == "StaticText":
            if child.get("backendDOMNodeId") not in hidden:
                parts.append(str(_value(child, "name") or ""))
            continue
        stack += list(reversed(child.get("childIds", [])))
    drawn = normal(" ".join(parts))
    words = re.findall(r"\w+", drawn)
    if len("".join(words)) < 2 or words == re.findall(r"\w+", name):
        return name
    return drawn


@dataclass(frozen=True, slots=True)
class OurLine:
    depth: int
    line: str
    texts: tuple[str, ...]  # what a person reads on it: name, text, value, options (normal)
    ref: str | None


def our_lines(outline_lines: Iterable[str]) -> list[OurLine]:
    """The outline's lines with what each says, decoded (names and values are JSON strings)."""
    found = []
    for raw in outline_lines:
        depth = len(raw) - len(raw.lstrip(" "))
        line = raw.strip()
        texts: list[str] = []
        if line.startswith("text: "):
            texts.append(line[len("text: ") :].split(" (shortened; ", 1)[0])
        else:
            texts += _quoted(line.split(" → ", 1)[0])
            if " options: " in line:
                options = line.split(" options: ", 1)[1].split(" | ")
                words = options[-1].split(" ")
                while words and words[-1] in STATES:
                    words.pop()  # the line's states follow its options
                texts += [*options[:-1], " ".join(words)]
        match = REF.search(line)
        found.append(
            OurLine(
                depth,
                line,
                tuple(t for t in (normal(t) for t in texts) if t),
                match.group(1) if match else None,
            )
        )
    return found


def _quoted(line: str) -> list[str]:
    decoder = json.JSONDecoder()
    found: list[str] = []
    index = line.find('"')
    while index != -1:
        try:
            value, end = decoder.raw_decode(line, index)
        except json.JSONDecodeError:
            break
        if isinstance(value, str):
            found.append(value)
        index = line.find('"', end)
    return found


def compare(
    items: list[Item],
    chrome_lines: int,
    outline_lines: list[str],
    ref_of: Mapping[int, str],
    *,
    chrome_text: str | None = None,
) -> Report:
    """Hold the outline against Chrome's items.

    ``ref_of`` gives, for each of Chrome's nodes (backend node id) the outline gave a ref, that
    ref. An item is found when its text occurs in the outline soon after the previous item's
    (lines are compared whole: build the outline without shortening). ``chrome_text``, all of
    Chrome's names, texts and values normalised, decides which outline texts are extra.
    """
    lines = our_lines(outline_lines)
    report = Report(chrome_lines=chrome_lines, our_lines=len(lines))
    # Compared without spaces: where a line breaks (a <wbr>, a block inside a name) is not
    # what it says.
    segments = [_compact(t) for line in lines for t in line.texts]
    position = (0, 0)  # (segment, offset within it)
    for item in items:
        if item.needs_ref and item.backend not in ref_of:
            report.without_ref.append(item)
        text = _compact(item.text)
        if not text:
            continue
        # A character or two ("1", ")") occurs anywhere: looked for only close by.
        found = _find(segments, text, position, AHEAD if len(text) > 2 else 3)
        if found is not None:
            position = found
        elif _find(segments, text, (position[0], 0), 1) is not None:
            pass  # said just before: a label the outline says once, as its control's name
        elif _find(segments, text, (0, 0), len(segments)) is not None:
            # Found, but not soon after the last: out of order, and not followed there (one
            # stray match far ahead would put everything after it out of order).
            report.out_of_order.append(item)
        else:
            report.missing.append(item)
    if chrome_text is not None:
        # Chrome splits text where the outline joins it (a line of code, a sentence with a
        # link).
        said = _compact(chrome_text).replace("\x00", "")
        report.extra = [
            t
            for line in lines
            for t in line.texts
            if _compact(t) not in said and not line.line.startswith(("(", "iframe"))
        ]
    report.bare = [line.line for line in lines if BARE.match(line.line)]
    for index, line in enumerate(lines[1:], start=1):
        parent = next((p for p in reversed(lines[:index]) if p.depth < line.depth), None)
        if (
            line.ref
            and parent is not None
            and parent.ref
            and line.texts[:1]
            and parent.texts[:1] == line.texts[:1]
        ):
            report.duplicated.append(f"{parent.line} / {line.line}")
    return report


def _compact(text: str) -> str:
    return "".join(text.split())


def _find(
    segments: list[str], text: str, start: tuple[int, int], ahead: int
) -> tuple[int, int] | None:
    """Where ``text`` ends in the first of ``ahead`` segments from ``start`` holding it."""
    segment, offset = start
    for index in range(segment, min(segment + ahead, len(segments))):
        at = segments[index].find(text, offset if index == segment else 0)
        if at != -1:
            return index, at + len(text)
    return None


def chrome_text(frames: list[ChromeFrame]) -> str:
    """Every name, text and value in Chrome's tree, normalised and joined (for ``extra``)."""
    parts = []
    for frame in frames:
        for node in frame.nodes:
            for key in ("name", "value", "description"):
                value = _value(node, key)
                if value not in (None, ""):
                    parts.append(normal(str(value)))
    return "\x00".join(parts)
