"""The text of code editors that keep it out of the accessibility tree (CodeMirror 5 and 6,
Monaco, Ace), read in the page through the editor's own API (``editors.CODE_EDITOR``).

Those editors take keystrokes in a hidden input (CodeMirror 5's ``textarea``, Monaco's input
area) and draw only the lines on screen, so Chrome's accessibility tree says nothing or too
little about what they hold. Plain fields and contenteditable editors (ProseMirror and the
like) need none of this: their value is in the tree. This module only reads; it never types.
"""

from __future__ import annotations

from tabrelay.errors import CommandFailed
from tabrelay.tools.context import ToolContext
from tabrelay.tools.editors import CODE_BOXES, CODE_EDITOR
from tabrelay.tools.outline import EditorText
from tabrelay.tools.page_scripts import EACH_ROOT

# (element) => {input, box, text, complete, label} | null, for any element in or of a code
# editor (``CODE_EDITOR``). ``input`` takes the keys (the snapshot gives it the ref), ``box``
# holds the drawing; ``complete`` is false when only the drawn lines could be read (the editor's
# API is out of reach); ``label`` names an editor made from a labelled textarea (CodeMirror 5's
# fromTextArea).
EDITOR_OF = r"""
(start) => {
  const el = start && (start.nodeType === 1 ? start : start.parentElement);
  const editor = el && (CODE_EDITOR)(el);
  if (!editor) return null;
  const {input, box, read, source} = editor;
  const label = source ? source.getAttribute('aria-label')
    || Array.from(source.labels || []).map((l) => l.textContent.trim()).join(' ') : '';
  if (read) return {input, box, text: read(), complete: true, label};
  return {input, box, text: editor.drawn(), complete: editor.drawsAll, label};
}
""".replace("CODE_EDITOR", CODE_EDITOR.strip())

# Every code editor of the document, its open shadow roots and same-origin frames: an array of
# their inputs and boxes by reference (input, box, input, box…) carrying ``facts`` (text,
# completeness, label) alongside; or null when there is none.
_FIND = r"""
(() => {
  const editorOf = EDITOR_OF;
  const elements = [], facts = [];
  EACH_ROOT
  eachRoot(document, (root) => {
    for (const box of root.querySelectorAll(BOXES)) {
      const found = editorOf(box);
      if (!found || !found.input || elements.includes(found.input)) continue;
      elements.push(found.input, found.box);
      facts.push([found.text, found.complete, found.label]);
    }
  });
  if (!elements.length) return null;
  elements.facts = facts;
  return elements;
})()
""".replace("EDITOR_OF", EDITOR_OF.strip()).replace("BOXES", CODE_BOXES)
_FIND = _FIND.replace("EACH_ROOT", EACH_ROOT.strip())


async def editor_texts(ctx: ToolContext) -> dict[int, EditorText]:
    """The text of every code editor on the page, by the backend node id of its input.

    One round trip when the page has none; three more otherwise, whatever their number. An
    editor that went away meanwhile is left out: the snapshot then shows what the tree says.
    The objects live in the call's object group (released when the call ends).
    """
    try:
        found = await ctx.page_elements(_FIND, facts="facts")
    except CommandFailed:
        return {}  # the page is between documents: the snapshot says so by itself
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
