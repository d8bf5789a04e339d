(() => {
  EACH_ROOT
  const editorOf = EDITOR_OF;
  const pathOf = PATH_OF;
  const inputs = [], found = [];
  eachRoot(document, (root) => {
    for (const box of root.querySelectorAll(BOXES)) {
      const editor = editorOf(box);
      if (!editor || !editor.input || inputs.includes(editor.input)) continue;
      inputs.push(editor.input);
      const input = pathOf(editor.input), drawn = pathOf(editor.box);
      if (input && drawn) found.push([input, drawn, editor.text, editor.complete, editor.label]);
    }
  });
  return found.length ? found : null;
})()
