"""Scripts several tools run in the page, kept in one place so each rule has one definition.

Plain JavaScript text, no I/O: ``EACH_ROOT`` (what "the whole page" means), ``FIELD_KIND`` (which
fields hold a secret) and ``QUERY`` (a CSS selector, through open shadow roots). The tools that
run them say how (an expression, a function on an element) and what they do with the answer.
"""

from __future__ import annotations

# ``eachRoot(root, visit)``: calls ``visit`` on ``root``, then on every open shadow root and
# same-origin frame document inside it, depth first: what "the whole page" means to a page script.
EACH_ROOT = r"""
const eachRoot = (root, visit) => {
  visit(root);
  for (const el of root.querySelectorAll('*')) {
    if (el.shadowRoot) eachRoot(el.shadowRoot, visit);
    if (el.tagName === 'IFRAME') {
      let doc = null;
      try { doc = el.contentDocument; } catch (error) { doc = null; }
      if (doc) eachRoot(doc, visit);
    }
  }
};
"""

# What kind of secret a form control takes, or null: password fields (also once a "show
# password" toggle made them type=text: their autocomplete stays), one-time codes, card details
# (WHATWG HTML autofill field names). One definition for the pre-approval check, locate(), the
# snapshot's masking and browser_get_content.
FIELD_KIND = r"""
(control) => {
  if (!control || control.nodeType !== 1) return null;
  if (String(control.type || '').toLowerCase() === 'password') return 'password';
  // A text field drawn as dots, the way some sites hide a password or a PIN.
  const security = getComputedStyle(control).webkitTextSecurity;
  if (security && security !== 'none') return 'password';
  const tokens = String(control.getAttribute('autocomplete') || '').toLowerCase().split(/\s+/);
  if (tokens.includes('current-password') || tokens.includes('new-password')) return 'password';
  if (tokens.includes('one-time-code')) return 'one-time code';
  if (tokens.some((t) => t.startsWith('cc-'))) return 'card detail';
  return null;
}
"""

# Finds an element by CSS selector in the document and, failing that, in open shadow roots.
QUERY = r"""
((selector) => {
  const deep = (root) => {
    const found = root.querySelector(selector);
    if (found) return found;
    for (const host of root.querySelectorAll('*')) {
      if (host.shadowRoot) { const inner = deep(host.shadowRoot); if (inner) return inner; }
    }
    return null;
  };
  return deep(document);
})
"""
