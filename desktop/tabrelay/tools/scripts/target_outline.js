function (token, label, ttl) {
  const el = this.nodeType === 1 ? this : this.parentElement;
  if (!el || !el.isConnected) return false;
  const doc = el.ownerDocument, win = doc.defaultView;
  const r = el.getBoundingClientRect();
  const host = doc.createElement('tabrelay-highlight');
  host.setAttribute('ATTRIBUTE', token);
  host.style.cssText = 'all: initial; position: absolute; z-index: 2147483647; '
    + 'pointer-events: none; box-sizing: border-box; border: 3px solid #E8710A; '
    + 'border-radius: 4px; box-shadow: 0 0 0 4px rgba(232, 113, 10, 0.3); '
    + `left: ${r.left + win.scrollX - 4}px; top: ${r.top + win.scrollY - 4}px; `
    + `width: ${r.width + 8}px; height: ${r.height + 8}px;`;
  const root = host.attachShadow({mode: 'open'});
  const tag = doc.createElement('span');
  tag.textContent = label;
  tag.style.cssText = 'all: initial; position: absolute; left: -3px; white-space: nowrap; '
    + 'background: #E8710A; color: white; font: bold 12px/18px sans-serif; padding: 0 6px; '
    + 'border-radius: 3px; ' + (r.top > 24 ? 'bottom: 100%;' : 'top: 100%;');
  root.appendChild(tag);
  doc.documentElement.appendChild(host);
  win.setTimeout(() => host.remove(), ttl);
  return true;
}
