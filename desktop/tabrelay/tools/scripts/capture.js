const stopper = new AbortController();
const on = {capture: true, signal: stopper.signal};
const send = (message) => {
  try { TABRELAY_SEND(Object.assign({url: location.href}, message)); } catch (error) { /* gone */ }
};
const describe = (el) => {
  let d = null;
  try { d = locate(el, 300); } catch (error) { d = null; }
  return d && !d.crossOrigin ? d : null;
};
const kindOf = (el) => { try { return fieldKind(el); } catch (e) { return 'password'; } };
const TEXT_TYPES = new Set(['', 'text', 'search', 'email', 'url', 'tel', 'password', 'number']);
const textual = (el) => !!el && el.nodeType === 1 && ((el.tagName === 'INPUT'
  && TEXT_TYPES.has(String(el.type || '').toLowerCase())) || el.tagName === 'TEXTAREA'
  || el.isContentEditable);
const deepTarget = (ev) => {
  for (const node of ev.composedPath()) if (node.nodeType === 1) return node;
  return null;
};
const modifiers = (ev) => [['altKey', 'Alt'], ['ctrlKey', 'Control'], ['metaKey', 'Meta'],
  ['shiftKey', 'Shift']].filter(([k]) => ev[k]).map(([, name]) => name);
let editing = null;
// The edit under way as a message, ending it. A secret field's text is never read.
const takeEdit = () => {
  if (!editing) return null;
  const {el, target} = editing;
  editing = null;
  const kind = kindOf(el);
  if (kind) return {type: 'type', target, secret: true, kind};
  return {type: 'type', target, text: String(el.isContentEditable ? el.innerText : el.value)};
};
const flush = () => { const m = takeEdit(); if (m) send(m); };
Object.defineProperty(globalThis, 'TABRELAY_DEMO', {value: {
  take: takeEdit,
  stop: () => { stopper.abort(); editing = null; },
}});
document.addEventListener('input', (ev) => {
  if (!ev.isTrusted) return;
  let el = deepTarget(ev);
  if (el && el.isContentEditable && !textual(el)) el = el.closest('[contenteditable]');
  if (!textual(el)) return;
  if (editing && editing.el !== el) flush();
  if (!editing) editing = {el, target: describe(el)};
}, on);
document.addEventListener('change', (ev) => {
  if (!ev.isTrusted) return;
  const el = deepTarget(ev);
  if (!el) return;
  if (editing && editing.el === el) { flush(); return; }
  if (el.tagName === 'SELECT') {
    const target = describe(el);
    const kind = kindOf(el);
    if (kind) { send({type: 'select', target, secret: true, kind}); return; }
    send({type: 'select', target,
          options: Array.from(el.selectedOptions).map((o) => (o.label || o.text || '').trim())});
  }
}, on);
document.addEventListener('focusout', (ev) => {
  if (ev.isTrusted && editing && editing.el === deepTarget(ev)) flush();
}, on);
document.addEventListener('click', (ev) => {
  if (!ev.isTrusted) return;
  const el = deepTarget(ev);
  if (!el) return;
  const label = el.closest('label');
  const control = el.tagName === 'INPUT' ? el : (label ? label.control : null);
  const type = control ? String(control.type || '').toLowerCase() : '';
  if (control && (type === 'checkbox' || type === 'radio')) {
    // A click on the box itself has toggled it already; one on its label will, next.
    const toggled = control === el ? !!control.checked : (type === 'radio' || !control.checked);
    flush();
    send({type: 'check', target: describe(control), checked: toggled});
    return;
  }
  if (textual(el) || el.closest('select, option, datalist')) return;
  if (control && (textual(control) || control.tagName === 'SELECT')) return;
  const actionable = el.closest('a[href], button, input, summary, label, [role=button], '
    + '[role=link], [role=tab], [role=menuitem], [role=option], [role=switch], [role=checkbox], '
    + '[role=radio], [role=treeitem], [onclick]') || el;
  flush();
  send({type: 'click', target: describe(actionable), modifiers: modifiers(ev)});
}, on);
const NAMED = new Set(['Enter', 'Escape', 'Tab', 'ArrowUp', 'ArrowDown', 'ArrowLeft',
  'ArrowRight', 'PageUp', 'PageDown', 'Home', 'End', 'Backspace', 'Delete', 'F1', 'F2', 'F3',
  'F4', 'F5', 'F6', 'F7', 'F8', 'F9', 'F10', 'F11', 'F12']);
const EDITING_KEYS = new Set(['Backspace', 'Delete', 'ArrowLeft', 'ArrowRight', 'Home', 'End']);
document.addEventListener('keydown', (ev) => {
  if (!ev.isTrusted || ['Control', 'Shift', 'Alt', 'Meta'].includes(ev.key)) return;
  const el = deepTarget(ev);
  const inField = textual(el);
  const shortcut = ev.ctrlKey || ev.metaKey || ev.altKey;
  if (!shortcut && !NAMED.has(ev.key)) return;  // a character: the type step says it
  if (inField && (shortcut || EDITING_KEYS.has(ev.key))) return;  // editing the text itself
  if (inField && ev.key === 'Enter' && el.tagName !== 'INPUT') return;  // a new line
  // Moving through a select's options: the select step says what was chosen.
  const moving = !['Enter', 'Escape', 'Tab'].includes(ev.key);
  if (el && el.tagName === 'SELECT' && !shortcut && moving) return;
  flush();
  const target = el && el !== document.body && el !== document.documentElement
    ? describe(el) : null;
  send({type: 'press', key: [...modifiers(ev), ev.key].join('+'), target});
}, on);
document.addEventListener('submit', (ev) => { if (ev.isTrusted) send({type: 'submit'}); }, on);
window.addEventListener('pagehide', () => flush(), on);
