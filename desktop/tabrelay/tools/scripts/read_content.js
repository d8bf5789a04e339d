(start, mode, editors) => {
  // Every read of an element through ``dom`` (a form's controls can stand in for its
  // properties, dom.js).
  const dom = SAFE_DOM;
  const root = start && dom.type(start) === Node.DOCUMENT_NODE
    ? /** @type {any} */ (start).body : start;
  if (!root) return {missing: true};
  if (dom.type(root) === Node.TEXT_NODE) return {value: root.textContent, code: false};
  const editorOf = (el) => editors.find((e) => e.input === el || e.box === el
    || (e.box && (e.box.contains(el) || dom.contains(el, e.box))));
  const field = ['TEXTAREA', 'INPUT', 'SELECT'].includes(dom.tag(root));
  // A secret field is not read in any form: its html may carry a value the server filled in.
  const secret = field && (FIELD_KIND)(root);
  if (secret) return {secret};
  if (mode === 'html') return {html: dom.outerHTML(root)};
  const editor = editorOf(root);
  if (editor) return {value: editor.text, code: true};
  if (field) {
    if (dom.tag(root) === 'SELECT') {
      return {value: Array.from(root.options).map((o) => (o.selected ? '[selected] ' : '')
        + o.label).join('\n'), code: false};
    }
    return {value: root.value, code: false};
  }
  const DROP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'CANVAS', 'OBJECT',
    'EMBED', 'NAV', 'ASIDE', 'DIALOG', 'BUTTON', 'SELECT', 'INPUT', 'TEXTAREA', 'HEAD',
    'LINK', 'META']);
  const DROP_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search',
    'dialog', 'alertdialog', 'menu', 'menubar', 'toolbar']);
  const BOILERPLATE = new RegExp('(^|[\\s_-])(cookies?|consent|gdpr|advert|advertisement|ads?|'
    + 'adslot|sponsor(ed)?|promo|newsletter|popup|social|share|breadcrumbs?)([\\s_-]|$)', 'i');
  const KEEP = {A: ['href', 'title'], IMG: ['src', 'alt'], TD: ['colspan', 'rowspan'],
    TH: ['colspan', 'rowspan'], OL: ['start'], CODE: ['class'], PRE: ['class']};
  const ENTITIES = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'};
  const escape = (s) => s.replace(/[&<>"]/g, (c) => ENTITIES[c]);
  const inArticle = (el) => !!dom.up(el) && !!dom.closest(dom.up(el), 'article, main, section');
  const skip = (el) => {
    if (el === root) return false;
    const tag = dom.tag(el);
    if (DROP.has(tag)) return true;
    if ((tag === 'HEADER' || tag === 'FOOTER') && !inArticle(el)) return true;
    if (DROP_ROLES.has(dom.attr(el, 'role'))) return true;
    if (dom.attr(el, 'aria-hidden') === 'true' || dom.has(el, 'hidden')) return true;
    const marks = `${dom.attr(el, 'id') || ''} ${dom.attr(el, 'class') || ''}`;
    if (BOILERPLATE.test(marks)) return true;
    // Not drawn at all (invisible is judged per element: what it holds may show).
    if (!dom.drawn(el)) return true;
    return false;
  };
  // What a sighted person cannot see is left out, counted by why (see page_scripts).
  const sight = (SIGHT)(dom);
  const styleOf = sight.style;
  const out = [];
  // Below this many elements only their text is kept (a block between line breaks; pictures
  // too): markdown is made of the tags by a converter that recurses, and runs out of stack
  // some 300 deep. Only a page's script nests so deep.
  const TAG_DEPTH = 128;
  let depth = 0;
  const walk = (node, parent, above) => {
    const type = dom.type(node);
    if (type === Node.TEXT_NODE) {
      if (parent && sight.invisible(styleOf(parent))) return;
      const why = parent && sight.text(node, parent, above, styleOf(parent));
      if (why) sight.withhold(why);
      else out.push(escape(node.textContent));
      return;
    }
    if (type !== Node.ELEMENT_NODE) return;
    if (skip(node)) return;
    const seen = sight.of(node, styleOf(node), above);
    if (seen.own) {
      sight.withhold(seen.own);
      return;
    }
    // A code editor draws only some of its lines: all of them.
    if (dom.matches(node, BOXES) && !dom.contains(node, root)) {
      const editor = editorOf(node);
      if (editor) { out.push(`<pre><code>${escape(editor.text)}</code></pre>`); return; }
    }
    const tag = dom.tag(node).toLowerCase();
    const attrs = (KEEP[dom.tag(node)] || []).map((name) => {
      let value = name === 'href' ? node.href : name === 'src' ? node.src : node.getAttribute(name);
      return value ? ` ${name}="${escape(String(value))}"` : '';
    }).join('');
    const empty = ['img', 'br', 'hr'].includes(tag);
    if (empty && sight.invisible(styleOf(node))) return;
    const tagged = depth < TAG_DEPTH || empty;
    const block = !tagged && !styleOf(node).display.startsWith('inline');
    if (tagged) out.push(`<${tag}${attrs}>`);
    else if (block) out.push('<br>');
    depth++;
    try {
      if (tag === 'iframe') {
        let doc = null;
        try { doc = node.contentDocument; } catch (error) { doc = null; }
        if (doc && doc.body) walk(doc.body, null, inside(doc.body));
      } else {
        for (const child of dom.kids(dom.shadow(node) || node)) walk(child, node, seen);
      }
    } finally {
      depth--;
    }
    if (tagged && !empty) out.push(`</${tag}>`);
    else if (block) out.push('<br>');
  };
  // The state of sight the part starts in: its ancestors', from its document's root down.
  const inside = (el) => {
    const chain = [];
    for (let n = dom.up(el); n; n = dom.up(n)) chain.unshift(n);
    let state = sight.root(dom.doc(el));
    for (const n of chain) state = sight.of(n, styleOf(n), state);
    return state;
  };
  walk(root, dom.up(root), inside(root));
  return {html: out.join(''), withheld: sight.withheld};
}
