function () {
  const describe = (el) => {
    if (!el || !el.tagName) return 'nothing';
    let text = el.tagName.toLowerCase();
    if (el.id) text += '#' + el.id;
    const said = (el.innerText || '').replace(/\s+/g, ' ').trim();
    return said ? `${text} "${said.length > 60 ? said.slice(0, 59) + '…' : said}"` : text;
  };
  // Asked of the element itself: the focus inside a shadow root (closed ones too, which this
  // world cannot walk down to) is found from where it is.
  if (this.matches(':focus-within')) return null;
  const doc = this.ownerDocument;
  let active = doc.activeElement;
  while (active && active.shadowRoot && active.shadowRoot.activeElement) {
    active = active.shadowRoot.activeElement;
  }
  let modal = null;
  try { modal = doc.querySelector('dialog:modal'); } catch (error) { modal = null; }
  if (modal && !modal.contains(this)) return {why: 'modal', by: describe(modal)};
  const inert = this.closest('[inert]');
  if (inert) return {why: 'inert', by: describe(inert)};
  return {why: 'elsewhere', by: active === doc.body ? 'the page' : describe(active)};
}
