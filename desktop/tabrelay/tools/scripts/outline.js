function (viewport, refused, withTools, seekClosed, editors) {
  // Closed shadow roots this world has not been given yet (shadow_roots.py): said before any
  // reading, so that they are opened to the world and the page read with them.
  if (seekClosed) {
    const unseen = (CLOSED_CANDIDATES)(0, 'outline');
    if (unseen) return JSON.stringify({ closed: unseen });
  }
  const kindOf = FIELD_KIND;
  const askTools = () => WEBMCP_LIST;
  const refusedUrls = new Set(refused);
  HELD
  // The code editors the page's world read (editor_text.py), found here: each one's input and
  // box get held ids, for its text to be shown on its input's line.
  const placed = (EDITORS_AT)(editors || []);
  const ws = (text) => text.replace(/[\t\n\f\r ]+/g, ' ');
  // Every read of an element goes through ``dom`` where the element may be a form (whose
  // controls can stand in for its properties, dom.js).
  const dom = SAFE_DOM;
  const attr = dom.attr;
  const LANDMARK_SCOPES = new Set(['ARTICLE', 'ASIDE', 'MAIN', 'NAV', 'SECTION']);
  const ARIA_ROLES = new Set(
    (
      'alert alertdialog application article banner blockquote button caption cell ' +
      'checkbox code columnheader combobox complementary contentinfo definition ' +
      'deletion dialog directory document emphasis feed figure form generic grid ' +
      'gridcell group heading img image insertion link list listbox listitem log main ' +
      'marquee math menu menubar menuitem menuitemcheckbox menuitemradio meter ' +
      'navigation none note option paragraph presentation progressbar radio radiogroup ' +
      'region row rowgroup rowheader scrollbar search searchbox separator slider ' +
      'spinbutton status strong subscript superscript switch tab table tablist tabpanel ' +
      'term textbox time timer toolbar tooltip tree treegrid treeitem '
    ).split(' '),
  );
  const INPUT_ROLES = {
    button: 'button',
    submit: 'button',
    reset: 'button',
    image: 'button',
    file: 'button',
    checkbox: 'checkbox',
    radio: 'radio',
    range: 'slider',
    number: 'spinbutton',
    search: 'searchbox',
    color: 'ColorWell',
    date: 'Date',
    'datetime-local': 'DateTime',
    month: 'DateTime',
    time: 'InputTime',
    week: 'DateTime',
  };
  const TAG_ROLES = {
    BUTTON: 'button',
    TEXTAREA: 'textbox',
    H1: 'heading',
    H2: 'heading',
    H3: 'heading',
    H4: 'heading',
    H5: 'heading',
    H6: 'heading',
    UL: 'list',
    OL: 'list',
    MENU: 'list',
    LI: 'listitem',
    NAV: 'navigation',
    MAIN: 'main',
    ASIDE: 'complementary',
    ARTICLE: 'article',
    FORM: 'form',
    DIALOG: 'dialog',
    FIELDSET: 'group',
    LEGEND: 'Legend',
    LABEL: 'LabelText',
    P: 'paragraph',
    FIGURE: 'figure',
    BLOCKQUOTE: 'blockquote',
    CODE: 'code',
    HR: 'separator',
    IFRAME: 'Iframe',
    SUMMARY: 'DisclosureTriangle',
    PROGRESS: 'progressbar',
    METER: 'meter',
    OUTPUT: 'status',
    MARK: 'mark',
    TABLE: 'table',
    TR: 'row',
    CAPTION: 'caption',
    DL: 'DescriptionList',
    DT: 'term',
    DD: 'definition',
    OPTION: 'option',
    DETAILS: 'group',
    SEARCH: 'search',
    MATH: 'math',
    TIME: 'time',
    STRONG: 'strong',
    EM: 'emphasis',
    THEAD: 'rowgroup',
    TBODY: 'rowgroup',
    TFOOT: 'rowgroup',
    BR: 'LineBreak',
    SVG: 'image',
    svg: 'image',
    OPTGROUP: 'group',
    DFN: 'term',
    SUB: 'subscript',
    SUP: 'superscript',
    DEL: 'deletion',
    INS: 'insertion',
  };
  // Roles named by their contents when nothing else names them (the outline shows these names).
  const FROM_CONTENTS = new Set([
    'button',
    'link',
    'heading',
    'cell',
    'gridcell',
    'columnheader',
    'rowheader',
    'option',
    'tab',
    'menuitem',
    'menuitemcheckbox',
    'menuitemradio',
    'checkbox',
    'radio',
    'switch',
    'treeitem',
    'tooltip',
    'DisclosureTriangle',
    'term',
    'caption',
  ]);
  // The states ARIA gives by attribute, and the attribute of each.
  const ARIA_STATES = ['checked', 'pressed', 'selected', 'expanded', 'disabled', 'required',
    'invalid', 'readonly', 'multiline'].map((state) => [state, `aria-${state}`]);

  const sight = (SIGHT)(dom);
  const styleOf = sight.style;  // one computed style per element for the whole read

  // Where a link goes (an SVG link's href is an animated string, relative to its document).
  function hrefOf(el) {
    if (typeof el.href === 'string') return el.href;
    try {
      return new URL(el.href.animVal, el.baseURI).href;
    } catch (e) {
      return null;
    }
  }

  function roleOf(el, tag) {
    const explicit = attr(el, 'role');
    if (explicit) {
      for (const token of explicit.trim().toLowerCase().split(/\s+/)) {
        if (ARIA_ROLES.has(token)) {
          if (token === 'none' || token === 'presentation') {
            if (dom.view(el, tag).tabIndex >= 0 && dom.has(el, 'tabindex')) break; // its own
            return 'none';
          }
          return token === 'image' ? 'img' : token;
        }
      }
    }
    switch (tag) {
      case 'A':
      case 'AREA':
        return dom.has(el, 'href') ? 'link' : 'generic';
      case 'a': // an SVG link (a chart's, a diagram's)
        return dom.has(el, 'href') || dom.has(el, 'xlink:href') ? 'link' : 'generic';
      case 'INPUT': {
        const type = (attr(el, 'type') || 'text').toLowerCase();
        if (type === 'hidden') return null;
        if (INPUT_ROLES[type]) return INPUT_ROLES[type];
        if (el.hasAttribute('list')) return 'combobox';
        return 'textbox';
      }
      case 'SELECT':
        return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'IMG':
        return attr(el, 'alt') === '' && !el.hasAttribute('title') ? 'none' : 'image';
      case 'HEADER':
      case 'FOOTER': {
        for (let up = dom.up(el); up; up = dom.up(up)) {
          if (
            LANDMARK_SCOPES.has(dom.tag(up)) ||
            /^(article|complementary|main|navigation|region)$/.test(attr(up, 'role') || '')
          ) {
            return tag === 'HEADER' ? 'SectionHeader' : 'SectionFooter';
          }
        }
        return tag === 'HEADER' ? 'banner' : 'contentinfo';
      }
      case 'SECTION':
        return dom.has(el, 'aria-label') ||
          dom.has(el, 'aria-labelledby') ||
          dom.has(el, 'title')
          ? 'region'
          : 'section';
      case 'TD':
        return el.closest('table[role=grid],table[role=treegrid]') ? 'gridcell' : 'cell';
      case 'TH':
        return thRole(el);
      case 'DIV':
      case 'SPAN':
      case 'B':
      case 'I':
      case 'U':
      case 'SMALL':
      case 'PRE':
      case 'ABBR':
        return 'generic';
    }
    return TAG_ROLES[tag] || TAG_ROLES[dom.name(el)] || 'generic';
  }

  function thRole(el) {
    const scope = (attr(el, 'scope') || '').toLowerCase();
    if (scope === 'row' || scope === 'rowgroup') return 'rowheader';
    if (scope === 'col' || scope === 'colgroup') return 'columnheader';
    const row = el.parentElement;
    if (row && row.parentElement && row.parentElement.tagName === 'THEAD')
      return 'columnheader';
    if (
      row &&
      Array.prototype.some.call(row.children, (c) => c.tagName === 'TD') &&
      el.cellIndex === 0
    )
      return 'rowheader';
    return 'columnheader';
  }

  // The text alternative of a node (accname 1.2, the parts Chrome uses).
  function byIds(el, name) {
    const ids = (attr(el, name) || '').trim().split(/\s+/).filter(Boolean);
    const root = dom.root(el);
    const found = [];
    for (const id of ids) {
      const target = root.getElementById
        ? root.getElementById(id)
        : document.getElementById(id);
      if (target) found.push(target);
    }
    return found;
  }

  function hiddenForName(el, style) {
    if (style.display === 'none' || sight.invisible(style)) return true;
    return attr(el, 'aria-hidden') === 'true';
  }

  function textOf(node, visiting, referenced, inLabel) {
    const type = dom.type(node);
    if (type === 3) return node.data;
    if (type !== 1) return '';
    const el = node;
    if (visiting.has(el)) return '';
    const style = styleOf(el);
    if (!referenced && hiddenForName(el, style)) return '';
    visiting.add(el);
    try {
      const tag = dom.tag(el);
      const role = roleOf(el, tag);
      // An embedded control says its value (inside a label or another's name), but a field
      // holding a secret, nothing of it (its own line says only its kind); an empty field
      // says what names it (Chrome's tree: its aria-label, title or placeholder).
      if (inLabel || visiting.size > 1) {
        if (role === 'textbox' || role === 'searchbox') {
          const value = el.value !== undefined ? el.value : el.textContent;
          if (value) return kindOf(el) ? '' : value;
        }
        if (role === 'combobox' && tag === 'SELECT') {
          const option = el.selectedOptions && el.selectedOptions[0];
          return option && !kindOf(el) ? option.text : '';
        }
        if (role === 'slider' || role === 'spinbutton')
          return kindOf(el)
            ? ''
            : attr(el, 'aria-valuetext') || String(el.value ?? attr(el, 'aria-valuenow') ?? '');
      }
      const labelled = attr(el, 'aria-labelledby');
      if (labelled && !referenced) {
        const joined = labelledBy(el, visiting);
        if (joined) return joined;
      }
      const label = (attr(el, 'aria-label') || '').trim();
      if (label) return label;
      const native = nativeName(el, tag, role, visiting);
      if (native) return native;
      if (
        role === 'none' ||
        role === 'generic' ||
        FROM_CONTENTS.has(role) ||
        visiting.size > 1 ||
        referenced
      ) {
        const text = contents(el, visiting, style);
        if (text) return text;
      }
      // Chrome names from a descendant's tooltip only when it has a role (a button, an
      // image), or in the elements aria-labelledby names.
      const titled = referenced || labelling > 0 || (role !== 'generic' && role !== 'none');
      return titled ? attr(el, 'title') || '' : '';
    } finally {
      visiting.delete(el);
    }
  }

  // The text of the elements an element's aria-labelledby names.
  let labelling = 0;
  function labelledBy(el, visiting) {
    labelling++;
    try {
      return byIds(el, 'aria-labelledby')
        .map((t) => textOf(t, visiting, true, true).trim())
        .join(' ')
        .trim();
    } finally {
      labelling--;
    }
  }

  // The text CSS generates before or after an element's contents (generated_text.js).
  const spoken = GENERATED_TEXT;
  // A name from contents and the walk both ask for an element's generated text: once each.
  const generatedTexts = new Map();
  function pseudo(el, which) {
    if (!documentGenerates(dom.doc(el))) return '';
    const key = which === '::before' ? 'b' : 'a';
    let texts = generatedTexts.get(el);
    if (texts === undefined) generatedTexts.set(el, (texts = {}));
    if (texts[key] === undefined) texts[key] = generatedText(el, which);
    return texts[key];
  }
  // Whether a sheet that may style ``doc``'s elements has a ::before or ::after rule: its own
  // and adopted sheets, their imports and nested groups (@media, @layer, nesting), and those
  // of every shadow root in it (:host, ::slotted and ::part reach across the root). Where none
  // has, no element generates text and none is asked: a pseudo-element's computed style is
  // the walk's costliest read. A sheet this world cannot read (another origin's) may have one.
  const PSEUDO_RULE = /:(before|after)\b/i;
  const generating = new Map();
  function rulesGenerate(rules) {
    for (const rule of rules) {
      if (typeof rule.selectorText === 'string' && PSEUDO_RULE.test(rule.selectorText))
        return true;
      if (rule.styleSheet && sheetGenerates(rule.styleSheet)) return true;
      if (rule.cssRules && rulesGenerate(rule.cssRules)) return true;
    }
    return false;
  }
  function sheetGenerates(sheet) {
    try {
      return rulesGenerate(sheet.cssRules);
    } catch (e) {
      return true;
    }
  }
  function scopeGenerates(scope) {
    const sheets = [...scope.styleSheets, ...(scope.adoptedStyleSheets || [])];
    return sheets.some(sheetGenerates);
  }
  function documentGenerates(doc) {
    let found = generating.get(doc);
    if (found !== undefined) return found;
    found = scopeGenerates(doc);
    for (const scopes = [doc]; !found && scopes.length; ) {
      for (const el of scopes.pop().querySelectorAll('*')) {
        const root = dom.shadow(el); // a closed one too: this world reads it
        if (!root) continue;
        if ((found = scopeGenerates(root))) break;
        scopes.push(root);
      }
    }
    generating.set(doc, found);
    return found;
  }
  function generatedText(el, which) {
    const style = getComputedStyle(el, which);
    return style.display === 'none' || sight.invisible(style) ? '' : spoken(style.content);
  }

  function contents(el, visiting, style) {
    const parts = [];
    const before = pseudo(el, '::before');
    if (before) parts.push(before);
    for (const child of flatChildren(el)) {
      const type = dom.type(child);
      if (type === 3) {
        parts.push(child.data);
        continue;
      }
      if (type !== 1 || SKIP.has(dom.tag(child).toUpperCase())) continue;
      const childStyle = styleOf(child);
      const text = textOf(child, visiting, false, false);
      if (!text) continue;
      // Only what flows inline runs on; an inline block or flex box is a word of its own.
      parts.push(childStyle.display === 'inline' ? text : ` ${text} `);
    }
    const after = pseudo(el, '::after');
    if (after) parts.push(after);
    return ws(parts.join(''));
  }

  // A field's labels, each tree looked through once for the whole read (labels_of.js).
  const labelsOf = (LABELS_OF)();

  function labelsText(el, visiting) {
    // A label that is not drawn names nothing (Chrome's tree), unlike aria-labelledby.
    const labels = labelsOf(el).filter((l) => !hiddenForName(l, styleOf(l)));
    const parts = labels.map((l) => textOf(l, visiting, true, true).trim()).filter(Boolean);
    return parts.join(' ');
  }

  function nativeName(el, tag, role, visiting) {
    if (tag === 'INPUT') {
      const type = (attr(el, 'type') || 'text').toLowerCase();
      if (type === 'submit' || type === 'reset' || type === 'button') {
        if (el.hasAttribute('value')) return attr(el, 'value');
        return type === 'submit'
          ? 'Submit'
          : type === 'reset'
            ? 'Reset'
            : labelsText(el, visiting);
      }
      if (type === 'image')
        return attr(el, 'alt') || attr(el, 'value') || attr(el, 'title') || 'Submit';
      const labelled = labelsText(el, visiting);
      if (labelled) return labelled;
      return attr(el, 'title') || attr(el, 'placeholder') || attr(el, 'aria-placeholder') || '';
    }
    if (
      tag === 'TEXTAREA' ||
      tag === 'SELECT' ||
      tag === 'BUTTON' ||
      tag === 'METER' ||
      tag === 'PROGRESS' ||
      tag === 'OUTPUT'
    ) {
      const labelled = labelsText(el, visiting);
      if (labelled) return labelled;
      if (tag === 'TEXTAREA') return attr(el, 'title') || attr(el, 'placeholder') || '';
      return '';
    }
    if (tag === 'IMG' || tag === 'AREA') return attr(el, 'alt') || '';
    if (tag === 'FIELDSET') {
      const legend = Array.prototype.find.call(el.children, (c) => c.tagName === 'LEGEND');
      return legend ? textOf(legend, visiting, true, true).trim() : '';
    }
    if (tag === 'TABLE') {
      const caption = el.caption;
      return caption ? textOf(caption, visiting, true, true).trim() : '';
    }
    if (tag === 'FIGURE') {
      const caption = Array.prototype.find.call(el.children, (c) => c.tagName === 'FIGCAPTION');
      return caption ? textOf(caption, visiting, true, true).trim() : '';
    }
    if (tag === 'IFRAME') return attr(el, 'title') || '';
    if (el.namespaceURI === 'http://www.w3.org/2000/svg' && tag.toLowerCase() === 'svg') {
      const title = Array.prototype.find.call(el.children, (c) => c.localName === 'title');
      return title ? ws(title.textContent).trim() : '';
    }
    return '';
  }

  function flatChildren(el) {
    const tag = dom.tag(el);
    const root = dom.shadow(el, tag);
    if (root) return root.childNodes;
    if (tag === 'SLOT') {
      const assigned = el.assignedNodes({ flatten: true });
      return assigned.length ? assigned : dom.kids(el);
    }
    if (tag === 'TEMPLATE') return [];
    return dom.kids(el);
  }


  // The nodes of one frame: [id, parent index, role, name, contents?, value, props, flags].
  const frames = [];
  const SKIP = new Set([
    'SCRIPT',
    'STYLE',
    'NOSCRIPT',
    'TEMPLATE',
    'HEAD',
    'TITLE',
    'META',
    'LINK',
  ]);

  // A frame's bounds are in its own coordinates: a frame on screen is kept whole.
  let framed = 0;
  // Whether a document or shadow root read holds a code editor, whose text only the page's own
  // world can read (editor_text.py): a read that says none needs no look there.
  let codeEditors = false;
  const seeCode = (root) => {
    if (!codeEditors) codeEditors = root.querySelector(CODE_BOXES) !== null;
  };

  function walkDocument(doc, owner, url) {
    const nodes = [];
    const frame = { owner, url, nodes };
    frames.push(frame);
    const root = doc.documentElement;
    seeCode(doc);
    nodes.push([0, -1, 'RootWebArea', doc.title ? ws(doc.title).trim() : '', 0, null, null, 0]);
    if (owner !== null) framed++;
    try {
      const seen = root && sight.of(root, styleOf(root), sight.root(doc));
      if (root) walk(root, 0, nodes, false, false, false, seen);
    } finally {
      if (owner !== null) framed--;
    }
  }

  const onScreen = viewport
    ? (box) =>
        framed > 0 ||
        (() => {
          const r = box();
          return (
            r.width > 0 &&
            r.height > 0 &&
            r.right > 0 &&
            r.bottom > 0 &&
            r.left < innerWidth &&
            r.top < innerHeight
          );
        })()
    : null;

  // Generated text stands apart from the text beside it, as drawn (a bullet, an icon's
  // label, a counter, a margin between).
  function generated(el, which, parent, nodes, seen) {
    const said = ws(pseudo(el, which)).trim();
    if (!said) return;
    if (seen.why) return sight.withhold(seen.why);
    const text = which === '::before' ? `${said} ` : ` ${said}`;
    const shown = onScreen && onScreen(() => dom.rect(el)) ? 8 : 0;
    nodes.push([0, parent, 'StaticText', text, 0, null, null, shown]);
  }

  // Below this depth the page is read without going deeper into the stack (walkFlat). Only a
  // page's script nests so deep (the HTML parser stops at 512), and a walk that went on down
  // would run out of stack (about 1,000 levels: the page could not be read), as would the
  // app's outline after it.
  const DEPTH_CAP = 256;
  // Below it, what a plain container holds goes under the element above it, and only so many
  // elements with a role (a list, a button) keep what they hold under them.
  const KEPT_BELOW_CAP = 32;
  let depth = 0; // elements walked into now

  function walk(el, parent, nodes, hidden, editableParent, quietText, seen) {
    if (depth >= DEPTH_CAP)
      return walkFlat(el, parent, nodes, hidden, editableParent, quietText, seen);
    depth++;
    try {
      const said = !hidden && !quietText && parent !== 0;
      if (said) generated(el, '::before', parent, nodes, seen);
      const root = dom.shadow(el);
      if (root) seeCode(root);
      for (const child of flatChildren(el)) {
        const type = dom.type(child);
        if (type === 3) text(child, el, parent, nodes, hidden, quietText, seen);
        else if (type === 1 && !SKIP.has(dom.tag(child).toUpperCase()))
          element(child, parent, nodes, hidden, editableParent, seen);
      }
      if (said) generated(el, '::after', parent, nodes, seen);
    } finally {
      depth--;
    }
  }

  // ``walk`` with a stack of its own: what ``top`` holds, in the page's order, under ``parent``
  // (``top``'s line), kept under the elements that say something as far as KEPT_BELOW_CAP.
  function walkFlat(top, parent, nodes, hidden, editable, quietText, seen) {
    const said = (frame) => !frame.hidden && !frame.quietText;
    const stack = [
      { el: top, hidden, editable, quietText, seen, after: null, under: parent, kept: 0 },
    ];
    while (stack.length) {
      const frame = stack[stack.length - 1];
      if (!frame.children) {
        if (said(frame)) generated(frame.el, '::before', frame.under, nodes, frame.seen);
        const root = dom.shadow(frame.el);
        if (root) seeCode(root);
        frame.children = flatChildren(frame.el)[Symbol.iterator]();
      }
      const next = frame.children.next();
      if (next.done) {
        stack.pop();
        if (said(frame)) generated(frame.el, '::after', frame.under, nodes, frame.seen);
        if (frame.after) frame.after();
        continue;
      }
      const child = next.value;
      const type = dom.type(child);
      if (type === 3)
        text(child, frame.el, frame.under, nodes, frame.hidden, frame.quietText, frame.seen);
      else if (type === 1 && !SKIP.has(dom.tag(child).toUpperCase())) {
        const inside =
          element(child, frame.under, nodes, frame.hidden, frame.editable, frame.seen, true);
        if (!inside) continue;
        // A container with no role, name or way to act says nothing of its own.
        const [, , role, name, , , props, flags] = nodes[inside.index];
        const plain =
          (role === 'generic' || role === 'section') && !name && !props && !(flags & (1 | 4 | 32));
        const keep = !plain && frame.kept < KEPT_BELOW_CAP;
        stack.push({
          ...inside,
          under: keep ? inside.index : frame.under,
          kept: frame.kept + (keep ? 1 : 0),
        });
      }
    }
  }

  // A text node ``child`` of ``el``: its line under ``parent``, unless it is not seen.
  function text(child, el, parent, nodes, hidden, quietText, seen) {
    if (hidden || quietText) return;
    const data = child.data;
    // Where the page keeps its line breaks (a <pre>: a traceback, a printed table; an address
    // in pre-line), they stay, each line's spaces collapsed; the app says it line by line.
    const breaks = data.includes('\n') && BREAKS_KEPT.has(styleOf(el).whiteSpaceCollapse);
    const text = breaks ? data.split('\n').map(ws).join('\n') : ws(data);
    if (!text) return;
    if (text === ' ' && !inlineContext(child)) return;
    const style = styleOf(el);
    const unseen = sight.text(child, el, seen, style);
    if (unseen) {
      sight.withhold(unseen);
      return;
    }
    // An icon font's ligature ("more_vert") is drawn as an icon, not read as a label.
    // The font asked for first: a fallback in the stack ("Segoe UI Symbol") is no icon font.
    // A ligature is one word: text with a space in it is not one (its font is not read).
    const word = text.trim();
    if (word && !/\s/.test(word) && ICON_FONT.test(style.fontFamily.split(',')[0]))
      glyphs.add(nodes.length);
    let flags = 0;
    if (
      onScreen &&
      onScreen(() => {
        const range = document.createRange();
        range.selectNodeContents(child);
        return range.getBoundingClientRect();
      })
    )
      flags |= 8;
    nodes.push([0, parent, 'StaticText', text, 0, null, null, flags]);
  }

  // The white-space-collapse values that keep a text's line breaks (pre, pre-wrap, pre-line,
  // break-spaces).
  const BREAKS_KEPT = new Set(['preserve', 'preserve-breaks', 'break-spaces']);
  // An icon font, by its name; the text nodes drawn in one (their index in ``nodes``).
  const ICON_FONT = /icon|symbol|glyph|awesome|material/i;
  const glyphs = new Set();
  // Roles kept on their line when out of sight (a skip link, a custom checkbox's input): what a
  // person reaches with the keyboard or through what is drawn for it.
  const CONTROLS = new Set(['button', 'link', 'textbox', 'searchbox', 'checkbox', 'radio',
    'combobox', 'listbox', 'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab',
    'switch', 'slider', 'spinbutton', 'treeitem']);
  // The text drawn inside the element at ``index`` once it is walked (every line after its
  // own is inside it, flat or not; only what is seen): in words, to tell a name that says
  // something else (not an icon's ligature; a picture by its name); or (``lines``: an editor's
  // value) line by line, each block or line break starting one, as its innerText says it.
  function drawnText(nodes, index, lines = false) {
    const parts = [];
    for (let i = index + 1; i < nodes.length; i++) {
      const [, , role, name, , , , flags] = nodes[i];
      if (role === 'StaticText') parts.push(flags & 16 || (glyphs.has(i) && !lines) ? '' : name);
      else if (lines) parts.push(role === 'LineBreak' || !(flags & 2) ? '\n' : '');
      else if (role === 'img' || role === 'image') parts.push(` ${name} `);
      else if (!(flags & 2)) parts.push(' ');
    }
    if (!lines) return ws(parts.join('')).trim();
    return parts.join('').split('\n').map((line) => line.trim()).filter(Boolean).join('\n');
  }
  const words = (text) => text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);

  function inlineContext(text) {
    const inl = (n) =>
      n && (dom.type(n) === 3 || (dom.type(n) === 1 && styleOf(n).display.startsWith('inline')));
    const parent = text.parentElement;
    return (
      (parent && dom.tag(parent) !== 'BODY' && styleOf(parent).display.startsWith('inline')) ||
      inl(text.previousSibling) ||
      inl(text.nextSibling)
    );
  }

  // The element's line under ``parent``, then what it holds; or (``flat``, see walkFlat) what
  // walking what it holds needs, and what to do once it is walked.
  function element(el, parent, nodes, hiddenAbove, editableParent, seenAbove, flat = false) {
    const style = styleOf(el);
    const display = style.display;
    if (display === 'none') return;
    const seen = sight.of(el, style, seenAbove);
    const tag = dom.tag(el);
    // Hidden from assistive technology with all it holds (``hiddenAbove`` for what is below);
    // an invisible element, only itself and its own text.
    const own = dom.view(el, tag); // its own state, past a form's controls (dom.js)
    const ariaHidden = hiddenAbove || attr(el, 'aria-hidden') === 'true' || own.inert;
    const invisible = sight.invisible(style);
    const hidden = ariaHidden || invisible;
    let role = roleOf(el, tag);
    if (role === null) return;
    const id = idOf(el);
    const index = nodes.length;
    const props = {};
    let flags = 0;
    if (display === 'inline') flags |= 2;
    if (hidden) flags |= 16;
    if (dom.has(el, 'tabindex') && (attr(el, 'tabindex') || '').trim() === '-1') flags |= 4;
    if (dom.has(el, 'onclick')) flags |= 1;
    // Where the pointing hand starts (what is inside inherits it) is drawn as something to
    // click, whoever listens for it (a framework listens at its root).
    if (style.cursor === 'pointer') {
      const up = dom.up(el) || (dom.parent(el) && dom.parent(el).host);
      if (!up || styleOf(up).cursor !== 'pointer') flags |= 32;
    }
    if (onScreen && (display === 'contents' || onScreen(() => dom.rect(el))))
      flags |= 8;
    const editable = own.isContentEditable || !!own.editContext;
    if (editable)
      props.editable =
        own.contentEditable === 'plaintext-only' ||
        style.webkitUserModify === 'read-write-plaintext-only'
          ? 'plaintext'
          : 'richtext';
    // A shadow host that delegates focus (a design system's button around its <button>) is
    // not focused itself: what it holds is.
    const focusable =
      !hidden &&
      (own.tabIndex >= 0 || dom.has(el, 'tabindex') || (editable && !editableParent)) &&
      !own.disabled &&
      !(own.shadowRoot && own.shadowRoot.delegatesFocus);
    if (focusable) props.focusable = true;
    // Out of sight: a control stays, flagged (its name is how it is reached); anything else
    // says nothing (its text is counted as left out).
    const unseen = !hidden && seen.own !== null;
    if (unseen && (focusable || CONTROLS.has(role))) props.unseen = true;
    else if (unseen) flags |= 16;
    let name = '',
      fromContents = 0,
      value = null;
    if (!hidden && !(flags & 16) && role !== 'StaticText' && role !== 'none') {
      const visiting = new Set([el]);
      const labelled = attr(el, 'aria-labelledby');
      if (labelled) name = labelledBy(el, new Set());
      if (!name) name = (attr(el, 'aria-label') || '').trim();
      if (!name) name = nativeName(el, tag, role, new Set([el]));
      // A field has no contents to be named by (a checkbox's ::after is drawing).
      if (!name && FROM_CONTENTS.has(role) && !editable && tag !== 'INPUT') {
        name = contents(el, visiting, style).trim();
        if (name) fromContents = 1;
      }
      if (!name) name = attr(el, 'title') || '';
      name = ws(name).trim();
    }
    if (role === 'none') role = 'generic';
    if (role === 'generic' && attr(el, 'draggable') === 'true') role = 'group';
    if (role === 'Date' || role === 'DateTime' || role === 'InputTime' || role === 'ColorWell')
      value = el.value || null;
    // States and values.
    if (tag === 'INPUT' || tag === 'TEXTAREA') {
      const type = (attr(el, 'type') || 'text').toLowerCase();
      if (role === 'checkbox' || role === 'radio' || role === 'switch') {
        props.checked = el.indeterminate ? 'mixed' : el.checked ? 'true' : 'false';
      } else if (
        role === 'textbox' ||
        role === 'searchbox' ||
        role === 'combobox' ||
        role === 'spinbutton' ||
        role === 'slider'
      ) {
        value = el.value;
        props.editable = 'plaintext';
        if (tag === 'TEXTAREA') props.multiline = true;
        if (el.readOnly) props.readonly = true;
      }
      if (el.required) props.required = true;
      if (type === 'range') value = el.value;
      if (type === 'file')
        value =
          el.files && el.files.length
            ? el.files.length === 1
              ? el.files[0].name
              : `${el.files.length} files`
            : 'No file chosen';
    }
    if (tag === 'SELECT') {
      if (role === 'combobox') {
        const option = el.selectedOptions[0];
        value = option ? option.text : '';
        props.expanded = false;
      }
      if (el.required) props.required = true;
    }
    if (tag === 'OPTION') props.selected = el.selected;
    if (role === 'heading')
      props.level = /^H[1-6]$/.test(tag) ? Number(tag[1]) : Number(attr(el, 'aria-level') || 2);
    const url = role === 'link' && el.href ? hrefOf(el) : null;
    if (url) props.url = url;
    if (tag === 'SUMMARY') {
      const up = dom.up(el);
      if (up && dom.tag(up) === 'DETAILS') props.expanded = up.open;
    }
    if (own.disabled || dom.matches(el, ':disabled')) props.disabled = true;
    // (An element without attributes, most of a page, has none of them to read.)
    for (const [state, name] of dom.hasAny(el) ? ARIA_STATES : []) {
      const a = attr(el, name);
      if (a === null || a === 'undefined') continue;
      if (state === 'invalid' && a === 'false') continue;
      props[state] = a === 'true' ? true : a === 'false' ? false : a;
    }
    if (
      role === 'slider' ||
      role === 'spinbutton' ||
      role === 'progressbar' ||
      role === 'meter'
    ) {
      if (tag !== 'INPUT')
        value =
          attr(el, 'aria-valuetext') ||
          attr(el, 'aria-valuenow') ||
          (el.value !== undefined ? String(el.value) : null);
      // A <progress> without a value is busy for a time unknown: it has none.
      if (tag === 'PROGRESS' && el.position === -1 && !dom.has(el, 'aria-valuenow'))
        value = null;
    }
    if (editable && !editableParent) {
      value = el.innerText;
    }
    if (
      (role === 'textbox' || role === 'searchbox' || role === 'combobox') &&
      tag !== 'INPUT' &&
      tag !== 'TEXTAREA' &&
      tag !== 'SELECT' &&
      !editable
    ) {
      // an ARIA widget: its text is its value
      value = value ?? ws(el.textContent || '').trim();
    }
    let quietText = false;
    if (
      tag === 'LABEL' &&
      el.control &&
      (el.control.type === 'checkbox' || el.control.type === 'radio')
    ) {
      flags |= 16;
      quietText = true;
    }
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') {
      // A field holding a secret: its kind goes out, never its value (an empty one shows
      // nothing anyway).
      const kind = el.value ? kindOf(el) : null;
      if (kind) {
        props.secret = kind;
        value = null;
      } else if (value || tag === 'SELECT') {
        // What it holds as a person sees it: a value (a list's options) they cannot (the field
        // out of sight, its letters transparent, the colour of its box or too small) is left
        // out, and said so.
        const why = sight.value(el, seen, style);
        if (why) {
          sight.withhold(why);
          value = null;
          props.valueUnseen = true;
        }
      }
    }
    nodes.push([
      id,
      parent,
      role,
      name,
      fromContents,
      value,
      Object.keys(props).length ? props : null,
      flags,
    ]);
    if (tag === 'IFRAME') {
      let doc = null;
      try {
        doc = el.contentDocument;
      } catch (e) {
        doc = null;
      }
      let url = '';
      try {
        url = el.contentWindow.location.href;
      } catch (e) {
        url = el.src;
      }
      if (refusedUrls.has(url)) frames.push({ owner: id, url, nodes: [], refused: true });
      else if (doc && doc.documentElement) walkDocument(doc, id, url);
      else frames.push({ owner: id, url: el.src, nodes: [], error: 'cross-origin' });
      return;
    }
    if (tag === 'SELECT' || tag === 'TEXTAREA' || tag === 'INPUT') {
      // A field holding a secret ships no option (one of them is its value), nor one whose
      // letters are not seen.
      if (tag === 'SELECT' && !props.secret && !props.valueUnseen)
        for (const option of el.options) {
          nodes.push([
            idOf(option),
            index,
            'option',
            ws(option.label || option.text).trim(),
            0,
            null,
            { selected: option.selected },
            0,
          ]);
        }
      return;
    }
    const before = sight.count();
    // A name from contents says only what is drawn; one that says something else than what is
    // drawn (an aria-label on a labelled button) gives way to what is drawn, flagged when they
    // disagree. What draws no words (an icon) keeps its name: that is how it is announced.
    const checked = name && FROM_CONTENTS.has(role) && !unseen && !editable;
    const host = editable && !editableParent;
    const after = (checked || host) && (() => {
      const hid = sight.count() > before;
      // An editor that holds text a person cannot see says only what it shows (its innerText
      // says all).
      if (host && hid) nodes[index][5] = drawnText(nodes, index, true);
      if (!checked || (fromContents && !hid)) return;
      const drawn = drawnText(nodes, index);
      const said = words(name).join(' ');
      if (words(drawn).join('').length >= 2 && words(drawn).join(' ') !== said) {
        if (!words(drawn).every((w) => said.includes(w))) props.differs = true;
        nodes[index][3] = drawn;
        nodes[index][4] = 1;
        if (props.differs) nodes[index][6] = props;
      }
    });
    // An invisible element's own text is not drawn (what it holds may be: sight.invisible).
    quietText = quietText || invisible;
    if (flat) return { el, index, hidden: ariaHidden, editable, quietText, seen, after };
    walk(el, index, nodes, ariaHidden, editable, quietText, seen);
    if (after) after();
  }

  walkDocument(document, null, location.href);
  // Whether the document was still being parsed, and (``withTools``: the top frame's) the tools
  // the page declares (WebMCP), asked for in the same call: its answer once it gives one (within TOOLS_WAIT ms), or none.
  const answer = {
    frames, withheld: sight.withheld,
    editors: placed.map((e) => (e ? [idOf(e.input), idOf(e.box)] : null)),
    parsing: document.readyState === 'loading', codeEditors,
  };
  const context = /** @type {any} */ (document).modelContext;
  if (!withTools || !context || typeof context.getTools !== 'function') {
    return JSON.stringify(answer);
  }
  const waited = new Promise((resolve) => setTimeout(resolve, TOOLS_WAIT, null));
  return Promise.race([askTools(), waited]).then(
    (tools) => JSON.stringify({ ...answer, tools }),
    () => JSON.stringify(answer),
  );
}
