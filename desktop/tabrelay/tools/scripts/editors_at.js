(found) => {
  const at = (path) => {
    /** @type {any} */
    let node = document;
    for (const step of path) {
      if (step === 's') node = node.shadowRoot || null;
      else if (step === 'f') {
        try {
          node = node.tagName === 'IFRAME' ? node.contentDocument : null;
        } catch (error) {
          node = null;
        }
      } else node = Number.isInteger(step) && node.children ? node.children[step] || null : null;
      if (!node) return null;
    }
    return node.nodeType === Node.ELEMENT_NODE ? node : null;
  };
  return found.map(([input, box]) => {
    const drawn = at(box);
    const takes = at(input);
    return drawn && takes && drawn.matches(BOXES) && drawn.contains(takes)
      ? { input: takes, box: drawn } : null;
  });
}
