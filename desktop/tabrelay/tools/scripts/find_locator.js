((locator, msBudget) => {
HELPERS
  const doc = documentAt(locator.frames || []);
  if (!doc) return JSON.stringify({frame: true, tried: []});
  const budget = {deadline: performance.now() + (msBudget || 1000), scanned: 0, over: false};
  const roots = rootsOf(doc, budget);
  const ways = ['role', 'label', 'placeholder', 'test_id', 'text', 'css'];
  const tried = [];
  for (const way of ways) {
    const value = locator[way];
    if (value == null) continue;
    const found = matching(roots, way, value, way === 'role' ? locator.name : null, budget, 50);
    if (found.length === 1) return found[0];
    const shown = found.filter(visible);
    if (shown.length === 1) return shown[0];
    tried.push([way, found.length]);
  }
  // What is near: elements of the same role, or whose name or label shares a word.
  const words = norm([locator.name, locator.label, locator.placeholder, locator.text]
    .filter(Boolean).join(' ')).toLowerCase().split(' ').filter((w) => w.length > 2);
  const nearby = [];
  const near = new Set();
  const pick = (el, strong) => {
    // A select's options are its possible values: none is offered (a card's expiry, say).
    if (near.has(el) || nearby.length >= 40 || dom.closest(el, 'select, datalist')) return;
    const role = roleOf(el);
    if (!role || hiddenForAria(el)) return;
    const name = nameOf(el, role) || '';
    const said = (name + ' ' + (labelOf(el) || '')).toLowerCase();
    const alike = words.some((w) => said.includes(w));
    if (!alike && !(strong && role === locator.role)) return;
    near.add(el);
    nearby.push({role, name: name.slice(0, 80), alike});
  };
  const late = {deadline: performance.now() + 300, scanned: 0, over: false};
  const controls = '[role], a[href], button, input, select, textarea, option, '
    + 'h1, h2, h3, h4, h5, h6, img, li';
  for (const el of each(roots, controls, late)) {
    pick(el, true);
  }
  nearby.sort((a, b) => Number(b.alike) - Number(a.alike));
  return JSON.stringify({tried, over: budget.over, nearby: nearby.slice(0, 5)});
})
