"""The text of code editors that keep it out of the accessibility tree (CodeMirror 5 and 6,
Monaco, Ace), read in the page through the editor's own API (``editors.CODE_EDITOR``).

Those editors take keystrokes in a hidden input (CodeMirror 5's ``textarea``, Monaco's input
area) and draw only the lines on screen, so Chrome's accessibility tree says nothing or too
little about what they hold. Plain fields and contenteditable editors (ProseMirror and the
like) need none of this: their value is in the tree. This module only reads; it never types;
``page_looks`` runs its look with the others in one walk over the page.
"""

from __future__ import annotations

from tabrelay.tools.context import PageElements
from tabrelay.tools.editors import CODE_BOXES, CODE_EDITOR
from tabrelay.tools.outline import EditorText

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

# A look (``page_looks``): every code editor's input and box by reference (input, box, input,
# box…), with their text, completeness and label as facts.
LOOK = r"""
() => {
  const editorOf = EDITOR_OF;
  const elements = [], facts = [];
  return {
    visit: (root) => {
      for (const box of root.querySelectorAll(BOXES)) {
        const found = editorOf(box);
        if (!found || !found.input || elements.includes(found.input)) continue;
        elements.push(found.input, found.box);
        facts.push([found.text, found.complete, found.label]);
      }
    },
    found: () => ({elements, facts}),
  };
}
""".replace("EDITOR_OF", EDITOR_OF.strip()).replace("BOXES", CODE_BOXES)


def read_texts(found: PageElements) -> dict[int, EditorText]:
    """The text of every code editor on the page, by the backend node id of its input, from
    what ``LOOK`` found. An editor that went away meanwhile, or a look the page broke, is left
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
