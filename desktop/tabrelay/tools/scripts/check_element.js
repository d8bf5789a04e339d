function (action) {
  // What covers the element may be a form, whose controls can stand in for its properties
  // (dom.js): read through ``dom``.
  const dom = SAFE_DOM;
  const describe = (el) => {
    if (!el || dom.type(el) !== 1) return String(el);
    let text = dom.tag(el).toLowerCase();
    const id = dom.attr(el, 'id');
    const classes = (dom.attr(el, 'class') || '').trim();
    if (id) text += '#' + id;
    if (classes) text += '.' + classes.split(/\s+/).slice(0, 2).join('.');
    return text;
  };
  let el = this;
  if (!el.isConnected) return {error: 'stale'};
  if (el.nodeType !== 1) el = el.parentElement;
  // Typing goes to what takes the keys (a code editor's own input); it needs focus, not a
  // clear path for the pointer, and the editor a person sees, not its hidden input, in view.
  const editor = action === 'type' || action === 'fill' ? (EDITOR)(el) : null;
  if (editor && editor.input !== el) return {retarget: 'input'};
  const visible = (node) => {
    const r = node.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return false;
    if (!node.checkVisibility) return true;
    return node.checkVisibility({checkOpacity: true, checkVisibilityCSS: true});
  };
  if (!visible(el) && el.labels && Array.from(el.labels).some(visible) && action !== 'type') {
    return {retarget: 'label'};  // a styled control hides its input; a person clicks the label
  }
  const shown = editor ? editor.box : el;
  shown.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
  if (!visible(shown)) return {error: 'hidden', what: describe(el)};
  const control = el.tagName === 'LABEL' && el.control ? el.control : el;
  const disabled = control.disabled === true || !!control.closest('[aria-disabled="true"]')
    || !!control.closest('fieldset:disabled');
  if (disabled && action !== 'hover') return {error: 'disabled', what: describe(control)};
  const rect = el.getBoundingClientRect();
  const x = rect.left + rect.width / 2, y = rect.top + rect.height / 2;
  const root = el.getRootNode();
  const hit = (root.elementFromPoint ? root : el.ownerDocument).elementFromPoint(x, y);
  // A code editor draws its text over its own input: that is the editor, not in the way.
  const box = el.closest(CODE_BOXES);
  const covered = hit && hit !== el && !el.contains(hit)
    && !(hit.shadowRoot && hit.shadowRoot.contains(el))
    && !(hit.contains && hit.contains(el) && hit.tagName === 'LABEL')
    && !(box && box.contains(hit));
  // Name what a person sees in the way: the outermost box over it that does not hold it.
  const obscured = (over, held) => {
    while (dom.up(over) && !dom.contains(dom.up(over), held)) over = dom.up(over);
    const text = (over.innerText || '').replace(/\s+/g, ' ').trim();
    const said = text ? ' "' + (text.length > 60 ? text.slice(0, 59) + '…' : text) + '"' : '';
    return {error: 'obscured', what: describe(el), by: describe(over) + said};
  };
  if (covered && !editor && action !== 'hover') return obscured(hit, el);
  // In a frame of this process (a same-site frame), nothing of the documents around it may be
  // over the point either (a frame of another process is checked from outside:
  // child_sessions.reaches). The point is mapped out through each <iframe>'s content box; a
  // frame drawn through a transform cannot be mapped so, and is checked from outside where it
  // is drawn (``drawnThrough``: refs.locate); the point out of a view is not checked.
  let view = el.ownerDocument.defaultView, px = x, py = y, drawnThrough = false;
  for (let depth = 0; view && depth < 8 && !editor && action !== 'hover'; depth++) {
    let frame = /** @type {HTMLIFrameElement | null} */ (null);
    try {
      frame = /** @type {HTMLIFrameElement | null} */ (view.frameElement);
    } catch (error) { frame = null; }
    if (!frame) break;
    const box = frame.getBoundingClientRect();
    if (Math.abs(box.width - frame.offsetWidth) > 0.5
        || Math.abs(box.height - frame.offsetHeight) > 0.5) {
      drawnThrough = true;
      break;
    }
    const style = frame.ownerDocument.defaultView.getComputedStyle(frame);
    px += box.left + frame.clientLeft + (parseFloat(style.paddingLeft) || 0);
    py += box.top + frame.clientTop + (parseFloat(style.paddingTop) || 0);
    const around = /** @type {Document | ShadowRoot} */ (frame.getRootNode());
    const found = (around.elementFromPoint ? around : frame.ownerDocument)
      .elementFromPoint(px, py);
    if (!found) break;
    if (found !== frame) return obscured(found, frame);
    view = frame.ownerDocument.defaultView;
  }
  const editable = !!editor || control.isContentEditable || control.tagName === 'TEXTAREA'
    || (control.tagName === 'INPUT' && !['checkbox', 'radio', 'button', 'submit', 'reset',
      'file', 'image', 'range', 'color'].includes(control.type));
  return {ok: true, tag: control.tagName.toLowerCase(), type: control.type || '', editable,
          editor: editor ? editor.kind : null, boxed: !!editor && editor.box !== el,
          secret: (FIELD_KIND)(control),
          download: (el.closest('a[href][download], area[href][download]') || {}).href || null,
          drawnThrough, what: describe(control)};
}
