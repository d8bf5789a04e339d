"""Turn a page's accessibility nodes into the compact outline agents read (browser_snapshot).

Pure: takes each frame's nodes, shaped like Chrome's accessibility tree
(``Accessibility.getFullAXTree``; ``page_outline`` computes them in the page), and, when known,
which nodes are clickable, laid out inline or on screen, and what code editors hold; produces
indented lines such as::

    heading[1] "Place an order"
    textbox "Email" [e4] placeholder="you@example.com"
    button "Place order" [e12]

Nodes are named by ``backendDOMNodeId``: whatever id the caller's refs resolve (Chrome's backend
node id, or the id ``page_outline``'s world holds).

Every element an agent can act on gets a ref. Generic containers disappear (their children
move up), and so do wrappers whose only purpose is a click listener for what they hold; text
running through inline elements stays on one line; iframes nest under their ``iframe`` line.
Roles and names follow Chrome's, so they match what assistive technology sees.

Names, texts and values get a generous budget per line; what is longer is shortened, and the
line gets a ref and says how to read it whole (``browser_get_content`` with that ref). Editors
show what they hold: a field's value, a contenteditable's text, and for code editors whose
text is not in the tree (CodeMirror, Monaco), the text their page reads for us.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tabrelay.tools.page.webmcp import PageTool

INTERACTIVE_ROLES = frozenset(
    {
        "button", "link", "textbox", "searchbox", "checkbox", "radio", "combobox", "listbox",
        "option", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "switch", "slider",
        "spinbutton", "treeitem", "scrollbar", "ComboBoxMenuButton", "PopUpButton",
        "DisclosureTriangle", "ToggleButton", "ColorWell", "Date", "DateTime", "InputTime",
        "gridcell",
    }
)  # fmt: skip
# Containers shown as their own line (with children indented); others are flattened away.
STRUCTURAL_ROLES = frozenset(
    {
        "heading", "list", "listitem", "table", "row", "cell", "columnheader", "rowheader",
        "form", "navigation", "main", "banner", "contentinfo", "complementary", "region",
        "search", "dialog", "alertdialog", "alert", "group", "radiogroup", "tablist",
        "tabpanel", "menu", "menubar", "tree", "grid", "article", "figure", "img", "image",
        "Iframe", "toolbar", "status", "progressbar", "meter", "blockquote", "code", "math",
        "term", "definition", "note", "log", "marquee", "timer", "feed", "caption",
    }
)  # fmt: skip
# Kept even when empty: a table's shape (which column a cell is in) depends on them.
TABLE_PARTS = frozenset({"row", "cell", "gridcell", "columnheader", "rowheader", "iframe"})
SHORT_ROLES = {"navigation": "nav", "Iframe": "iframe", "image": "img", "complementary": "aside"}
SKIPPED_ROLES = frozenset({"InlineTextBox", "LineBreak", "MenuListPopup"})
# Containers that become targets when they take keyboard focus (a tabindex, a custom widget).
FOCUSABLE_CONTAINERS = frozenset({"generic", "img", "image", "listitem", "row", "cell"})
# Roles a target shows as "clickable" (or "textbox" when editable): it has no role of its own.
ROLELESS = frozenset({"generic", "paragraph", "listitem", "cell", "row"})
# Clicking these only forwards to another element, which gets its own ref.
NEVER_CLICKABLE = frozenset({"RootWebArea", "paragraph", "LabelText", "Legend", "StaticText"})
TEXT_ROLES = frozenset({"StaticText"})
STATE_PROPERTIES = ("checked", "pressed", "selected", "expanded", "disabled", "required", "invalid")
# Roles whose children are presentational (WAI-ARIA 1.2): what they hold is their name, said once
# on their line (a button's label, an icon's glyph), never read apart.
PRESENTATIONAL_CHILDREN = frozenset(
    {
        "button", "checkbox", "img", "image", "menuitemcheckbox", "menuitemradio", "meter",
        "option", "progressbar", "radio", "scrollbar", "separator", "slider", "switch", "tab",
        "ToggleButton", "PopUpButton", "DisclosureTriangle",
    }
)  # fmt: skip
# Unnamed inline roles that read as part of the sentence around them.
INLINE_STRUCTURAL = frozenset({"code", "mark"})
# Per line, in characters: a long function signature or link fits whole; so does a query.
MAX_NAME = 500
MAX_TEXT = 500
MAX_VALUE = 2000
MAX_LINES = 2000  # a text's lines in all, where the page keeps its line breaks (a traceback)
MAX_OPTION = 100
MAX_OPTIONS = 30
READ_WHOLE = "(shortened; browser_get_content ref={ref} reads it whole)"
HIDDEN_VALUE = "(a {kind} field: its value is not shown)"
PARTIAL_EDITOR = "(only the lines the editor shows)"
UNSEEN = "(not shown on screen)"
UNSEEN_VALUE = "(what it holds is not seen: left out)"
NAMED_OTHERWISE = "(its accessible name differs: not shown)"


@dataclass(frozen=True, slots=True)
class FrameTree:
    """One frame's accessibility nodes and where it hangs in the page."""

    frame_id: str
    nodes: list[dict[str, Any]]
    url: str = ""
    # The backend node id of the <iframe> element owning this frame (None for the main frame).
    owner: int | None = None
    error: str | None = None  # the frame could not be read (cross-origin, out of process)
    refused: str | None = None  # the frame shows a site agents may not use, and why


@dataclass(frozen=True, slots=True)
class EditorText:
    """What a code editor holds, read through its own API (see ``editor_text``)."""

    text: str
    complete: bool = True  # False: only the lines the editor had drawn
    box: int | None = None  # the held id of the element holding the editor's drawing
    label: str = ""  # its name when the tree has none (the textarea it was made from)


@dataclass(slots=True)
class Element:
    """A line of the outline that has a ref."""

    ref: str
    role: str
    name: str
    backend_node_id: int
    frame_id: str
    line: str


@dataclass(slots=True)
class Outline:
    lines: list[str] = field(default_factory=list)
    elements: list[Element] = field(default_factory=list)
    # (depth, text) of every line, for browser_find and depth cuts.
    nodes: list[tuple[int, str]] = field(default_factory=list)
    omitted_below_depth: int = 0
    # Texts left out because a sighted person cannot see them, by why (``page_outline``).
    withheld: dict[str, int] = field(default_factory=dict)
    # The title and address of the document read, which a tab's may lag behind mid-navigation.
    title: str = ""
    url: str = ""
    # The document was still being parsed when read; the tools the page declares (WebMCP).
    parsing: bool = False
    tools: list[PageTool] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def says_nothing(self) -> bool:
        """No text, no name and nothing to act on: a page not drawn yet, or a blank one."""
        return not self.elements and not any(
            '"' in line or line.lstrip().startswith("text: ") for line in self.lines
        )


AssignRef = Callable[[int, str], str]  # (backend node id, frame id) -> ref


def build_outline(
    frames: list[FrameTree],
    *,
    assign_ref: AssignRef,
    clickable: frozenset[int] = frozenset(),
    visible: frozenset[int] | None = None,
    max_depth: int | None = None,
    base_url: str = "",
    inline: frozenset[int] = frozenset(),
    script_focus: frozenset[int] = frozenset(),
    pointer: frozenset[int] = frozenset(),
    editors: Mapping[int, EditorText] | None = None,
    secrets: Mapping[int, str] | None = None,
) -> Outline:
    """The outline of the main frame (``frames[0]``) with child frames nested at their owners.

    ``visible``, when given, keeps only elements (and text) whose backend node is on screen;
    ``max_depth`` cuts nesting and counts what was left out. ``inline`` lists the backend nodes
    laid out inline (their text joins the line around them); ``script_focus`` those focusable
    only by script (``tabindex="-1"``); ``clickable`` those with a click handler and ``pointer``
    those where a pointing-hand cursor starts (both clickable without a role);
    ``editors`` the text of code editors by the backend node
    of their input; ``secrets`` the kind of secret each field holding one takes (its value and
    its options are left out).
    """
    builder = _Builder(frames, assign_ref, clickable, visible, max_depth, base_url)
    builder.inline, builder.script_focus, builder.pointer = inline, script_focus, pointer
    builder.secrets = secrets or {}
    builder.use_editors(editors or {})
    builder.frame(frames[0], depth=0)
    return _without_echoed_labels(builder.outline, max_depth)


@dataclass(slots=True)
class _Run:
    """Text running through one element and its inline descendants, until something else."""

    owner: int | None  # the backend node of the element that holds it
    texts: list[str] = field(default_factory=list)


class _Builder:
    def __init__(
        self,
        frames: list[FrameTree],
        assign_ref: AssignRef,
        clickable: frozenset[int],
        visible: frozenset[int] | None,
        max_depth: int | None,
        base_url: str,
    ) -> None:
        self.by_owner = {f.owner: f for f in frames[1:] if f.owner is not None}
        self.assign_ref = assign_ref
        self.clickable = clickable
        self.visible = visible
        self.max_depth = max_depth
        self.base_url = base_url
        self.inline: frozenset[int] = frozenset()
        self.script_focus: frozenset[int] = frozenset()
        self.pointer: frozenset[int] = frozenset()
        self.editors: Mapping[int, EditorText] = {}
        self.secrets: Mapping[int, str] = {}
        self.boxes: set[int] = set()  # backend nodes of code editors' boxes
        self.in_editor = 0
        # Inside an element that has a ref: a click listener below it is part of it.
        self.in_target = 0
        self.outline = Outline()
        # Inside an element named by its contents, its text is already said: only what can be
        # acted on (and named parts) is listed below it.
        self.quiet = 0
        self._below: dict[tuple[str, str], bool] = {}
        self._labels: dict[str, str] = {}

    def use_editors(self, editors: Mapping[int, EditorText]) -> None:
        self.editors = editors
        self.boxes = {e.box for e in editors.values() if e.box is not None}
        if self.visible is not None:
            # An editor's input is a speck (Monaco, CodeMirror 5): on screen when its box is.
            self.visible |= {node for node, e in editors.items() if e.box in self.visible}

    def frame(self, frame: FrameTree, depth: int) -> None:
        nodes = {n["nodeId"]: n for n in frame.nodes}
        roots = [n for n in frame.nodes if not n.get("parentId") or n["parentId"] not in nodes]
        for root in roots:
            self.children(root, nodes, frame, depth)

    def children(
        self,
        node: dict[str, Any],
        nodes: dict[str, Any],
        frame: FrameTree,
        depth: int,
        run: _Run | None = None,
    ) -> None:
        own = run is None
        if run is None:
            run = _Run(node.get("backendDOMNodeId"))
        for child_id in node.get("childIds", []):
            child = nodes.get(child_id)
            if child is None:
                continue
            role = _value(child, "role")
            if role in TEXT_ROLES and not child.get("ignored"):
                if self._shown(child):
                    run.texts.append(str(_value(child, "name") or ""))
                continue
            if role == "LineBreak":
                run.texts.append(" ")
                continue
            if self._joins_text(child, str(role or ""), nodes, frame):
                self.children(child, nodes, frame, depth, run)
                continue
            self._flush(run, depth, frame)
            self.node(child, nodes, frame, depth)
        if own:
            self._flush(run, depth, frame)

    def node(
        self, node: dict[str, Any], nodes: dict[str, Any], frame: FrameTree, depth: int
    ) -> None:
        role = str(_value(node, "role") or "")
        backend = node.get("backendDOMNodeId")
        if backend in self.boxes:
            # A code editor: its input says what it holds; of the rest, only what can be used
            # (a search panel, completions) is listed, not the drawing (lines, gutters, the
            # surfaces that take clicks to place the cursor).
            self.in_editor += 1
            self.quiet += 1
            try:
                self.children(node, nodes, frame, depth)
            finally:
                self.in_editor -= 1
                self.quiet -= 1
            return
        if node.get("ignored") or role in SKIPPED_ROLES or role in ("RootWebArea", "WebArea"):
            self.children(node, nodes, frame, depth)
            return
        props = _properties(node)
        interactive = self._is_target(node, role, props, nodes, frame)
        if not interactive and role not in STRUCTURAL_ROLES:
            self.children(node, nodes, frame, depth)  # a generic container: flatten it
            return
        if not self._shown(node) and not self._has_shown_descendant(node, nodes):
            return
        if interactive and role in ROLELESS and not _value(node, "name"):
            node = self._named_from_below(node, props, nodes)
        named = bool(_value(node, "name"))
        if self.quiet and not interactive and not named:
            if self._target_below(node, nodes, frame):
                self.children(node, nodes, frame, depth)
            return  # a part of the text the enclosing name already says
        if self.max_depth is not None and depth >= self.max_depth:
            self.outline.omitted_below_depth += 1
            return
        held = None if backend is None else int(backend)
        ref = self.assign_ref(held, frame.frame_id) if interactive and held is not None else None
        line, shortened = self._describe(node, role, props, interactive, ref, nodes)
        if ref is None and shortened and held is not None:
            ref = self.assign_ref(held, frame.frame_id)
        if ref is not None and held is not None:
            if interactive and role in ROLELESS and not named and "editable" not in props:
                line += " " + self._whereabouts(node, nodes, depth)
            if shortened:
                line += " " + READ_WHOLE.format(ref=ref)
            self.outline.elements.append(
                Element(ref, role, str(_value(node, "name") or ""), held, frame.frame_id, line)
            )
        self._emit(depth, line)
        editing_host = interactive and "editable" in props
        if role == "Iframe" and backend is not None:
            self._nested_frame(int(backend), depth + 1)
        elif role == "combobox" or editing_host:
            return  # the line says what it holds (its options, its text)
        else:
            # Below an element named by its contents (a heading, a term, a link) or one whose
            # children are presentational (a button's icon glyph), text says nothing the line
            # did not; below one named otherwise (a cell labelled "Code cell"), it does. Nor
            # below an ARIA textbox, whose text is the value its line says.
            quiet = (named and (_named_by_contents(node) or role in PRESENTATIONAL_CHILDREN)) or (
                role in ("textbox", "searchbox") and _value(node, "value") is not None
            )
            if quiet and _only_text_below(node, nodes):
                return
            self.quiet += quiet
            self.in_target += interactive
            try:
                self.children(node, nodes, frame, depth + 1)
            finally:
                self.quiet -= quiet
                self.in_target -= interactive

    def _is_target(
        self,
        node: dict[str, Any],
        role: str,
        props: dict[str, Any],
        nodes: dict[str, Any],
        frame: FrameTree,
    ) -> bool:
        """Whether the node gets a ref: something an agent can act on."""
        kind = self._kind(node, role, props, nodes)
        # A container that takes focus or clicks only for what it holds (a framework's root, a
        # delegating list, a toolbar button's wrapper) is no target of its own when it holds a
        # control: that is what an agent acts on. Inside a target, a click listener (an icon
        # in a button) is part of it.
        if kind == "container" and not self.in_editor:
            return not self.in_target and not self._target_below(node, nodes, frame)
        return kind == "control"

    def _kind(
        self, node: dict[str, Any], role: str, props: dict[str, Any], nodes: dict[str, Any]
    ) -> str | None:
        """ "control" (a widget, an editor), "container" (made a target by a tabindex or a
        click listener), or None."""
        if role in INTERACTIVE_ROLES:
            return "control"
        if "editable" in props and role not in TEXT_ROLES and _is_editing_host(node, nodes):
            return "control"
        backend = node.get("backendDOMNodeId")
        if props.get("focusable") is True and role in FOCUSABLE_CONTAINERS:
            # In the Tab order it is a stop of its own (a widget); by script only, a wrapper.
            return "container" if backend in self.script_focus else "control"
        drawn = backend in self.pointer
        if (drawn or backend in self.clickable) and role not in NEVER_CLICKABLE:
            # A handler with nothing to show for it (no name, no text, not drawn as something
            # to click) makes no target.
            shown = drawn or _value(node, "name") or self._label(node, nodes).strip()
            return "container" if shown else None
        return None

    def _whereabouts(self, node: dict[str, Any], nodes: dict[str, Any], depth: int) -> str:
        """What an unnamed target (a listener on a bare element, the only way to act on
        something) holds and the line it is in, so it can be told apart."""
        holds = "empty"
        stack = list(node.get("childIds", []))
        while stack:
            child = nodes.get(stack.pop())
            if child is None:
                continue
            if _value(child, "role") in ("img", "image"):
                holds = "an image"
                break
            stack.extend(child.get("childIds", []))
        parent = next((line for d, line in reversed(self.outline.nodes) if d < depth), None)
        where = f", in {_cut(parent, 80)[0]}" if parent is not None else ""
        return f"(no name: {holds}{where})"

    def _named_from_below(
        self, node: dict[str, Any], props: dict[str, Any], nodes: dict[str, Any]
    ) -> dict[str, Any]:
        """A target without a role or name (a div with a click listener) named, as a button
        would be, by the text and images it holds, when that is all it holds."""
        if "editable" in props:
            return node
        label = _one_line(self._label(node, nodes))
        if not label:
            return node
        name = {"value": label, "sources": [{"type": "contents", "value": {"value": label}}]}
        return {**node, "name": name}

    def _label(self, node: dict[str, Any], nodes: dict[str, Any]) -> str:
        """The text and image names below ``node``, or "" when it holds more than that (a
        control, a heading, a list: those keep their own lines)."""
        key = str(node.get("nodeId"))
        known = self._labels.get(key)
        if known is not None:
            return known
        parts: list[str] = []
        for child_id in node.get("childIds", []):
            child = nodes.get(child_id)
            if child is None or child.get("ignored"):
                continue
            role = str(_value(child, "role") or "")
            if role in TEXT_ROLES:
                parts.append(str(_value(child, "name") or ""))
            elif role in ("img", "image"):
                parts.append(f" {_value(child, 'name') or ''} ")
            elif role in INTERACTIVE_ROLES or role in STRUCTURAL_ROLES:
                parts = []
                break
            else:
                inner = self._label(child, nodes)
                inline = child.get("backendDOMNodeId") in self.inline
                parts.append(inner if inline else f" {inner} ")
        label = self._labels[key] = "".join(parts)
        return label

    def _target_below(self, node: dict[str, Any], nodes: dict[str, Any], frame: FrameTree) -> bool:
        key = (frame.frame_id, str(node.get("nodeId")))
        known = self._below.get(key)
        if known is not None:
            return known
        found = False
        for child_id in node.get("childIds", []):
            child = nodes.get(child_id)
            if child is None:
                continue
            role = str(_value(child, "role") or "")
            acts = not child.get("ignored") and self._kind(child, role, _properties(child), nodes)
            if acts or self._target_below(child, nodes, frame):
                found = True
                break
        self._below[key] = found
        return found

    def _joins_text(
        self, node: dict[str, Any], role: str, nodes: dict[str, Any], frame: FrameTree
    ) -> bool:
        """An inline element whose text reads on in the line around it (emphasis, a span)."""
        if node.get("backendDOMNodeId") not in self.inline:
            return False
        if node.get("ignored"):
            return True
        if role in STRUCTURAL_ROLES:
            return (
                role in INLINE_STRUCTURAL
                and not _value(node, "name")
                and _only_text_below(node, nodes)
            )
        return role not in SKIPPED_ROLES and not self._is_target(
            node, role, _properties(node), nodes, frame
        )

    def _nested_frame(self, owner: int, depth: int) -> None:
        child = self.by_owner.get(owner)
        if child is None:
            return
        if child.refused is not None:
            self._emit(depth, f"(frame {child.url} is not included: {child.refused})")
            return
        if child.error is not None:
            self._emit(
                depth,
                f"(cross-origin frame {child.url} is not included; open that URL with "
                "browser_new_tab to read it)",
            )
            return
        self.frame(child, depth)

    def _describe(
        self,
        node: dict[str, Any],
        role: str,
        props: dict[str, Any],
        interactive: bool,
        ref: str | None,
        nodes: dict[str, Any],
    ) -> tuple[str, bool]:
        """The line for a node (with ``ref`` after its name: a target's), and whether something
        on it was shortened."""
        editor = self.editors.get(node.get("backendDOMNodeId", -1))
        name = _one_line(str(_value(node, "name") or ""))
        if name and _named_by_contents(node) and not node["name"].get("whole"):
            # Chrome stops naming from contents after 100 descendants (Blink's
            # kMaxDescendantsForTextAlternativeComputation): a long signature, cut silently.
            # (``page_outline`` names whole, and says so.)
            whole = _one_line(self._contents(node, nodes))
            if len("".join(whole.split())) > len("".join(name.split())):
                name = whole
        name, shortened = _cut(name or (editor.label if editor is not None else ""), MAX_NAME)
        shown_role = SHORT_ROLES.get(role, role)
        if role == "heading":
            shown_role = f"heading[{props.get('level', '?')}]"
        if interactive and role in ROLELESS:
            shown_role = "textbox" if "editable" in props else "clickable"
        parts = [shown_role]
        if name:
            parts.append(_quoted(name))
        if ref is not None:
            parts.append(f"[{ref}]")
        value = editor.text if editor is not None else _value(node, "value")
        secret = self.secrets.get(node.get("backendDOMNodeId", -1))
        if secret is not None:
            parts.append(HIDDEN_VALUE.format(kind=secret))
        elif value not in (None, "") and role not in ("link", "heading"):
            multiline = (
                editor is not None
                or props.get("multiline") is True
                or props.get("editable") == "richtext"
            )
            text = str(value).replace("\r\n", "\n") if multiline else _one_line(str(value))
            text, cut = _cut(text, MAX_VALUE)
            shortened = shortened or cut
            parts.append(f"value={_quoted(text)}")
        if role == "combobox" and secret is None:
            options, cut = _options(node, nodes)
            shortened = shortened or cut
            if options:
                parts.append("options: " + " | ".join(options))
        for state in STATE_PROPERTIES if props else ():
            flag = props.get(state)
            if flag in (True, "true"):
                parts.append(state)
            elif flag == "mixed":
                parts.append(f"{state}=mixed")
        if props.get("editable") == "richtext":
            parts.append("richtext")
        if props.get("multiline") is True:
            parts.append("multiline")
        if props.get("readonly") is True and interactive:
            parts.append("readonly")
        if props.get("unseen") is True:
            parts.append(UNSEEN)
        elif props.get("valueUnseen") is True:
            parts.append(UNSEEN_VALUE)
        if props.get("differs") is True:
            parts.append(NAMED_OTHERWISE)
        if editor is not None and not editor.complete:
            parts.append(PARTIAL_EDITOR)
        url = props.get("url")
        if role == "link" and isinstance(url, str):
            parts.append(f"→ {_relative(url, self.base_url)}")
        return " ".join(parts), shortened

    def _contents(self, node: dict[str, Any], nodes: dict[str, Any]) -> str:
        """The text of a node's descendants, blocks apart by a space, as a person reads it."""
        parts: list[str] = []
        for child_id in node.get("childIds", []):
            child = nodes.get(child_id)
            if child is None:
                continue
            role = _value(child, "role")
            if role in TEXT_ROLES:
                parts.append("" if child.get("ignored") else str(_value(child, "name") or ""))
            elif role == "LineBreak":
                parts.append(" ")
            elif child.get("backendDOMNodeId") in self.inline:
                parts.append(self._contents(child, nodes))
            else:
                parts.append(f" {self._contents(child, nodes)} ")
        return "".join(parts)

    def _flush(self, run: _Run, depth: int, frame: FrameTree) -> None:
        # One line, or one per line where the page keeps its line breaks (a <pre>): each a
        # text line of its own, so that no line of the page passes for one of the outline.
        texts = [t for t in map(_one_line, "".join(run.texts).split("\n")) if t]
        run.texts.clear()
        if not texts or self.quiet:
            return
        if self.max_depth is not None and depth >= self.max_depth:
            self.outline.omitted_below_depth += 1
            return
        shown, shortened = _cut_lines(texts)
        lines = ["text: " + t for t in shown]
        if shortened and run.owner is not None:
            ref = self.assign_ref(int(run.owner), frame.frame_id)
            lines[-1] += " " + READ_WHOLE.format(ref=ref)
            self.outline.elements.append(
                Element(ref, "text", "", int(run.owner), frame.frame_id, lines[-1])
            )
        for line in lines:
            self._emit(depth, line)

    def _emit(self, depth: int, line: str) -> None:
        self.outline.lines.append(" " * depth + line)
        self.outline.nodes.append((depth, line))

    def _shown(self, node: dict[str, Any]) -> bool:
        if self.visible is None:
            return True
        backend = node.get("backendDOMNodeId")
        return backend is None or backend in self.visible

    def _has_shown_descendant(self, node: dict[str, Any], nodes: dict[str, Any]) -> bool:
        if self.visible is None:
            return True
        stack = list(node.get("childIds", []))
        while stack:
            child = nodes.get(stack.pop())
            if child is None:
                continue
            if child.get("backendDOMNodeId") in self.visible:
                return True
            stack.extend(child.get("childIds", []))
        return False


def _without_echoed_labels(outline: Outline, max_depth: int | None) -> Outline:
    """Drop a text line that only repeats the name of the element next to it (its label), and
    lines that say nothing: an unnamed container with nothing below it (an empty live region,
    an icon), unless the depth limit cut what it held."""
    said: list[tuple[int, str]] = []
    for depth, line in reversed(outline.nodes):
        below = said[-1][0] if said else -1
        whole = max_depth is None or depth + 1 < max_depth
        if whole and below <= depth and _says_nothing(line):
            continue
        said.append((depth, line))
    nodes = said[::-1]
    keep: list[bool] = []
    for index, (depth, line) in enumerate(nodes):
        echo = False
        if line.startswith("text: "):
            quoted = _quoted(line[len("text: ") :])
            neighbours = [nodes[i] for i in (index - 1, index + 1) if 0 <= i < len(nodes)]
            echo = any(d in (depth, depth - 1) and f" {quoted}" in n for d, n in neighbours)
        keep.append(not echo)
    outline.nodes = [n for n, k in zip(nodes, keep, strict=True) if k]
    outline.lines = [" " * d + n for d, n in outline.nodes]
    return outline


def _says_nothing(line: str) -> bool:
    role = line.partition("[")[0]
    return (
        role not in TABLE_PARTS
        and role.isalpha()
        and (line == role or line.removeprefix(role).strip("[]?").isdigit())
    )


def _value(node: dict[str, Any], key: str) -> Any:
    entry = node.get(key)
    return entry.get("value") if isinstance(entry, dict) else None


def _properties(node: dict[str, Any]) -> dict[str, Any]:
    """The node's properties by name (read once per node: the walk asks for them often)."""
    props = node.get(PROPERTIES)
    if props is None:
        props = node[PROPERTIES] = {
            p["name"]: p.get("value", {}).get("value")
            for p in node.get("properties", [])
            if isinstance(p, dict) and "name" in p
        }
    return props


# Where a node's properties are kept by name: read from Chrome's ``properties`` list once, or
# given so by the in-page outline (``page_outline.decode``), which has them by name already.
PROPERTIES = "tabrelay:properties"
# A string as a JSON literal, non-ASCII kept (one encoder: ``json.dumps`` with options makes
# one per call).
_quoted = json.JSONEncoder(ensure_ascii=False).encode


def _is_editing_host(node: dict[str, Any], nodes: dict[str, Any]) -> bool:
    """The outermost editable node (a contenteditable's root), not its inner parts."""
    parent = nodes.get(str(node.get("parentId")))
    return parent is None or "editable" not in _properties(parent)


def _only_text_below(node: dict[str, Any], nodes: dict[str, Any]) -> bool:
    """True when the descendants add nothing to the line: only text (a button's label)."""
    stack = list(node.get("childIds", []))
    while stack:
        child = nodes.get(stack.pop())
        if child is None:
            continue
        role = _value(child, "role")
        if role in INTERACTIVE_ROLES or role in STRUCTURAL_ROLES:
            return False
        stack.extend(child.get("childIds", []))
    return True


def _options(node: dict[str, Any], nodes: dict[str, Any]) -> tuple[list[str], bool]:
    """The option labels of a select, and whether any was left out or shortened."""
    found: list[str] = []
    shortened = False
    stack = list(node.get("childIds", []))
    while stack:
        child = nodes.get(stack.pop(0))
        if child is None:
            continue
        if _value(child, "role") == "option":
            if len(found) == MAX_OPTIONS:
                return found, True
            label, cut = _cut(_one_line(str(_value(child, "name") or "")), MAX_OPTION)
            found.append(label)
            shortened = shortened or cut
        stack.extend(child.get("childIds", []))
    return found, shortened


def _named_by_contents(node: dict[str, Any]) -> bool:
    """Whether Chrome computed the node's name from its contents (a heading, a term, a link)."""
    name = node.get("name")
    sources = name.get("sources", []) if isinstance(name, dict) else []
    for source in sources:
        if isinstance(source, dict) and "value" in source and not source.get("superseded"):
            return source.get("type") == "contents"
    return False


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cut_lines(texts: list[str]) -> tuple[list[str], bool]:
    """A text's lines, each within MAX_TEXT characters and all within MAX_LINES (shortened
    where they were cut), and whether any was."""
    shown: list[str] = []
    shortened, left = False, MAX_LINES
    for text in texts:
        if left <= 0:
            return shown, True
        line, cut = _cut(text, min(MAX_TEXT, max(left, 2)))
        shown.append(line)
        shortened, left = shortened or cut, left - len(line)
    return shown, shortened


def _cut(text: str, limit: int) -> tuple[str, bool]:
    """``text`` within ``limit`` characters (ending in "…" when shortened), and whether it was."""
    if len(text) <= limit:
        return text, False
    return text[: limit - 1] + "…", True


def _relative(url: str, base: str) -> str:
    """Same-origin links as paths, to keep lines short."""
    if base:
        origin = base.split("/", 3)[:3]
        prefix = "/".join(origin)
        if url.startswith(prefix + "/") or url == prefix:
            return url[len(prefix) :] or "/"
    return url


def search(outline: Outline, *, text: str | None, role: str | None, limit: int = 50) -> list[str]:
    """Outline lines matching ``text`` (case-insensitive) and/or ``role``; refs included."""
    needle = text.casefold() if text else None
    matches: list[str] = []
    for _, line in outline.nodes:
        line_role = line.split(" ", 1)[0].split("[", 1)[0]
        if role and line_role != role.removesuffix("s") and line_role != role:
            continue
        if needle and needle not in line.casefold():
            continue
        matches.append(line)
        if len(matches) >= limit:
            break
    return matches
