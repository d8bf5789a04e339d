"""The page's outline read where the page is: one script in an isolated world of Tabrelay's own.

``read`` runs ``OUTLINE`` in the tab's top frame, in a world the page's scripts cannot reach
(``WORLD``), over the document, its shadow roots (as laid out: slots filled; closed ones opened to
the world by ``shadow_roots``) and its same-origin frames. The script computes each element's role,
name, value and states the way Chrome's accessibility tree does (HTML-AAM, accname:
``aria-labelledby``, ``aria-label``, labels, ``alt``, contents, ``title``, placeholders), which
elements are laid out inline, focusable only by script, on screen, and which fields hold a secret
(``page_scripts.FIELD_KIND``; such a field's value never leaves the page), and answers in nodes
shaped like Chrome's own for ``outline.build_outline``. Each element gets an id held by that world
(``held``) for the life of its document: a ref names that id, and ``element`` gives the element
back.

What can be clicked without a role (a ``div`` a framework listens on) is told by what the page
draws: where the pointing-hand cursor starts, or an ``onclick`` attribute. Listeners are not
asked for: ``DOMDebugger.getEventListeners`` answers with every listener of every kind on the
page (15,000 on a JupyterLab notebook, 950 ms through the extension), and a framework that
listens at its root leaves its clickable elements without one.

Why not Chrome's tree: ``Accessibility.getFullAXTree`` computes every name with its sources and
grows faster than the page (issue 16: 592 ms at 2,000 elements, against this script's tens).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field, replace
from typing import Any

from tabrelay.errors import CommandFailed
from tabrelay.protocol.messages import uncollected
from tabrelay.tools.context import ToolContext, exception_text
from tabrelay.tools.page import child_sessions
from tabrelay.tools.page.outline import FrameTree
from tabrelay.tools.page.shadow_roots import open_closed_roots
from tabrelay.tools.scripts.page_scripts import FIELD_KIND, SIGHT
from tabrelay.tools.state import object_ids
from tabrelay.tools.state.tab_state import FrameWorlds

WORLD = "tabrelay-outline"
# The world forgets ids of collected elements when it holds more than twice the ids it kept at
# its last sweep, and at least this many.
HELD_SLACK = 5000
CLICKABLE, INLINE, SCRIPT_FOCUS, ON_SCREEN, IGNORED, POINTER = 1, 2, 4, 8, 16, 32

# ``idOf(element)``: the id the world holds the element by; the same element keeps its id for
# the life of the world (its document). Ids of elements the page let go (collected) are
# forgotten once they are many.
_HELD = r"""
  const held = (globalThis.__tabrelayHeld ||= {
    ids: new WeakMap(),
    els: new Map(),
    next: 1,
    limit: HELD_SLACK,
  });
  if (held.els.size > held.limit) {
    for (const [id, ref] of held.els) if (ref.deref() === undefined) held.els.delete(id);
    held.limit = Math.max(HELD_SLACK, 2 * held.els.size);
  }
  const idOf = (el) => {
    let id = held.ids.get(el);
    if (id === undefined) {
      id = held.next++;
      held.ids.set(el, id);
      held.els.set(id, new WeakRef(el));
    }
    return id;
  };
""".replace("HELD_SLACK", str(HELD_SLACK))

OUTLINE = r"""
function (viewport, refused, ...marked) {
  const kindOf = FIELD_KIND;
  const refusedUrls = new Set(refused);
  HELD
  const ws = (text) => text.replace(/[\t\n\f\r ]+/g, ' ');
  const attr = (el, name) => el.getAttribute(name);
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

  const sight = (SIGHT)();
  const styleOf = sight.style;  // one computed style per element for the whole read

  function roleOf(el, tag) {
    const explicit = attr(el, 'role');
    if (explicit) {
      for (const token of explicit.trim().toLowerCase().split(/\s+/)) {
        if (ARIA_ROLES.has(token)) {
          if (token === 'none' || token === 'presentation') {
            if (el.tabIndex >= 0 && el.hasAttribute('tabindex')) break; // focusable: keeps its own
            return 'none';
          }
          return token === 'image' ? 'img' : token;
        }
      }
    }
    switch (tag) {
      case 'A':
      case 'AREA':
        return el.hasAttribute('href') ? 'link' : 'generic';
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
        for (let up = el.parentElement; up; up = up.parentElement) {
          if (
            LANDMARK_SCOPES.has(up.tagName) ||
            /^(article|complementary|main|navigation|region)$/.test(attr(up, 'role') || '')
          ) {
            return tag === 'HEADER' ? 'SectionHeader' : 'SectionFooter';
          }
        }
        return tag === 'HEADER' ? 'banner' : 'contentinfo';
      }
      case 'SECTION':
        return el.hasAttribute('aria-label') ||
          el.hasAttribute('aria-labelledby') ||
          el.hasAttribute('title')
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
    return TAG_ROLES[tag] || TAG_ROLES[el.localName] || 'generic';
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
    const root = el.getRootNode();
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
    return (
      style.display === 'none' ||
      style.visibility === 'hidden' ||
      style.visibility === 'collapse' ||
      attr(el, 'aria-hidden') === 'true'
    );
  }

  function textOf(node, visiting, referenced, inLabel) {
    if (node.nodeType === 3) return node.data;
    if (node.nodeType !== 1) return '';
    const el = node;
    if (visiting.has(el)) return '';
    const style = styleOf(el);
    if (!referenced && hiddenForName(el, style)) return '';
    visiting.add(el);
    try {
      const tag = el.tagName;
      const role = roleOf(el, tag);
      // An embedded control says its value (inside a label or another's name).
      if (inLabel || visiting.size > 1) {
        if (role === 'textbox' || role === 'searchbox')
          return el.value !== undefined ? el.value : el.textContent;
        if (role === 'combobox' && tag === 'SELECT') {
          const option = el.selectedOptions && el.selectedOptions[0];
          return option ? option.text : '';
        }
        if (role === 'slider' || role === 'spinbutton')
          return (
            attr(el, 'aria-valuetext') || String(el.value ?? attr(el, 'aria-valuenow') ?? '')
          );
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

  // The text CSS generates before or after an element's contents (its alternative text when
  // it gives one), as Chrome's tree holds it; an icon font's glyph (private use) says nothing.
  const GENERATED = /^"((?:[^"\\]|\\.)*)"(?:\s*\/\s*"((?:[^"\\]|\\.)*)")?$/;
  const GLYPHS = /^[\s\uE000-\uF8FF]*$/;
  // A name from contents and the walk both ask for an element's generated text: once each.
  const generatedTexts = new Map();
  function pseudo(el, which) {
    if (!documentGenerates(el.ownerDocument)) return '';
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
        const root = el.shadowRoot;  // a closed one too: this world reads it
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
    const content = style.content;
    if (!content || content === 'none' || content === 'normal' || style.display === 'none')
      return '';
    const match = GENERATED.exec(content);
    if (!match) return '';
    const text = (match[2] ?? match[1]).replace(/\\(.)/g, '$1');
    return GLYPHS.test(text) ? '' : text;
  }

  function contents(el, visiting, style) {
    const parts = [];
    const before = pseudo(el, '::before');
    if (before) parts.push(before);
    for (const child of flatChildren(el)) {
      if (child.nodeType === 3) {
        parts.push(child.data);
        continue;
      }
      if (child.nodeType !== 1 || SKIP.has(child.tagName.toUpperCase())) continue;
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

  function labelsText(el, visiting) {
    // A label that is not drawn names nothing (Chrome's tree), unlike aria-labelledby.
    const labels = el.labels
      ? Array.from(el.labels).filter((l) => !hiddenForName(l, styleOf(l)))
      : [];
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
    if (el.shadowRoot) return el.shadowRoot.childNodes;
    if (el.tagName === 'SLOT') {
      const assigned = el.assignedNodes({ flatten: true });
      return assigned.length ? assigned : el.childNodes;
    }
    if (el.tagName === 'TEMPLATE') return [];
    return el.childNodes;
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

  function walkDocument(doc, owner, url) {
    const nodes = [];
    const frame = { owner, url, nodes };
    frames.push(frame);
    const root = doc.documentElement;
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
    const shown = onScreen && onScreen(() => el.getBoundingClientRect()) ? 8 : 0;
    nodes.push([0, parent, 'StaticText', text, 0, null, null, shown]);
  }

  function walk(el, parent, nodes, hidden, editableParent, quietText, seen) {
    const said = !hidden && !quietText && parent !== 0;
    if (said) generated(el, '::before', parent, nodes, seen);
    for (const child of flatChildren(el)) {
      if (child.nodeType === 3) {
        if (hidden || quietText) continue;
        const text = ws(child.data);
        if (!text) continue;
        if (text === ' ' && !inlineContext(child)) continue;
        const style = styleOf(el);
        const unseen = sight.text(child, el, seen, style);
        if (unseen) {
          sight.withhold(unseen);
          continue;
        }
        // An icon font's ligature ("more_vert") is drawn as an icon, not read as a label.
        // The font asked for first: a fallback in the stack ("Segoe UI Symbol") is no icon font.
        if (ICON_FONT.test(style.fontFamily.split(',')[0])) glyphs.add(nodes.length);
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
        continue;
      }
      if (child.nodeType !== 1 || SKIP.has(child.tagName.toUpperCase())) continue;
      element(child, parent, nodes, hidden, editableParent, seen);
    }
    if (said) generated(el, '::after', parent, nodes, seen);
  }

  // Text left out because a sighted person cannot see it, counted by why.
  const ICON_FONT = /icon|symbol|glyph|awesome|material/i;
  const glyphs = new Set();
  // Roles kept on their line when out of sight (a skip link, a custom checkbox's input): what a
  // person reaches with the keyboard or through what is drawn for it.
  const CONTROLS = new Set(['button', 'link', 'textbox', 'searchbox', 'checkbox', 'radio',
    'combobox', 'listbox', 'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab',
    'switch', 'slider', 'spinbutton', 'treeitem']);
  // The text drawn inside the element at ``index`` (its descendants' lines, as pushed: only
  // what is seen; not an icon's ligature), to tell a name that says something else.
  function drawnText(nodes, index) {
    const parts = [];
    const inside = new Set([index]);
    for (let i = index + 1; i < nodes.length; i++) {
      const [, parent, role, name, , , , flags] = nodes[i];
      if (!inside.has(parent)) continue;
      inside.add(i);
      if (role === 'StaticText') parts.push(glyphs.has(i) || flags & 16 ? '' : name);
      else if (role === 'img' || role === 'image') parts.push(` ${name} `);
      else if (!(flags & 2)) parts.push(' ');
    }
    return ws(parts.join('')).trim();
  }
  const words = (text) => text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);

  function inlineContext(text) {
    const inl = (n) =>
      n && (n.nodeType === 3 || (n.nodeType === 1 && styleOf(n).display.startsWith('inline')));
    const parent = text.parentElement;
    return (
      (parent && parent.tagName !== 'BODY' && styleOf(parent).display.startsWith('inline')) ||
      inl(text.previousSibling) ||
      inl(text.nextSibling)
    );
  }

  function element(el, parent, nodes, hiddenAbove, editableParent, seenAbove) {
    const style = styleOf(el);
    if (style.display === 'none') return;
    const seen = sight.of(el, style, seenAbove);
    const tag = el.tagName;
    const ariaHidden = attr(el, 'aria-hidden') === 'true' || el.inert;
    const hidden =
      hiddenAbove ||
      ariaHidden ||
      style.visibility === 'hidden' ||
      style.visibility === 'collapse';
    let role = roleOf(el, tag);
    if (role === null) return;
    const id = idOf(el);
    const index = nodes.length;
    const props = {};
    let flags = 0;
    if (style.display === 'inline') flags |= 2;
    if (hidden) flags |= 16;
    if (el.hasAttribute('tabindex') && (attr(el, 'tabindex') || '').trim() === '-1') flags |= 4;
    if (el.hasAttribute('onclick')) flags |= 1;
    // Where the pointing hand starts (what is inside inherits it) is drawn as something to
    // click, whoever listens for it (a framework listens at its root).
    if (style.cursor === 'pointer') {
      const up = el.parentElement || (el.parentNode && el.parentNode.host);
      if (!up || styleOf(up).cursor !== 'pointer') flags |= 32;
    }
    if (onScreen && (style.display === 'contents' || onScreen(() => el.getBoundingClientRect())))
      flags |= 8;
    const editable = el.isContentEditable || !!el.editContext;
    if (editable)
      props.editable =
        el.contentEditable === 'plaintext-only' ||
        style.webkitUserModify === 'read-write-plaintext-only'
          ? 'plaintext'
          : 'richtext';
    // A shadow host that delegates focus (a design system's button around its <button>) is
    // not focused itself: what it holds is.
    const focusable =
      !hidden &&
      (el.tabIndex >= 0 || el.hasAttribute('tabindex') || (editable && !editableParent)) &&
      !el.disabled &&
      !(el.shadowRoot && el.shadowRoot.delegatesFocus);
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
    if (role === 'Date' || role === 'DateTime' || role === 'InputTime') {
      flags |= 1;
      value = el.value || null;
    }
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
    if (role === 'link' && el.href) props.url = el.href;
    if (tag === 'SUMMARY' && el.parentElement && el.parentElement.tagName === 'DETAILS')
      props.expanded = el.parentElement.open;
    if (el.disabled || (el.matches && el.matches(':disabled'))) props.disabled = true;
    for (const state of [
      'checked',
      'pressed',
      'selected',
      'expanded',
      'disabled',
      'required',
      'invalid',
      'readonly',
      'multiline',
    ]) {
      const a = attr(el, 'aria-' + state);
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
      // A field holding a secret ships no option (one of them is its value).
      if (tag === 'SELECT' && !(props && props.secret))
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
    walk(el, index, nodes, hidden, editable, quietText, seen);
    // A name from contents says only what is drawn; one that says something else than what is
    // drawn (an aria-label on a labelled button) gives way to what is drawn, flagged when they
    // disagree. What draws no words (an icon) keeps its name: that is how it is announced.
    const maybeUnlike = !fromContents || sight.count() > before;
    if (name && maybeUnlike && FROM_CONTENTS.has(role) && !unseen && !editable) {
      const drawn = drawnText(nodes, index);
      const said = words(name).join(' ');
      if (words(drawn).join('').length >= 2 && words(drawn).join(' ') !== said) {
        if (!words(drawn).every((w) => said.includes(w))) props.differs = true;
        nodes[index][3] = drawn;
        nodes[index][4] = 1;
        if (props.differs) nodes[index][6] = props;
      }
    }
  }

  walkDocument(document, null, location.href);
  return JSON.stringify({ frames, marked: marked.map(idOf), withheld: sight.withheld });
}
""".replace("FIELD_KIND", FIELD_KIND.strip())
OUTLINE = OUTLINE.replace("SIGHT", SIGHT.strip()).replace("  HELD\n", _HELD)

# The id the world holds ``this`` element by (an element of the world's, from DOM.resolveNode).
ID_OF = r"""
function () {
HELD
  return idOf(this);
}
""".replace("HELD\n", _HELD)

# The element a held id names, or null when its document or the element is gone.
ELEMENT = r"""
(id) => {
  const held = globalThis.__tabrelayHeld;
  const ref = held && held.els.get(id);
  const el = ref && ref.deref();
  return el && el.isConnected ? el : null;
}
"""


@dataclass(slots=True)
class PageOutline:
    frames: list[FrameTree]
    clickable: set[int] = field(default_factory=set)  # with an onclick attribute
    inline: set[int] = field(default_factory=set)
    script_focus: set[int] = field(default_factory=set)
    visible: set[int] = field(default_factory=set)
    pointer: set[int] = field(default_factory=set)  # where a pointing-hand cursor starts
    secrets: dict[int, str] = field(default_factory=dict)
    held: dict[int, int] = field(default_factory=dict)  # backend node id → held id (``marked``)
    # Texts left out because a sighted person cannot see them, by why ("transparent", …).
    withheld: dict[str, int] = field(default_factory=dict)
    # The documents (frame id → loader id) of frames read through a child session, which the
    # tab's own frame tree does not list.
    loaders: dict[str, str] = field(default_factory=dict)

    def absorb(self, other: PageOutline) -> None:
        """Take in what ``other`` (a frame of another origin read on its own) found, but its
        frames (spliced in by the reader)."""
        for mine, theirs in (
            (self.clickable, other.clickable),
            (self.inline, other.inline),
            (self.script_focus, other.script_focus),
            (self.visible, other.visible),
            (self.pointer, other.pointer),
        ):
            mine |= theirs
        self.secrets |= other.secrets
        self.loaders |= other.loaders
        for why, count in other.withheld.items():
            self.withheld[why] = self.withheld.get(why, 0) + count


# Resolves true at the page's first change (an element added or removed, text or an attribute
# changed) within ``ms`` milliseconds, false if there was none.
CHANGES = r"""
(ms) => new Promise((resolve) => {
  const seen = new MutationObserver(() => done(true));
  const timer = setTimeout(() => done(false), ms);
  function done(changed) {
    seen.disconnect();
    clearTimeout(timer);
    resolve(changed);
  }
  seen.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
})
"""


async def changes(ctx: ToolContext, *, within: float) -> bool:
    """Whether the tab's document changes within ``within`` seconds (watched from Tabrelay's
    world, where the page cannot fake or hide it).

    Raises:
        CommandFailed: the page could not be watched (between documents, or gone).
    """
    tree = await ctx.cdp("Page.getFrameTree")
    answer = await ctx.cdp(
        "Runtime.evaluate",
        {
            "expression": f"({CHANGES})({int(within * 1000)})",
            "contextId": await world(ctx, tree["frameTree"]["frame"]["id"]),
            "awaitPromise": True,
            "returnByValue": True,
        },
        timeout=within + 5,
    )
    return answer.get("result", {}).get("value") is True


async def world(ctx: ToolContext, frame_id: str, session: str | None = None) -> int:
    """The execution context of Tabrelay's world in ``frame_id`` (of the child ``session``
    when the frame runs in another process; made on first use; the same world after that, for
    as long as the frame shows the same document)."""
    made = await ctx.cdp(
        "Page.createIsolatedWorld", {"frameId": frame_id, "worldName": WORLD}, session=session
    )
    return int(made["executionContextId"])


async def opened_world(
    ctx: ToolContext, session: str | None = None, *, frame: str | None = None
) -> int:
    """The execution context of Tabrelay's world in ``frame`` (by default the tab's top frame,
    or the frame the child ``session`` reaches), with the page's closed shadow roots opened to
    it (``shadow_roots``).

    Raises:
        CommandFailed: the page could not be read (between documents, or gone).
    """
    if frame is None and session is not None:
        frame = child_sessions.frame_of(ctx, session)
    elif frame is None:
        tree = await ctx.cdp("Page.getFrameTree")
        frame = tree["frameTree"]["frame"]["id"]
    context = await world(ctx, frame, session)
    await open_closed_roots(ctx, context, session)
    return context


async def adopt(ctx: ToolContext, object_id: str, *, held: int | None = None) -> str | None:
    """The element ``object_id`` names (in any world, of any frame's session) as an object of
    Tabrelay's world, where closed shadow roots are walked as open ones; None when it is gone.
    ``held``: the held id its ref names, which says the world of the frame of another origin
    that holds it, if one does.

    Raises:
        CommandFailed: the page could not be read (between documents, or gone).
    """
    if held is not None and held >= FrameWorlds.SPAN:
        return await element(ctx, None, held)
    described = await ctx.cdp("DOM.describeNode", {"objectId": object_id})
    session = object_ids.session_of(object_id)
    backend = int(described["node"]["backendNodeId"])
    return await ctx.resolve(backend, await opened_world(ctx, session), session)


async def read(
    ctx: ToolContext,
    frame_id: str,
    *,
    viewport: bool,
    refused: list[str],
    marked: list[int],
) -> PageOutline:
    """The outline's nodes of the page whose top frame is ``frame_id``; frames at ``refused``
    URLs are not read. ``marked`` (backend node ids) come back as held ids in ``held``.

    Raises:
        CommandFailed: the page could not be read (between documents, or gone).
    """
    context = await world(ctx, frame_id)
    await open_closed_roots(ctx, context)
    objects = await asyncio.gather(*(ctx.resolve(b, context) for b in marked))
    kept = [(b, o) for b, o in zip(marked, objects, strict=True) if o is not None]
    answer = await ctx.cdp(
        "Runtime.callFunctionOn",
        {
            "functionDeclaration": OUTLINE,
            "executionContextId": context,
            "arguments": [
                {"value": viewport},
                {"value": refused},
                *({"objectId": o} for _, o in kept),
            ],
            "returnByValue": True,
        },
    )
    if answer.get("exceptionDetails"):
        raise CommandFailed(
            f"the page could not be read ({exception_text(answer['exceptionDetails'])})"
        )
    page = decode(answer.get("result", {}).get("value"), frame_id, [b for b, _ in kept])
    await _name_frames(ctx, page, context)
    await _other_origins(ctx, page, None, viewport=viewport, depth=0)
    return page


async def _name_frames(
    ctx: ToolContext, page: PageOutline, context: int, session: str | None = None, base: int = 0
) -> None:
    """Give each frame of ``page`` but its first the id of the frame its <iframe> shows (for
    its document's loader, and to say where it is). Its elements are held by the world
    ``context`` read them in, whose held ids start at ``base``."""
    owners = [f.owner for f in page.frames[1:] if f.owner is not None]
    ids = await asyncio.gather(*(_frame_of(ctx, context, o - base, session) for o in owners))
    found = dict(zip(owners, ids, strict=True))
    page.frames[1:] = [
        replace(f, frame_id=found.get(f.owner) or f.frame_id) if f.owner is not None else f
        for f in page.frames[1:]
    ]


async def _other_origins(
    ctx: ToolContext, page: PageOutline, session: str | None, *, viewport: bool, depth: int
) -> None:
    """Read each frame of another origin in ``page`` (read through the child ``session``, or
    the tab's own) in a world of its own, through its own child session when it runs in a
    process of its own, in place of the line that said it was not included; frames in those
    frames too, up to ``child_sessions.MAX_DEPTH``. A frame of a site agents may not use is
    left out, saying so; one that cannot be read stays as it was."""
    others = [f for f in page.frames if f.error and f.frame_id and f.owner is not None]
    if not others or depth >= child_sessions.MAX_DEPTH:
        return
    with contextlib.suppress(CommandFailed):  # an extension that cannot: none of them
        await child_sessions.attach(ctx, session)
    children = ctx.state.session.children
    where = {id(f): children.get(f.frame_id, session) for f in others}
    sessions = list(dict.fromkeys(where.values()))
    trees = await asyncio.gather(
        *(ctx.cdp("Page.getFrameTree", session=s) for s in sessions), return_exceptions=True
    )
    for tree in trees:  # a frame going away leaves its own out, not the others
        if isinstance(tree, BaseException) and not isinstance(tree, CommandFailed):
            raise tree
    tree_of = {
        s: t["frameTree"] for s, t in zip(sessions, trees, strict=True) if isinstance(t, dict)
    }
    reads = await asyncio.gather(
        *(
            _other_origin(ctx, f, where[id(f)], tree_of[where[id(f)]], viewport, depth)
            for f in others
            if where[id(f)] in tree_of
        )
    )
    others = [f for f in others if where[id(f)] in tree_of]
    read = {id(f): r for f, r in zip(others, reads, strict=True)}
    frames: list[FrameTree] = []
    for frame in page.frames:
        got = read.get(id(frame))
        if isinstance(got, PageOutline):
            frames += got.frames
            page.absorb(got)
        else:
            frames.append(got or frame)
    page.frames = frames


async def _other_origin(
    ctx: ToolContext,
    frame: FrameTree,
    session: str | None,
    tree: dict[str, Any],
    viewport: bool,
    depth: int,
) -> PageOutline | FrameTree | None:
    """The outline of ``frame`` (another origin's, reached through ``session``, whose frame
    tree is ``tree``), the frame refused, or None if it cannot be read."""
    node = frame_node(tree, frame.frame_id)
    if node is None:
        return None
    url = str(node["frame"].get("url", ""))
    if ctx.guard.refusal(url) is not None:
        return replace(frame, url=url, error=None, refused="agents may not use it")
    if session is not None and ctx.state.session.children.get(frame.frame_id) != session:
        ctx.state.session.within[frame.frame_id] = session  # in its parent's process
    base = ctx.state.worlds.number(frame.frame_id) * FrameWorlds.SPAN
    try:
        context = await world(ctx, frame.frame_id, session)
        await open_closed_roots(ctx, context, session)
        answer = await ctx.cdp(
            "Runtime.callFunctionOn",
            {
                "functionDeclaration": OUTLINE,
                "executionContextId": context,
                "arguments": [{"value": viewport}, {"value": refused_under(ctx, node)}],
                "returnByValue": True,
            },
            session=session,
        )
        if answer.get("exceptionDetails"):
            return None
        page = decode(answer.get("result", {}).get("value"), frame.frame_id, [], base=base)
        page.frames[0] = replace(page.frames[0], owner=frame.owner)
        page.loaders = loaders_of(node)
        await _name_frames(ctx, page, context, session, base)
    except CommandFailed:
        return None
    await _other_origins(ctx, page, session, viewport=viewport, depth=depth + 1)
    return page


def frame_node(tree: dict[str, Any], frame_id: str) -> dict[str, Any] | None:
    """The node of ``frame_id`` in a ``Page.getFrameTree`` answer's tree, None if not in it."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if node["frame"].get("id") == frame_id:
            return node
        stack += node.get("childFrames", [])
    return None


def refused_under(ctx: ToolContext, node: dict[str, Any]) -> list[str]:
    """The URLs of the frames under ``node`` of a frame tree that show a site agents may not
    use (a frame loaded before an agent first used the tab, when its loads were not guarded):
    never read."""
    found: list[str] = []
    for child in node.get("childFrames", []):
        url = str(child["frame"].get("url", ""))
        if ctx.guard.refusal(url) is not None:
            found.append(url)
        found += refused_under(ctx, child)
    return found


def loaders_of(tree: dict[str, Any]) -> dict[str, str]:
    """Every frame's loader id in a ``Page.getFrameTree`` answer, the top frame first."""
    loaders: dict[str, str] = {}
    stack: list[dict[str, Any]] = [tree]
    while stack:
        node = stack.pop()
        frame = node["frame"]
        loaders[frame["id"]] = frame.get("loaderId", "")
        stack.extend(node.get("childFrames", []))
    return loaders


async def _frame_of(
    ctx: ToolContext, context: int, owner: int, session: str | None = None
) -> str | None:
    """The frame id shown by the <iframe> the world holds as ``owner``."""
    found = await _held(ctx, context, owner, session)
    if found is None:
        return None
    described = await ctx.cdp("DOM.describeNode", {"objectId": found})
    frame = described["node"].get("frameId")
    return str(frame) if frame else None


async def element(ctx: ToolContext, top_frame_id: str | None, held: int) -> str | None:
    """The page object (in the call's object group, in Tabrelay's world) of the element
    ``held`` names in the tab whose top frame is ``top_frame_id`` (asked for when None), or
    None when it is gone.

    Raises:
        CommandFailed: the page could not be read (between documents, or gone).
    """
    number, local = divmod(held, FrameWorlds.SPAN)
    if number == 0:
        if top_frame_id is None:
            top_frame_id = (await ctx.cdp("Page.getFrameTree"))["frameTree"]["frame"]["id"]
        return await _held(ctx, await world(ctx, top_frame_id), held)
    frame = ctx.state.worlds.frame(number)
    if frame is None:
        return None
    session = child_sessions.holder_session(ctx, held)
    return await _held(ctx, await world(ctx, frame, session), local, session)


async def held_id(ctx: ToolContext, object_id: str, frame: str | None) -> int | None:
    """The held id of the element ``object_id`` (an object of Tabrelay's world in the tab's
    top frame, or in ``frame``, one of another origin read in a world of its own): the
    snapshot's, if it gave the element a ref, so one element has one ref however it was found;
    None when it is gone."""
    answer = await ctx.call_on(object_id, ID_OF)
    value = answer.get("result", {}).get("value")
    if not isinstance(value, int) or answer.get("exceptionDetails"):
        return None
    return value + (0 if frame is None else ctx.state.worlds.number(frame) * FrameWorlds.SPAN)


async def _held(
    ctx: ToolContext, context: int, held: int, session: str | None = None
) -> str | None:
    found = await ctx.cdp(
        "Runtime.evaluate",
        {
            "expression": f"({ELEMENT})({json.dumps(held)})",
            "contextId": context,
            "objectGroup": ctx.objects,
        },
        session=session,
    )
    result = found.get("result", {})
    if found.get("exceptionDetails") or result.get("subtype") == "null":
        return None
    object_id = result.get("objectId")
    return str(object_id) if object_id else None


def decode(text: Any, top: str, marked: list[int], *, base: int = 0) -> PageOutline:
    """The outline script's answer (JSON text) as nodes for ``build_outline``; ``marked`` are
    the backend node ids handed to the script, in order; ``base`` is added to each held id
    (a world other than the top frame's: ``FrameWorlds``).

    Raises:
        CommandFailed: the answer is not what the script gives (Chrome cut it short, or an
            extension answered for it); nothing of it is used.
    """
    try:
        with uncollected():
            value = json.loads(text)
            page = _outline(value["frames"], top, base)
        ids = [int(i) for i in value["marked"]]
        withheld = {str(why)[:40]: int(n) for why, n in value.get("withheld", {}).items()}
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as error:
        raise CommandFailed(f"the page's outline came back malformed ({error!r:.100})") from None
    if len(ids) != len(marked):
        raise CommandFailed("the page's outline came back malformed (its marked elements)")
    page.held = dict(zip(marked, ids, strict=True))
    page.withheld = withheld
    return page


def _outline(frames: list[dict[str, Any]], top: str, base: int) -> PageOutline:
    page = PageOutline([])
    for index, frame in enumerate(frames):
        raw = frame["nodes"]
        if base:
            raw = [[e[0] + base if e[0] else e[0], *e[1:]] for e in raw]
        children: list[list[str]] = [[] for _ in raw]
        for i, entry in enumerate(raw):
            parent = entry[1]
            if parent != -1 and not 0 <= parent < i:  # parents come first: no cycle
                raise ValueError(f"node {i} has parent {parent!r}")
            if parent >= 0:
                children[parent].append(f"{index}.{i}")
        nodes = []
        for i, (held, parent, role, name, contents, value, props, flags) in enumerate(raw):
            node: dict[str, Any] = {"nodeId": f"{index}.{i}", "role": {"value": role}}
            node["childIds"] = children[i]
            if parent >= 0:
                node["parentId"] = f"{index}.{parent}"
            if held:
                node["backendDOMNodeId"] = held
            if name or contents:
                sources = [{"type": "contents", "value": {"value": name}}] if contents else []
                node["name"] = {"value": name, "sources": sources, "whole": True}
            if value is not None:
                node["value"] = {"value": value}
            if props:
                secret = props.pop("secret", None)
                if secret:
                    page.secrets[held] = secret
                node["properties"] = [{"name": k, "value": {"value": v}} for k, v in props.items()]
            if flags & IGNORED:
                node["ignored"] = True
            for flag, found in (
                (CLICKABLE, page.clickable),
                (INLINE, page.inline),
                (SCRIPT_FOCUS, page.script_focus),
                (ON_SCREEN, page.visible),
                (POINTER, page.pointer),
            ):
                if flags & flag and held:
                    found.add(held)
            nodes.append(node)
        page.frames.append(
            FrameTree(
                top if index == 0 else "",
                nodes,
                str(frame.get("url", "")),
                frame["owner"] + base if frame.get("owner") is not None else None,
                error="cross-origin" if frame.get("error") else None,
                refused="agents may not use it" if frame.get("refused") else None,
            )
        )
    return page
