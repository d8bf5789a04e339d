"""Turn Chrome's accessibility tree into the compact outline agents read (browser_snapshot).

Pure: takes the ``Accessibility.getFullAXTree`` nodes of each frame (and, when known, which
backend nodes are clickable or on screen) and produces indented lines such as::

    heading[1] "Place an order"
    textbox "Email" [e4] placeholder="you@example.com"
    button "Place order" [e12]

Every element an agent can act on gets a ref. Generic containers disappear (their children
move up), text is kept short, and iframes nest under their ``iframe`` line. Roles and names
are Chrome's own, so they match what assistive technology sees.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

INTERACTIVE_ROLES = frozenset(
    {
        "button", "link", "textbox", "searchbox", "checkbox", "radio", "combobox", "listbox",
        "option", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "switch", "slider",
        "spinbutton", "treeitem", "scrollbar", "ComboBoxMenuButton", "PopUpButton",
        "DisclosureTriangle", "ToggleButton",
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
SHORT_ROLES = {"navigation": "nav", "Iframe": "iframe", "image": "img", "complementary": "aside"}
SKIPPED_ROLES = frozenset({"InlineTextBox", "LineBreak", "MenuListPopup"})
# Containers that become targets when they take keyboard focus (a tabindex, a custom widget).
FOCUSABLE_CONTAINERS = frozenset({"generic", "img", "image", "listitem", "row", "cell"})
# Clicking these only forwards to another element, which gets its own ref.
NEVER_CLICKABLE = frozenset({"RootWebArea", "paragraph", "LabelText", "Legend", "StaticText"})
TEXT_ROLES = frozenset({"StaticText"})
STATE_PROPERTIES = ("checked", "pressed", "selected", "expanded", "disabled", "required", "invalid")
MAX_NAME = 100
MAX_TEXT = 200


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

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


AssignRef = Callable[[int, str], str]  # (backend node id, frame id) -> ref


def build_outline(
    frames: list[FrameTree],
    *,
    assign_ref: AssignRef,
    clickable: frozenset[int] = frozenset(),
    visible: frozenset[int] | None = None,
    max_depth: int | None = None,
    base_url: str = "",
) -> Outline:
    """The outline of the main frame (``frames[0]``) with child frames nested at their owners.

    ``visible``, when given, keeps only elements (and text) whose backend node is on screen;
    ``max_depth`` cuts nesting and counts what was left out.
    """
    builder = _Builder(frames, assign_ref, clickable, visible, max_depth, base_url)
    builder.frame(frames[0], depth=0)
    return _without_echoed_labels(builder.outline)


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
        self.outline = Outline()

    def frame(self, frame: FrameTree, depth: int) -> None:
        nodes = {n["nodeId"]: n for n in frame.nodes}
        roots = [n for n in frame.nodes if not n.get("parentId") or n["parentId"] not in nodes]
        for root in roots:
            self.children(root, nodes, frame, depth)

    def children(
        self, node: dict[str, Any], nodes: dict[str, Any], frame: FrameTree, depth: int
    ) -> None:
        texts: list[str] = []
        for child_id in node.get("childIds", []):
            child = nodes.get(child_id)
            if child is None:
                continue
            role = _value(child, "role")
            if role in TEXT_ROLES and not child.get("ignored"):
                text = " ".join(str(_value(child, "name") or "").split())
                if text and self._shown(child):
                    texts.append(text)
                continue
            self._flush(texts, depth)
            self.node(child, nodes, frame, depth)
        self._flush(texts, depth)

    def node(
        self, node: dict[str, Any], nodes: dict[str, Any], frame: FrameTree, depth: int
    ) -> None:
        role = str(_value(node, "role") or "")
        if node.get("ignored") or role in SKIPPED_ROLES or role in ("RootWebArea", "WebArea"):
            self.children(node, nodes, frame, depth)
            return
        backend = node.get("backendDOMNodeId")
        props = _properties(node)
        interactive = (
            role in INTERACTIVE_ROLES
            or ("editable" in props and role not in TEXT_ROLES and _is_editing_host(node, nodes))
            or (backend in self.clickable and role not in NEVER_CLICKABLE)
            or (props.get("focusable") is True and role in FOCUSABLE_CONTAINERS)
        )
        if not interactive and role not in STRUCTURAL_ROLES:
            self.children(node, nodes, frame, depth)  # a generic container: flatten it
            return
        if not self._shown(node) and not self._has_shown_descendant(node, nodes):
            return
        if self.max_depth is not None and depth >= self.max_depth:
            self.outline.omitted_below_depth += 1
            return
        line = self._describe(node, role, props, interactive, nodes)
        if interactive and backend is not None:
            ref = self.assign_ref(int(backend), frame.frame_id)
            line = _with_ref(line, ref)
            self.outline.elements.append(
                Element(
                    ref, role, str(_value(node, "name") or ""), int(backend), frame.frame_id, line
                )
            )
        self._emit(depth, line)
        named = bool(_value(node, "name"))
        if role == "Iframe" and backend is not None:
            self._nested_frame(int(backend), depth + 1)
        elif role != "combobox" and not ((interactive or named) and _only_text_below(node, nodes)):
            self.children(node, nodes, frame, depth + 1)

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
        nodes: dict[str, Any],
    ) -> str:
        name = _short(str(_value(node, "name") or ""), MAX_NAME)
        shown_role = SHORT_ROLES.get(role, role)
        if role == "heading":
            shown_role = f"heading[{props.get('level', '?')}]"
        if interactive and role in ("generic", "paragraph", "listitem", "cell", "row"):
            shown_role = "textbox" if "editable" in props else "clickable"
        parts = [shown_role]
        if name:
            parts.append(json.dumps(name, ensure_ascii=False))
        value = _value(node, "value")
        if value not in (None, "") and role not in ("link", "heading"):
            parts.append(f"value={json.dumps(_short(str(value), MAX_NAME), ensure_ascii=False)}")
        if role == "combobox":
            options = _options(node, nodes)
            if options:
                parts.append("options: " + " | ".join(options))
        for state in STATE_PROPERTIES:
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
        url = props.get("url")
        if role == "link" and isinstance(url, str):
            parts.append(f"→ {_relative(url, self.base_url)}")
        return " ".join(parts)

    def _flush(self, texts: list[str], depth: int) -> None:
        if not texts:
            return
        if self.max_depth is not None and depth >= self.max_depth:
            self.outline.omitted_below_depth += 1
        else:
            self._emit(depth, "text: " + _short(" ".join(texts), MAX_TEXT))
        texts.clear()

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


def _without_echoed_labels(outline: Outline) -> Outline:
    """Drop a text line that only repeats the name of the element next to it (its label)."""
    nodes = outline.nodes
    keep: list[bool] = []
    for index, (depth, line) in enumerate(nodes):
        echo = False
        if line.startswith("text: "):
            quoted = json.dumps(line[len("text: ") :], ensure_ascii=False)
            neighbours = [nodes[i] for i in (index - 1, index + 1) if 0 <= i < len(nodes)]
            echo = any(d in (depth, depth - 1) and f" {quoted}" in n for d, n in neighbours)
        keep.append(not echo)
    outline.nodes = [n for n, k in zip(nodes, keep, strict=True) if k]
    outline.lines = [" " * d + n for d, n in outline.nodes]
    return outline


def _value(node: dict[str, Any], key: str) -> Any:
    entry = node.get(key)
    return entry.get("value") if isinstance(entry, dict) else None


def _properties(node: dict[str, Any]) -> dict[str, Any]:
    return {
        p["name"]: p.get("value", {}).get("value")
        for p in node.get("properties", [])
        if isinstance(p, dict) and "name" in p
    }


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


def _options(node: dict[str, Any], nodes: dict[str, Any]) -> list[str]:
    found: list[str] = []
    stack = list(node.get("childIds", []))
    while stack and len(found) < 30:
        child = nodes.get(stack.pop(0))
        if child is None:
            continue
        if _value(child, "role") == "option":
            found.append(_short(str(_value(child, "name") or ""), 40))
        stack.extend(child.get("childIds", []))
    return found


def _with_ref(line: str, ref: str) -> str:
    role, _, rest = line.partition(" ")
    if rest.startswith('"'):
        end = _quoted_end(rest)
        return f"{role} {rest[:end]} [{ref}]{rest[end:]}"
    return f"{role} [{ref}]" + (f" {rest}" if rest else "")


def _quoted_end(text: str) -> int:
    escaped = False
    for index, char in enumerate(text[1:], start=1):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            return index + 1
    return len(text)


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
