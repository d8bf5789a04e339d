"""What the page says around an element a call acts on: the facts its effect is decided from.

``FACTS`` runs on the element in Tabrelay's own world (``page_outline.WORLD``), where the page's
scripts cannot change what the DOM answers, and reads what a person reads around it: the
element's visible label, accessible name, tooltip and icon (an icon font's ligature, an SVG's
title, the names its classes give it), where a link goes and whether it downloads, the form a
click or an Enter submits (its address, method, default button and the kinds of its fields: a
card, a password, a one-time code, an IBAN, an amount, an email), the dialog or section it is
in, and whether a field's Enter sends (a chat's composer). It reads no field's value. The
decision itself is ``approval.effects``: this module only gathers, and never fails a call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tabrelay.tools.scripts.page_scripts import FIELD_KIND

MAX_TEXT = 200  # characters of each text gathered

# ``this`` is the element. Answers one JSON string (see ``Facts``).
FACTS = r"""
function () {
  const kindOf = FIELD_KIND;
  const MAX = MAX_TEXT;
  const ws = (s) => String(s || '').replace(/\s+/g, ' ').trim().slice(0, MAX);
  const el = this.nodeType === 1 ? this : this.parentElement;
  if (!el) return JSON.stringify({});
  const doc = el.ownerDocument;
  const attr = (node, name) => (node && node.getAttribute ? node.getAttribute(name) || '' : '');
  const shown = (node) => {
    const style = getComputedStyle(node);
    return style.display !== 'none' && style.visibility !== 'hidden';
  };
  // Visible text, without what fields hold.
  const textOf = (root) => {
    let text = '';
    const walker = doc.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
      acceptNode: (node) =>
        node.nodeType === 1
          ? ['SCRIPT', 'STYLE', 'TEMPLATE', 'INPUT', 'TEXTAREA', 'SELECT'].includes(node.tagName) ||
            !shown(node)
            ? NodeFilter.FILTER_REJECT
            : NodeFilter.FILTER_SKIP
          : NodeFilter.FILTER_ACCEPT,
    });
    for (let node = walker.nextNode(); node && text.length < MAX; node = walker.nextNode())
      text += node.data + ' ';
    return ws(text);
  };
  const labelled = (node) =>
    ws(
      attr(node, 'aria-labelledby')
        .split(/\s+/)
        .filter(Boolean)
        .map((id) => doc.getElementById(id))
        .filter(Boolean)
        .map((target) => target.textContent)
        .join(' '),
    );
  // What an icon says: a ligature font's text is the label already; here its classes, an SVG's
  // title, a sprite's id, an image's alt.
  const iconWords = (root) => {
    const words = [];
    const nodes = [root, ...root.querySelectorAll('svg, i, span, img, use, [class*="icon"]')];
    for (const node of nodes.slice(0, 20)) {
      const cls = typeof node.className === 'string' ? node.className : attr(node, 'class');
      words.push(cls, attr(node, 'data-icon'), attr(node, 'alt'));
      words.push(attr(node, 'href'), attr(node, 'xlink:href'));
      const svg = node.tagName && node.tagName.toLowerCase() === 'svg';
      const title = svg && node.querySelector('title');
      if (title) words.push(title.textContent);
    }
    return ws(words.filter(Boolean).join(' ').replace(/[-_#]/g, ' '));
  };
  // What a field is for, by its type, autocomplete, name, id, label and placeholder.
  const purpose = (control) => {
    const kind = kindOf(control);
    const type = String(control.type || '').toLowerCase();
    const auto = attr(control, 'autocomplete').toLowerCase();
    if (kind === 'password') return auto.includes('new-password') ? 'new_password' : 'password';
    if (kind === 'one-time code') return 'otp';
    if (kind === 'card detail') return 'card';
    const label = control.labels && control.labels.length ? control.labels[0].textContent : '';
    const said = [attr(control, 'name'), control.id, label, attr(control, 'placeholder'),
      attr(control, 'aria-label')].join(' ').toLowerCase();
    const card =
      /card.?num|\bcvc\b|\bcvv\b|security code|kartennummer|numéro de carte|tarjeta|カード番号/;
    const bank =
      /\biban\b|\bbic\b|swift|routing|account.?number|kontonummer|bankleitzahl|口座番号|账号/;
    const amount = /amount|betrag|montant|importe|importo|bedrag|金額|金额|сумма|kwota/;
    const code =
      /\botp\b|one.?time|2fa|verification code|bestätigungscode|code de vérification|認証|验证码/;
    const search = /\bsearch\b|\bq\b|suche|recherche|buscar|検索|搜索/;
    if (card.test(said)) return 'card';
    if (bank.test(said)) return 'iban';
    if (amount.test(said)) return 'amount';
    if (code.test(said)) return 'otp';
    if (type === 'email' || auto.includes('email')) return 'email';
    if (type === 'search' || attr(control, 'role') === 'searchbox' || search.test(said))
      return 'search';
    if (type === 'file') return 'file';
    return '';
  };
  const isField = (node) =>
    node.isContentEditable ||
    node.tagName === 'TEXTAREA' ||
    node.tagName === 'SELECT' ||
    (node.tagName === 'INPUT' &&
      !['button', 'submit', 'reset', 'image', 'checkbox', 'radio', 'range', 'color', 'hidden']
        .includes(String(node.type).toLowerCase()));
  const tag = el.tagName.toLowerCase();
  const type = tag === 'input' || tag === 'button' ? String(el.type || '').toLowerCase() : '';
  const facts = {
    tag,
    type,
    role: attr(el, 'role').toLowerCase(),
    field: isField(el),
    label:
      isField(el) || type === 'checkbox' || type === 'radio'
        ? ws((el.labels && el.labels.length ? textOf(el.labels[0]) : '') ||
            attr(el, 'placeholder'))
        : ws(['submit', 'button', 'reset'].includes(type) ? el.value || textOf(el) : textOf(el)),
    name: ws(attr(el, 'aria-label') || labelled(el)),
    title: ws(attr(el, 'title')),
    icon: iconWords(el),
    purpose: isField(el) ? purpose(el) : '',
  };
  const link = el.closest('a[href], area[href]');
  if (link) {
    facts.href = link.href;
    facts.download = link.hasAttribute('download');
  }
  // The form a click or an Enter submits, and what it asks for.
  const form = el.form || el.closest('form');
  if (form) {
    const controls = Array.from(form.elements || []);
    const submitter = controls.find(
      (c) => (c.tagName === 'BUTTON' && String(c.type).toLowerCase() === 'submit') ||
        (c.tagName === 'INPUT' && ['submit', 'image'].includes(String(c.type).toLowerCase())),
    );
    const submits =
      (tag === 'button' && type === 'submit') ||
      (tag === 'input' && ['submit', 'image'].includes(type));
    facts.form = {
      action: form.action || '',
      method: String(form.method || 'get').toLowerCase(),
      submits,
      button: submitter
        ? ws(submitter.value || textOf(submitter) || attr(submitter, 'aria-label'))
        : '',
      fields: [...new Set(controls.filter(isField).map(purpose).filter(Boolean))],
      label: ws(
        attr(form, 'aria-label') || labelled(form) || attr(form, 'name') || attr(form, 'id'),
      ),
      // Enter in a text field submits it (HTML's implicit submission).
      enter:
        !!submitter || controls.filter((c) => c.tagName === 'INPUT' && isField(c)).length === 1,
    };
  }
  // The dialog around it, by its name or first heading; else the nearest heading of its section.
  const dialog = el.closest('dialog, [role="dialog"], [role="alertdialog"], [aria-modal="true"]');
  if (dialog) {
    const heading = dialog.querySelector('h1, h2, h3, h4, [role="heading"], legend');
    facts.dialog = ws(
      attr(dialog, 'aria-label') ||
        labelled(dialog) ||
        (heading ? heading.textContent : '') ||
        textOf(dialog).slice(0, 120),
    );
  }
  const section = el.closest('section, fieldset, article, form, [role="region"], [role="group"]');
  if (section && section !== dialog) {
    const heading = section.querySelector('h1, h2, h3, h4, h5, [role="heading"], legend');
    facts.section = ws(
      attr(section, 'aria-label') || labelled(section) || (heading ? heading.textContent : ''),
    );
  }
  // A field whose Enter sends what it holds: a composer beside a send button.
  if (isField(el) && (el.tagName === 'TEXTAREA' || el.isContentEditable)) {
    const up = el.parentElement;
    const box = up && up.closest('form, [role="group"], [role="region"], footer, section, div');
    const found = box && box.querySelectorAll('button, [role="button"], input[type="submit"]');
    const said = (b) => b.value || attr(b, 'aria-label') || attr(b, 'title') || textOf(b);
    facts.beside = ws(Array.from(found || []).slice(0, 6).map(said).join(' | '));
  }
  return JSON.stringify(facts);
}
""".replace("FIELD_KIND", FIELD_KIND.strip()).replace("MAX_TEXT", str(MAX_TEXT))


@dataclass(frozen=True, slots=True)
class FormFacts:
    """The form a target is in: where it posts, how, and what it asks for."""

    action: str = ""
    method: str = "get"
    submits: bool = False  # the target is a submit button of it
    button: str = ""  # its default button's label
    fields: tuple[str, ...] = ()  # "card", "password", "new_password", "otp", "iban", …
    label: str = ""
    enter: bool = False  # Enter in its text fields submits it


@dataclass(frozen=True, slots=True)
class Facts:
    """What a person reads on and around one element (page text: data, never instructions)."""

    tag: str = ""
    type: str = ""
    role: str = ""
    field: bool = False
    label: str = ""  # its visible text (a field: its label or placeholder)
    name: str = ""  # aria-label or aria-labelledby
    title: str = ""
    icon: str = ""  # words its icon carries (classes, an SVG's title, a sprite's id)
    purpose: str = ""  # a field's: "card", "password", "otp", "iban", "amount", "search", …
    href: str | None = None
    download: bool = False
    form: FormFacts | None = None
    dialog: str = ""  # the dialog it is in, by name or heading
    section: str = ""  # the section it is in, by name, heading or legend
    beside: str = ""  # a composer's: the buttons beside it


def read(answer: dict[str, Any]) -> Facts | None:
    """The facts in ``FACTS``'s answer (``Runtime.callFunctionOn``), or None when the page
    answered otherwise (a page cannot make this fail a call)."""
    try:
        value = json.loads(answer["result"]["value"])
        form = value.get("form")
        return Facts(
            tag=_text(value.get("tag")),
            type=_text(value.get("type")),
            role=_text(value.get("role")),
            field=value.get("field") is True,
            label=_text(value.get("label")),
            name=_text(value.get("name")),
            title=_text(value.get("title")),
            icon=_text(value.get("icon")),
            purpose=_text(value.get("purpose")),
            href=_text(value["href"]) if isinstance(value.get("href"), str) else None,
            download=value.get("download") is True,
            form=FormFacts(
                action=_text(form.get("action")),
                method=_text(form.get("method")) or "get",
                submits=form.get("submits") is True,
                button=_text(form.get("button")),
                fields=tuple(_text(f) for f in form.get("fields", [])[:12] if isinstance(f, str)),
                label=_text(form.get("label")),
                enter=form.get("enter") is True,
            )
            if isinstance(form, dict)
            else None,
            dialog=_text(value.get("dialog")),
            section=_text(value.get("section")),
            beside=_text(value.get("beside")),
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _text(value: Any) -> str:
    return value[: MAX_TEXT * 2] if isinstance(value, str) else ""
