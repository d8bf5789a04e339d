"""The text of code editors that keep it out of the accessibility tree (CodeMirror 5 and 6,
Monaco, Ace), read in the page through the editor's own API (``editors.CODE_EDITOR``).

Those editors take keystrokes in a hidden input (CodeMirror 5's ``textarea``, Monaco's input
area) and draw only the lines on screen, so Chrome's accessibility tree says nothing or too
little about what they hold. Plain fields and contenteditable editors (ProseMirror and the
like) need none of this: their value is in the tree. This module only reads; it never types;
``read`` runs ``SCRIPT`` once over the whole page (``page_scripts.EACH_ROOT``).

The page's world answers by value: each editor's text, and where its input and box are
(``page_scripts.PATH_OF``), which Tabrelay's world follows back to them (``editors.EDITORS_AT``,
in the outline and the content reader). One round trip, whatever the number of editors: no
element is handed from one world to the other through CDP (two round trips of one command per
element), and nothing is left to let go.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tabrelay.tools.context import ToolContext
from tabrelay.tools.page.outline import EditorText
from tabrelay.tools.scripts import script
from tabrelay.tools.scripts.editors import CODE_BOXES, CODE_EDITOR
from tabrelay.tools.scripts.page_scripts import EACH_ROOT, PATH_OF

# (element) => {input, box, text, complete, label} | null, for any element in or of a code
# editor (``CODE_EDITOR``). ``input`` takes the keys (the snapshot gives it the ref), ``box``
# holds the drawing; ``complete`` is false when only the drawn lines could be read (the editor's
# API is out of reach); ``label`` names an editor made from a labelled textarea (CodeMirror 5's
# fromTextArea).
EDITOR_OF = script("editor_of.js").replace("CODE_EDITOR", CODE_EDITOR.strip())

# Every code editor on the page, by value: [[input path, box path, text, complete, label], …],
# null for none. The editor's API runs here, in the page's world.
SCRIPT = (
    script("read_editors.js")
    .replace("EACH_ROOT", EACH_ROOT.strip())
    .replace("EDITOR_OF", EDITOR_OF.strip())
    .replace("PATH_OF", PATH_OF.strip())
    .replace("BOXES", CODE_BOXES)
)

MAX_EDITORS = 500  # more are left out (the snapshot shows them as the outline reads them)
MAX_STEPS = 1000  # a path deeper than this is no element's of a real page


@dataclass(frozen=True, slots=True)
class CodeEditor:
    """A code editor the page's world found: where its input and its box are (paths, as
    ``page_scripts.PATH_OF`` gives them) and what it holds."""

    input: list[int | str]
    box: list[int | str]
    text: str
    complete: bool  # False: only the lines the editor had drawn
    label: str  # its name when the tree has none (the textarea it was made from)

    def held(self, input_id: int, box_id: int) -> tuple[int, EditorText]:
        """What it holds, by the id Tabrelay's world holds its input by (its box by
        ``box_id``)."""
        return input_id, EditorText(self.text, self.complete, box_id, self.label)


async def read(ctx: ToolContext) -> list[CodeEditor]:
    """Every code editor on the page; none when the page kept the script from finishing (the
    snapshot then shows what the tree says).

    Raises:
        CommandFailed: the page could not be read (between documents, or gone).
    """
    answer = await ctx.cdp("Runtime.evaluate", {"expression": SCRIPT, "returnByValue": True})
    if answer.get("exceptionDetails"):
        return []
    return found(answer.get("result", {}).get("value"))


def found(value: Any) -> list[CodeEditor]:
    """The editors in the script's answer (the page's world's: any JSON value). An entry of
    another shape is left out: the snapshot then shows what the tree says of that editor."""
    if not isinstance(value, list):
        return []
    editors = []
    for entry in value[:MAX_EDITORS]:
        if not (isinstance(entry, list) and len(entry) == 5):
            continue
        input_path, box_path, text, complete, label = entry
        if _is_path(input_path) and _is_path(box_path):
            editors.append(
                CodeEditor(input_path, box_path, str(text), complete is True, str(label or ""))
            )
    return editors


def paths(editors: list[CodeEditor]) -> list[list[list[int | str]]]:
    """Where each editor is, as ``editors.EDITORS_AT`` takes them."""
    return [[e.input, e.box] for e in editors]


def _is_path(path: Any) -> bool:
    return (
        isinstance(path, list)
        and 0 < len(path) <= MAX_STEPS
        and all(step in ("s", "f") or (type(step) is int and 0 <= step < 2**31) for step in path)
    )
