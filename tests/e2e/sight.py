"""What a sighted person cannot see on a page, measured from Chrome's layout (issue 25): the
tests' oracle for the text the reading tools leave out, written apart from ``page_scripts.SIGHT``
and fed by other means (``DOMSnapshot.captureSnapshot``: every node's box in page coordinates
and computed styles, as Chrome laid the page out; nothing run in the page).

A node is unseen when it draws nothing (no box: not rendered, folded, skipped; hidden), draws
nowhere a person can look (no area, left of or above the page, nowhere inside a box of an
ancestor that clips what overflows it, clipped to nothing), draws at an opacity under 0.1 with
its ancestors', or, for text, in a colour under 0.1 opaque, under 4 px, or of the background
behind it (the nearest opaque background of an ancestor; unknown past a picture or something
positioned). Covering by another element is not judged here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from e2e.cdp import Session

STYLES = [
    "overflow-x", "overflow-y", "color", "font-size", "position", "display", "opacity",
    "visibility", "background-color", "background-image", "filter", "clip-path", "clip",
]  # fmt: skip
S = {name: index for index, name in enumerate(STYLES)}
ELEMENT, TEXT = 1, 3
WHITE = (255.0, 255.0, 255.0, 1.0)


@dataclass(frozen=True, slots=True)
class Box:
    x: float
    y: float
    right: float
    bottom: float

    def meet(self, other: Box) -> Box:
        return Box(
            max(self.x, other.x),
            max(self.y, other.y),
            min(self.right, other.right),
            min(self.bottom, other.bottom),
        )

    @property
    def flat(self) -> bool:
        return self.right - self.x <= 1 or self.bottom - self.y <= 1


async def unseen_nodes(session: Session) -> set[int]:
    """The backend node ids, in every document of the page Chrome lays out in this process,
    of the texts and elements a sighted person cannot see."""
    snapshot = await session.send("DOMSnapshot.captureSnapshot", {"computedStyles": STYLES})
    found: set[int] = set()
    for document in snapshot["documents"]:
        found |= _Document(document, snapshot["strings"]).unseen()
    return found


class _Document:
    def __init__(self, document: dict[str, Any], strings: list[str]) -> None:
        nodes, self.layout = document["nodes"], document["layout"]
        self.strings = strings
        self.parents: list[int] = nodes["parentIndex"]
        self.backends: list[int] = nodes["backendNodeId"]
        self.types: list[int] = nodes["nodeType"]
        self.names = [strings[i].upper() for i in nodes["nodeName"]]
        self.laid = {node: at for at, node in enumerate(self.layout["nodeIndex"])}
        self.memo: dict[tuple[str, int], Any] = {}

    def style(self, node: int, name: str) -> str:
        at = self.laid.get(node)
        if at is None:
            return ""
        index = self.layout["styles"][at][S[name]]
        return self.strings[index] if index >= 0 else ""

    def box(self, node: int) -> Box:
        x, y, width, height = self.layout["bounds"][self.laid[node]]
        return Box(x, y, x + width, y + height)

    def _up(self, key: str, node: int, own: Any, combine: Any, root: Any) -> Any:
        """A value inherited down the tree: ``combine(own(node), value of the parent)``."""
        if node < 0:
            return root
        memo = self.memo.get((key, node), self)
        if memo is self:
            parent = self._up(key, self.parents[node], own, combine, root)
            memo = self.memo[(key, node)] = combine(own(node), parent)
        return memo

    def clip(self, node: int) -> Box | None:
        """The box what ``node`` holds is clipped to (None: nothing clips it)."""

        def own(n: int) -> tuple[str, Box | None]:
            if self.types[n] != ELEMENT or n not in self.laid or self.names[n] in ("HTML", "BODY"):
                return "", None
            if self.style(n, "position") == "fixed":
                return "reset", None
            overflow = {self.style(n, "overflow-x"), self.style(n, "overflow-y")}
            if overflow & {"auto", "scroll"}:
                return "reset", None  # a person scrolls it into view
            return ("meet", self.box(n)) if overflow & {"hidden", "clip"} else ("", None)

        def combine(mine: tuple[str, Box | None], above: Box | None) -> Box | None:
            how, box = mine
            if how == "reset":
                return None
            if how == "meet" and box is not None:
                return box if above is None else above.meet(box)
            return above

        return self._up("clip", node, own, combine, None)

    def opacity(self, node: int) -> float:
        def own(n: int) -> float:
            if self.types[n] != ELEMENT:
                return 1.0
            value = _number(self.style(n, "opacity"))
            for amount, percent in re.findall(r"opacity\(([\d.]+)(%?)\)", self.style(n, "filter")):
                value *= float(amount) / (100 if percent else 1)
            return value

        return self._up("opacity", node, own, lambda a, b: a * b, 1.0)

    def veiled(self, node: int) -> bool:
        """Clipped to nothing by its own clip or clip-path, or an ancestor's."""

        def own(n: int) -> bool:
            if self.types[n] != ELEMENT:
                return False
            inset = re.match(r"inset\(([\d.]+)%", self.style(n, "clip-path"))
            rect = [float(v) for v in re.findall(r"(-?[\d.]+)px", self.style(n, "clip"))]
            absolute = self.style(n, "position") in ("absolute", "fixed")
            flat = len(rect) == 4 and min(rect[2] - rect[0], rect[1] - rect[3]) <= 1
            return bool(inset and float(inset.group(1)) >= 50) or (absolute and flat)

        return self._up("veiled", node, own, lambda a, b: a or b, False)

    def behind(self, node: int) -> tuple[float, ...] | None:
        """The colour painted behind what ``node`` holds, when known."""

        def own(n: int) -> tuple[str, tuple[float, ...] | None]:
            if self.types[n] != ELEMENT or n not in self.laid:
                return "", None
            if self.style(n, "background-image") not in ("", "none"):
                return "unknown", None
            colour = _rgba(self.style(n, "background-color"))
            if colour is not None and colour[3] >= 0.9:
                return "paint", colour
            if self.style(n, "position") in ("absolute", "fixed"):
                return "unknown", None
            return "", None

        def combine(mine: tuple[str, Any], above: Any) -> Any:
            how, colour = mine
            return None if how == "unknown" else colour if how == "paint" else above

        return self._up("behind", node, own, combine, WHITE)

    def unseen(self) -> set[int]:
        # Nodes with a box of their own or below them (display: contents has none, its
        # children do).
        holding: set[int] = set()
        for node in self.laid:
            while node >= 0 and node not in holding:
                holding.add(node)
                node = self.parents[node]
        found: set[int] = set()
        for node, backend in enumerate(self.backends):
            if self.types[node] not in (ELEMENT, TEXT) or self.names[node] in ("HTML", "BODY"):
                continue
            if self._unseen(node, holding):
                found.add(backend)
        return found

    def _unseen(self, node: int, holding: set[int]) -> bool:
        parent = self.parents[node]
        styled = node if self.types[node] == ELEMENT else parent
        if node not in self.laid or self.style(node, "display") == "contents":
            return node not in holding  # not rendered: display none, folded, skipped
        drawn = self.box(node)
        clip = self.clip(parent) if parent >= 0 else None
        if (
            drawn.flat
            or drawn.right <= 0
            or drawn.bottom <= 0
            or (clip is not None and drawn.meet(clip).flat)
            or self.opacity(styled) < 0.1
            or self.veiled(styled)
            or self.style(styled, "visibility") not in ("visible", "")
        ):
            return True
        if self.types[node] != TEXT:
            return False
        ink = _rgba(self.style(node, "color"))
        if _px(self.style(node, "font-size")) < 4:
            return True
        if ink is None:
            return False
        if ink[3] * self.opacity(parent) < 0.1:
            return True
        behind = self.behind(parent)
        return behind is not None and _contrast(ink, behind) < 1.1


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 1.0


def _px(text: str) -> float:
    match = re.match(r"([\d.]+)px", text)
    return float(match.group(1)) if match else 16.0


def _rgba(text: str) -> tuple[float, ...] | None:
    match = re.match(r"rgba?\(([^)]*)\)", text)
    if not match:
        return None
    parts = [float(p) for p in re.split(r"[\s,/]+", match.group(1)) if p]
    if len(parts) < 3:
        return None
    return (*parts[:3], parts[3] if len(parts) > 3 else 1.0)


def _contrast(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    def luminance(c: tuple[float, ...]) -> float:
        r, g, bl = (
            x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4
            for x in (v / 255 for v in c[:3])
        )
        return 0.2126 * r + 0.7152 * g + 0.0722 * bl

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)
