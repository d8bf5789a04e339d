function (text) {
  const editor = (EDITOR)(this);
  if (!editor || !editor.write) return false;
  editor.write(text);
  return true;
}
