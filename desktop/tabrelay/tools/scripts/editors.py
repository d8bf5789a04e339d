"""Which editor an element belongs to, as page scripts: the element that takes its keys, the
box a person sees, and the editor's own interface to read and set its text.

Code editors (CodeMirror 5 and 6, Monaco, Ace) take keystrokes in an input of their own — a
hidden ``textarea``, an EditContext ``div`` — that sits under the drawn text, and keep the text
in a model that only part of is drawn. Typing needs that input focused, not a clear path for the
pointer to it; reading the text back needs the model. Rich text editors (ProseMirror and other
contenteditable hosts) and plain fields hold their text in the DOM. This module is script text
only: no I/O; ``text_entry``, ``refs`` and ``editor_text`` run it.
"""

from __future__ import annotations

from tabrelay.tools.scripts import script
from tabrelay.tools.scripts.page_scripts import SAFE_DOM

# Input types whose value is text typed key by key; the others (date, colour, range…) take a
# value in a fixed format, set at once.
TEXT_INPUT_TYPES = ("text", "search", "email", "url", "tel", "password", "number", "")
VALUE_INPUT_TYPES = ("date", "datetime-local", "month", "time", "week", "color", "range")

# What a person sees of each code editor: the element that holds all of it.
CODE_BOXES = "'.CodeMirror, .cm-editor, .monaco-editor, .ace_editor'"

# (element) => the code editor the element is part of, or null; a field the editor shows of its
# own (a find widget's) is not the editor. ``kind`` names it for people; ``box`` is what a
# person sees of it; ``input`` takes its keys (null where there is none); ``read()`` and
# ``write(text)`` use its own interface (null where it is out of reach), ``drawn()`` reads the
# lines it draws instead: all of its text only where ``drawsAll``; ``source`` is the textarea a
# CodeMirror 5 was made from.
CODE_EDITOR = script("code_editor.js").replace("BOXES", CODE_BOXES)

# (node) => the editor ``node`` is part of, or null: a code editor (``CODE_EDITOR``), a
# contenteditable host or a field, with ``kind``, ``box``, ``input``, ``readOnly``, ``read``
# and ``write`` as there; ``code`` says the editor reshapes typed text (indents, closes
# brackets) and keeps its own keymap. A wrapper around exactly one editor or field stands for it.
EDITOR = script("editor.js")
EDITOR = (
    EDITOR.replace("CODE_EDITOR", CODE_EDITOR.strip())
    .replace("BOXES", CODE_BOXES)
    .replace("TEXT_TYPES", repr(list(TEXT_INPUT_TYPES)))
    .replace("VALUE_TYPES", repr(list(VALUE_INPUT_TYPES)))
    .replace("SAFE_DOM", SAFE_DOM.strip())
)

# ([[input path, box path], …]) => [{input, box} | null, …]: the code editors the page's world
# found (``editor_text``; paths by ``page_scripts.PATH_OF``), in the world this runs in; null
# where the page has changed since (the box there is no code editor's, or the input is not in it).
EDITORS_AT = script("editors_at.js").replace("BOXES", CODE_BOXES)

_EDITOR_CALL = EDITOR.strip()
# Run on an element (Runtime.callFunctionOn): the element that takes its keys, or itself.
INPUT_OF = f"function () {{ const e = ({_EDITOR_CALL})(this); return e ? e.input : this; }}"
# Run on an editor's input: what a person sees of the editor.
BOX_OF = f"function () {{ const e = ({_EDITOR_CALL})(this); return e ? e.box : this; }}"
