(() => {
  EACH_ROOT
  const editorOf = EDITOR_OF;
  const elements = [], facts = [];
  eachRoot(document, (root) => {
    for (const box of root.querySelectorAll(BOXES)) {
      const found = editorOf(box);
      if (!found || !found.input || elements.includes(found.input)) continue;
      elements.push(found.input, found.box);
      facts.push([found.text, found.complete, found.label]);
    }
  });
  if (!elements.length) return null;
  /** @type {any} */ (elements).facts = facts;
  return elements;
})()
