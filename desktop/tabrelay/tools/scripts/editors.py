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
CODE_EDITOR = r"""
(start) => {
  const next = start.nextElementSibling;
  // CodeMirror 5 made from a textarea hides it and puts itself right after it.
  const made = start.tagName === 'TEXTAREA' && next && next.CodeMirror
    && typeof next.CodeMirror.getTextArea === 'function' && next.CodeMirror.getTextArea() === start;
  const el = made ? next : start;
  const box = el.closest(BOXES);
  if (!box) return null;
  const drawn = (lines) => () => Array.from(box.querySelectorAll(lines))
    .map((line) => line.textContent.replace(/\u00a0/g, ' ')).join('\n');
  let editor;
  if (box.classList.contains('CodeMirror')) {
    const cm = box.CodeMirror, api = !!cm && typeof cm.getInputField === 'function';
    editor = {kind: 'CodeMirror 5', drawn: drawn('.CodeMirror-line'),
      input: api ? cm.getInputField() : box.querySelector('textarea'),
      source: api && cm.getTextArea ? cm.getTextArea() : null,
      readOnly: api && !!cm.getOption('readOnly'), read: api ? () => cm.getValue() : null,
      write: api ? (text) => { cm.setValue(text); cm.setCursor(cm.lineCount(), 0); } : null};
  } else if (box.classList.contains('cm-editor')) {
    const content = box.querySelector('.cm-content');
    // EditorView.findFromDOM without the module: the tile (6.40+) or view (older) on the DOM.
    const tile = content && content.cmTile, old = content && content.cmView;
    const view = (tile && tile.root && tile.root.view)
      || (old && old.rootView && old.rootView.view) || null;
    editor = {kind: 'CodeMirror 6', input: content, drawn: drawn('.cm-line'),
      drawsAll: !box.querySelector('.cm-gap'),
      readOnly: view ? view.state.readOnly
        : !!content && content.getAttribute('contenteditable') === 'false',
      read: view ? () => view.state.doc.toString() : null,
      write: view ? (text) => view.dispatch({userEvent: 'input.type',
        changes: {from: 0, to: view.state.doc.length, insert: text},
        selection: {anchor: text.length}}) : null};
  } else if (box.classList.contains('monaco-editor')) {
    const api = window.monaco && window.monaco.editor;
    const monaco = api && typeof api.getEditors === 'function' ? api.getEditors().find(
      (e) => e.getDomNode() === box || e.getContainerDomNode().contains(box)) : null;
    const model = monaco && monaco.getModel();
    editor = {kind: 'Monaco', drawn: drawn('.view-lines .view-line'),
      input: box.querySelector('.native-edit-context, textarea.inputarea, textarea.ime-text-area'),
      readOnly: !!(monaco && monaco.getRawOptions().readOnly),
      read: model ? () => model.getValue(1) : null,  // 1: EndOfLinePreference.LF
      write: model ? (text) => {
        monaco.executeEdits('tabrelay', [{range: model.getFullModelRange(), text,
          forceMoveMarkers: true}]);
        monaco.setPosition(model.getFullModelRange().getEndPosition());
      } : null};
  } else {
    const ace = box.env && box.env.editor;
    editor = {kind: 'Ace', input: box.querySelector('textarea'), drawn: drawn('.ace_line'),
      readOnly: !!(ace && ace.getReadOnly()), read: ace ? () => ace.getValue() : null,
      write: ace ? (text) => ace.setValue(text, 1) : null};
  }
  if ((el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') && el !== editor.input) return null;
  return Object.assign({box, code: true, readOnly: false, read: null, write: null,
    drawsAll: false, source: null}, editor);
}
""".replace("BOXES", CODE_BOXES)

# (node) => the editor ``node`` is part of, or null: a code editor (``CODE_EDITOR``), a
# contenteditable host or a field, with ``kind``, ``box``, ``input``, ``readOnly``, ``read``
# and ``write`` as there; ``code`` says the editor reshapes typed text (indents, closes
# brackets) and keeps its own keymap. A wrapper around exactly one editor or field stands for it.
EDITOR = r"""
(node) => {
  const TEXT = new Set(TEXT_TYPES), VALUE = new Set(VALUE_TYPES);
  const codeEditor = CODE_EDITOR;
  const of = (el) => {
    const code = codeEditor(el);
    if (code && code.input) return code;
    if (el.isContentEditable) {
      let host = el;
      while (host.parentElement && host.parentElement.isContentEditable) host = host.parentElement;
      const pm = host.classList.contains('ProseMirror');
      return {kind: pm ? 'ProseMirror' : 'contenteditable', box: host, input: host, code: false,
        readOnly: false, write: null, read: () => {
          // ProseMirror's document, blocks on lines of their own (innerText adds blank lines).
          const doc = pm && host.pmViewDesc && host.pmViewDesc.node;
          return doc && doc.textBetween ? doc.textBetween(0, doc.content.size, '\n')
            : host.innerText;
        }};
    }
    const type = String(el.type).toLowerCase();
    if (el.tagName === 'TEXTAREA'
        || (el.tagName === 'INPUT' && (TEXT.has(type) || VALUE.has(type)))) {
      return {kind: VALUE.has(type) ? 'value' : 'field', box: el, input: el, code: false,
        readOnly: el.readOnly === true, read: () => el.value, write: null};
    }
    return null;
  };
  const el = node && (node.nodeType === 1 ? node : node.parentElement);
  if (!el) return null;
  const own = of(el);
  if (own) return own;
  // A wrapper (a label, a form row, the editor's frame) around exactly one editor or field.
  const inside = new Set();
  for (const part of el.querySelectorAll(BOXES + ', [contenteditable], textarea, input')) {
    const box = part.closest(BOXES);
    if (box && box !== part) continue;  // a code editor's own parts: the editor stands for them
    const found = of(part);
    if (found) inside.add(found.input);
    if (inside.size > 1) return null;
  }
  return inside.size === 1 ? of(Array.from(inside)[0]) : null;
}
"""
EDITOR = (
    EDITOR.replace("CODE_EDITOR", CODE_EDITOR.strip())
    .replace("BOXES", CODE_BOXES)
    .replace("TEXT_TYPES", repr(list(TEXT_INPUT_TYPES)))
    .replace("VALUE_TYPES", repr(list(VALUE_INPUT_TYPES)))
)

_EDITOR_CALL = EDITOR.strip()
# Run on an element (Runtime.callFunctionOn): the element that takes its keys, or itself.
INPUT_OF = f"function () {{ const e = ({_EDITOR_CALL})(this); return e ? e.input : this; }}"
# Run on an editor's input: what a person sees of the editor.
BOX_OF = f"function () {{ const e = ({_EDITOR_CALL})(this); return e ? e.box : this; }}"
