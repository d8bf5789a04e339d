// The effect pages act out real sites without consequences: no link leaves, no form posts,
// and each control counts the clicks it got (window.clicks), so a test can tell a control that
// ran from one that was held back for the person.
window.clicks = {};
document.addEventListener('click', (event) => {
  const control = event.target.closest('[id]');
  if (control) window.clicks[control.id] = (window.clicks[control.id] || 0) + 1;
  if (event.target.closest('a[href]')) event.preventDefault();
}, true);
document.addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.target;
  window.clicks[form.id || 'form'] = (window.clicks[form.id || 'form'] || 0) + 1;
}, true);
// Links, forms and buttons to another site: the same server by another name (localhost for
// 127.0.0.1).
document.addEventListener('DOMContentLoaded', () => {
  for (const el of document.querySelectorAll('[data-other-site]')) {
    const there = location.origin.replace('127.0.0.1', 'localhost') + el.dataset.otherSite;
    const name = el.tagName === 'A' ? 'href' : el.tagName === 'FORM' ? 'action' : 'formaction';
    el.setAttribute(name, there);
  }
});
