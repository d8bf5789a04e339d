function (max, token) {
CLOSED
  const dom = SAFE_DOM; // an element may be a form, whose controls can stand in for its properties
  const HOSTS = new Set(['ARTICLE', 'ASIDE', 'BLOCKQUOTE', 'BODY', 'DIV', 'FOOTER', 'H1', 'H2',
    'H3', 'H4', 'H5', 'H6', 'HEADER', 'MAIN', 'NAV', 'P', 'SECTION', 'SPAN']);
  const found = [];
  const visit = (root) => {
    for (const el of root.querySelectorAll('*')) {
      const shadow = dom.shadow(el);
      if (shadow) visit(shadow);
      else if (!closed.asked.has(el)) {
        const custom = dom.name(el).includes('-');
        const defined = custom && dom.matches(el, ':defined');
        const empty = !dom.kids(el).length && (custom || HOSTS.has(dom.tag(el)));
        const box = empty && dom.rect(el);
        if (defined || (box && box.width > 0 && box.height > 0)) found.push(el);
      }
      if (dom.tag(el) === 'IFRAME') {
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
