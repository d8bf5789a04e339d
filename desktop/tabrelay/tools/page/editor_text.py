"""The text of code editors that keep it out of the accessibility tree (CodeMirror 5 and 6,
Monaco, Ace), read in the page through the editor's own API (``editors.CODE_EDITOR``).

Those editors take keystrokes in a hidden input (CodeMirror 5's ``textarea``, Monaco's input
area) and draw only the lines on screen, so Chrome's accessibility tree says nothing or too
little about what they hold. Plain fields and contenteditable editors (ProseMirror and the
like) need none of this: their value is in the tree. This module only reads; it never types;
``read`` runs ``SCRIPT`` once over the whole page (``page_scripts.EACH_ROOT``).
"""

from __future__ import annotations

from tabrelay.tools.context import PageElements, ToolContext
from tabrelay.tools.page.outline import EditorText
from tabrelay.tools.scripts import script
from tabrelay.tools.scripts.editors import CODE_BOXES, CODE_EDITOR
from tabrelay.tools.scripts.page_scripts import EACH_ROOT

# (element) => {input, box, text, complete, label} | null, for any element in or of a code
# editor (``CODE_EDITOR``). ``input`` takes the keys (the snapshot gives it the ref), ``box``
# holds the drawing; ``complete`` is false when only the drawn lines could be read (the editor's
# API is out of reach); ``label`` names an editor made from a labelled textarea (CodeMirror 5's
# fromTextArea).
EDITOR_OF = script("editor_of.js").replace("CODE_EDITOR", CODE_EDITOR.strip())

# Every code editor on the page: an array of their inputs and boxes by reference (input, box,
# input, box…) carrying ``facts``: each editor's text, completeness and label; null for none
# (most pages: one round trip). The editor's API runs here, in the page's world.
SCRIPT = (
    script("read_editors.js")
    .replace("EACH_ROOT", EACH_ROOT.strip())
    .replace("EDITOR_OF", EDITOR_OF.strip())
    .replace("BOXES", CODE_BOXES)
)


async def read(ctx: ToolContext) -> dict[int, EditorText]:
    """The text of every code editor on the page, by the backend node id of its input; none
    when the page kept the script from finishing (the snapshot then shows what the tree says).

    Raises:
        CommandFailed: the page could not be read (between documents, or gone).
    """
    return read_texts(await ctx.page_elements(SCRIPT, facts="facts"))


def read_texts(found: PageElements) -> dict[int, EditorText]:
    """The text of every code editor on the page, by the backend node id of its input, from
    what ``SCRIPT`` found. An editor that went away meanwhile, or a look the page broke, is left
    out: the snapshot then shows what the tree says.
    """
    facts = found.facts if isinstance(found.facts, list) else []
    texts: dict[int, EditorText] = {}
    for index, fact in enumerate(facts):
        node = found.nodes.get(2 * index)
        if node is not None and isinstance(fact, list) and len(fact) == 3:
            text, complete, label = fact
            texts[node] = EditorText(
                str(text), bool(complete), found.nodes.get(2 * index + 1), str(label)
            )
    return texts
