((element, msBudget) => {
HELPERS
  let el = element && dom.type(element) === 1 ? element : element && dom.up(element);
  if (!el || !el.isConnected) return null;
  const frames = framesOf(dom.doc(el));
  if (frames === null) return {crossOrigin: true};
  const budget = {deadline: performance.now() + (msBudget || 400), scanned: 0, over: false};
  const roots = rootsOf(dom.doc(el), budget);
  const only = (way, value, name) => {
    if (value == null || value === '' || String(value).length > 500) return null;
    const found = matching(roots, way, value, name, budget, 2);
    return !budget.over && found.length === 1 && found[0] === el ? value : null;
  };
  const out = {css: cssPath(el), frames};
  const role = roleOf(el);
  if (role && !hiddenForAria(el)) {
    const name = nameOf(el, role);
    if (name !== null && name.length <= 500 && only('role', role, name || null)) {
      out.role = role;
      if (name) out.name = name;
    }
  }
  const label = labelOf(el);
  if (only('label', label)) out.label = label;
  const placeholder = norm(dom.attr(el, 'placeholder'));
  if (only('placeholder', placeholder)) out.placeholder = placeholder;
  const testId = dom.attr(el, 'data-testid');
  if (testId && testId === testId.trim() && only('test_id', testId)) out.test_id = testId;
  const text = textOf(el);
  if (only('text', text)) out.text = text;
  if (!out.css) out.css = dom.tag(el).toLowerCase();
  return out;
})
