"""Which editor an element belongs to, as a page script: the element that takes its keys, the
box a person sees, and the editor's own interface to read and set its text.

Code editors (CodeMirror 5 and 6, Monaco, Ace) take keystrokes in an input of their own — a
hidden ``textarea``, an EditContext ``div`` — that sits under the drawn text, and keep the text
in a model that only part of is drawn. Typing needs that input focused, not a clear path for the
pointer to it; reading the text back needs the model. Rich text editors (ProseMirror and other
contenteditable hosts) and plain fields hold their text in the DOM. This module is script text
only: no I/O; ``text_entry`` runs it.
"""

from __future__ import annotations

# Input types whose value is text typed key by key; the others (date, colour, range…) take a
# value in a fixed format, set at once.
TEXT_INPUT_TYPES = ("text", "search", "email", "url", "tel", "password", "number", "")
VALUE_INPUT_TYPES = ("date", "datetime-local", "month", "time", "week", "color", "range")

# (node) => the editor ``node`` is part of, or null. ``kind`` names it for people; ``input``
# takes its keys; ``box`` is what a person sees of it; ``code`` says the editor reshapes typed
# text (indents, closes brackets) and keeps its own keymap; ``read()``/``write(text)`` use its
# own interface (null where it is not reachable); ``readOnly`` is true when it takes no text.
# A wrapper around exactly one editor or field stands for it.
EDITOR = r"""
(node) => {
  const TEXT = new Set(TEXT_TYPES), VALUE = new Set(VALUE_TYPES);
  const of = (el) => {
    const next = el.nextElementSibling;
    // CodeMirror 5 made from a textarea hides it and puts itself right after it.
    const made = el.tagName === 'TEXTAREA' && next && next.CodeMirror
      && typeof next.CodeMirror.getTextArea === 'function' && next.CodeMirror.getTextArea() === el;
    const from = made ? next : el;
    const box = from.closest('.CodeMirror, .cm-editor, .monaco-editor, .ace_editor');
    const isField = (x) => x.tagName === 'TEXTAREA' || (x.tagName === 'INPUT'
      && (TEXT.has(String(x.type).toLowerCase()) || VALUE.has(String(x.type).toLowerCase())));
    if (box && box.classList.contains('CodeMirror') && box.CodeMirror
        && typeof box.CodeMirror.getInputField === 'function') {
      const cm = box.CodeMirror;
      return {kind: 'CodeMirror 5', box, input: cm.getInputField(), code: true,
        readOnly: !!cm.getOption('readOnly'), read: () => cm.getValue(),
        write: (text) => { cm.setValue(text); cm.setCursor(cm.lineCount(), 0); }};
    }
    if (box && box.classList.contains('cm-editor')) {
      const content = box.querySelector('.cm-content');
      // EditorView.findFromDOM without the module: the tile (6.40+) or view (older) on the DOM.
      const tile = content && content.cmTile, old = content && content.cmView;
      const view = (tile && tile.root && tile.root.view)
        || (old && old.rootView && old.rootView.view) || null;
      if (content) {
        return {kind: 'CodeMirror 6', box, input: content, code: true,
          readOnly: view ? view.state.readOnly
            : content.getAttribute('contenteditable') === 'false',
          read: view ? () => view.state.doc.toString() : null,
          write: view ? (text) => view.dispatch({userEvent: 'input.type',
            changes: {from: 0, to: view.state.doc.length, insert: text},
            selection: {anchor: text.length}}) : null};
      }
    }
    if (box && box.classList.contains('monaco-editor')) {
      const input = box.querySelector('.native-edit-context, textarea.inputarea, '
        + 'textarea.ime-text-area');
      // The find widget's field is a field of its own, not the editor.
      if (input && !(isField(el) && el !== input)) {
        const api = window.monaco && window.monaco.editor;
        const editor = api && typeof api.getEditors === 'function' ? api.getEditors().find(
          (e) => e.getDomNode() === box || e.getContainerDomNode().contains(box)) : null;
        const model = editor && editor.getModel();
        return {kind: 'Monaco', box, input, code: true,
          readOnly: !!(editor && editor.getRawOptions().readOnly),
          read: model ? () => model.getValue(1) : null,  // 1: EndOfLinePreference.LF
          write: model ? (text) => {
            editor.executeEdits('tabrelay', [{range: model.getFullModelRange(), text,
              forceMoveMarkers: true}]);
            editor.setPosition(model.getFullModelRange().getEndPosition());
          } : null};
      }
    }
    if (box && box.classList.contains('ace_editor')) {
      const ace = box.env && box.env.editor, input = box.querySelector('textarea');
      if (input && !(isField(el) && el !== input)) {
        return {kind: 'Ace', box, input, code: true, readOnly: !!(ace && ace.getReadOnly()),
          read: ace ? () => ace.getValue() : null,
          write: ace ? (text) => ace.setValue(text, 1) : null};
      }
    }
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
    if (isField(el)) {
      return {kind: VALUE.has(String(el.type).toLowerCase()) ? 'value' : 'field', box: el,
        input: el, code: false, readOnly: el.readOnly === true, read: () => el.value,
        write: null};
    }
    return null;
  };
  const el = node && (node.nodeType === 1 ? node : node.parentElement);
  if (!el) return null;
  const own = of(el);
  if (own) return own;
  // A wrapper (a label, a form row, the editor's frame) around exactly one editor or field.
  const BOXES = '.CodeMirror, .cm-editor, .monaco-editor, .ace_editor';
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
""".replace("TEXT_TYPES", repr(list(TEXT_INPUT_TYPES))).replace(
    "VALUE_TYPES", repr(list(VALUE_INPUT_TYPES))
)

_EDITOR_CALL = EDITOR.strip()
# Run on an element (Runtime.callFunctionOn): the element that takes its keys, or itself.
INPUT_OF = f"function () {{ const e = ({_EDITOR_CALL})(this); return e ? e.input : this; }}"
# Run on an editor's input: what a person sees of the editor.
BOX_OF = f"function () {{ const e = ({_EDITOR_CALL})(this); return e ? e.box : this; }}"
