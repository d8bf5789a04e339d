const MAX_SCAN = 200000;  // elements looked at for shadow roots; the deadline bounds the rest
const norm = (s) => String(s == null ? '' : s).replace(/\s+/g, ' ').trim();
const FIELD_TAGS = new Set(['INPUT', 'TEXTAREA', 'SELECT']);
// Every read of an element through ``dom`` where it may be a form (whose controls can stand in
// for its properties, dom.js: <input name="parentElement"> made a walk up loop for ever).
const dom = SAFE_DOM;
const tagOf = (el) => String(dom.tag(el) || '').toUpperCase();
const KNOWN = new Set(['alert', 'alertdialog', 'application', 'article', 'banner', 'blockquote',
  'button', 'caption', 'cell', 'checkbox', 'code', 'columnheader', 'combobox', 'complementary',
  'contentinfo', 'definition', 'deletion', 'dialog', 'directory', 'document', 'emphasis', 'feed',
  'figure', 'form', 'generic', 'grid', 'gridcell', 'group', 'heading', 'img', 'insertion',
  'link', 'list', 'listbox', 'listitem', 'log', 'main', 'marquee', 'math', 'meter', 'menu',
  'menubar', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'navigation', 'none', 'note',
  'option', 'paragraph', 'presentation', 'progressbar', 'radio', 'radiogroup', 'region', 'row',
  'rowgroup', 'rowheader', 'scrollbar', 'search', 'searchbox', 'separator', 'slider',
  'spinbutton', 'status', 'strong', 'subscript', 'superscript', 'switch', 'tab', 'table',
  'tablist', 'tabpanel', 'term', 'textbox', 'time', 'timer', 'toolbar', 'tooltip', 'tree',
  'treegrid', 'treeitem']);
// Roles whose name may come from what they contain (WAI-ARIA 1.2, "name from content").
const FROM_CONTENT = new Set(['button', 'cell', 'checkbox', 'columnheader', 'gridcell', 'heading',
  'link', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'radio', 'row', 'rowheader',
  'switch', 'tab', 'tooltip', 'treeitem']);
const INPUT_ROLES = {button: 'button', checkbox: 'checkbox', image: 'button', number: 'spinbutton',
  radio: 'radio', range: 'slider', reset: 'button', submit: 'button', file: 'button'};
const hasList = (el) => {
  const id = dom.attr(el, 'list');
  const list = id && dom.doc(el).getElementById(id);
  return !!list && tagOf(list) === 'DATALIST';
};
// The implicit role per HTML-AAM, as Playwright's getImplicitAriaRole has it for these elements.
const implicitRole = (el) => {
  switch (tagOf(el)) {
    case 'A': case 'AREA': return dom.has(el, 'href') ? 'link' : null;
    case 'BUTTON': return 'button';
    case 'H1': case 'H2': case 'H3': case 'H4': case 'H5': case 'H6': return 'heading';
    case 'IMG': return dom.attr(el, 'alt') === '' ? null : 'img';
    case 'INPUT': {
      const type = String(el.type || '').toLowerCase();
      if (type === 'search') return hasList(el) ? 'combobox' : 'searchbox';
      if (['email', 'tel', 'text', 'url', ''].includes(type)) {
        return hasList(el) ? 'combobox' : 'textbox';
      }
      if (type === 'hidden') return null;
      return INPUT_ROLES[type] || 'textbox';
    }
    case 'TEXTAREA': return 'textbox';
    case 'SELECT': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
    case 'OPTION': return 'option';
    case 'NAV': return 'navigation';
    case 'MAIN': return 'main';
    case 'DIALOG': return 'dialog';
    case 'UL': case 'OL': case 'MENU': return 'list';
    case 'LI': return 'listitem';
    case 'TABLE': return 'table';
    case 'PROGRESS': return 'progressbar';
    default: return null;
  }
};
const roleOf = (el) => {
  const explicit = (dom.attr(el, 'role') || '').trim().toLowerCase().split(/\s+/)[0];
  if (explicit && KNOWN.has(explicit)) {
    return explicit === 'none' || explicit === 'presentation' || explicit === 'generic'
      ? null : explicit;
  }
  return implicitRole(el);
};
// Hidden from the accessibility tree: get_by_role skips these, and so do we.
const hiddenForAria = (el) => {
  if (dom.closest(el, '[aria-hidden="true"]')) return true;
  // A closed <select> draws no options, yet they are in the tree (as Playwright and Chrome say).
  const select = tagOf(el) === 'OPTION' ? dom.closest(el, 'select') : null;
  if (select) el = select;
  if (el.checkVisibility) return !el.checkVisibility({visibilityProperty: true});
  return el.getClientRects().length === 0;
};
const visible = (el) => {
  const r = el.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && !hiddenForAria(el);
};
const holdsFields = (el) => !!el.querySelector('input, textarea, select, [contenteditable]');
const byIds = (el, ids) => String(ids || '').split(/\s+/).filter(Boolean)
  .map((id) => dom.root(el).getElementById
    ? dom.root(el).getElementById(id) : dom.doc(el).getElementById(id))
  .filter(Boolean);
// The text of what an element holds, as accname's "name from content" reads it: hidden parts
// skipped, images by their alt, a nested element's own aria-label, never a field's value.
const contentText = (root, self, depth) => {
  if (depth > 20) return '';
  const parts = [];
  for (const node of root.childNodes) {
    if (dom.type(node) === 3) { parts.push(node.data); continue; }
    if (dom.type(node) !== 1 || node === self) continue;
    const tag = tagOf(node);
    if (tag === 'SCRIPT' || tag === 'STYLE' || tag === 'TEMPLATE' || FIELD_TAGS.has(tag)) continue;
    if (dom.attr(node, 'aria-hidden') === 'true') continue;
    if (node.checkVisibility && !node.checkVisibility({visibilityProperty: true})) continue;
    const label = norm(dom.attr(node, 'aria-label'));
    let text;
    if (label) text = label;
    else if (tag === 'IMG') text = dom.attr(node, 'alt') || '';
    else text = contentText(node.shadowRoot || node, self, depth + 1);
    const inline = getComputedStyle(node).display.startsWith('inline');
    parts.push(inline ? text : ' ' + text + ' ');
  }
  return parts.join('');
};
// A field's labels, each tree looked through once for the whole call (labels_of.js).
const labelsOf = (LABELS_OF)();
// null: this element's name could carry what a field holds, so it has none we may use.
const nameOf = (el, role) => {
  const labelled = byIds(el, dom.attr(el, 'aria-labelledby'));
  if (labelled.length) {
    if (labelled.some((l) => l !== el && holdsFields(l))) return null;
    const said = (l) => norm(dom.attr(l, 'aria-label')) || norm(contentText(l, el, 0));
    return norm(labelled.map(said).join(' '));
  }
  const aria = norm(dom.attr(el, 'aria-label'));
  if (aria) return aria;
  const tag = tagOf(el);
  const type = String(el.type || '').toLowerCase();
  if (tag === 'INPUT' && ['button', 'submit', 'reset'].includes(type)) {
    const value = norm(dom.attr(el, 'value'));
    if (value) return value;
    if (type === 'submit') return 'Submit';
    if (type === 'reset') return 'Reset';
    return norm(dom.attr(el, 'title'));
  }
  if (tag === 'INPUT' && type === 'image') {
    return norm(dom.attr(el, 'alt')) || norm(dom.attr(el, 'value'))
      || norm(dom.attr(el, 'title')) || 'Submit';
  }
  if (FIELD_TAGS.has(tag)) {
    const labels = labelsOf(el);
    if (labels.length) {
      const others = labels.some((l) => Array.from(l.querySelectorAll('input, textarea, select'))
        .some((f) => f !== el));
      if (others) return null;
      return norm(labels.map((l) => norm(contentText(l, el, 0))).filter(Boolean).join(' '));
    }
    const title = norm(dom.attr(el, 'title'));
    const textual = (tag === 'INPUT' && ['text', 'password', 'search', 'tel', 'email', 'url', '']
      .includes(type)) || tag === 'TEXTAREA';
    if (!textual || title) return title;
    return norm(dom.attr(el, 'placeholder'));
  }
  if (tag === 'IMG' || tag === 'AREA') {
    return norm(dom.attr(el, 'alt')) || norm(dom.attr(el, 'title'));
  }
  if (role && FROM_CONTENT.has(role)) {
    if (holdsFields(el) && role !== 'option') return null;
    const text = norm(contentText(el.shadowRoot || el, null, 0));
    if (text) return text;
  }
  return norm(dom.attr(el, 'title'));
};
// What get_by_label matches: aria-label, the <label>s of a field, aria-labelledby.
const labelOf = (el) => {
  const aria = norm(dom.attr(el, 'aria-label'));
  if (aria) return aria;
  const labels = labelsOf(el);
  if (labels.length) {
    if (labels.some((l) => l.querySelector('textarea, select'))) return null;
    return norm(labels[0].textContent);
  }
  const labelled = byIds(el, dom.attr(el, 'aria-labelledby'));
  if (labelled.length && !labelled.some(holdsFields)) {
    return norm(labelled.map((l) => l.textContent).join(' '));
  }
  return null;
};
const textOf = (el) => {
  if (FIELD_TAGS.has(tagOf(el)) || el.isContentEditable || holdsFields(el)) return null;
  const text = norm(el.textContent);
  return text && text.length <= 100 ? text : null;
};
// Every root a locator looks in: the document and its shadow roots (not its frames); closed
// ones too, in Tabrelay's world.
const rootsOf = (doc, budget) => {
  const roots = [doc];
  for (let i = 0; i < roots.length && i < 200; i++) {
    for (const el of roots[i].querySelectorAll('*')) {
      if (++budget.scanned > MAX_SCAN || performance.now() > budget.deadline) {
        budget.over = true;
        return roots;
      }
      if (el.shadowRoot) roots.push(el.shadowRoot);
    }
  }
  return roots;
};
const each = function* (roots, selector, budget) {
  for (const root of roots) {
    for (const el of root.querySelectorAll(selector)) {
      if (performance.now() > budget.deadline) { budget.over = true; return; }
      yield el;
    }
  }
};
const ROLE_TAGS = {button: 'button, input', link: 'a[href], area[href]', textbox: 'input, textarea',
  searchbox: 'input', checkbox: 'input', radio: 'input', combobox: 'input, select',
  listbox: 'select', option: 'option', heading: 'h1, h2, h3, h4, h5, h6', img: 'img',
  slider: 'input', spinbutton: 'input', navigation: 'nav', main: 'main', dialog: 'dialog',
  list: 'ul, ol, menu', listitem: 'li', table: 'table', progressbar: 'progress'};
// The elements each way names in ``roots``; the list is cut at ``limit`` (enough to tell one
// from many). ``budget.over`` after it: the answer is not to be trusted.
const matching = (roots, way, value, name, budget, limit) => {
  const found = [];
  const push = (el) => { found.push(el); return found.length >= limit; };
  const q = (s) => '"' + CSS.escape(s) + '"';
  switch (way) {
    case 'role': {
      const selector = '[role]' + (ROLE_TAGS[value] ? ', ' + ROLE_TAGS[value] : '');
      for (const el of each(roots, selector, budget)) {
        if (roleOf(el) !== value || hiddenForAria(el)) continue;
        if (name != null && nameOf(el, value) !== name) continue;
        if (push(el)) break;
      }
      break;
    }
    case 'label': {
      const labelled = '[aria-label], [aria-labelledby], input, textarea, select, button, '
        + 'meter, output, progress';
      for (const el of each(roots, labelled, budget)) {
        if (labelOf(el) === value && push(el)) break;
      }
      break;
    }
    case 'placeholder': {
      for (const el of each(roots, '[placeholder]', budget)) {
        if (norm(dom.attr(el, 'placeholder')) === value && push(el)) break;
      }
      break;
    }
    case 'test_id': {
      for (const el of each(roots, '[data-testid=' + q(value) + ']', budget)) if (push(el)) break;
      break;
    }
    case 'text': {
      // The deepest elements whose whole text is ``value`` (as get_by_text(exact=True) finds).
      const seen = new Set();
      for (const root of roots) {
        const walker = (dom.doc(root) || root).createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let t = walker.nextNode(); t; t = walker.nextNode()) {
          if (performance.now() > budget.deadline) { budget.over = true; return found; }
          const piece = norm(t.data);
          if (!piece || !value.includes(piece)) continue;
          for (let el = dom.up(t); el; el = dom.up(el)) {
            const raw = el.textContent;
            if (raw.length > value.length * 4 + 200) break;
            if (seen.has(el)) break;
            if (norm(raw) === value) {
              seen.add(el);
              const tag = tagOf(el);
              if (tag !== 'SCRIPT' && tag !== 'STYLE' && tag !== 'TITLE' && tag !== 'OPTION'
                  && !Array.from(el.children).some((c) => norm(c.textContent) === value)) {
                if (push(el)) return found;
              }
            }
          }
        }
      }
      break;
    }
    case 'css': {
      for (const root of roots) {
        let all;
        try { all = root.querySelectorAll(value); } catch (error) { return found; }
        for (const el of all) if (push(el)) return found;
      }
      break;
    }
  }
  return found;
};
// Ids a framework made up (React's :r1:, ember123, long hex) change on the next render.
const generated = (id) => /\d{3,}|^[:_]|[:]|[0-9a-f]{8,}/i.test(id) || id.length > 40
  || id.split(/[-_.]/).some((t) => /\d[a-z]/i.test(t) && /\d.*\d/.test(t));
const cssPath = (el) => {
  const parts = [];
  for (let node = el; node && dom.type(node) === 1; node = dom.up(node)) {
    const root = dom.root(node);
    if (node.id && !generated(node.id)) {
      const sel = '#' + CSS.escape(node.id);
      let count = 0;
      try { count = root.querySelectorAll(sel).length; } catch (error) { count = 0; }
      if (count === 1) { parts.unshift(sel); break; }
    }
    const tag = dom.tag(node).toLowerCase();
    if (tag === 'body' || tag === 'html') { parts.unshift(tag); break; }
    let index = 1;
    for (let s = node.previousElementSibling; s; s = s.previousElementSibling) {
      if (dom.tag(s) === dom.tag(node)) index++;
    }
    parts.unshift(tag + ':nth-of-type(' + index + ')');
    if (parts.join(' > ').length > 440) break;
  }
  return parts.join(' > ');
};
// The iframes from the top document down to ``doc``, each as a CSS path in its parent; from
// this world's own frame when that is of another origin than its parent (read in a world of
// its own: the app adds the path to it); null when a frame on the way is of another origin.
const framesOf = (doc) => {
  const frames = [];
  for (let win = doc.defaultView; win && win !== win.parent; win = win.parent) {
    let owner = null;
    try { owner = win.frameElement; } catch (error) { owner = null; }
    if (!owner && win === window) break;
    if (!owner) return null;
    frames.unshift(cssPath(owner));
  }
  return frames.length > 10 ? null : frames;
};
const documentAt = (frames) => {
  let doc = document;
  for (const selector of frames) {
    let frame = null;
    try { frame = doc.querySelector(selector); } catch (error) { return null; }
    let inner = null;
    try { inner = frame && frame.contentDocument; } catch (error) { inner = null; }
    if (!inner) return null;
    doc = inner;
  }
  return doc;
};
