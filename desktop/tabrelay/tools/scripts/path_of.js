(el) => {
  const steps = [];
  for (let node = el; node !== document; ) {
    const parent = node.parentNode;
    if (!parent) return null;
    steps.push(Array.prototype.indexOf.call(parent.children, node));
    if (parent.nodeType === Node.DOCUMENT_FRAGMENT_NODE) {
      steps.push('s');
      node = /** @type {ShadowRoot} */ (parent).host;
    } else if (parent.nodeType === Node.DOCUMENT_NODE && parent !== document) {
      const view = /** @type {Document} */ (parent).defaultView;
      const frame = view && view.frameElement;
      if (!frame) return null;
      steps.push('f');
      node = frame;
    } else {
      node = parent;
    }
  }
  return steps.reverse();
}
