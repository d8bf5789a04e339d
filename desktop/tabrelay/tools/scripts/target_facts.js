function () {
  const el = this.nodeType === 1 ? this : this.parentElement;
  if (!el) return {};
  const SKIP = new Set(['INPUT', 'TEXTAREA', 'SELECT', 'SCRIPT', 'STYLE', 'TEMPLATE', 'NOSCRIPT']);
  const isField = (node) => node.isContentEditable || ['TEXTAREA', 'SELECT'].includes(node.tagName)
    || (node.tagName === 'INPUT' && !['button', 'submit', 'reset', 'image', 'checkbox', 'radio',
      'range', 'color', 'file', 'hidden'].includes(String(node.type).toLowerCase()));
  const textOf = (root) => {
    let text = '';
    const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_ELEMENT
      | NodeFilter.SHOW_TEXT, {acceptNode: (node) => node.nodeType === 1
        ? (SKIP.has(node.tagName) || node.isContentEditable ? NodeFilter.FILTER_REJECT
          : NodeFilter.FILTER_SKIP)
        : NodeFilter.FILTER_ACCEPT});
    for (let node = walker.nextNode(); node && text.length < 300; node = walker.nextNode()) {
      text += node.data + ' ';
    }
    return text;
  };
  const fieldsIn = (node) => Array.from(
    node.querySelectorAll('input, textarea, select, [contenteditable]')).filter(isField);
  // Chrome names an element by its labels and by what its aria-labelledby names, and a field
  // in them says what it holds there (a card number, a code): such a name is not shown.
  const root = el.getRootNode();
  const namers = [...(el.labels || []), ...String(el.getAttribute('aria-labelledby') || '')
    .split(/\s+/).filter(Boolean).map((id) => (root.getElementById ? root : el.ownerDocument)
      .getElementById(id))];
  const namedByFields = namers.some((n) => n && n !== el
    && (isField(n) || fieldsIn(n).some((field) => field !== el)));
  const type = el.tagName === 'INPUT' ? String(el.type || 'text').toLowerCase() : '';
  if (isField(el)) {
    const label = el.labels && el.labels.length ? textOf(el.labels[0]) : '';
    const hint = el.getAttribute('placeholder') || el.getAttribute('aria-label') || label
      || el.getAttribute('title') || el.getAttribute('name') || '';
    return {field: true, type, namedByFields, text: String(hint).slice(0, 300)};
  }
  const holdsFields = fieldsIn(el).length > 0;
  // A button's value is its caption; other inputs' values (hidden, file) are no text to show.
  const caption = ['button', 'submit', 'reset'].includes(type) ? el.value
    : el.getAttribute('alt') || '';
  return {field: false, type, holdsFields, namedByFields, text: type ? String(caption).slice(0, 300)
    : textOf(el)};
}
