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
