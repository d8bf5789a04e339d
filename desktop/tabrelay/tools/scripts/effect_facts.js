function () {
  const kindOf = FIELD_KIND;
  const MAX = MAX_TEXT;
  const ws = (s) => String(s || '').replace(/\s+/g, ' ').trim().slice(0, MAX);
  // A form's properties and methods are read past the controls named like them (an
  // <input name="action"> hides the form's action as form.action): through ``dom``.
  const dom = SAFE_DOM;
  const el = dom.type(this) === 1 ? this : dom.up(this);
  if (!el) return JSON.stringify({});
  const doc = dom.doc(el);
  const attr = (node, name) => (node && dom.type(node) === 1 ? dom.attr(node, name) || '' : '');
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
    const nodes = [root, ...dom.queryAll(root, 'svg, i, span, img, use, [class*="icon"]')];
    for (const node of nodes.slice(0, 20)) {
      const cls = typeof node.className === 'string' ? node.className : attr(node, 'class');
      words.push(cls, attr(node, 'data-icon'), attr(node, 'alt'));
      words.push(attr(node, 'href'), attr(node, 'xlink:href'));
      const svg = node.tagName && node.tagName.toLowerCase() === 'svg';
      const title = svg && dom.query(node, 'title');
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
  const link = dom.closest(el, 'a[href], area[href]');
  if (link) {
    facts.href = link.href;
    facts.download = link.hasAttribute('download');
  }
  // The form a click or an Enter submits, and what it asks for.
  const form = el.form || dom.closest(el, 'form');
  if (form) {
    const controls = Array.from(dom.controls(form));
    const submitter = controls.find(
      (c) => (c.tagName === 'BUTTON' && String(c.type).toLowerCase() === 'submit') ||
        (c.tagName === 'INPUT' && ['submit', 'image'].includes(String(c.type).toLowerCase())),
    );
    const submits =
      (tag === 'button' && type === 'submit') ||
      (tag === 'input' && ['submit', 'image'].includes(type));
    // Where and how it is sent: as its button says (formaction, formmethod), the one clicked
    // or, for an Enter, its first (which an Enter clicks).
    const by = submits ? el : submitter;
    const says = (name) => !!by && attr(by, name) !== '';
    facts.form = {
      action: (says('formaction') ? by.formAction : dom.action(form)) || '',
      method: String(says('formmethod') ? by.formMethod : dom.method(form)).toLowerCase(),
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
  const dialog = dom.closest(
    el, 'dialog, [role="dialog"], [role="alertdialog"], [aria-modal="true"]',
  );
  if (dialog) {
    const heading = dom.query(dialog, 'h1, h2, h3, h4, [role="heading"], legend');
    facts.dialog = ws(
      attr(dialog, 'aria-label') ||
        labelled(dialog) ||
        (heading ? heading.textContent : '') ||
        textOf(dialog).slice(0, 120),
    );
  }
  const section = dom.closest(
    el, 'section, fieldset, article, form, [role="region"], [role="group"]',
  );
  if (section && section !== dialog) {
    const heading = dom.query(section, 'h1, h2, h3, h4, h5, [role="heading"], legend');
    facts.section = ws(
      attr(section, 'aria-label') || labelled(section) || (heading ? heading.textContent : ''),
    );
  }
  // A field whose Enter sends what it holds: a composer beside a send button.
  if (isField(el) && (el.tagName === 'TEXTAREA' || el.isContentEditable)) {
    const up = dom.up(el);
    const box = up && dom.closest(
      up, 'form, [role="group"], [role="region"], footer, section, div',
    );
    const found = box && dom.queryAll(box, 'button, [role="button"], input[type="submit"]');
    const said = (b) => b.value || attr(b, 'aria-label') || attr(b, 'title') || textOf(b);
    facts.beside = ws(Array.from(found || []).slice(0, 6).map(said).join(' | '));
  }
  return JSON.stringify(facts);
}
