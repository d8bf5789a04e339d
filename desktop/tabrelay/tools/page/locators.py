"""Locators that survive a re-render: describe an element as a recipe ``Locator`` when a step
runs, and find the element a locator names again later (replay), as a ref every tool takes.

The page scripts here compute an element's ARIA role and accessible name the way Playwright's
``get_by_role`` and Chrome's accessibility tree do for the common controls (HTML-AAM, accname),
its label, placeholder, test id, visible text, a CSS path and the path of iframes down to its
document. A way is kept only if it names exactly this element at capture time. Nothing here
reads what a field holds (its value may be a secret). Elements in a cross-origin frame are not
described (``locator_of`` answers ``None``): a page script cannot see across origins, and a
locator that names the frame but not the element would replay onto the wrong thing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from tabrelay.errors import CommandFailed, TabrelayError, ToolError
from tabrelay.recipes.model import Locator
from tabrelay.tools.context import ToolContext
from tabrelay.tools.page import child_sessions, page_outline
from tabrelay.tools.page.refs import frame_loaders, held_of, object_for
from tabrelay.tools.results import page_text
from tabrelay.tools.state.tab_state import RefTarget

CAPTURE_TIMEOUT = 2.0  # seconds for one element's locator; a hung page gives none
POLL_INTERVAL = 0.2  # between looks while find waits for the element
LOOK_TIMEOUT = 3.0  # one look at the page while finding
MAX_NEARBY = 5

# Helpers every locator script shares: role, accessible name, label, text, CSS path, frames,
# and the ways to count what a locator's fields name in a document. ``budget`` bounds the work
# on huge pages: past its deadline a count answers "unknown" (-1), and an unknown is never one.
_HELPERS = r"""
const MAX_SCAN = 200000;  // elements looked at for shadow roots; the deadline bounds the rest
const norm = (s) => String(s == null ? '' : s).replace(/\s+/g, ' ').trim();
const FIELD_TAGS = new Set(['INPUT', 'TEXTAREA', 'SELECT']);
const tagOf = (el) => String(el.tagName || '').toUpperCase();
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
  const id = el.getAttribute('list');
  const list = id && el.ownerDocument.getElementById(id);
  return !!list && tagOf(list) === 'DATALIST';
};
// The implicit role per HTML-AAM, as Playwright's getImplicitAriaRole has it for these elements.
const implicitRole = (el) => {
  switch (tagOf(el)) {
    case 'A': case 'AREA': return el.hasAttribute('href') ? 'link' : null;
    case 'BUTTON': return 'button';
    case 'H1': case 'H2': case 'H3': case 'H4': case 'H5': case 'H6': return 'heading';
    case 'IMG': return el.getAttribute('alt') === '' ? null : 'img';
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
  const explicit = (el.getAttribute('role') || '').trim().toLowerCase().split(/\s+/)[0];
  if (explicit && KNOWN.has(explicit)) {
    return explicit === 'none' || explicit === 'presentation' || explicit === 'generic'
      ? null : explicit;
  }
  return implicitRole(el);
};
// Hidden from the accessibility tree: get_by_role skips these, and so do we.
const hiddenForAria = (el) => {
  if (el.closest('[aria-hidden="true"]')) return true;
  // A closed <select> draws no options, yet they are in the tree (as Playwright and Chrome say).
  const select = tagOf(el) === 'OPTION' ? el.closest('select') : null;
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
  .map((id) => el.getRootNode().getElementById
    ? el.getRootNode().getElementById(id) : el.ownerDocument.getElementById(id))
  .filter(Boolean);
// The text of what an element holds, as accname's "name from content" reads it: hidden parts
// skipped, images by their alt, a nested element's own aria-label, never a field's value.
const contentText = (root, self, depth) => {
  if (depth > 20) return '';
  const parts = [];
  for (const node of root.childNodes) {
    if (node.nodeType === 3) { parts.push(node.data); continue; }
    if (node.nodeType !== 1 || node === self) continue;
    const tag = tagOf(node);
    if (tag === 'SCRIPT' || tag === 'STYLE' || tag === 'TEMPLATE' || FIELD_TAGS.has(tag)) continue;
    if (node.getAttribute('aria-hidden') === 'true') continue;
    if (node.checkVisibility && !node.checkVisibility({visibilityProperty: true})) continue;
    const label = norm(node.getAttribute('aria-label'));
    let text;
    if (label) text = label;
    else if (tag === 'IMG') text = node.getAttribute('alt') || '';
    else text = contentText(node.shadowRoot || node, self, depth + 1);
    const inline = getComputedStyle(node).display.startsWith('inline');
    parts.push(inline ? text : ' ' + text + ' ');
  }
  return parts.join('');
};
const labelsOf = (el) => (el.labels ? Array.from(el.labels) : []);
// null: this element's name could carry what a field holds, so it has none we may use.
const nameOf = (el, role) => {
  const labelled = byIds(el, el.getAttribute('aria-labelledby'));
  if (labelled.length) {
    if (labelled.some((l) => l !== el && holdsFields(l))) return null;
    const said = (l) => norm(l.getAttribute('aria-label')) || norm(contentText(l, el, 0));
    return norm(labelled.map(said).join(' '));
  }
  const aria = norm(el.getAttribute('aria-label'));
  if (aria) return aria;
  const tag = tagOf(el);
  const type = String(el.type || '').toLowerCase();
  if (tag === 'INPUT' && ['button', 'submit', 'reset'].includes(type)) {
    const value = norm(el.getAttribute('value'));
    if (value) return value;
    if (type === 'submit') return 'Submit';
    if (type === 'reset') return 'Reset';
    return norm(el.getAttribute('title'));
  }
  if (tag === 'INPUT' && type === 'image') {
    return norm(el.getAttribute('alt')) || norm(el.getAttribute('value'))
      || norm(el.getAttribute('title')) || 'Submit';
  }
  if (FIELD_TAGS.has(tag)) {
    const labels = labelsOf(el);
    if (labels.length) {
      const others = labels.some((l) => Array.from(l.querySelectorAll('input, textarea, select'))
        .some((f) => f !== el));
      if (others) return null;
      return norm(labels.map((l) => norm(contentText(l, el, 0))).filter(Boolean).join(' '));
    }
    const title = norm(el.getAttribute('title'));
    const textual = (tag === 'INPUT' && ['text', 'password', 'search', 'tel', 'email', 'url', '']
      .includes(type)) || tag === 'TEXTAREA';
    if (!textual || title) return title;
    return norm(el.getAttribute('placeholder'));
  }
  if (tag === 'IMG' || tag === 'AREA') {
    return norm(el.getAttribute('alt')) || norm(el.getAttribute('title'));
  }
  if (role && FROM_CONTENT.has(role)) {
    if (holdsFields(el) && role !== 'option') return null;
    const text = norm(contentText(el.shadowRoot || el, null, 0));
    if (text) return text;
  }
  return norm(el.getAttribute('title'));
};
// What get_by_label matches: aria-label, the <label>s of a field, aria-labelledby.
const labelOf = (el) => {
  const aria = norm(el.getAttribute('aria-label'));
  if (aria) return aria;
  const labels = labelsOf(el);
  if (labels.length) {
    if (labels.some((l) => l.querySelector('textarea, select'))) return null;
    return norm(labels[0].textContent);
  }
  const labelled = byIds(el, el.getAttribute('aria-labelledby'));
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
        if (norm(el.getAttribute('placeholder')) === value && push(el)) break;
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
        const walker = (root.ownerDocument || root).createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let t = walker.nextNode(); t; t = walker.nextNode()) {
          if (performance.now() > budget.deadline) { budget.over = true; return found; }
          const piece = norm(t.data);
          if (!piece || !value.includes(piece)) continue;
          for (let el = t.parentElement; el; el = el.parentElement) {
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
  for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
    const root = node.getRootNode();
    if (node.id && !generated(node.id)) {
      const sel = '#' + CSS.escape(node.id);
      let count = 0;
      try { count = root.querySelectorAll(sel).length; } catch (error) { count = 0; }
      if (count === 1) { parts.unshift(sel); break; }
    }
    const tag = node.tagName.toLowerCase();
    if (tag === 'body' || tag === 'html') { parts.unshift(tag); break; }
    let index = 1;
    for (let s = node.previousElementSibling; s; s = s.previousElementSibling) {
      if (s.tagName === node.tagName) index++;
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
"""

# ``(element, msBudget) => fields``: the locator of an element as model.Locator's fields (only
# the ways that name it alone), or ``{crossOrigin: true}``. Demonstrations run it in their world.
LOCATOR_SCRIPT = (
    "((element, msBudget) => {"
    + _HELPERS
    + r"""
  let el = element && element.nodeType === 1 ? element : element && element.parentElement;
  if (!el || !el.isConnected) return null;
  const frames = framesOf(el.ownerDocument);
  if (frames === null) return {crossOrigin: true};
  const budget = {deadline: performance.now() + (msBudget || 400), scanned: 0, over: false};
  const roots = rootsOf(el.ownerDocument, budget);
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
  const placeholder = norm(el.getAttribute('placeholder'));
  if (only('placeholder', placeholder)) out.placeholder = placeholder;
  const testId = el.getAttribute('data-testid');
  if (testId && testId === testId.trim() && only('test_id', testId)) out.test_id = testId;
  const text = textOf(el);
  if (only('text', text)) out.text = text;
  if (!out.css) out.css = el.tagName.toLowerCase();
  return out;
})"""
)

# ``(locator, msBudget) => answer`` in the top document: the one element the first way that
# names exactly one names, or a JSON string saying how many each way named and what is near.
_FIND_SCRIPT = (
    "((locator, msBudget) => {"
    + _HELPERS
    + r"""
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
    if (near.has(el) || nearby.length >= 40 || el.closest('select, datalist')) return;
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
})"""
)

_DESCRIBE = f"function (msBudget) {{ return ({LOCATOR_SCRIPT})(this, msBudget); }}"
# ``(frames) => index``: the first of the ``frames`` path (from this world's document) whose
# document this world cannot see (a frame of another site), -1 when it sees them all, -2 when
# one is not there.
_CROSSING = (
    "((frames) => {"
    + _HELPERS
    + r"""
  for (let i = 0; i < frames.length; i++) {
    if (!documentAt(frames.slice(0, i))) return -2;
    if (!documentAt(frames.slice(0, i + 1))) {
      let frame = null;
      try { frame = documentAt(frames.slice(0, i)).querySelector(frames[i]); } catch (e) {}
      return frame && frame.tagName === 'IFRAME' ? i : -2;
    }
  }
  return -1;
})"""
)
_FRAME_ELEMENT = (
    "((frames) => {"
    + _HELPERS
    + r"""
  const doc = documentAt(frames.slice(0, -1));
  return doc ? doc.querySelector(frames[frames.length - 1]) : null;
})"""
)


class TargetMissing(ToolError):
    """A locator named no single element in time: what was looked for, how, and what is near."""

    title = "Element not found"


async def locator_of(
    ctx: ToolContext, *, ref: str | None = None, selector: str | None = None
) -> Locator | None:
    """The locator of the element a ref or selector names, as it is now; ``None`` when it cannot
    be said (no such element, a page that does not answer in time). An element of a frame of
    another site is described in that frame, behind the path of iframes down to it.

    Never raises (but a cancel), and is bounded (``CAPTURE_TIMEOUT``).
    """
    try:
        async with asyncio.timeout(CAPTURE_TIMEOUT):
            # Described in Tabrelay's world, which walks closed shadow roots too.
            held = held_of(ctx, ref)
            object_id = await page_outline.adopt(
                ctx, await object_for(ctx, ref=ref, selector=selector), held=held
            )
            if object_id is None:
                return None
            locator = await _described(ctx, object_id)
            holder = child_sessions.holder_frame(ctx, held)
            if locator is None or holder is None:
                return locator
            above = await _frames_down_to(ctx, holder)
            if above is None:
                return None
            frames = [*above, *locator.frames]
            return Locator.model_validate({**locator.model_dump(), "frames": frames})
    # A locator is a nicety of recording: a step without one is still recorded by the caller.
    except (TimeoutError, TabrelayError, KeyError, TypeError, ValueError):  # ValidationError too
        return None


async def _described(ctx: ToolContext, object_id: str) -> Locator | None:
    answer = await ctx.call_on(object_id, _DESCRIBE, int(CAPTURE_TIMEOUT * 400))
    return locator_from(answer.get("result", {}).get("value"))


async def _frames_down_to(ctx: ToolContext, frame: str) -> list[str] | None:
    """The path of iframes from the top document to (and with) ``frame``, a frame of another
    origin read in a world of its own: its <iframe> described in the frame that holds it (in
    the parent's child session when ``frame`` runs in a process of its own), that frame's path
    first."""
    state = ctx.state.session
    # Its <iframe> is in the session its parent is reached through.
    parent = state.parents.get(frame) if frame in state.children else state.within.get(frame)
    owner = await ctx.cdp("DOM.getFrameOwner", {"frameId": frame}, session=parent)
    element = await ctx.resolve(
        int(owner["backendNodeId"]), await page_outline.opened_world(ctx, parent), parent
    )
    if element is None:
        return None
    iframe = await _described(ctx, element)
    if iframe is None:
        return None
    if parent is None:
        return [*iframe.frames, iframe.css]
    above = await _frames_down_to(ctx, child_sessions.frame_of(ctx, parent))
    return None if above is None else [*above, *iframe.frames, iframe.css]


def locator_from(value: Any) -> Locator | None:
    """A ``Locator`` from what ``LOCATOR_SCRIPT`` answered, or ``None`` when it is not one."""
    if not isinstance(value, dict) or value.get("crossOrigin") or not value.get("css"):
        return None
    fields = {k: value[k] for k in Locator.model_fields if value.get(k) not in (None, "")}
    if fields.get("name") is not None and fields.get("role") is None:
        fields.pop("name")
    try:
        return Locator.model_validate(fields)
    except ValidationError:
        return None


async def find(ctx: ToolContext, locator: Locator, *, timeout: float = 10.0) -> str:
    """The ref of the element ``locator`` names, minted in the tab's refs as a snapshot's are.

    Tries the ways in ``STRATEGIES`` order; the first that names exactly one element (or one
    visible element) wins. Until one does, looks again every ``POLL_INTERVAL`` for ``timeout``
    seconds, as acting tools wait for their element.

    Raises:
        TargetMissing: nothing named one element in time (the message says what was looked
            for, how each way fared and what the page offers nearby).
        TabrelayError: the tab went away or the page cannot be read.
    """
    deadline = time.monotonic() + timeout
    last: dict[str, Any] = {}
    while True:
        left = deadline - time.monotonic()
        budget_ms = int(max(100.0, min(1000.0, left * 1000 / 2)))
        found: dict[str, Any] = {}
        where = None
        try:
            async with asyncio.timeout(LOOK_TIMEOUT):
                where = await _world_under(ctx, locator.frames)
                if where is None:
                    last = {"frame": True}
                else:
                    world, rest = where
                    wanted = {**locator.model_dump(mode="json"), "frames": rest}
                    found = await ctx.cdp(
                        "Runtime.evaluate",
                        {
                            "expression": f"({_FIND_SCRIPT})({json.dumps(wanted)}, {budget_ms})",
                            "contextId": world.context,
                            "returnByValue": False,
                            "objectGroup": ctx.objects,
                        },
                        session=world.session,
                    )
        except (TimeoutError, CommandFailed):
            found = {}  # a look that took too long, or a page between documents: look again
        result = found.get("result", {})
        if result.get("subtype") == "node" and result.get("objectId") and where is not None:
            ref = await _mint(ctx, str(result["objectId"]), *where)
            if ref is not None:
                return ref
        elif isinstance(result.get("value"), str):
            with contextlib.suppress(ValueError):
                last = json.loads(result["value"])
        if time.monotonic() + POLL_INTERVAL >= deadline:
            raise TargetMissing(_missing(locator, last, timeout))
        await asyncio.sleep(POLL_INTERVAL)


@dataclass(frozen=True, slots=True)
class _World:
    """Tabrelay's world in one frame: its execution context, the child session it is reached
    through (None: the tab's own), and the frame whose world it is (None: the top frame's)."""

    context: int
    session: str | None
    frame: str | None


async def _world_under(ctx: ToolContext, frames: list[str]) -> tuple[_World, list[str]] | None:
    """Where to look for an element under the iframe path ``frames``: Tabrelay's world in the
    deepest frame of another origin on that path (through its child session when it runs in
    another process; the top frame's if there is none), and the rest of the path from there;
    None when a frame on it is not there.

    Raises:
        CommandFailed: the page could not be read (between documents, or gone).
    """
    where, rest = _World(await page_outline.opened_world(ctx), None, None), list(frames)
    for _ in range(child_sessions.MAX_DEPTH):
        crossing = await ctx.cdp(
            "Runtime.evaluate",
            {
                "expression": f"({_CROSSING})({json.dumps(rest)})",
                "contextId": where.context,
                "returnByValue": True,
            },
            session=where.session,
        )
        at = crossing.get("result", {}).get("value")
        if at == -1:
            return where, rest
        if not isinstance(at, int) or at < 0:
            return None
        frame = await _frame_shown(ctx, where, rest[: at + 1])
        if frame is None:
            return None
        await child_sessions.attach(ctx, where.session)
        # In a process of its own, through its child session; else in the same session.
        session = ctx.state.session.children.get(frame, where.session)
        tree = (await ctx.cdp("Page.getFrameTree", session=session))["frameTree"]
        node = page_outline.frame_node(tree, frame)
        if node is None or ctx.guard.refusal(str(node["frame"].get("url", ""))) is not None:
            return None  # gone, or a site agents may not use: nothing of it is acted on
        context = await page_outline.opened_world(ctx, session, frame=frame)
        where, rest = _World(context, session, frame), rest[at + 1 :]
    return None


async def _frame_shown(ctx: ToolContext, where: _World, frames: list[str]) -> str | None:
    """The id of the frame the last iframe of the path ``frames`` shows, looked up in the world
    ``where``; None when it is not there."""
    owner = await ctx.cdp(
        "Runtime.evaluate",
        {
            "expression": f"({_FRAME_ELEMENT})({json.dumps(frames)})",
            "contextId": where.context,
            "returnByValue": False,
            "objectGroup": ctx.objects,
        },
        session=where.session,
    )
    owner_id = owner.get("result", {}).get("objectId")
    if not owner_id:
        return None
    frame = (await ctx.cdp("DOM.describeNode", {"objectId": owner_id}))["node"].get("frameId")
    return str(frame) if frame else None


async def _mint(ctx: ToolContext, object_id: str, where: _World, frames: list[str]) -> str | None:
    """A ref for the element found in the world ``where`` under the rest of the iframe path
    ``frames`` (``None``: its frame went away meanwhile; look again)."""
    loaders = await frame_loaders(ctx, where.session)
    if frames:
        frame = await _frame_shown(ctx, where, frames)
    else:
        frame = where.frame or next(iter(loaders))
    if not frame or frame not in loaders:
        return None
    held = await page_outline.held_id(ctx, object_id, where.frame)
    if held is None:
        return None
    return ctx.state.refs.assign(RefTarget(held, frame, loaders[frame]))


def _missing(locator: Locator, last: dict[str, Any], timeout: float) -> str:
    if last.get("frame"):
        how = f"its frame ({' > '.join(locator.frames)}) is not on the page, or is of another site"
    else:
        counts = dict((str(w), int(n)) for w, n in last.get("tried", []) if isinstance(n, int))
        tried = []
        for way, value in locator.strategies():
            shown = f'{value} "{locator.name}"' if way == "role" and locator.name else value
            n = counts.get(way, 0)
            said = "none" if n == 0 else (f"{n} elements" if n < 50 else "50 or more elements")
            tried.append(f"{way} {json.dumps(shown, ensure_ascii=False)}: {said}")
        how = "tried " + "; ".join(tried)
        if last.get("over"):
            how += " (the page is too big to look through in full)"
    nearby = [
        f"{n.get('role')} {json.dumps(n.get('name') or '', ensure_ascii=False)}"
        for n in last.get("nearby", [])[:MAX_NEARBY]
        if isinstance(n, dict)
    ]
    offers = (
        "the page offers nearby: " + page_text(", ".join(nearby)) if nearby else "nothing alike"
    )
    # The recipe's locator was recorded from a page: its names are the page's words too.
    return (
        f"could not find {page_text(locator.describe())} within {timeout:g} s "
        f"({page_text(how)}); {offers}"
    )
