(() => {
  // Reads of the DOM a page cannot change. A <form>'s controls named like its properties stand
  // in for them when they are read on the form (DOM clobbering, which holds in Tabrelay's world
  // too): <input name="childNodes"> makes form.childNodes that input, <input name="tagName">
  // its tagName, <input name="parentElement"> a loop. Read through the prototypes, each is the
  // node's own. (Only forms are so: other elements and text nodes have no named properties.)
  const N = Node.prototype;
  const E = Element.prototype;
  const H = HTMLElement.prototype;
  const getter = (proto, name) => (Object.getOwnPropertyDescriptor(proto, name) || {}).get;
  const XHTML = 'http://www.w3.org/1999/xhtml';
  const nodeType = getter(N, 'nodeType');
  const childNodes = getter(N, 'childNodes');
  const parentNode = getter(N, 'parentNode');
  const parentElement = getter(N, 'parentElement');
  const ownerDocument = getter(N, 'ownerDocument');
  const tagName = getter(E, 'tagName');
  const localName = getter(E, 'localName');
  const namespaceURI = getter(E, 'namespaceURI');
  const outerHTML = getter(E, 'outerHTML');
  const F = HTMLFormElement.prototype;
  const formAction = getter(F, 'action');
  const formMethod = getter(F, 'method');
  const formElements = getter(F, 'elements');
  const own = (name) => {
    const read = getter(H, name);
    return (el) => (read ? read.call(el) : undefined);
  };
  const inert = own('inert');
  const tabIndex = own('tabIndex');
  const isContentEditable = own('isContentEditable');
  const contentEditable = own('contentEditable');
  const editContext = own('editContext');
  // (``tag``: its tagName, upper case for HTML; in an XHTML document, as written.)
  const isForm = (el, tag = tagName.call(el)) =>
    tag === 'FORM' || (tag === 'form' && namespaceURI.call(el) === XHTML);
  return {
    type: (n) => nodeType.call(n),
    kids: (n) => childNodes.call(n),
    parent: (n) => parentNode.call(n),
    up: (n) => parentElement.call(n),
    doc: (n) => ownerDocument.call(n),
    root: (n) => N.getRootNode.call(n),
    tag: (el) => tagName.call(el),
    name: (el) => localName.call(el),
    // A form hosts no shadow root; any other element's is read as its own realm's prototype
    // says (where Tabrelay's world gives it the closed roots it was handed: closed_roots.js).
    shadow: (el, tag) => (isForm(el, tag) ? null : el.shadowRoot),
    attr: (el, name) => E.getAttribute.call(el, name),
    has: (el, name) => E.hasAttribute.call(el, name),
    hasAny: (el) => E.hasAttributes.call(el),
    outerHTML: (el) => outerHTML.call(el),
    contains: (node, other) => N.contains.call(node, other),
    matches: (el, selector) => E.matches.call(el, selector),
    closest: (el, selector) => E.closest.call(el, selector),
    query: (el, selector) => E.querySelector.call(el, selector),
    queryAll: (el, selector) => E.querySelectorAll.call(el, selector),
    rect: (el) => E.getBoundingClientRect.call(el),
    // Whether it is drawn at all (not display:none, nor inside content-visibility:hidden).
    drawn: (el) => E.checkVisibility.call(el),
    // An element's own state as a script reads it on the element (``tag``: its tagName, when
    // known): the element itself, or for a form the same read through the prototypes.
    view: (el, tag) =>
      isForm(el, tag)
        ? {
            inert: inert(el),
            tabIndex: tabIndex(el),
            isContentEditable: isContentEditable(el),
            contentEditable: contentEditable(el),
            editContext: editContext(el),
            disabled: undefined, // a form has none
            shadowRoot: null,
          }
        : el,
    // A form's: where and how it is sent, and its controls.
    action: (form) => formAction.call(form),
    method: (form) => formMethod.call(form),
    controls: (form) => formElements.call(form),
  };
})()
