const eachRoot = (root, visit) => {
  visit(root);
  for (const el of root.querySelectorAll('*')) {
    if (el.shadowRoot) eachRoot(el.shadowRoot, visit);
    if (el.tagName === 'IFRAME') {
      let doc = null;
      try { doc = el.contentDocument; } catch (error) { doc = null; }
      if (doc) eachRoot(doc, visit);
    }
  }
};
