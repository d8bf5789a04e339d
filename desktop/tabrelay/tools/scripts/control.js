(node) => {
  const el = node.nodeType === 1 ? node : node.parentElement;
  return el && el.tagName === 'LABEL' && el.control ? el.control : el;
}
