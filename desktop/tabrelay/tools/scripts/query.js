((selector) => {
  const deep = (root) => {
    const found = root.querySelector(selector);
    if (found) return found;
    for (const host of root.querySelectorAll('*')) {
      if (host.shadowRoot) { const inner = deep(host.shadowRoot); if (inner) return inner; }
    }
    return null;
  };
  return deep(document);
})
