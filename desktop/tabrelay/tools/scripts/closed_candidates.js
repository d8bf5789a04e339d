function (max, token) {
CLOSED
  const HOSTS = new Set(['ARTICLE', 'ASIDE', 'BLOCKQUOTE', 'BODY', 'DIV', 'FOOTER', 'H1', 'H2',
    'H3', 'H4', 'H5', 'H6', 'HEADER', 'MAIN', 'NAV', 'P', 'SECTION', 'SPAN']);
  const found = [];
  const visit = (root) => {
    for (const el of root.querySelectorAll('*')) {
      const shadow = el.shadowRoot;
      if (shadow) visit(shadow);
      else if (!closed.asked.has(el)) {
        const custom = el.localName.includes('-');
        const defined = custom && el.matches(':defined');
        const empty = !el.firstChild && (custom || HOSTS.has(el.tagName));
        const box = empty && el.getBoundingClientRect();
        if (defined || (box && box.width > 0 && box.height > 0)) found.push(el);
      }
      if (el.tagName === 'IFRAME') {
        let doc = null;
        try { doc = el.contentDocument; } catch (error) { doc = null; }
        if (doc) visit(doc);
      }
    }
  };
  visit(document);
  closed.pending.set(token, found);
  for (const old of closed.pending.keys()) {
    if (closed.pending.size <= 8) break;
    closed.pending.delete(old);
  }
  return found.length > max ? found.length : found.length ? found : null;
}
