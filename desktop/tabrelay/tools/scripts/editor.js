(node) => {
  const dom = SAFE_DOM; // a contenteditable form's controls can stand in for its properties
  const TEXT = new Set(TEXT_TYPES), VALUE = new Set(VALUE_TYPES);
  const codeEditor = CODE_EDITOR;
  const of = (el) => {
    const code = codeEditor(el);
    if (code && code.input) return code;
    if (el.isContentEditable) {
      let host = el;
      while (dom.up(host) && dom.view(dom.up(host)).isContentEditable) host = dom.up(host);
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
