function () {
  const editor = (EDITOR)(this);
  if (!editor) return null;
  let text = null;
  try { text = editor.read ? String(editor.read()) : null; } catch (error) { text = null; }
  return {kind: editor.kind, code: editor.code, readOnly: !!editor.readOnly, text,
    writable: !!editor.write, single: this.tagName === 'INPUT',
    maxLength: typeof this.maxLength === 'number' ? this.maxLength : -1,
    mac: /Mac|iPhone|iPad|iPod/.test(navigator.platform)};
}
