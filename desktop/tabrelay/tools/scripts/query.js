((selector) => {
  // ":focus" is where keys go: the element the page's focus is on (through open shadow roots),
  // which CSS's :focus does not match while the window is not focused (a tab in the back).
  if (selector === ':focus') {
    let active = document.activeElement;
    while (active && active.shadowRoot && active.shadowRoot.activeElement)
      active = active.shadowRoot.activeElement;
    return active === document.body && !document.body.isContentEditable ? null : active;
  }
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
