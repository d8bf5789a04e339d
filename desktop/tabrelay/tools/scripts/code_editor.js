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
